/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Register Tagging (Tailored Profiling, seed 000, Listing 2): before a
 * call into code that several components share (a precompiled hash-table
 * insert called by two joins), put the caller's tag into the tag register
 * and restore the previous tag afterwards, so nesting works.  Samples
 * capture the register (tailor record --regs r15, the default), and
 * tailor report attributes samples in shared code by it.
 *
 * The register must be reserved in every piece of code that may run
 * while a tag is set, generated and precompiled alike: compile with
 * TAILOR_TAG_CFLAGS (-ffixed-r15), or the compiler may use r15 for its own
 * values.  Cost at run time: two register moves per guarded call.
 */
#ifndef TAILOR_TAG_H
#define TAILOR_TAG_H

#include <stdint.h>

#define TAILOR_TAG_REGISTER	"r15"
#define TAILOR_TAG_CFLAGS	"-ffixed-r15"

/* Several levels may share the register: each gets a bit field. */
#define TAILOR_TAG_FIELD(value, shift, bits) \
	(((uint64_t)(value) & ((bits) >= 64 ? ~0ull : ((1ull << (bits)) - 1))) << (shift))

/* setTag(): make @tag the active tag; returns the one it replaces. */
static inline uint64_t tailor_tag_set(uint64_t tag)
{
	uint64_t old;

	__asm__ volatile("mov %%r15, %0\n\t"
			 "mov %1, %%r15"
			 : "=&r"(old) : "r"(tag) : "memory");
	return old;
}

/* Put back the tag tailor_tag_set() returned. */
static inline void tailor_tag_restore(uint64_t old)
{
	__asm__ volatile("mov %0, %%r15" : : "r"(old) : "memory");
}

static inline uint64_t tailor_tag_get(void)
{
	uint64_t tag;

	__asm__ volatile("mov %%r15, %0" : "=r"(tag));
	return tag;
}

/*
 * The same idiom as C source text, for code generators that emit C: wrap
 * each shared call in SET and RESTORE, with @saved_var an unsigned long
 * the generated code declares.  Both arguments are string literals naming
 * C expressions.  The text is plain C: write it with fputs() or as a %s
 * argument, never as part of a printf format.
 */
#define TAILOR_TAG_C_SET(tag_expr, saved_var) \
	"__asm__ volatile(\"mov %%r15, %0\\n\\tmov %1, %%r15\" : \"=&r\"(" saved_var \
	") : \"r\"((unsigned long)(" tag_expr ")) : \"memory\");"
#define TAILOR_TAG_C_RESTORE(saved_var) \
	"__asm__ volatile(\"mov %0, %%r15\" : : \"r\"(" saved_var ") : \"memory\");"

#endif /* TAILOR_TAG_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-thread tag word (seed 001): a 64-bit thread-local variable that
 * tailor.ko reads at every sample (tailor record --tag-word).  Setting it
 * is one plain store -- no system call, no reserved register -- so it
 * labels whatever the thread runs, code built without -ffixed-r15
 * included: libc's malloc, the dynamic loader, a C++ runtime, JIT code.
 * It also tells apart two queries that run the same generated code.
 *
 * The dictionary says which levels the word holds, as bit fields
 * (tag-word LEVEL SHIFT BITS, docs/dictionary-format.md); 0 means "none".
 *
 * Where: define the word in the executable, in exactly one file, with
 * TAILOR_TAG_WORD_DEFINE; tailor record --tag-word tailor_tag_word finds
 * its offset from the thread pointer in the executable's symbol table.
 * A word in a shared library has an offset only the loader knows: pass
 * the number tailor_tag_word_offset() returns (--tag-word OFFSET).
 *
 * Nesting works as with the tag register: keep what set() returns and
 * restore() it.
 */
#ifndef TAILOR_TAG_WORD_H
#define TAILOR_TAG_WORD_H

#include <stdint.h>

#define TAILOR_TAG_WORD_SYMBOL	"tailor_tag_word"

/* The word, 8-byte aligned like any uint64_t; 0 until the thread sets it. */
extern __thread uint64_t tailor_tag_word
	__attribute__((tls_model("initial-exec")));
#define TAILOR_TAG_WORD_DEFINE \
	__thread uint64_t tailor_tag_word \
	__attribute__((tls_model("initial-exec"))) = 0

/*
 * The sampling interrupt runs on this thread between any two of its
 * instructions: a signal fence keeps the compiler from moving the store
 * across the work it labels, and the store itself is a single mov.
 */
static inline uint64_t tailor_tag_word_set(uint64_t word)
{
	uint64_t old = tailor_tag_word;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tailor_tag_word, word, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return old;
}

static inline void tailor_tag_word_restore(uint64_t old)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tailor_tag_word, old, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Offset of the word from the thread pointer (%fs:0 holds the pointer). */
static inline int64_t tailor_tag_word_offset(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int64_t)((uintptr_t)&tailor_tag_word - tp);
}

#endif /* TAILOR_TAG_WORD_H */

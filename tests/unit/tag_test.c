// SPDX-License-Identifier: GPL-2.0-only
/*
 * Register Tagging (tailor/tag.h): set returns the old tag, restore puts
 * it back, nesting unwinds, bit fields pack several levels, and a tag set
 * before a call is what the callee sees.  Built with -ffixed-r15, as users
 * build tagged code.
 */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "tailor/tag.h"

/* The shared code: what tag does it run under? */
static __attribute__((noinline)) uint64_t shared_function(void)
{
	return tailor_tag_get();
}

int main(void)
{
	uint64_t outer, inner, seen_outer, seen_inner, seen_after;

	tailor_tag_restore(0);
	outer = tailor_tag_set(TAILOR_TAG_FIELD(2, 0, 16) | TAILOR_TAG_FIELD(1, 16, 16));
	seen_outer = shared_function();
	inner = tailor_tag_set(5);
	seen_inner = shared_function();
	tailor_tag_restore(inner);
	seen_after = shared_function();
	tailor_tag_restore(outer);

	TEST({ check_uint(outer, ==, 0); check_uint(inner, ==, 0x00010002); },
	     "set returns the tag it replaces");
	TEST({ check_uint(seen_outer, ==, 0x00010002); check_uint(seen_inner, ==, 5); },
	     "callees run under the caller's tag");
	TEST({ check_uint(seen_after, ==, 0x00010002); check_uint(tailor_tag_get(), ==, 0); },
	     "restore unwinds nested tags");
	TEST({
		check_uint(TAILOR_TAG_FIELD(0x1ffff, 0, 16), ==, 0xffff);
		check_uint(TAILOR_TAG_FIELD(3, 48, 16), ==, 0x0003000000000000ull);
		check_uint(TAILOR_TAG_FIELD(~0ull, 0, 64), ==, ~0ull);
	}, "fields are masked to their width");
	/* The text generators emit must be the C of tailor_tag_set/restore. */
	TEST(check_str(TAILOR_TAG_C_SET("7", "s") TAILOR_TAG_C_RESTORE("s"),
		       "__asm__ volatile(\"mov %%r15, %0\\n\\tmov %1, %%r15\" : \"=&r\"(s) : "
		       "\"r\"((unsigned long)(7)) : \"memory\");"
		       "__asm__ volatile(\"mov %0, %%r15\" : : \"r\"(s) : \"memory\");"),
	     "the C text macros spell the same asm");
	return test_done();
}

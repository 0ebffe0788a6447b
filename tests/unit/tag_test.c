// SPDX-License-Identifier: GPL-2.0-only
/*
 * Register Tagging (tailor/tag.h): set returns the old tag, restore puts
 * it back, nesting unwinds, bit fields pack several levels, and a tag set
 * before a call is what the callee sees.  Built with -ffixed-r15, as users
 * build tagged code.
 */
#include <stdio.h>
#include <string.h>
#include "tailor/tag.h"

static int nr_tests, nr_failed;

static void check(int ok, const char *name)
{
	nr_tests++;
	nr_failed += !ok;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", nr_tests, name);
}

/* The shared code: what tag does it run under? */
static __attribute__((noinline)) uint64_t shared_function(void)
{
	return tailor_tag_get();
}

int main(void)
{
	uint64_t outer, inner, seen_outer, seen_inner, seen_after;

	printf("TAP version 13\n1..5\n");
	tailor_tag_restore(0);
	outer = tailor_tag_set(TAILOR_TAG_FIELD(2, 0, 16) | TAILOR_TAG_FIELD(1, 16, 16));
	seen_outer = shared_function();
	inner = tailor_tag_set(5);
	seen_inner = shared_function();
	tailor_tag_restore(inner);
	seen_after = shared_function();
	tailor_tag_restore(outer);

	check(outer == 0 && inner == 0x00010002, "set returns the tag it replaces");
	check(seen_outer == 0x00010002 && seen_inner == 5,
	      "callees run under the caller's tag");
	check(seen_after == 0x00010002 && tailor_tag_get() == 0,
	      "restore unwinds nested tags");
	check(TAILOR_TAG_FIELD(0x1ffff, 0, 16) == 0xffff &&
	      TAILOR_TAG_FIELD(3, 48, 16) == 0x0003000000000000ull &&
	      TAILOR_TAG_FIELD(~0ull, 0, 64) == ~0ull,
	      "fields are masked to their width");
	/* The text generators emit must be the C of tailor_tag_set/restore. */
	check(!strcmp(TAILOR_TAG_C_SET("7", "s") TAILOR_TAG_C_RESTORE("s"),
		      "__asm__ volatile(\"mov %%r15, %0\\n\\tmov %1, %%r15\" : \"=&r\"(s) : "
		      "\"r\"((unsigned long)(7)) : \"memory\");"
		      "__asm__ volatile(\"mov %0, %%r15\" : : \"r\"(s) : \"memory\");"),
	      "the C text macros spell the same asm");
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       nr_tests - nr_failed, nr_failed);
	return nr_failed ? 1 : 0;
}

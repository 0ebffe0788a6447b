// SPDX-License-Identifier: GPL-2.0-only
/*
 * hot_lines.c: known hot functions and lines for comparing tailor's
 * function and line tables with perf's on one perf.data.  Built as C and
 * as C++, with gcc and with clang (tests/symbols/perf_compare_test.sh):
 * three functions of 1, 2 and 3 parts work, one of them inlined into its
 * caller, each loop on lines of its own; with MIB, a function that writes
 * that many fresh MiB a round, for a second event (page-faults).
 * Usage: hot_lines [ROUNDS [MIB]]
 */
#include <stdlib.h>

static volatile unsigned long sink;

/* A dependent chain: no compiler folds it, and every CPU runs it in order. */
#define CHAIN(x) ((x) * 2862933555777941757ul + 3037000493ul)

__attribute__((noinline)) static void one_part(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = CHAIN(x);
	sink = x;
}

__attribute__((always_inline)) static inline unsigned long inlined_part(unsigned long x,
								  unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		x = CHAIN(x ^ i);
	return x;
}

__attribute__((noinline)) static void two_parts(unsigned long n)
{
	unsigned long x = sink;

	x = inlined_part(x, n);
	for (unsigned long i = 0; i < n; i++)
		x = CHAIN(x + i);
	sink = x;
}

__attribute__((noinline)) static void three_parts(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 3 * n; i++)
		x = CHAIN(x - i);
	sink = x;
}

/* Fresh pages each round: glibc maps a block this large and unmaps it on free. */
__attribute__((noinline)) static void touch_pages(unsigned long mib)
{
	volatile char *p = (volatile char *)malloc(mib << 20);

	if (!p)
		exit(1);
	for (unsigned long i = 0; i < mib << 20; i += 4096)
		p[i] = (char)i;
	free((void *)p);
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	unsigned long mib = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;

	for (unsigned long r = 0; r < rounds; r++) {
		one_part(1000000);
		two_parts(1000000);
		three_parts(1000000);
		if (mib)
			touch_pages(mib);
	}
	return 0;
}

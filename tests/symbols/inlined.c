// SPDX-License-Identifier: GPL-2.0-only
/*
 * inlined.c: hot code that gcc -O2 inlines, for the inline frames of
 * tailor's exports (tests/export/pprof_test.sh): step() inlined into
 * mix(), inlined into run(), which is not inlined -- static functions
 * called once, which -O2 inlines without being asked -- so that most
 * samples fall on addresses of run() that DWARF says are mix()'s, or
 * step()'s within it (DW_TAG_inlined_subroutine), and a few on run()'s
 * own loop.
 * Usage: inlined [ROUNDS]
 */
#include <stdlib.h>

static volatile unsigned long sink;
/* Read at run time: gcc makes no clone of run() for a constant (run.constprop.0). */
static volatile unsigned long size = 1000000;

/* A dependent chain: no compiler folds it, and every CPU runs it in order. */
#define CHAIN(x) ((x) * 2862933555777941757ul + 3037000493ul)

static unsigned long step(unsigned long x, unsigned long i)
{
	return CHAIN(x ^ i);
}

static unsigned long mix(unsigned long x, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		x = step(x, i);
	return x;
}

__attribute__((noinline)) static void run(unsigned long n)
{
	unsigned long x = sink;

	x = mix(x, n);
	for (unsigned long i = 0; i < n / 2; i++)
		x = CHAIN(x + i);
	sink = x;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;

	for (unsigned long r = 0; r < rounds; r++)
		run(size);
	return 0;
}

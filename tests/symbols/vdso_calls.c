// SPDX-License-Identifier: GPL-2.0-only
/*
 * vdso_calls.c: a program whose time is in the vDSO (clock_gettime), for
 * the name of its row (tests/symbols/perf_compare_test.sh).
 */
#include <time.h>

int main(void)
{
	struct timespec t;
	long s = 0;

	for (int i = 0; i < 5000000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		s += t.tv_nsec;
	}
	return s == 1;
}

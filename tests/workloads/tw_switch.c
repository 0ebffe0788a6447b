// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_switch: context switches at known times.  The main thread reads the
 * TSC, sleeps (blocking: switched out, then in again), and reads the TSC
 * again, N times; each such pair brackets one switch out and one in of
 * the thread.  A test compares the switch times a recording holds with
 * the brackets: a switch time converted from another clock (perf's, on a
 * stock kernel) that lands outside its bracket is off by at least that
 * much, and the tightest brackets bound the conversion error.
 *
 * usage: tw_switch [N [SLEEP_US]]   (default 200, 200)
 * Prints "tid=T" and then "bracket=T0,T1" for every sleep.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <x86intrin.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200, sleep_us = argc > 2 ? atol(argv[2]) : 200, i;
	uint64_t *t = calloc(n > 0 ? 2 * n : 1, sizeof(*t));
	struct timespec ts;

	if (!t || n <= 0 || sleep_us <= 0) {
		fprintf(stderr, "usage: tw_switch [N [SLEEP_US]]\n");
		return 2;
	}
	ts.tv_sec = sleep_us / 1000000;
	ts.tv_nsec = sleep_us % 1000000 * 1000;
	for (i = 0; i < n; i++) {
		/* rdtscp waits for earlier instructions: t0 is before the syscall. */
		unsigned int aux;

		t[2 * i] = __rdtscp(&aux);
		nanosleep(&ts, NULL);
		t[2 * i + 1] = __rdtscp(&aux);
	}
	printf("tid=%ld\n", (long)syscall(SYS_gettid));
	for (i = 0; i < n; i++)
		printf("bracket=%llu,%llu\n", (unsigned long long)t[2 * i],
		       (unsigned long long)t[2 * i + 1]);
	free(t);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_work ITERATIONS [THREADS]: a fixed amount of CPU-bound work (a
 * tagged loop), so that wall time measures what profiling costs it; with
 * THREADS, that many threads each do it at once (the busy CPUs of
 * bench/record-overhead.sh).  With TW_WORK_TIME=FILE it writes there how
 * long the work itself took, in seconds: a profiler's slowdown of the
 * program, without its own start and stop.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tagged_loop.h"

static uint64_t iterations;

static void *work(void *arg)
{
	(void)arg;
	if (iterations)
		tagged_loop(0x7a6, iterations);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t threads[64];
	long n = 1, i;
	char *end;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: tw_work ITERATIONS [THREADS]\n");
		return 2;
	}
	iterations = strtoull(argv[1], NULL, 0);
	if (argc == 3) {
		n = strtol(argv[2], &end, 10);
		if (*end || n < 1 || n > 64) {
			fprintf(stderr, "tw_work: THREADS '%s' is not 1 to 64\n", argv[2]);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The first thread is this one. */
	for (i = 1; i < n; i++)
		if (pthread_create(&threads[i], NULL, work, NULL)) {
			fprintf(stderr, "tw_work: cannot create thread %ld\n", i);
			return 1;
		}
	work(NULL);
	for (i = 1; i < n; i++)
		pthread_join(threads[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("TW_WORK_TIME")) {
		FILE *f = fopen(getenv("TW_WORK_TIME"), "w");

		if (!f)
			return 1;
		fprintf(f, "%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
		fclose(f);
	}
	return 0;
}

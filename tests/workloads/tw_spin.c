// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_spin MS THREADS EXIT_CODE: THREADS threads each burn MS ms of CPU
 * time with the thread's index + 1 held in r15, then the process exits
 * with EXIT_CODE.  A workload whose threads and tags are known.  With
 * TW_LEADER_EXITS set the main thread exits at once, before spinning.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tagged_loop.h"

static uint64_t ms_per_thread;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void *spin(void *arg)
{
	uint64_t tag = (uintptr_t)arg, start = thread_cpu_ns();

	while (thread_cpu_ns() - start < ms_per_thread * 1000000ull)
		tagged_loop(tag, 1000000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	long i, n;

	if (argc != 4) {
		fprintf(stderr, "usage: tw_spin MS THREADS EXIT_CODE\n");
		return 2;
	}
	ms_per_thread = strtoull(argv[1], NULL, 10);
	n = strtol(argv[2], NULL, 10);
	if (n < 1 || n > 64)
		return 2;
	for (i = 1; i < n; i++)
		if (pthread_create(&t[i], NULL, spin, (void *)(uintptr_t)(i + 1)))
			return 3;
	/*
	 * TW_LEADER_EXITS: the main thread leaves at once and the others
	 * spin on (the process lives while they do; its status is 0).
	 */
	if (getenv("TW_LEADER_EXITS"))
		pthread_exit(NULL);
	spin((void *)1);
	for (i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	return atoi(argv[3]);
}

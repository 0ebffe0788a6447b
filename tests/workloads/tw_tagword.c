// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_tagword MS THREADS: prints the tag word's offset from the thread
 * pointer as the program itself sees it ("tag_word_offset=N"), then
 * THREADS threads each burn MS ms of CPU time in phases; in each phase a
 * thread stores a query id (QUERY_BASE + 0..2, rotating) in its tag word
 * and holds the same id in r15 inside the loop.  So a sample in the loop
 * must carry a word equal to its r15: the ground truth for tailor record
 * --tag-word.  The ids are unlike anything libc leaves in r15, which only
 * this program's own code keeps to itself (-ffixed-r15).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tagged_loop.h"
#include "tailor/tag_word.h"

TAILOR_TAG_WORD_DEFINE;

#define QUERY_BASE	0x7a9001

static uint64_t ms_per_thread;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void *spin(void *arg)
{
	uint64_t index = (uintptr_t)arg, start = thread_cpu_ns(), phase = 0;

	while (thread_cpu_ns() - start < ms_per_thread * 1000000ull) {
		uint64_t q = QUERY_BASE + (index + phase++) % 3;
		uint64_t saved = tailor_tag_word_set(q);

		tagged_loop(q, 2000000);
		tailor_tag_word_restore(saved);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	long i, n;

	if (argc != 3) {
		fprintf(stderr, "usage: tw_tagword MS THREADS\n");
		return 2;
	}
	ms_per_thread = strtoull(argv[1], NULL, 10);
	n = strtol(argv[2], NULL, 10);
	if (n < 1 || n > 64)
		return 2;
	printf("tag_word_offset=%lld\n", (long long)tailor_tag_word_offset());
	fflush(stdout);
	for (i = 1; i < n; i++)
		if (pthread_create(&t[i], NULL, spin, (void *)(uintptr_t)i))
			return 3;
	spin((void *)0);
	for (i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

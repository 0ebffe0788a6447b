// SPDX-License-Identifier: GPL-2.0-only
/*
 * The worker pool.  One lock guards the queue of active jobs; taking a
 * morsel holds it for a few instructions, and a morsel is MORSEL_ROWS
 * rows of a pipeline's fused loop, so the lock is nowhere near the
 * critical path (the tailor tests measure the pool's share).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "scheduler.h"
#include "tailor/tag.h"
#include "tailor/tag_word.h"

struct worker {
	struct pool *pool;
	pthread_t thread;
	int index;
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a job was queued, or stop */
	pthread_cond_t done;		/* a job's last morsel finished */
	struct job *head, *tail;	/* jobs with morsels left to take */
	uint64_t pool_tag;
	int nr_workers, stopping;
	struct worker workers[POOL_MAX_WORKERS];
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void queue_append(struct pool *p, struct job *j)
{
	j->next_job = NULL;
	if (p->tail)
		p->tail->next_job = j;
	else
		p->head = j;
	p->tail = j;
}

static struct job *queue_pop(struct pool *p)
{
	struct job *j = p->head;

	p->head = j->next_job;
	if (!p->head)
		p->tail = NULL;
	return j;
}

static void run_morsel(struct job *j, const struct morsel *m)
{
	/*
	 * The clock is read under the pool's tag: its system call, entered
	 * from libc, is the pool's bookkeeping, and a kernel sample in it is
	 * named by the tag alone.  Under the pipeline's tag of 0 it was
	 * [kernel], a point of the engine's samples (issue 16).
	 */
	uint64_t cpu0 = thread_cpu_ns();
	uint64_t word = tailor_tag_word_set(j->tag_word);
	uint64_t tag = tailor_tag_set(j->task ? j->tag : 0);

	if (j->task)
		j->task(j->arg, m);
	else
		j->fn(j->ctx, m);
	tailor_tag_restore(tag);
	tailor_tag_word_restore(word);
	__atomic_fetch_add(&j->cpu_ns, thread_cpu_ns() - cpu0, __ATOMIC_RELAXED);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;
	struct morsel m = { .worker = w->index };
	struct job *j;
	char name[16];

	/* A new thread's r15 is whatever libc left in it: name the pool's part. */
	tailor_tag_set(p->pool_tag);
	snprintf(name, sizeof(name), "worker %d", (w->index + 1) % 1000);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->work, &p->lock);
		if (!p->head)
			break;
		j = queue_pop(p);
		if (j->rows < 0) {
			m.begin = 0;
			m.end = 1;
		} else if (j->task) {
			m.begin = j->next;
			m.end = j->next + 1;
		} else {
			m.begin = j->next * MORSEL_ROWS;
			m.end = m.begin + MORSEL_ROWS < j->rows ? m.begin + MORSEL_ROWS : j->rows;
		}
		/* The next worker takes a morsel of the next job: queries interleave. */
		if (++j->next < j->nr_morsels)
			queue_append(p, j);
		pthread_mutex_unlock(&p->lock);

		run_morsel(j, &m);

		pthread_mutex_lock(&p->lock);
		if (++j->done == j->nr_morsels)
			pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct pool *pool_start(int workers, uint64_t pool_tag)
{
	struct pool *p = calloc(1, sizeof(*p));
	int i, ret;

	if (!p) {
		fprintf(stderr, "tailor-engine: out of memory for the worker pool\n");
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	p->pool_tag = pool_tag;
	for (i = 0; i < workers && i < POOL_MAX_WORKERS; i++) {
		p->workers[i] = (struct worker){ .pool = p, .index = i };
		ret = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
		if (ret) {
			fprintf(stderr, "tailor-engine: cannot start worker %d: %s\n", i + 1,
				strerror(ret));
			pool_stop(p);
			return NULL;
		}
		p->nr_workers++;
	}
	return p;
}

void pool_stop(struct pool *p)
{
	int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nr_workers; i++)
		pthread_join(p->workers[i].thread, NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int pool_workers(const struct pool *p)
{
	return p->nr_workers;
}

void pool_run(struct pool *p, struct job *j)
{
	j->nr_morsels = j->rows < 0 ? 1 : j->task ? j->rows :
			(j->rows + MORSEL_ROWS - 1) / MORSEL_ROWS;
	j->next = j->done = 0;
	j->cpu_ns = 0;
	if (!j->nr_morsels)
		return;
	pthread_mutex_lock(&p->lock);
	queue_append(p, j);
	pthread_cond_broadcast(&p->work);
	while (j->done < j->nr_morsels)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

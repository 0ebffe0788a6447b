/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Morsel-driven scheduling (Leis et al., SIGMOD 2014): a pool of worker
 * threads runs the morsels of every active pipeline job, whichever query
 * and client it belongs to.  A worker takes one morsel at a time and
 * rotates the job queue after each, so the queries of concurrent clients
 * interleave on the same workers instead of running one after another.
 *
 * While a worker runs a morsel, its tag word (tailor/tag_word.h) holds the
 * job's word -- the query execution -- and its tag register 0, as the
 * generated code expects (or, for a runtime task, the operator the
 * runtime works for); between morsels the word is 0 and the register
 * names the pool's own runtime part.
 */
#ifndef ENGINE_SCHEDULER_H
#define ENGINE_SCHEDULER_H

#include <pthread.h>
#include <stdint.h>
#include "rt_abi.h"

#define POOL_MAX_WORKERS	64
#define MORSEL_ROWS		8192

struct pool;

/*
 * One pipeline of one query execution, split into morsels; or, with
 * @task, @rows tasks of the runtime's own (a breaker's merge), morsel
 * [i, i + 1) each, run under the tag register @tag (the operator the
 * runtime works for) where a pipeline runs under 0.
 */
struct job {
	pipeline_fn fn;
	const struct query_ctx *ctx;
	void (*task)(void *arg, const struct morsel *m);
	void *arg;
	uint64_t tag;
	long rows;		/* rows to split into morsels; < 0: one morsel */
	uint64_t tag_word;	/* set on the worker while it runs a morsel */
	/* Filled in by the pool. */
	uint64_t cpu_ns;	/* worker CPU time spent in its morsels */
	long nr_morsels, next, done;
	struct job *next_job;
};

/*
 * Start @workers threads whose tag register names @pool_tag.  NULL, with
 * the reason on stderr, if a thread cannot be started.
 */
struct pool *pool_start(int workers, uint64_t pool_tag);
/* Wait for the workers to finish and free the pool (no job may be active). */
void pool_stop(struct pool *p);
int pool_workers(const struct pool *p);
/* Run every morsel of @j on the pool; returns once the last is done. */
void pool_run(struct pool *p, struct job *j);

#endif /* ENGINE_SCHEDULER_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The precompiled runtime: hash tables for joins and group-bys, and the
 * result collector.  Every join and group-by of every query calls the same
 * functions, so their samples are told apart only by the tag register the
 * generated code sets around each call.
 */
#ifndef ENGINE_RUNTIME_H
#define ENGINE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include "rt_abi.h"

extern const struct rt_api runtime_api;

/* Hash tables with a worker-local part for each of @workers workers. */
void *join_table_new(long width, int workers);
void join_table_free(void *ht);
/*
 * How a group-by folds its workers' parts together once its pipeline's
 * morsels are done, on the worker pool (tailor-engine --merge):
 * MERGE_LOCKED, the naive way, one task per worker part folding it into
 * the one shared table under one mutex, so the folds run one at a time
 * while the other workers wait; MERGE_PARTITIONED, the fix, worker parts
 * split by key hash as they are built and one task per partition folding
 * that partition of every part, with no lock.
 */
enum merge_mode { MERGE_LOCKED, MERGE_PARTITIONED };

struct pool;

/* Where and how group-by merges run; before any query runs. */
void runtime_set_merge(struct pool *pool, enum merge_mode mode);
const char *merge_mode_name(enum merge_mode mode);
/* @tag_word: the query execution, held by the workers that merge. */
void *group_table_new(long aggregates, int workers, uint64_t tag_word);
void group_table_free(void *ht);
/* The workers' CPU time in the table's merges so far. */
uint64_t group_table_merge_cpu_ns(const void *ht);
/* The wall time its merges took, start to end (both modes). */
uint64_t group_table_merge_wall_ns(const void *ht);

struct result {
	long width;		/* key + aggregates */
	long rows, cap;
	long *values;
};

void result_init(struct result *r, long width);
void result_free(struct result *r);
/* Rows in key order (the first value). */
void result_sort(struct result *r);

#endif /* ENGINE_RUNTIME_H */

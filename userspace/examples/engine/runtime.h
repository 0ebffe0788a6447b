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
#include "rt_abi.h"

extern const struct rt_api runtime_api;

/* Hash tables with a worker-local part for each of @workers workers. */
void *join_table_new(long width, int workers);
void join_table_free(void *ht);
void *group_table_new(long aggregates, int workers);
void group_table_free(void *ht);

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

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interface between generated code and the engine: a table of the
 * precompiled runtime functions, the context each pipeline gets, and the
 * morsel it works on.  The one definition below is both compiled into the
 * engine and, as text, written at the top of every generated file, so the
 * two cannot drift.  Generated code includes nothing else: it needs no
 * headers, no libc and no crt files to compile.
 *
 * Execution is morsel-driven (Leis et al., SIGMOD 2014): a pipeline
 * function runs one morsel -- rows [begin, end) of its source table -- on
 * one worker, and many workers run morsels of it at once.  Pipeline
 * breakers keep worker-local state (join_insert and group_find take the
 * worker) that the pipeline's finish function merges once every morsel is
 * done: join_finalize builds the directory over all workers' entries,
 * group_merge folds the workers' groups into one table -- on the worker
 * pool, under one lock or by partitions (tailor-engine --merge).
 *
 * Join hash table entries are long[2 + width]: the next entry in the
 * bucket's chain, the key, then the payload.  Group-by rows are
 * long[1 + aggregates]: the key, then the aggregates (sums and counts, so
 * merging adds them).  extra_units[worker * RT_EXTRA_STRIDE] counts the
 * accuracy oracle's work units done (tailor-engine --extra), a cache line
 * per worker: the count is added at every row, and workers sharing a
 * line would pay for it, which the oracle's known work does not contain
 * (natively that cost was 5-20% of the known work and sampled on the next
 * line, another operator's).  With --count-rows,
 * tuples[worker * RT_TUPLE_SLOTS + op] the rows operator op produced.
 */
#ifndef ENGINE_RT_ABI_H
#define ENGINE_RT_ABI_H

#define RT_ABI_DEFINITIONS                                                    \
	struct rt_api {                                                       \
		void (*join_insert)(void *ht, int worker, long key,           \
				    const long *payload);                     \
		void (*join_finalize)(void *ht);                              \
		const long *(*join_lookup)(const void *ht, long key);         \
		long *(*group_find)(void *ht, int worker, long key);          \
		void (*group_merge)(void *ht);                                \
		const long *(*group_rows)(const void *ht, long *count);       \
		void (*emit_row)(void *result, const long *values);           \
	};                                                                    \
	struct query_ctx {                                                    \
		const struct rt_api *rt;                                      \
		const long *const *column;                                    \
		const long *rows;                                             \
		void *const *ht;                                              \
		void *result;                                                 \
		unsigned long *extra_units;                                   \
		unsigned long *tuples;                                        \
	};                                                                    \
	struct morsel {                                                       \
		long begin, end;                                              \
		int worker;                                                   \
	};

RT_ABI_DEFINITIONS

/* ctx->extra_units[] entries per worker: 64 bytes, a cache line. */
#define RT_EXTRA_STRIDE		8

/* Slots per worker in ctx->tuples: operator numbers 1..PLAN_MAX_OPERATORS. */
#define RT_TUPLE_SLOTS		17

#define RT_ABI_STRINGIFY(...)	#__VA_ARGS__
#define RT_ABI_TEXT(x)		RT_ABI_STRINGIFY(x)
#define RT_ABI_SOURCE		RT_ABI_TEXT(RT_ABI_DEFINITIONS)

typedef void (*pipeline_fn)(const struct query_ctx *ctx, const struct morsel *m);
typedef void (*finish_fn)(const struct query_ctx *ctx);

#endif /* ENGINE_RT_ABI_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interface between generated code and the engine: a table of the
 * precompiled runtime functions and the context each pipeline gets.  The
 * one definition below is both compiled into the engine and, as text,
 * written at the top of every generated file, so the two cannot drift.
 * Generated code includes nothing else: it needs no headers, no libc and
 * no crt files to compile.
 *
 * Join hash table entries are long[2 + width]: the next entry in the
 * bucket's chain, the key, then the payload.  Group-by rows are
 * long[1 + aggregates]: the key, then the aggregates.  extra_units counts
 * the accuracy oracle's work units done (tailor-engine --extra).
 */
#ifndef ENGINE_RT_ABI_H
#define ENGINE_RT_ABI_H

#define RT_ABI_DEFINITIONS                                                    \
	struct rt_api {                                                       \
		void (*join_insert)(void *ht, long key, const long *payload); \
		void (*join_finalize)(void *ht);                              \
		const long *(*join_lookup)(const void *ht, long key);         \
		long *(*group_find)(void *ht, long key);                      \
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
	};

RT_ABI_DEFINITIONS

#define RT_ABI_STRINGIFY(...)	#__VA_ARGS__
#define RT_ABI_TEXT(x)		RT_ABI_STRINGIFY(x)
#define RT_ABI_SOURCE		RT_ABI_TEXT(RT_ABI_DEFINITIONS)

typedef void (*pipeline_fn)(const struct query_ctx *ctx);

#endif /* ENGINE_RT_ABI_H */

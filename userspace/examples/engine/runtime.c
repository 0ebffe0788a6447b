// SPDX-License-Identifier: GPL-2.0-only
/*
 * The precompiled runtime functions.  They are the "shared code" of
 * Register Tagging: the generated code of every operator calls them with
 * its task's tag set.  On allocation failure they print and exit: a
 * half-built hash table would give a wrong result, never a slow one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"

static void out_of_memory(size_t size)
{
	fprintf(stderr, "tailor-engine: out of memory (%zu bytes) in the runtime\n", size);
	exit(1);
}

static void *must_realloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p)
		out_of_memory(size);
	return p;
}

/* Multiplicative hashing with a fold, as the paper's Listing 1 does. */
static uint64_t hash_key(long key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29);
}

/* ---- join: materialize, then build the directory (chaining) ---- */

struct join_table {
	long width;		/* payload values per entry */
	long entries, cap;
	long *storage;		/* entries of 2 + width longs */
	const long **directory;
	uint64_t mask;
};

void *join_table_new(long width)
{
	struct join_table *t = calloc(1, sizeof(*t));

	if (!t)
		out_of_memory(sizeof(*t));
	t->width = width;
	return t;
}

void join_table_free(void *ht)
{
	struct join_table *t = ht;

	if (!t)
		return;
	free(t->storage);
	free(t->directory);
	free(t);
}

static void join_insert(void *ht, long key, const long *payload)
{
	struct join_table *t = ht;
	long stride = 2 + t->width;
	long *e;

	if (t->entries == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->storage = must_realloc(t->storage, (size_t)(t->cap * stride) * sizeof(long));
	}
	e = t->storage + t->entries++ * stride;
	e[0] = 0;
	e[1] = key;
	memcpy(e + 2, payload, (size_t)t->width * sizeof(long));
}

static void join_finalize(void *ht)
{
	struct join_table *t = ht;
	long stride = 2 + t->width, i;
	uint64_t size = 16;

	while (size < 2 * (uint64_t)t->entries)
		size *= 2;
	t->mask = size - 1;
	free(t->directory);
	t->directory = calloc(size, sizeof(*t->directory));
	if (!t->directory)
		out_of_memory(size * sizeof(*t->directory));
	for (i = 0; i < t->entries; i++) {
		long *e = t->storage + i * stride;
		uint64_t b = hash_key(e[1]) & t->mask;

		e[0] = (long)(uintptr_t)t->directory[b];
		t->directory[b] = e;
	}
}

static const long *join_lookup(const void *ht, long key)
{
	const struct join_table *t = ht;

	return t->directory[hash_key(key) & t->mask];
}

/* ---- group-by: open addressing over dense rows ---- */

struct group_table {
	long aggregates;
	long groups, cap;
	long *rows;		/* groups of 1 + aggregates longs */
	uint32_t *slots;	/* row index + 1; 0 is empty */
	uint64_t mask;
};

void *group_table_new(long aggregates)
{
	struct group_table *t = calloc(1, sizeof(*t));

	if (!t)
		out_of_memory(sizeof(*t));
	t->aggregates = aggregates;
	t->mask = 63;
	t->slots = calloc(64, sizeof(*t->slots));
	if (!t->slots)
		out_of_memory(64 * sizeof(*t->slots));
	return t;
}

void group_table_free(void *ht)
{
	struct group_table *t = ht;

	if (!t)
		return;
	free(t->rows);
	free(t->slots);
	free(t);
}

static void group_rehash(struct group_table *t)
{
	long stride = 1 + t->aggregates, i;
	uint64_t size = 2 * (t->mask + 1);

	free(t->slots);
	t->slots = calloc(size, sizeof(*t->slots));
	if (!t->slots)
		out_of_memory(size * sizeof(*t->slots));
	t->mask = size - 1;
	for (i = 0; i < t->groups; i++) {
		uint64_t s = hash_key(t->rows[i * stride]) & t->mask;

		while (t->slots[s])
			s = (s + 1) & t->mask;
		t->slots[s] = (uint32_t)i + 1;
	}
}

static long *group_find(void *ht, long key)
{
	struct group_table *t = ht;
	long stride = 1 + t->aggregates;
	uint64_t s = hash_key(key) & t->mask;
	long *row;

	for (; t->slots[s]; s = (s + 1) & t->mask) {
		row = t->rows + (t->slots[s] - 1) * stride;
		if (row[0] == key)
			return row + 1;
	}
	if (t->groups == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->rows = must_realloc(t->rows, (size_t)(t->cap * stride) * sizeof(long));
	}
	row = t->rows + t->groups * stride;
	memset(row, 0, (size_t)stride * sizeof(long));
	row[0] = key;
	t->slots[s] = (uint32_t)++t->groups;
	if (2 * (uint64_t)t->groups > t->mask)
		group_rehash(t);
	return row + 1;
}

static const long *group_rows(const void *ht, long *count)
{
	const struct group_table *t = ht;

	*count = t->groups;
	return t->rows;
}

/* ---- results ---- */

void result_init(struct result *r, long width)
{
	memset(r, 0, sizeof(*r));
	r->width = width;
}

void result_free(struct result *r)
{
	free(r->values);
	memset(r, 0, sizeof(*r));
}

static void emit_row(void *result, const long *values)
{
	struct result *r = result;

	if (r->rows == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->values = must_realloc(r->values, (size_t)(r->cap * r->width) * sizeof(long));
	}
	memcpy(r->values + r->rows++ * r->width, values, (size_t)r->width * sizeof(long));
}

static int by_key(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

void result_sort(struct result *r)
{
	/* qsort needs a fixed element size: sort row indices by key. */
	long *sorted, *keyed, i;

	if (r->rows < 2)
		return;
	keyed = must_realloc(NULL, (size_t)r->rows * 2 * sizeof(long));
	for (i = 0; i < r->rows; i++) {
		keyed[2 * i] = r->values[i * r->width];
		keyed[2 * i + 1] = i;
	}
	qsort(keyed, (size_t)r->rows, 2 * sizeof(long), by_key);
	sorted = must_realloc(NULL, (size_t)(r->rows * r->width) * sizeof(long));
	for (i = 0; i < r->rows; i++)
		memcpy(sorted + i * r->width, r->values + keyed[2 * i + 1] * r->width,
		       (size_t)r->width * sizeof(long));
	free(keyed);
	free(r->values);
	r->values = sorted;
	r->cap = r->rows;
}

const struct rt_api runtime_api = {
	.join_insert = join_insert,
	.join_finalize = join_finalize,
	.join_lookup = join_lookup,
	.group_find = group_find,
	.group_rows = group_rows,
	.emit_row = emit_row,
};

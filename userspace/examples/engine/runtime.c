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

/*
 * Worker-local parts sit on cache lines of their own: workers append to
 * their parts at every tuple, and a shared line would bounce between them.
 */
static void *parts_new(size_t size, int workers)
{
	void *p = aligned_alloc(64, size * (size_t)workers);

	if (!p)
		out_of_memory(size * (size_t)workers);
	memset(p, 0, size * (size_t)workers);
	return p;
}

/* ---- join: materialize per worker, then one directory over all ---- */

struct join_part {
	long entries, cap;
	long *storage;		/* entries of 2 + width longs */
} __attribute__((aligned(64)));

struct join_table {
	long width;		/* payload values per entry */
	int workers;
	struct join_part *parts;
	const long **directory;
	uint64_t mask;
};

void *join_table_new(long width, int workers)
{
	struct join_table *t = calloc(1, sizeof(*t));

	if (!t)
		out_of_memory(sizeof(*t));
	t->width = width;
	t->workers = workers;
	t->parts = parts_new(sizeof(*t->parts), workers);
	return t;
}

void join_table_free(void *ht)
{
	struct join_table *t = ht;
	int w;

	if (!t)
		return;
	for (w = 0; w < t->workers; w++)
		free(t->parts[w].storage);
	free(t->parts);
	free(t->directory);
	free(t);
}

static void join_insert(void *ht, int worker, long key, const long *payload)
{
	struct join_table *t = ht;
	struct join_part *p = &t->parts[worker];
	long stride = 2 + t->width;
	long *e;

	if (p->entries == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->storage = must_realloc(p->storage, (size_t)(p->cap * stride) * sizeof(long));
	}
	e = p->storage + p->entries++ * stride;
	e[0] = 0;
	e[1] = key;
	memcpy(e + 2, payload, (size_t)t->width * sizeof(long));
}

/*
 * After the build pipeline's last morsel: chain every worker's entries
 * into one directory.  Entries stay where their worker put them.
 */
static void join_finalize(void *ht)
{
	struct join_table *t = ht;
	long stride = 2 + t->width, i;
	uint64_t size = 16, total = 0;
	int w;

	for (w = 0; w < t->workers; w++)
		total += (uint64_t)t->parts[w].entries;
	while (size < 2 * total)
		size *= 2;
	t->mask = size - 1;
	free(t->directory);
	t->directory = calloc(size, sizeof(*t->directory));
	if (!t->directory)
		out_of_memory(size * sizeof(*t->directory));
	for (w = 0; w < t->workers; w++)
		for (i = 0; i < t->parts[w].entries; i++) {
			long *e = t->parts[w].storage + i * stride;
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

/* ---- group-by: open addressing over dense rows, a table per worker ---- */

struct group_part {
	long groups, cap;
	long *rows;		/* groups of 1 + aggregates longs */
	uint32_t *slots;	/* row index + 1; 0 is empty */
	uint64_t mask;
} __attribute__((aligned(64)));

struct group_table {
	long aggregates;
	int workers;
	struct group_part *parts;	/* after group_merge, [0] holds all */
};

static void group_part_init(struct group_part *p)
{
	p->mask = 63;
	p->slots = calloc(64, sizeof(*p->slots));
	if (!p->slots)
		out_of_memory(64 * sizeof(*p->slots));
}

void *group_table_new(long aggregates, int workers)
{
	struct group_table *t = calloc(1, sizeof(*t));
	int w;

	if (!t)
		out_of_memory(sizeof(*t));
	t->aggregates = aggregates;
	t->workers = workers;
	t->parts = parts_new(sizeof(*t->parts), workers);
	for (w = 0; w < workers; w++)
		group_part_init(&t->parts[w]);
	return t;
}

void group_table_free(void *ht)
{
	struct group_table *t = ht;
	int w;

	if (!t)
		return;
	for (w = 0; w < t->workers; w++) {
		free(t->parts[w].rows);
		free(t->parts[w].slots);
	}
	free(t->parts);
	free(t);
}

static void group_rehash(struct group_part *p, long stride)
{
	uint64_t size = 2 * (p->mask + 1);
	long i;

	free(p->slots);
	p->slots = calloc(size, sizeof(*p->slots));
	if (!p->slots)
		out_of_memory(size * sizeof(*p->slots));
	p->mask = size - 1;
	for (i = 0; i < p->groups; i++) {
		uint64_t s = hash_key(p->rows[i * stride]) & p->mask;

		while (p->slots[s])
			s = (s + 1) & p->mask;
		p->slots[s] = (uint32_t)i + 1;
	}
}

static long *group_part_find(struct group_part *p, long aggregates, long key)
{
	long stride = 1 + aggregates;
	uint64_t s = hash_key(key) & p->mask;
	long *row;

	for (; p->slots[s]; s = (s + 1) & p->mask) {
		row = p->rows + (p->slots[s] - 1) * stride;
		if (row[0] == key)
			return row + 1;
	}
	if (p->groups == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->rows = must_realloc(p->rows, (size_t)(p->cap * stride) * sizeof(long));
	}
	row = p->rows + p->groups * stride;
	memset(row, 0, (size_t)stride * sizeof(long));
	row[0] = key;
	p->slots[s] = (uint32_t)++p->groups;
	if (2 * (uint64_t)p->groups > p->mask)
		group_rehash(p, stride);
	return row + 1;
}

static long *group_find(void *ht, int worker, long key)
{
	struct group_table *t = ht;

	return group_part_find(&t->parts[worker], t->aggregates, key);
}

/* After the aggregating pipeline's last morsel: fold every part into [0]. */
static void group_merge(void *ht)
{
	struct group_table *t = ht;
	long stride = 1 + t->aggregates, i, a;
	int w;

	for (w = 1; w < t->workers; w++) {
		struct group_part *p = &t->parts[w];

		for (i = 0; i < p->groups; i++) {
			const long *from = p->rows + i * stride;
			long *to = group_part_find(&t->parts[0], t->aggregates, from[0]);

			for (a = 0; a < t->aggregates; a++)
				to[a] += from[1 + a];
		}
		free(p->rows);
		free(p->slots);
		memset(p, 0, sizeof(*p));
		group_part_init(p);
	}
}

static const long *group_rows(const void *ht, long *count)
{
	const struct group_table *t = ht;

	*count = t->parts[0].groups;
	return t->parts[0].rows;
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
	.group_merge = group_merge,
	.group_rows = group_rows,
	.emit_row = emit_row,
};

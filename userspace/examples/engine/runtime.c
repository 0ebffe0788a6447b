// SPDX-License-Identifier: GPL-2.0-only
/*
 * The precompiled runtime functions.  They are the "shared code" of
 * Register Tagging: the generated code of every operator calls them with
 * its task's tag set.  On allocation failure they print and exit: a
 * half-built hash table would give a wrong result, never a slow one.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime.h"
#include "scheduler.h"
#include "tailor/tag.h"

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

/* ---- group-by: open addressing over dense rows, tables per worker ---- */

struct group_part {
	long groups, cap;
	long *rows;		/* groups of 1 + aggregates longs */
	uint32_t *slots;	/* row index + 1; 0 is empty */
	uint64_t mask;
} __attribute__((aligned(64)));

/*
 * Each worker aggregates into a table of its own, in either mode.  For a
 * partitioned merge (the two-phase aggregation of Leis et al.), each
 * worker then scatters its groups by key hash into an array per
 * partition, in one linear pass, so that a merge task reads its own
 * partition of every worker and nothing else, without a lock.  There are
 * at least MERGE_PARTITIONS partitions, more with more workers (a power
 * of two >= the workers): one per worker would leave each merge task a
 * table as large as a worker's, which spills out of the core's cache
 * when the groups are many -- measured on 2 workers and 300k groups, 2
 * partitions folded at 70 ns a group, 16 at 45 -- and small tasks also
 * even out workers that start or run at different speeds.  Scattering
 * after aggregating, rather than aggregating into a table per partition,
 * keeps the aggregation the same in both modes: under TCG a table per
 * worker and partition cost 25-50% more CPU there (the emulated TLB), so
 * the fix's gain in the merge was lost in the query.  A locked merge has
 * one partition.
 */
#define MERGE_PARTITIONS	16

struct group_table {
	long aggregates;
	int workers, partitions;
	enum merge_mode mode;
	struct group_part *parts;	/* worker w's groups */
	/* partitioned merge: worker w's groups of partition p at w * partitions + p */
	struct group_part *scattered;
	struct group_part merged;	/* all groups, after group_merge */
	struct group_part *out;		/* partitioned merge: partition p's groups */
	long *at;			/* partitioned merge: out[p]'s first row in merged */
	pthread_mutex_t lock;		/* locked merge: guards merged */
	uint64_t tag_word, merge_cpu_ns;
	uint64_t merge_wall_ns;		/* from the merge's start to its end */
};

static struct pool *merge_pool;
static enum merge_mode merge_mode = MERGE_LOCKED;

void runtime_set_merge(struct pool *pool, enum merge_mode mode)
{
	merge_pool = pool;
	merge_mode = mode;
}

const char *merge_mode_name(enum merge_mode mode)
{
	return mode == MERGE_PARTITIONED ? "partitioned" : "locked";
}

static void group_part_init(struct group_part *p)
{
	p->mask = 63;
	p->slots = calloc(64, sizeof(*p->slots));
	if (!p->slots)
		out_of_memory(64 * sizeof(*p->slots));
}

void *group_table_new(long aggregates, int workers, uint64_t tag_word)
{
	struct group_table *t = calloc(1, sizeof(*t));
	int i;

	if (!t)
		out_of_memory(sizeof(*t));
	t->aggregates = aggregates;
	t->workers = workers;
	t->mode = merge_mode;
	t->partitions = 1;
	if (merge_mode == MERGE_PARTITIONED)
		while (t->partitions < MERGE_PARTITIONS || t->partitions < workers)
			t->partitions *= 2;
	t->tag_word = tag_word;
	t->parts = parts_new(sizeof(*t->parts), workers);
	for (i = 0; i < workers; i++)
		group_part_init(&t->parts[i]);
	/* Arrays of rows, no slots: a merge task only reads them. */
	t->scattered = parts_new(sizeof(*t->scattered), workers * t->partitions);
	t->out = parts_new(sizeof(*t->out), t->partitions);
	t->at = calloc((size_t)t->partitions, sizeof(*t->at));
	if (!t->at)
		out_of_memory((size_t)t->partitions * sizeof(*t->at));
	for (i = 0; i < t->partitions; i++)
		group_part_init(&t->out[i]);
	group_part_init(&t->merged);
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

void group_table_free(void *ht)
{
	struct group_table *t = ht;
	int i;

	if (!t)
		return;
	for (i = 0; i < t->workers; i++) {
		free(t->parts[i].rows);
		free(t->parts[i].slots);
	}
	for (i = 0; i < t->workers * t->partitions; i++)
		free(t->scattered[i].rows);
	for (i = 0; i < t->partitions; i++) {
		free(t->out[i].rows);
		free(t->out[i].slots);
	}
	free(t->merged.rows);
	free(t->merged.slots);
	pthread_mutex_destroy(&t->lock);
	free(t->parts);
	free(t->scattered);
	free(t->out);
	free(t->at);
	free(t);
}

uint64_t group_table_merge_cpu_ns(const void *ht)
{
	return ((const struct group_table *)ht)->merge_cpu_ns;
}

uint64_t group_table_merge_wall_ns(const void *ht)
{
	return ((const struct group_table *)ht)->merge_wall_ns;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

/* Room for @n groups without growing: merges know their size up front. */
static void group_part_reserve(struct group_part *p, long aggregates, long n)
{
	uint64_t size = 64;

	while (size < 4 * (uint64_t)n)
		size *= 2;
	if (size > p->mask + 1) {
		free(p->slots);
		p->slots = NULL;
		p->mask = size / 2 - 1;
		group_rehash(p, 1 + aggregates);
	}
	if (p->cap < n) {
		p->cap = n;
		p->rows = must_realloc(p->rows, (size_t)(n * (1 + aggregates)) * sizeof(long));
	}
}

/* @h: hash_key(@key), which the caller has already needed. */
static long *group_part_find(struct group_part *p, long aggregates, long key, uint64_t h)
{
	long stride = 1 + aggregates;
	uint64_t s = h & p->mask;
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

/* From the high half of the hash: the low bits pick the slot inside a table. */
static int partition_of(const struct group_table *t, uint64_t h)
{
	return (int)(((h >> 32) * (uint64_t)t->partitions) >> 32);
}

static long *group_find(void *ht, int worker, long key)
{
	struct group_table *t = ht;

	return group_part_find(&t->parts[worker], t->aggregates, key, hash_key(key));
}

/* Fold the groups of @from into @to, adding up their aggregates. */
static void group_fold(const struct group_table *t, struct group_part *to,
		       const struct group_part *from)
{
	long stride = 1 + t->aggregates, i, a;

	for (i = 0; i < from->groups; i++) {
		const long *row = from->rows + i * stride;
		long *into = group_part_find(to, t->aggregates, row[0], hash_key(row[0]));

		for (a = 0; a < t->aggregates; a++)
			into[a] += row[1 + a];
	}
}

/*
 * Locked: worker m->begin's groups into the one shared table.  The mutex
 * lets one fold run at a time; the other tasks' workers block on it in
 * the kernel, switched out, until their turn.
 */
static void merge_locked(void *arg, const struct morsel *m)
{
	struct group_table *t = arg;

	pthread_mutex_lock(&t->lock);
	group_fold(t, &t->merged, &t->parts[m->begin]);
	pthread_mutex_unlock(&t->lock);
}

/*
 * Partitioned, first: worker m->begin's groups to their partitions'
 * arrays, counted first so that each is allocated once, in the table's
 * order.
 */
static void scatter_worker(void *arg, const struct morsel *m)
{
	struct group_table *t = arg;
	const struct group_part *from = &t->parts[m->begin];
	struct group_part *to = &t->scattered[m->begin * t->partitions];
	long stride = 1 + t->aggregates, i;
	int p;

	for (p = 0; p < t->partitions; p++)
		to[p].groups = to[p].cap = 0;
	for (i = 0; i < from->groups; i++)
		to[partition_of(t, hash_key(from->rows[i * stride]))].cap++;
	for (p = 0; p < t->partitions; p++)
		to[p].rows = must_realloc(to[p].rows,
					  (size_t)((to[p].cap ? to[p].cap : 1) * stride) * sizeof(long));
	for (i = 0; i < from->groups; i++) {
		const long *row = from->rows + i * stride;
		struct group_part *dst = &to[partition_of(t, hash_key(row[0]))];

		memcpy(dst->rows + dst->groups++ * stride, row, (size_t)stride * sizeof(long));
	}
}

/*
 * Then partition m->begin of every worker into a table of its own.  No
 * other task holds any of its keys, so no lock; sized for all of the
 * partition's groups, it never rehashes.
 */
static void merge_partition(void *arg, const struct morsel *m)
{
	struct group_table *t = arg;
	long n = 0;
	int w;

	for (w = 0; w < t->workers; w++)
		n += t->scattered[w * t->partitions + m->begin].groups;
	group_part_reserve(&t->out[m->begin], t->aggregates, n);
	for (w = 0; w < t->workers; w++)
		group_fold(t, &t->out[m->begin], &t->scattered[w * t->partitions + m->begin]);
}

/* Then partition m->begin's rows to their region of all the groups. */
static void gather_partition(void *arg, const struct morsel *m)
{
	struct group_table *t = arg;
	const struct group_part *out = &t->out[m->begin];
	long stride = 1 + t->aggregates;

	if (out->groups)
		memcpy(t->merged.rows + t->at[m->begin] * stride, out->rows,
		       (size_t)(out->groups * stride) * sizeof(long));
}

/* @job's tasks on the worker pool, or here if there is none. */
static void run_tasks(struct group_table *t, struct job *job)
{
	struct morsel m = { 0, 1, 0 };

	if (merge_pool) {
		pool_run(merge_pool, job);
		t->merge_cpu_ns += job->cpu_ns;
		return;
	}
	for (m.begin = 0; m.begin < job->rows; m.begin++, m.end++)
		job->task(t, &m);
}

/*
 * After the aggregating pipeline's last morsel, called by its finish
 * with the group-by's tag set: the merge runs on the worker pool under
 * that tag and the query execution's word, and the caller waits.
 */
static void group_merge(void *ht)
{
	struct group_table *t = ht;
	struct job job = {
		.task = merge_locked, .arg = t, .tag = tailor_tag_get(), .rows = t->workers,
		.tag_word = t->tag_word,
	};
	uint64_t start = monotonic_ns();
	long n = 0;
	int i;

	if (t->mode != MERGE_PARTITIONED) {
		for (i = 0; i < t->workers; i++)
			n += t->parts[i].groups;
		group_part_reserve(&t->merged, t->aggregates, n);
		run_tasks(t, &job);
		t->merge_wall_ns += monotonic_ns() - start;
		return;
	}
	job.task = scatter_worker;
	run_tasks(t, &job);
	job.task = merge_partition;
	job.rows = t->partitions;
	run_tasks(t, &job);
	for (i = 0; i < t->partitions; i++) {
		t->at[i] = n;
		n += t->out[i].groups;
	}
	t->merged.rows = must_realloc(t->merged.rows,
				      (size_t)((n ? n : 1) * (1 + t->aggregates)) * sizeof(long));
	t->merged.groups = n;
	job.task = gather_partition;
	run_tasks(t, &job);
	t->merge_wall_ns += monotonic_ns() - start;
}

static const long *group_rows(const void *ht, long *count)
{
	const struct group_table *t = ht;

	*count = t->merged.groups;
	return t->merged.rows;
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

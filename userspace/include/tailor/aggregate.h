/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The aggregation pass: one pass over a session's events that filters
 * the samples, attributes each (attribution.h) and keeps what the views
 * and exporters need -- samples per row, per (source line, row), per
 * (time bucket, row), data addresses, samples per (outcome, thread, tag)
 * for stacks, and per-thread runs of one component for traces.  Every
 * view and exporter reads the same struct agg; none reads the file.
 */
#ifndef TAILOR_AGGREGATE_H
#define TAILOR_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tailor/session.h"

struct attributor;
struct symbolizer;

struct agg_options {
	/* Filters: a time window since the first sample, threads, processes. */
	bool windowed;
	uint64_t from_ns, to_ns;
	const uint32_t *tids, *pids;
	int nr_tids, nr_pids;
	/* What to keep besides samples per row. */
	bool lines;		/* per (source line, row) */
	bool buckets;		/* per (time bucket, row) */
	uint64_t bucket_ns;	/* 0: about 40 buckets over the window */
	bool memory;		/* data addresses */
	bool stacks;		/* per (outcome, thread, tag) */
	bool slices;		/* per-thread runs of a row at each stack level */
	bool progress;		/* a progress line on stderr for big inputs */
	/*
	 * What keeps the symbolizer's mappings; NULL: sym_consumer().  A seam
	 * for tests that map a profile's code onto files of their own.
	 */
	struct tev_consumer *mappings;
};

struct agg_line_count {
	uint32_t line, row;
	uint64_t samples;
};

struct agg_bucket_count {
	uint64_t bucket;
	uint32_t row;
	uint64_t samples;
};

struct agg_mem_point {
	uint64_t ns;		/* since the profile's first sample */
	uint64_t addr;
	uint32_t row;
};

struct agg_stack_count {
	uint32_t outcome;
	uint32_t pid, tid;
	bool has_tag;
	uint64_t tag;
	uint64_t samples;
	uint64_t period;	/* the samples' periods summed */
};

/* A run of one thread's consecutive samples with one row at a stack level. */
struct agg_slice {
	uint32_t pid, tid;
	int level;		/* index into the stack levels */
	uint32_t row;
	uint64_t begin_ns, end_ns;	/* since the first sample */
	uint64_t samples;
};

struct agg_thread {
	uint32_t pid, tid;
	char name[64];		/* its comm, "" if never seen */
	uint64_t samples;
};

struct agg {
	const struct session_info *info;
	struct attributor *attr;
	struct agg_options opt;
	/* The window, after defaults: from_ns..from_ns + span_ns. */
	uint64_t span_ns;
	uint64_t nr_buckets;
	/* What a sample stands for in ns (the period, or the mean spacing). */
	uint64_t sample_ns;

	uint64_t total, filtered_out, lost;
	uint64_t *row_samples;
	size_t cap_rows;
	struct agg_line_count *lines;
	size_t nr_lines, cap_lines;
	struct agg_bucket_count *buckets;
	size_t nr_bucket_counts, cap_bucket_counts;
	struct agg_mem_point *mem;	/* in time order */
	size_t nr_mem, cap_mem;
	struct agg_stack_count *stacks;
	size_t nr_stacks, cap_stacks;
	struct agg_slice *slices;	/* per thread in time order, parents first */
	size_t nr_slices, cap_slices;
	struct agg_thread *threads;	/* in order of first appearance */
	size_t nr_threads, cap_threads;

	void *priv;			/* the pass's indexes */
};

/*
 * Check @o against the session and work out the window and buckets: 0,
 * or -EINVAL with a message in @err (times unknown in ns, too many
 * buckets).  Then agg_run() makes the one pass.
 */
int agg_prepare(struct agg *g, const struct session_info *info,
		struct attributor *attr, const struct agg_options *o,
		char *err, size_t errlen);
/* 0; -ENOMEM; or what a consumer returned. */
int agg_run(struct agg *g, struct session *s, struct symbolizer *sym);
void agg_free(struct agg *g);

static inline uint64_t agg_row_samples(const struct agg *g, size_t row)
{
	return row < g->cap_rows ? g->row_samples[row] : 0;
}

/* Samples of the rows the level reached. */
uint64_t agg_attributed(const struct agg *g);
/* @samples as a percentage of all samples counted. */
double agg_share(const struct agg *g, uint64_t samples);
/* Rows with samples, most first, ties by name (caller frees); count in *n. */
uint32_t *agg_rows_by_samples(const struct agg *g, size_t *n);
/* Each row's rank by samples (0: most; INT32_MAX: none), for legends. */
int *agg_row_ranks(const struct agg *g);
/* The bucket counts by (bucket, samples descending, row); caller frees. */
struct agg_bucket_count *agg_sorted_buckets(const struct agg *g);
/* The most samples a bucket of @b holds. */
uint64_t agg_fullest_bucket(const struct agg_bucket_count *b, size_t n);

#endif /* TAILOR_AGGREGATE_H */

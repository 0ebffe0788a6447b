/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The aggregation pass: one pass over a session's events that filters
 * the samples, attributes each (attribution.h) and keeps what the views
 * and exporters need -- samples per row, per (source line, row), per
 * (time bucket, row), data addresses, samples per (outcome, thread, tag)
 * for stacks, per-thread runs of one component for traces, per (query,
 * row), and per-thread runs of one (query, row) for lanes.  Every view
 * and exporter reads the same struct agg; none reads the file.
 *
 * Filters drop samples before anything counts them: threads, processes
 * and the time window here; queries in the attributor
 * (attr_select_queries()), whose excluded samples also end the runs of
 * their thread, so that slices and lanes never span another query's
 * time.
 */
#ifndef TAILOR_AGGREGATE_H
#define TAILOR_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tailor/parallelism.h"
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
	/*
	 * Each sample that carries a call stack (perf record -g): its time
	 * and its stack, for a trace's sampled stacks.  Without stacks, the
	 * stacks of those samples alone are kept.  16 bytes a sample, none
	 * for a profile without call stacks.
	 */
	bool sample_stacks;
	bool slices;		/* per-thread runs of a row at each stack level */
	bool by_query;		/* per (query, row): needs attr_options.queries */
	bool lanes;		/* per-thread runs of one (query, row) */
	/*
	 * Per (row, process): the process named as its main thread was
	 * when the sample was taken (an exec renames it), as perf's comm.
	 */
	bool processes;
	/*
	 * The CMetric of the threads of one process (parallelism.h): of
	 * --pid's if one is given, else of the recorded process, else of
	 * every process's.  Critical slices: average parallelism at most
	 * critical_threshold (0: half the threads that ran, as GAPP).
	 */
	bool parallelism;
	double critical_threshold;
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

/*
 * A caller's frame of a call stack (perf record -g), symbolized: its
 * function (or a bucket: [kernel], [object], [unknown]), source line and
 * object where known.
 */
struct agg_frame {
	const char *function;
	const char *file;	/* or NULL */
	uint32_t line;		/* 0 if unknown */
	const char *object;	/* the mapped file, or NULL */
	bool kernel;
};

/* A call stack's callers, root first: frames[first .. first + n). */
struct agg_chain {
	uint32_t first, n;
};

struct agg_stack_count {
	uint32_t outcome;
	uint32_t chain;		/* its callers: index into chains; 0: none recorded */
	uint32_t pid, tid;
	bool has_tag;
	uint64_t tag;
	/* Its OpenTelemetry context: index into otel_ids; 0: none. */
	uint32_t otel;
	uint64_t samples;
	uint64_t period;	/* the samples' periods summed */
};

/* A sample of stack_samples: when, and which of the stacks it counts in. */
struct agg_stack_sample {
	uint64_t ns;		/* since the first sample */
	uint32_t stack;		/* index into stacks */
};

/* A run of one thread's consecutive samples with one row at a stack level. */
struct agg_slice {
	uint32_t pid, tid;
	int level;		/* index into the stack levels */
	uint32_t row;
	uint64_t begin_ns, end_ns;	/* since the first sample */
	uint64_t samples;
};

/* Samples of a row within one query (the row at the query level). */
struct agg_query_count {
	uint32_t query, row;
	uint64_t samples;
};

/*
 * A lane's run: one thread's consecutive samples with one row at the
 * main level and one query (ATTR_NONE without queries).  Runs end as
 * slices do: at the thread's next sample, or a sample's worth of time
 * after its last one when the thread was gone longer than two.
 */
struct agg_lane {
	uint32_t thread;	/* index into threads */
	uint32_t query, row;
	uint64_t begin_ns, end_ns;	/* since the first sample */
	uint64_t samples;
};

/* A (query, row) pair of the lanes, with its samples. */
struct agg_lane_key {
	uint32_t query, row;
	uint64_t samples;
};

struct agg_process {
	char name[64];		/* its main thread's comm, or ":PID" if never seen */
	uint64_t samples;
};

struct agg_process_count {
	uint32_t row, process;	/* process: index into processes */
	uint64_t samples;
	uint64_t period;	/* the samples' periods summed */
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
	/*
	 * The samples' periods (the event's count each stands for): per
	 * row, summed; over all; samples without one; the least and most.
	 */
	uint64_t *row_period;
	uint64_t total_period, unweighted, min_period, max_period;
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
	/*
	 * The OpenTelemetry contexts (trace and span ids) the stacks' samples
	 * ran in; entry 0 stands for none.
	 */
	struct agg_otel_ids {
		uint8_t trace_id[16];
		uint8_t span_id[8];
	} *otel_ids;
	size_t nr_otel_ids, cap_otel_ids;
	/* Call stacks (perf record -g): chain 0 is the empty one. */
	struct agg_chain *chains;
	size_t nr_chains, cap_chains;
	struct agg_frame *frames;
	size_t nr_frames, cap_frames;
	/* With opt.sample_stacks: the samples with call stacks, in time order. */
	struct agg_stack_sample *stack_samples;
	size_t nr_stack_samples, cap_stack_samples;
	struct agg_slice *slices;	/* per thread in time order, parents first */
	size_t nr_slices, cap_slices;
	struct agg_thread *threads;	/* in order of first appearance */
	size_t nr_threads, cap_threads;
	struct agg_query_count *query_counts;
	size_t nr_query_counts, cap_query_counts;
	struct agg_lane *lanes;		/* in order of their beginning */
	size_t nr_lanes, cap_lanes;
	/* With opt.processes: processes by name, in order of first sample. */
	struct agg_process *processes;
	size_t nr_processes, cap_processes;
	struct agg_process_count *process_counts;
	size_t nr_process_counts, cap_process_counts;
	struct agg_parallelism par;	/* with opt.parallelism */

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

/* A row's samples' periods summed (0 for a query's part, which has none). */
static inline uint64_t agg_row_period(const struct agg *g, size_t row)
{
	return g->row_period && row < g->cap_rows ? g->row_period[row] : 0;
}

/*
 * Whether the table's shares weigh each sample by its period, as perf
 * report's overhead does: where every sample has one and they differ
 * (perf record -F of a counting event: cycles, page-faults); equal
 * periods (a clock, -c N) give the samples' own shares.
 */
bool agg_weighted(const struct agg *g);
/* A row's weight: its periods summed where weighted, else its samples. */
uint64_t agg_row_weight(const struct agg *g, size_t row);
/* @weight (a row's, or a sum of periods or samples) as a share of all. */
double agg_weight_share(const struct agg *g, uint64_t weight);
/* Rows with samples, most weight first, ties by name (caller frees). */
uint32_t *agg_rows_by_weight(const struct agg *g, size_t *n);

/* Samples of the rows the level reached. */
uint64_t agg_attributed(const struct agg *g);
/* @samples as a percentage of all samples counted. */
double agg_share(const struct agg *g, uint64_t samples);
/* Rows with samples, most first, ties by name (caller frees); count in *n. */
uint32_t *agg_rows_by_samples(const struct agg *g, size_t *n);

/*
 * Self and total per function, as perf report --children gives them, from
 * the call stacks (perf record -g): a function's self samples are those
 * of its rows; its total, the samples with it anywhere on their stack
 * (once a sample, however often it recurs).  Most total first, then most
 * self, then by name; callers no sample hit on its own have self 0.
 * NULL without memory.  children.c.
 */
struct agg_children_row {
	const char *name;
	uint64_t self, total;
};
struct agg_children_row *agg_children(const struct agg *g, size_t *n);
/* Each row's rank by samples (0: most; INT32_MAX: none), for legends. */
int *agg_row_ranks(const struct agg *g);
/* The bucket counts by (bucket, samples descending, row); caller frees. */
struct agg_bucket_count *agg_sorted_buckets(const struct agg *g);
/* The most samples a bucket of @b holds. */
uint64_t agg_fullest_bucket(const struct agg_bucket_count *b, size_t n);

/* ---- per query (by_query) ---- */

/* The queries with samples, most first, ties by name (caller frees); count in *n. */
uint32_t *agg_queries_by_samples(const struct agg *g, size_t *n);
/* The samples of @query. */
uint64_t agg_query_samples(const struct agg *g, uint32_t query);
/*
 * @part becomes @g seen through one query: its rows' samples and total
 * are the query's own (row_samples allocated; agg_part_free() frees it),
 * everything else is @g's, borrowed.  0, or -ENOMEM.
 */
int agg_query_part(const struct agg *g, uint32_t query, struct agg *part);
void agg_part_free(struct agg *part);

/* ---- lanes ---- */

/* The distinct (query, row) pairs of the lanes, most samples first (caller frees). */
struct agg_lane_key *agg_lane_keys(const struct agg *g, size_t *n);
/* The index of (@query, @row) in @keys, or -1. */
int agg_lane_key_index(const struct agg_lane_key *keys, size_t n, uint32_t query, uint32_t row);
/*
 * The lanes as a grid: per thread (in threads' order) and column (@ncols
 * of @col_ns from the window's start), the index into @keys of the pair
 * that ran longest in that column, or -1 where the thread ran nothing.
 * nr_threads * @ncols entries (caller frees); NULL without memory.
 */
int *agg_lane_grid(const struct agg *g, const struct agg_lane_key *keys, size_t nkeys,
		   uint64_t col_ns, size_t ncols);

#endif /* TAILOR_AGGREGATE_H */

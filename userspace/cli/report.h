/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tailor report: one pass attributes the samples (lib/attribution.c) and
 * aggregates what the views need; the views (report_views.c,
 * report_timeline.c, report_html.c) only print aggregates.
 */
#ifndef TAILOR_CLI_REPORT_H
#define TAILOR_CLI_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "../lib/hashmap.h"
#include "tailor/attribution.h"
#include "tailor/profile.h"

enum report_format { FMT_TEXT, FMT_CSV, FMT_JSON };

struct line_count {
	uint32_t line, row;
	uint64_t samples;
};

struct bucket_count {
	uint64_t bucket;
	uint32_t row;
	uint64_t samples;
};

struct mem_point {
	uint64_t ns;		/* since the profile's first sample */
	uint64_t addr;
	uint32_t row;
};

struct report {
	const char *input;
	const struct prof_info *info;
	struct attributor *attr;
	const char *const *dict_paths;
	int nr_dicts;

	/* filters */
	uint64_t from_ns, to_ns;	/* window since the first sample */
	bool windowed;
	uint32_t *tids, *pids;
	int nr_tids, nr_pids;

	/* aggregates */
	uint64_t total, filtered_out;
	uint64_t *row_samples;
	size_t cap_rows;
	struct line_count *lines;
	size_t nr_lines, cap_lines;
	struct pair_map line_index;
	bool want_timeline, want_memory;
	uint64_t bucket_ns, nr_buckets;
	struct bucket_count *buckets;
	size_t nr_bucket_counts, cap_bucket_counts;
	struct pair_map bucket_index;
	struct mem_point *mem;
	size_t nr_mem, cap_mem;
	uint64_t span_ns;		/* of the window */

	/* options of the views */
	int top;			/* rows shown by text views; 0: all */
	const char *source_filter;
};

static inline uint64_t report_row_samples(const struct report *r, size_t row)
{
	return row < r->cap_rows ? r->row_samples[row] : 0;
}

double report_share(const struct report *r, uint64_t samples);
uint64_t report_attributed(const struct report *r);

int view_table(const struct report *r, FILE *out, enum report_format fmt);
int view_plan(const struct report *r, FILE *out, enum report_format fmt);
int view_source(const struct report *r, FILE *out, enum report_format fmt);
int view_timeline(const struct report *r, FILE *out, enum report_format fmt);
int view_memory(const struct report *r, FILE *out, enum report_format fmt);
int write_timeline_svg(const struct report *r, FILE *out);
int write_memory_svg(const struct report *r, FILE *out);
int write_html(const struct report *r, const char *path);

/* Output helpers. */
void csv_str(FILE *out, const char *s);
void json_str(FILE *out, const char *s);
void xml_str(FILE *out, const char *s);
const char *row_kind_name(const struct attr_row *row);
/* Rows with samples, most first (caller frees); count in *n. */
uint32_t *rows_by_samples(const struct report *r, size_t *n);
/* "12.5ms" style for @ns into @buf. */
const char *fmt_ns(uint64_t ns, char *buf, size_t len);

#endif /* TAILOR_CLI_REPORT_H */

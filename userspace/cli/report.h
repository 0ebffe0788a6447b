/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tailor report: the aggregation pass (lib/analysis) feeds every view;
 * a view turns the aggregates into a document (tailor/export.h) and never
 * writes a format itself.  One file a view (view_*.c); the page that
 * shows them all is report_html.c.
 */
#ifndef TAILOR_CLI_REPORT_H
#define TAILOR_CLI_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/export.h"
#include "tailor/session.h"

struct view;

struct report {
	const char *input;
	const struct session_info *info;
	struct attributor *attr;
	struct agg agg;
	const char *const *dict_paths;
	int nr_dicts;
	/* options of the views */
	int top;			/* rows shown by text tables; 0: all */
	const char *source_filter;
	bool by_query;			/* table and plan: a section per query */
	bool children;			/* table: total per function beside self */
	uint64_t bucket_ns;		/* --bucket, or 0 */
	const char *query_filter;	/* --query's values, for the header; or NULL */
	const struct view *view;	/* the one asked for */
	/* Which kernel symbols named kernel functions, or why none: the header's. */
	char kernel_symbols[256];
};

/* What a view needs the pass to keep besides samples per row. */
#define VIEW_NEEDS_LINES	1u
#define VIEW_NEEDS_BUCKETS	2u
#define VIEW_NEEDS_MEMORY	4u
#define VIEW_NEEDS_DICT_LEVEL	8u	/* a level a dictionary declares */
#define VIEW_NEEDS_ADDRESSES	16u	/* samples with data addresses */
#define VIEW_NEEDS_LANES	32u	/* per-thread runs of (query, row) */
#define VIEW_BY_QUERY		64u	/* knows --by-query */
#define VIEW_NEEDS_SWITCHES	128u	/* context switches: the CMetric */
#define VIEW_NEEDS_STACK	256u	/* every sample's function and line too */
#define VIEW_NEEDS_STATES	512u	/* threads' states, where the input has switches */

struct view {
	const char *name;
	const char *help;
	unsigned int needs;		/* VIEW_NEEDS_* */
	int (*build)(const struct report *r, struct doc *d);
};

extern const struct view view_table, view_plan, view_source, view_timeline, view_memory,
	view_lanes, view_parallelism;
extern const struct view *const views[];	/* NULL-terminated */

/* Shared by the views: the text header, JSON profile fields, the notes. */
void report_header(const struct report *r, struct doc *d);
void report_meta(const struct report *r, struct doc *d);
void report_notes(const struct report *r, struct doc *d);
const char *row_kind_name(const struct attr_row *row);
const char *row_name(const struct report *r, uint32_t row);
/* Whether the table is of code (function or line level): with objects. */
bool table_by_code(const struct report *r);
/* "## query fig3 #1: 300 samples (12.50% of all)": a section's title line. */
const char *query_title(const struct report *r, struct doc *d, uint32_t query,
			uint64_t samples);
/* --by-query's JSON table of the queries, and its row for one of them. */
struct doc_table *queries_table(struct doc *d);
void queries_row(const struct report *r, struct doc *d, struct doc_table *t,
		 uint32_t query, uint64_t samples);
/* The lanes view's column width (view_lanes.c). */
uint64_t lanes_column_ns(const struct report *r);

/* The page with every view (report_html.c). */
int write_html(const struct report *r, const char *path);

#endif /* TAILOR_CLI_REPORT_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The table view: cost per component of the level, most first; with
 * --by-query, a section per query (most samples first), each row's share
 * within its query, and one data table with a query column.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"
#include "util/path.h"

static const struct doc_column text_cols[] = {
	{ .name = "share", .type = DOC_SHARE, .width = 8, .sep = "" },
	{ .name = "samples", .type = DOC_U64, .width = 10 },
	{ .name = "name", .type = DOC_STR, .sep = "  " },
};

/* The text table's columns, its last headed by the level. */
static struct doc_table *text_table(const struct report *r, struct doc *d)
{
	struct doc_column cols[3];
	int i;

	for (i = 0; i < 3; i++)
		cols[i] = text_cols[i];
	cols[2].heading = attr_level_name(r->attr);
	return doc_table(d, "table", DOC_TEXT, cols, 3);
}

/*
 * @g's rows (the whole profile's, or one query's) into @data and @text;
 * the rows --top left out of the text in *@hidden.
 */
static int table_rows(const struct report *r, const struct agg *g, struct doc *d,
		      struct doc_table *data, struct doc_table *text, uint32_t query,
		      size_t *hidden)
{
	size_t i, n;
	uint32_t *rows = agg_rows_by_weight(g, &n);

	if (!rows)
		return -1;
	for (i = 0; i < n; i++) {
		const struct attr_row *row = attr_row(r->attr, rows[i]);
		uint64_t s = agg_row_samples(g, rows[i]);
		double share = agg_weight_share(g, agg_row_weight(g, rows[i]));

		doc_row(d, data, 0);
		if (query != ATTR_NONE)
			doc_cell(d, data, doc_str(row_name(r, query)));
		doc_cell(d, data, doc_str(row->name));
		doc_cell(d, data, doc_str(row_kind_name(row)));
		doc_cell(d, data, doc_u64(s));
		doc_cell(d, data, doc_share(share));
		if (query != ATTR_NONE) {
			doc_cell(d, data, doc_u64(g->total));
			doc_cell(d, data, doc_share(agg_share(&r->agg, g->total)));
		}
		if (r->top && i >= (size_t)r->top)
			continue;
		doc_row(d, text, 0);
		doc_cell(d, text, doc_share(share));
		doc_cell(d, text, doc_u64(s));
		doc_cell(d, text, doc_str(row->name));
	}
	*hidden = r->top && n > (size_t)r->top ? n - r->top : 0;
	free(rows);
	return 0;
}

static int build_by_query(const struct report *r, struct doc *d)
{
	static const struct doc_column data_cols[] = {
		{ .name = "query", .type = DOC_STR },
		{ .name = "name", .type = DOC_STR }, { .name = "kind", .type = DOC_STR },
		{ .name = "samples", .type = DOC_U64 }, { .name = "share", .type = DOC_SHARE },
		{ .name = "query_samples", .type = DOC_U64 },
		{ .name = "query_share", .type = DOC_SHARE },
	};
	const struct agg *g = &r->agg;
	struct doc_table *data, *queries, *text;
	uint32_t *q = NULL;
	size_t i, n, hidden;
	struct agg part;
	int ret = 0;

	report_header(r, d);
	q = agg_queries_by_samples(g, &n);
	if (!q)
		return -1;
	doc_header(d, "# by query: %zu sections, most samples first; shares within each query", n);
	report_meta(r, d);
	data = doc_table(d, "rows", DOC_DATA, data_cols, 7);
	queries = queries_table(d);
	for (i = 0; i < n && !ret; i++) {
		if (agg_query_part(g, q[i], &part)) {
			ret = -1;
			break;
		}
		queries_row(r, d, queries, q[i], part.total);
		text = text_table(r, d);
		doc_table_title(d, text, "%s", query_title(r, d, q[i], part.total));
		ret = table_rows(r, &part, d, data, text, q[i], &hidden);
		if (hidden) {
			doc_row(d, text, 0);
			doc_cell(d, text, doc_null());
			doc_cell(d, text, doc_null());
			doc_cell(d, text, doc_str(doc_printf(d, "(%zu more row%s: --top 0 shows all)",
							     hidden, hidden == 1 ? "" : "s")));
		}
		agg_part_free(&part);
	}
	report_notes(r, d);
	free(q);
	return ret ? ret : d->error;
}

/* --children: self and total per function, from the call stacks. */
static int build_children(const struct report *r, struct doc *d)
{
	static const struct doc_column data_cols[] = {
		{ .name = "name", .type = DOC_STR }, { .name = "samples", .type = DOC_U64 },
		{ .name = "share", .type = DOC_SHARE }, { .name = "total_samples", .type = DOC_U64 },
		{ .name = "total_share", .type = DOC_SHARE },
	};
	static const struct doc_column text_cols[] = {
		{ .name = "total", .type = DOC_SHARE, .width = 8, .sep = "" },
		{ .name = "self", .type = DOC_SHARE, .width = 8, .sep = "  " },
		{ .name = "samples", .type = DOC_U64, .width = 10 },
		{ .name = "self_samples", .heading = "self", .type = DOC_U64, .width = 8 },
		{ .name = "function", .type = DOC_STR, .sep = "  " },
	};
	const struct agg *g = &r->agg;
	struct agg_children_row *rows;
	struct doc_table *data, *text;
	size_t i, n;

	rows = agg_children(g, &n);
	if (!rows)
		return -1;
	report_header(r, d);
	doc_header(d, "# --children: total, the samples with the function anywhere on their call stack; self, its own");
	report_meta(r, d);
	data = doc_table(d, "rows", DOC_DATA, data_cols, 5);
	text = doc_table(d, "table", DOC_TEXT, text_cols, 5);
	for (i = 0; i < n; i++) {
		doc_row(d, data, 0);
		doc_cell(d, data, doc_str(rows[i].name));
		doc_cell(d, data, doc_u64(rows[i].self));
		doc_cell(d, data, doc_share(agg_share(g, rows[i].self)));
		doc_cell(d, data, doc_u64(rows[i].total));
		doc_cell(d, data, doc_share(agg_share(g, rows[i].total)));
		if (r->top && i >= (size_t)r->top)
			continue;
		doc_row(d, text, 0);
		doc_cell(d, text, doc_share(agg_share(g, rows[i].total)));
		doc_cell(d, text, doc_share(agg_share(g, rows[i].self)));
		doc_cell(d, text, doc_u64(rows[i].total));
		doc_cell(d, text, doc_u64(rows[i].self));
		doc_cell(d, text, doc_str(rows[i].name));
	}
	if (r->top && n > (size_t)r->top)
		doc_footer(d, "# %zu more rows (--top 0 shows all)", n - r->top);
	report_notes(r, d);
	free(rows);
	return d->error;
}

/*
 * How the shares weigh samples: by their periods where those differ (a
 * counting event sampled at a frequency), as perf report's overhead.
 */
static void weighting(const struct report *r, struct doc *d)
{
	const struct agg *g = &r->agg;

	doc_meta(d, NULL, "weight", doc_str(agg_weighted(g) ? "period" : "samples"));
	doc_meta(d, NULL, "total_period", doc_u64(g->total_period));
	if (agg_weighted(g))
		doc_header(d, "# shares weigh each sample by its period, the events it stands for (%" PRIu64 " in all; %" PRIu64 " to %" PRIu64 " a sample), as perf report's overhead does",
			   g->total_period, g->min_period, g->max_period);
}

/* The object a code row is in, as perf's dso column names it. */
static const char *object_of(const struct attr_row *row)
{
	if (row->kind == ROW_KERNEL)
		return "[kernel.kallsyms]";
	return row->object ? path_base(row->object) : "[unknown]";
}

/* A row's (or a process's part of it) weight, as agg_row_weight() weighs. */
static uint64_t count_weight(const struct agg *g, const struct agg_process_count *c)
{
	return agg_weighted(g) ? c->period : c->samples;
}

/* Most weight first; ties by name, as the other tables break them, then process. */
static int cmp_process_counts(const void *a, const void *b, void *ctx)
{
	const struct agg_process_count *x = a, *y = b;
	const struct agg *g = ctx;
	uint64_t wx = count_weight(g, x), wy = count_weight(g, y);
	int by_name;

	if (wx != wy)
		return wx < wy ? 1 : -1;
	by_name = strcmp(attr_row(g->attr, x->row)->name, attr_row(g->attr, y->row)->name);
	if (by_name)
		return by_name;
	return x->row != y->row ? (x->row < y->row ? -1 : 1) :
	       (x->process > y->process) - (x->process < y->process);
}

/*
 * The function and line levels: each row with its object, as perf's
 * default comm,dso,sym; and, where several processes had samples, a row
 * per (process, row), each process named as its main thread was.
 */
static int build_code_table(const struct report *r, struct doc *d)
{
	static const struct doc_column data_cols[] = {
		{ .name = "name", .type = DOC_STR }, { .name = "kind", .type = DOC_STR },
		{ .name = "samples", .type = DOC_U64 }, { .name = "share", .type = DOC_SHARE },
		{ .name = "object", .type = DOC_STR }, { .name = "path", .type = DOC_STR },
		{ .name = "process", .type = DOC_STR },
	};
	static const struct doc_column text_cols[] = {
		{ .name = "share", .type = DOC_SHARE, .width = 8, .sep = "" },
		{ .name = "samples", .type = DOC_U64, .width = 10 },
		{ .name = "process", .type = DOC_STR, .width = -15, .maxlen = 15, .sep = "  " },
		{ .name = "object", .type = DOC_STR, .width = -20, .sep = "  " },
		{ .name = "name", .type = DOC_STR, .sep = "  " },
	};
	const struct agg *g = &r->agg;
	struct agg_process_count *counts;
	struct doc_column cols[5];
	struct doc_table *data, *text;
	bool split = false;
	size_t i, n, with_samples = 0;
	int c;

	for (i = 0; i < g->nr_processes; i++)
		with_samples += g->processes[i].samples != 0;
	split = with_samples > 1;
	if (split) {
		n = g->nr_process_counts;
		counts = malloc((n ? n : 1) * sizeof(*counts));
		if (!counts)
			return -1;
		memcpy(counts, g->process_counts, n * sizeof(*counts));
	} else {
		uint32_t *rows = agg_rows_by_samples(g, &n);

		if (!rows)
			return -1;
		counts = malloc((n ? n : 1) * sizeof(*counts));
		for (i = 0; counts && i < n; i++)
			counts[i] = (struct agg_process_count){
				rows[i], 0, agg_row_samples(g, rows[i]), agg_row_period(g, rows[i]) };
		free(rows);
		if (!counts)
			return -1;
	}
	qsort_r(counts, n, sizeof(*counts), cmp_process_counts, (void *)g);
	report_header(r, d);
	if (split)
		doc_header(d, "# %zu processes had samples: a row per process and %s", with_samples,
			   attr_level_name(r->attr));
	weighting(r, d);
	report_meta(r, d);
	/* The table's first columns are the other levels': process comes last. */
	data = doc_table(d, "rows", DOC_DATA, data_cols, 7 - !split);
	for (c = 0; c < 5; c++)
		cols[c] = text_cols[c];
	cols[4].heading = attr_level_name(r->attr);
	if (!split)
		memmove(&cols[2], &cols[3], 2 * sizeof(cols[0]));
	text = doc_table(d, "table", DOC_TEXT, cols, 5 - !split);
	for (i = 0; i < n; i++) {
		const struct attr_row *row = attr_row(r->attr, counts[i].row);
		const char *process = split ? g->processes[counts[i].process].name : NULL;

		doc_row(d, data, 0);
		doc_cell(d, data, doc_str(row->name));
		doc_cell(d, data, doc_str(row_kind_name(row)));
		doc_cell(d, data, doc_u64(counts[i].samples));
		doc_cell(d, data, doc_share(agg_weight_share(g, count_weight(g, &counts[i]))));
		doc_cell(d, data, doc_str(object_of(row)));
		doc_cell(d, data, row->object ? doc_str(row->object) : doc_null());
		if (split)
			doc_cell(d, data, doc_str(process));
		if (r->top && i >= (size_t)r->top)
			continue;
		doc_row(d, text, 0);
		doc_cell(d, text, doc_share(agg_weight_share(g, count_weight(g, &counts[i]))));
		doc_cell(d, text, doc_u64(counts[i].samples));
		if (split)
			doc_cell(d, text, doc_str(process));
		doc_cell(d, text, doc_str(object_of(row)));
		doc_cell(d, text, doc_str(row->name));
	}
	if (r->top && n > (size_t)r->top)
		doc_footer(d, "# %zu more rows (--top 0 shows all)", n - r->top);
	report_notes(r, d);
	free(counts);
	return d->error;
}

bool table_by_code(const struct report *r)
{
	const char *level = attr_level_name(r->attr);

	return !attr_level_is_dict(r->attr) &&
	       (!strcmp(level, "function") || !strcmp(level, "line"));
}

static int build_table(const struct report *r, struct doc *d)
{
	static const struct doc_column data_cols[] = {
		{ .name = "name", .type = DOC_STR }, { .name = "kind", .type = DOC_STR }, { .name = "samples", .type = DOC_U64 },
		{ .name = "share", .type = DOC_SHARE },
	};
	struct doc_table *data, *text;
	size_t hidden;

	if (r->by_query)
		return build_by_query(r, d);
	if (r->children)
		return build_children(r, d);
	if (table_by_code(r))
		return build_code_table(r, d);
	report_header(r, d);
	weighting(r, d);
	report_meta(r, d);
	data = doc_table(d, "rows", DOC_DATA, data_cols, 4);
	text = text_table(r, d);
	if (table_rows(r, &r->agg, d, data, text, ATTR_NONE, &hidden))
		return -1;
	if (hidden)
		doc_footer(d, "# %zu more rows (--top 0 shows all)", hidden);
	report_notes(r, d);
	return d->error;
}

const struct view view_table = {
	.name = "table",
	.help = "cost per component",
	.needs = VIEW_BY_QUERY,
	.build = build_table,
};

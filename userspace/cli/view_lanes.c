// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lanes view: for each thread, which query and which component of the
 * level it ran over time -- the runs of its consecutive samples with one
 * (query, component), as the aggregation pass keeps them (agg_lane).
 * Text draws a lane per thread, a character per column of time; CSV and
 * JSON list the runs themselves.  Where the input has context switches,
 * each thread's lane has a second line with its states (the parallelism
 * pass's runs): running, runnable or blocked, the one it spent the most of
 * the column in; JSON lists those runs too (CSV has the first table only).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

#define DEFAULT_COLUMNS	64

static const char lane_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
#define NR_LANE_CHARS	((int)sizeof(lane_chars) - 1)

/* The column width: --bucket, else 1, 2 or 5 times a power of ten for about 64. */
uint64_t lanes_column_ns(const struct report *r)
{
	uint64_t span = r->agg.span_ns ? r->agg.span_ns : 1, b;

	if (r->bucket_ns)
		return r->bucket_ns;
	for (b = 1; b <= UINT64_MAX / (50 * DEFAULT_COLUMNS); b *= 10) {
		if (span <= b * DEFAULT_COLUMNS)
			return b;
		if (span <= 2 * b * DEFAULT_COLUMNS)
			return 2 * b;
		if (span <= 5 * b * DEFAULT_COLUMNS)
			return 5 * b;
	}
	return span / DEFAULT_COLUMNS + 1;
}

static int cmp_threads(const void *a, const void *b, void *ctx)
{
	const struct agg *g = ctx;
	const struct agg_thread *x = &g->threads[*(const uint32_t *)a];
	const struct agg_thread *y = &g->threads[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_runs(const void *a, const void *b, void *ctx)
{
	const struct agg *g = ctx;
	const struct agg_lane *x = &g->lanes[*(const uint32_t *)a];
	const struct agg_lane *y = &g->lanes[*(const uint32_t *)b];
	uint32_t tx = x->thread, ty = y->thread;
	int c;

	if (tx != ty) {
		c = cmp_threads(&tx, &ty, ctx);
		if (c)
			return c;
	}
	return x->begin_ns < y->begin_ns ? -1 : x->begin_ns > y->begin_ns;
}

static const char *query_name(const struct report *r, uint32_t query)
{
	return query == ATTR_NONE ? NULL : row_name(r, query);
}

static void runs_table(const struct report *r, struct doc *d, uint32_t *order)
{
	static const struct doc_column cols[] = {
		{ .name = "pid", .type = DOC_U64 }, { .name = "tid", .type = DOC_U64 },
		{ .name = "begin_ns", .type = DOC_U64 }, { .name = "end_ns", .type = DOC_U64 },
		{ .name = "query", .type = DOC_STR }, { .name = "component", .type = DOC_STR },
		{ .name = "samples", .type = DOC_U64 },
	};
	const struct agg *g = &r->agg;
	struct doc_table *t = doc_table(d, "runs", DOC_DATA, cols, 7);
	size_t i;

	for (i = 0; i < g->nr_lanes; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, g->nr_lanes, sizeof(*order), cmp_runs, (void *)g);
	for (i = 0; i < g->nr_lanes; i++) {
		const struct agg_lane *l = &g->lanes[order[i]];
		const struct agg_thread *th = &g->threads[l->thread];

		doc_row(d, t, 0);
		doc_cell(d, t, doc_u64(th->pid));
		doc_cell(d, t, doc_u64(th->tid));
		doc_cell(d, t, doc_u64(l->begin_ns));
		doc_cell(d, t, doc_u64(l->end_ns));
		doc_cell(d, t, doc_str(query_name(r, l->query)));
		doc_cell(d, t, doc_str(row_name(r, l->row)));
		doc_cell(d, t, doc_u64(l->samples));
	}
}

/* A state's character in a lane: index enum par_state. */
static const char state_chars[] = " =~_";

/*
 * Thread @thread's states into @lane, a column of @col_ns each: the state
 * it spent the most of the column in (@acc: @ncols x 4 of scratch).
 */
static void state_lane(const struct agg *g, uint32_t thread, uint64_t col_ns, size_t ncols,
		       uint64_t *acc, char *lane)
{
	size_t i, c;

	memset(acc, 0, ncols * 4 * sizeof(*acc));
	for (i = 0; i < g->par.nr_runs; i++) {
		const struct par_run *r = &g->par.runs[i];
		uint64_t b = r->begin_ns > 0 ? (uint64_t)r->begin_ns : 0;
		uint64_t e = r->end_ns > 0 ? (uint64_t)r->end_ns : 0;

		if (r->thread != thread || r->state > PAR_BLOCKED)
			continue;
		for (c = b / col_ns; b < e && c < ncols; c++) {
			uint64_t end = (c + 1) * col_ns < e ? (c + 1) * col_ns : e;

			acc[c * 4 + r->state] += end - b;
			b = end;
		}
	}
	for (c = 0; c < ncols; c++) {
		int best = PAR_UNSEEN, k;

		for (k = PAR_RUNNING; k <= PAR_BLOCKED; k++)
			if (acc[c * 4 + k] > acc[c * 4 + best])
				best = k;
		lane[c] = state_chars[best];
	}
	lane[ncols] = '\0';
}

static void states_table(const struct report *r, struct doc *d)
{
	static const struct doc_column cols[] = {
		{ .name = "pid", .type = DOC_U64 }, { .name = "tid", .type = DOC_U64 },
		{ .name = "begin_ns", .type = DOC_I64 }, { .name = "end_ns", .type = DOC_I64 },
		{ .name = "state", .type = DOC_STR },
	};
	const struct agg_parallelism *par = &r->agg.par;
	struct doc_table *t = doc_table(d, "states", DOC_DATA, cols, 5);
	size_t i;

	for (i = 0; r->agg.opt.parallelism && i < par->nr_runs; i++) {
		const struct par_run *run = &par->runs[i];

		if (run->state == PAR_UNSEEN)
			continue;
		doc_row(d, t, 0);
		doc_cell(d, t, doc_u64(par->threads[run->thread].pid));
		doc_cell(d, t, doc_u64(par->threads[run->thread].tid));
		doc_cell(d, t, doc_i64(run->begin_ns));
		doc_cell(d, t, doc_i64(run->end_ns));
		doc_cell(d, t, doc_str(par_state_name((enum par_state)run->state)));
	}
}

/* The legend: a character per (query, component), most samples first. */
static void legend(const struct report *r, struct doc *d, const struct agg_lane_key *keys,
		   size_t nkeys)
{
	char line[4096];
	size_t i, n = 0;

	for (i = 0; i < nkeys && (int)i < NR_LANE_CHARS; i++) {
		/* A query execution names the pair; a bucket ([kernel]) needs no second name. */
		const char *q = keys[i].query != ATTR_NONE &&
				attr_row(r->attr, keys[i].query)->kind == ROW_COMPONENT ?
				row_name(r, keys[i].query) : NULL;

		if (n + 1 >= sizeof(line) || (i && n > 60)) {
			doc_header(d, "# legend:%.*s", (int)n, line);
			n = 0;
		}
		n += snprintf(line + n, sizeof(line) - n, " %c=%s%s%s", lane_chars[i], q ? q : "",
			      q ? ": " : "", row_name(r, keys[i].row));
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
	}
	doc_header(d, "# legend:%.*s%s .=nothing", (int)n, line,
		   nkeys > (size_t)NR_LANE_CHARS ? " +=other" : "");
}

static int build_lanes(const struct report *r, struct doc *d)
{
	static const struct doc_column text_cols[] = {
		{ .name = "pid", .type = DOC_U64, .width = 7, .sep = "" },
		{ .name = "tid", .type = DOC_U64, .width = 7 },
		{ .name = "comm", .type = DOC_STR, .width = -16, .maxlen = 16, .sep = "  " },
		{ .name = "lane", .type = DOC_STR, .sep = "  " },
	};
	static const struct doc_column thread_cols[] = {
		{ .name = "pid", .type = DOC_U64 }, { .name = "tid", .type = DOC_U64 },
		{ .name = "comm", .type = DOC_STR }, { .name = "samples", .type = DOC_U64 },
	};
	const struct agg *g = &r->agg;
	uint64_t col_ns = lanes_column_ns(r);
	size_t ncols = (size_t)(g->span_ns / col_ns + (g->span_ns % col_ns != 0)), nkeys, i, c;
	struct agg_lane_key *keys = agg_lane_keys(g, &nkeys);
	int *grid = keys ? agg_lane_grid(g, keys, nkeys, col_ns, ncols ? ncols : 1) : NULL;
	uint32_t *order = malloc((g->nr_lanes + g->nr_threads + 1) * sizeof(*order));
	char *lane = malloc(ncols + 2);
	uint64_t *acc = g->opt.parallelism ? calloc(ncols * 4 + 4, sizeof(*acc)) : NULL;
	struct doc_table *text, *threads;
	char t1[32], t2[32], t3[32];
	size_t n;
	long pt;

	if (!keys || !grid || !order || !lane || (g->opt.parallelism && !acc)) {
		free(keys);
		free(grid);
		free(order);
		free(lane);
		free(acc);
		return -1;
	}
	for (i = 0, n = 0; i < g->nr_threads; i++)
		n += g->threads[i].samples != 0;
	report_header(r, d);
	doc_header(d, "# lanes: %zu thread%s, %s..%s, a column %s (--bucket sets it); %s%s",
		   n, n == 1 ? "" : "s", fmt_ns(g->opt.from_ns, t1, sizeof(t1)),
		   fmt_ns(g->opt.from_ns + g->span_ns, t2, sizeof(t2)), fmt_ns(col_ns, t3, sizeof(t3)),
		   attr_has_queries(r->attr) ? "query: " : "", attr_level_name(r->attr));
	legend(r, d, keys, nkeys);
	if (g->opt.parallelism)
		doc_header(d, "# states, the line under each lane: = running, ~ runnable (preempted, or not yet run), _ blocked");
	report_meta(r, d);
	doc_meta(d, NULL, "column_ns", doc_u64(col_ns));
	doc_meta(d, NULL, "queries", doc_bool(attr_has_queries(r->attr)));
	runs_table(r, d, order);
	states_table(r, d);
	threads = doc_table(d, "threads", DOC_JSON, thread_cols, 4);
	text = doc_table(d, "lanes", DOC_TEXT, text_cols, 4);
	for (i = 0; i < g->nr_threads; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, g->nr_threads, sizeof(*order), cmp_threads, (void *)g);
	for (i = 0; i < g->nr_threads; i++) {
		const struct agg_thread *th = &g->threads[order[i]];

		if (!th->samples)
			continue;
		for (c = 0; c < ncols; c++) {
			int k = grid[(size_t)order[i] * ncols + c];

			lane[c] = k < 0 ? '.' : k < NR_LANE_CHARS ? lane_chars[k] : '+';
		}
		lane[ncols] = '\0';
		doc_row(d, threads, 0);
		doc_cell(d, threads, doc_u64(th->pid));
		doc_cell(d, threads, doc_u64(th->tid));
		doc_cell(d, threads, doc_str(th->name));
		doc_cell(d, threads, doc_u64(th->samples));
		doc_row(d, text, 0);
		doc_cell(d, text, doc_u64(th->pid));
		doc_cell(d, text, doc_u64(th->tid));
		doc_cell(d, text, doc_str(th->name[0] ? th->name : "?"));
		doc_cell(d, text, doc_str(lane));
		pt = g->opt.parallelism ? par_thread_index(&g->par, th->pid, th->tid) : -1;
		if (pt < 0)
			continue;
		state_lane(g, (uint32_t)pt, col_ns, ncols, acc, lane);
		doc_row(d, text, 0);
		doc_cell(d, text, doc_null());
		doc_cell(d, text, doc_null());
		doc_cell(d, text, doc_str(""));
		doc_cell(d, text, doc_str(lane));
	}
	report_notes(r, d);
	free(keys);
	free(grid);
	free(order);
	free(lane);
	free(acc);
	return d->error;
}

const struct view view_lanes = {
	.name = "lanes",
	.help = "per thread, the query and component it ran over time",
	.needs = VIEW_NEEDS_LANES | VIEW_NEEDS_STATES,
	.build = build_lanes,
};

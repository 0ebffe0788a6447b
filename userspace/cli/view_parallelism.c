// SPDX-License-Identifier: GPL-2.0-only
/*
 * The parallelism view: where the run was serial.  From the context
 * switches of one process's threads (lib/analysis/parallelism.c, GAPP's
 * CMetric): how many threads could run over time, each thread's CMetric,
 * and the code that ran in the critical slices -- query, component of
 * the level, function and source line -- ranked by the CMetric it
 * carries, with its share of the run's.  Kernel time is split by the
 * function that entered the kernel: a lock holder's page faults are the
 * critical section's as much as its own instructions.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

#define TIMELINE_BUCKETS	100

/* The code of a row of the table: costs of equal rows at its levels merged. */
struct code_key {
	uint32_t special;	/* 0; 1 unsampled; 2 filtered out */
	uint32_t query, row, function, line;
	uint32_t entered_from;	/* kernel samples: the user function that entered */
	uint64_t samples;
	double cm_ns, critical_cm_ns;
};

static uint32_t level_row(const struct report *r, uint32_t outcome, const char *level)
{
	int i, n = attr_nr_stack_levels(r->attr);

	if (outcome == ATTR_NONE)
		return ATTR_NONE;
	for (i = 0; i < n; i++)
		if (!strcmp(attr_stack_level_name(r->attr, i), level))
			return attr_outcome_rows(r->attr, outcome)[i];
	return ATTR_NONE;
}

static int cmp_key(const void *a, const void *b)
{
	const struct code_key *x = a, *y = b;

	if (x->special != y->special)
		return x->special < y->special ? -1 : 1;
	if (x->query != y->query)
		return x->query < y->query ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	if (x->entered_from != y->entered_from)
		return x->entered_from < y->entered_from ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_cost(const void *a, const void *b)
{
	const struct code_key *x = a, *y = b;

	if (x->critical_cm_ns != y->critical_cm_ns)
		return x->critical_cm_ns < y->critical_cm_ns ? 1 : -1;
	if (x->cm_ns != y->cm_ns)
		return x->cm_ns < y->cm_ns ? 1 : -1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return cmp_key(a, b);
}

/*
 * Outcomes differ in rows this view does not show (other stack levels):
 * one entry per (query, component, function, entered from, line), most
 * critical CMetric first.  NULL without memory.
 */
static struct code_key *code_keys(const struct report *r, size_t *n)
{
	const struct agg_parallelism *p = &r->agg.par;
	struct code_key *k = calloc(p->nr_costs ? p->nr_costs : 1, sizeof(*k));
	size_t i, out = 0;

	if (!k)
		return NULL;
	for (i = 0; i < p->nr_costs; i++) {
		const struct par_cost *c = &p->costs[i];
		bool real = c->outcome != ATTR_NONE && c->outcome != PAR_FILTERED;
		bool queries = real && attr_has_queries(r->attr);

		k[i] = (struct code_key){
			.special = c->outcome == ATTR_NONE ? 1 : c->outcome == PAR_FILTERED ? 2 : 0,
			.query = queries ? attr_outcome_query(r->attr, c->outcome) : ATTR_NONE,
			.row = c->row,
			.function = real ? level_row(r, c->outcome, "function") : ATTR_NONE,
			.line = real ? level_row(r, c->outcome, "line") : ATTR_NONE,
			.entered_from = real ? attr_outcome_entered_from(r->attr, c->outcome)
					     : ATTR_NONE,
			.samples = c->samples, .cm_ns = c->cm_ns, .critical_cm_ns = c->critical_cm_ns,
		};
	}
	qsort(k, p->nr_costs, sizeof(*k), cmp_key);
	for (i = 0; i < p->nr_costs; i++) {
		if (out && !cmp_key(&k[out - 1], &k[i])) {
			k[out - 1].samples += k[i].samples;
			k[out - 1].cm_ns += k[i].cm_ns;
			k[out - 1].critical_cm_ns += k[i].critical_cm_ns;
			continue;
		}
		k[out++] = k[i];
	}
	qsort(k, out, sizeof(*k), cmp_cost);
	*n = out;
	return k;
}

static const char *name_or_null(const struct report *r, uint32_t row)
{
	return row == ATTR_NONE ? NULL : row_name(r, row);
}

static double share_of(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

static void code_row(const struct report *r, struct doc *d, struct doc_table *t,
		     const struct code_key *c, size_t rank, bool text)
{
	const struct agg_parallelism *p = &r->agg.par;
	const char *function = name_or_null(r, c->function);
	char via[160];

	/* Text has no room for a column most rows leave empty. */
	if (text && function && c->entered_from != ATTR_NONE) {
		snprintf(via, sizeof(via), "%s from %s", function, row_name(r, c->entered_from));
		function = via;
	}

	doc_row(d, t, 0);
	doc_cell(d, t, doc_u64(rank));
	doc_cell(d, t, doc_f64(c->critical_cm_ns));
	doc_cell(d, t, doc_f64(c->critical_cm_ns / 1e6));
	doc_cell(d, t, doc_share(share_of(c->critical_cm_ns, p->cm_ns)));
	doc_cell(d, t, doc_f64(c->cm_ns));
	doc_cell(d, t, doc_f64(c->cm_ns / 1e6));
	doc_cell(d, t, doc_share(share_of(c->cm_ns, p->cm_ns)));
	doc_cell(d, t, doc_u64(c->samples));
	doc_cell(d, t, doc_str(name_or_null(r, c->query)));
	doc_cell(d, t, doc_str(c->special == 1 ? "[unsampled]" : c->special == 2 ? "[filtered out]" :
			       row_name(r, c->row)));
	doc_cell(d, t, doc_str(function));
	/* Kernel code is named by its function where kernel symbols were read. */
	doc_cell(d, t, doc_str(c->function == ATTR_NONE ? NULL :
			       attr_row(r->attr, c->function)->kind == ROW_KERNEL ? "[kernel]" :
			       attr_row(r->attr, c->function)->object));
	doc_cell(d, t, doc_str(name_or_null(r, c->entered_from)));
	doc_cell(d, t, doc_str(c->entered_from == ATTR_NONE ? NULL :
			       attr_row(r->attr, c->entered_from)->object));
	doc_cell(d, t, doc_str(name_or_null(r, c->line)));
}

/*
 * What ran, most critical CMetric first: every row in CSV and JSON (the
 * CSV's one table), the first --top with any CMetric in text.
 */
static void code_table(const struct report *r, struct doc *d, unsigned int formats,
		       const struct code_key *keys, size_t nkeys)
{
	static const struct doc_column cols[] = {
		{ .name = "rank", .type = DOC_U64, .width = 4, .sep = "" },
		{ .name = "critical_cm_ns", .type = DOC_F64, .prec = 0, .formats = DOC_DATA },
		{ .name = "critical_cm_ms", .type = DOC_F64, .heading = "crit.ms", .width = 9, .prec = 3,
		  .formats = DOC_TEXT },
		{ .name = "critical_share", .type = DOC_SHARE, .heading = "share", .width = 7, .prec = 2 },
		{ .name = "cm_ns", .type = DOC_F64, .prec = 0, .formats = DOC_DATA },
		{ .name = "cm_ms", .type = DOC_F64, .heading = "cm.ms", .width = 9, .prec = 3,
		  .formats = DOC_TEXT },
		{ .name = "cm_share", .type = DOC_SHARE, .heading = "share", .width = 7, .prec = 2 },
		{ .name = "samples", .type = DOC_U64, .width = 8 },
		{ .name = "query", .type = DOC_STR, .width = -14, .maxlen = 24, .sep = "  " },
		{ .name = "component", .type = DOC_STR, .width = -22, .maxlen = 32, .sep = "  " },
		{ .name = "function", .type = DOC_STR, .width = -22, .maxlen = 40, .sep = "  " },
		{ .name = "object", .type = DOC_STR, .formats = DOC_DATA },
		{ .name = "entered_from", .type = DOC_STR, .formats = DOC_DATA },
		{ .name = "entered_from_object", .type = DOC_STR, .formats = DOC_DATA },
		{ .name = "line", .type = DOC_STR, .sep = "  " },
	};
	struct doc_table *t = doc_table(d, formats & DOC_TEXT ? "code_text" : "code", formats,
					cols, 15);
	size_t i, shown = 0;

	if (formats & DOC_TEXT)
		doc_table_title(d, t, "\n## what ran, by CMetric in the critical slices (crit.ms), then in all (cm.ms); shares of the run's CMetric");
	for (i = 0; i < nkeys; i++) {
		if (formats & DOC_TEXT) {
			if (r->top && shown >= (size_t)r->top)
				break;
			if (keys[i].cm_ns <= 0 && keys[i].critical_cm_ns <= 0)
				continue;
		}
		code_row(r, d, t, &keys[i], i + 1, formats & DOC_TEXT);
		shown++;
	}
}

static void thread_tables(const struct report *r, struct doc *d)
{
	static const struct doc_column cols[] = {
		{ .name = "pid", .type = DOC_U64, .width = 7, .sep = "" },
		{ .name = "tid", .type = DOC_U64, .width = 7 },
		{ .name = "name", .type = DOC_STR, .width = -16, .maxlen = 16, .sep = "  " },
		{ .name = "running_ns", .type = DOC_U64, .heading = "running.ms", .formats = DOC_DATA },
		{ .name = "running_ms", .type = DOC_F64, .width = 10, .prec = 3, .formats = DOC_TEXT },
		{ .name = "runnable_ms", .type = DOC_F64, .width = 11, .prec = 3 },
		{ .name = "blocked_ms", .type = DOC_F64, .width = 10, .prec = 3 },
		{ .name = "cm_ns", .type = DOC_F64, .prec = 0, .formats = DOC_DATA },
		{ .name = "cm_ms", .type = DOC_F64, .width = 9, .prec = 3, .formats = DOC_TEXT },
		{ .name = "cm_share", .type = DOC_SHARE, .heading = "share", .width = 7, .prec = 2 },
		{ .name = "parallelism", .type = DOC_F64, .heading = "avg.par", .width = 7, .prec = 2 },
		{ .name = "switches", .type = DOC_U64, .width = 8 },
		{ .name = "preempted", .type = DOC_U64, .width = 9 },
		{ .name = "samples", .type = DOC_U64, .width = 8 },
		/* With wakeup records: how often it was woken, and by whom most. */
		{ .name = "wakeups", .type = DOC_U64, .width = 8 },
		{ .name = "top_waker_tid", .type = DOC_U64, .heading = "waker", .width = 7 },
		{ .name = "top_waker_wakeups", .type = DOC_U64, .formats = DOC_JSON },
	};
	const struct agg_parallelism *p = &r->agg.par;
	int nr_cols = p->wakeups ? 17 : 14;
	struct doc_table *t = doc_table(d, "threads", DOC_TEXT | DOC_JSON, cols, nr_cols);
	size_t i;

	doc_table_title(d, t, "\n## threads: CMetric while running, and the average parallelism then");
	for (i = 0; i < p->nr_threads; i++) {
		const struct par_thread *th = &p->threads[i];

		if (!th->switches && !th->samples)
			continue;
		doc_row(d, t, 0);
		doc_cell(d, t, doc_u64(th->pid));
		doc_cell(d, t, doc_u64(th->tid));
		doc_cell(d, t, doc_str(th->name[0] ? th->name : "?"));
		doc_cell(d, t, doc_u64(th->running_ns));
		doc_cell(d, t, doc_f64(th->running_ns / 1e6));
		doc_cell(d, t, doc_f64(th->runnable_ns / 1e6));
		doc_cell(d, t, doc_f64(th->blocked_ns / 1e6));
		doc_cell(d, t, doc_f64(th->cm_ns));
		doc_cell(d, t, doc_f64(th->cm_ns / 1e6));
		doc_cell(d, t, doc_share(share_of(th->cm_ns, p->cm_ns)));
		doc_cell(d, t, th->cm_ns > 0 ? doc_f64(th->running_ns / th->cm_ns) : doc_null());
		doc_cell(d, t, doc_u64(th->switches));
		doc_cell(d, t, doc_u64(th->preempted));
		doc_cell(d, t, doc_u64(th->samples));
		if (nr_cols > 14) {
			doc_cell(d, t, doc_u64(th->wakeups));
			doc_cell(d, t, th->top_waker_tid ? doc_u64(th->top_waker_tid) : doc_null());
			doc_cell(d, t, doc_u64(th->top_waker_wakeups));
		}
	}
}

static void slice_table(const struct report *r, struct doc *d)
{
	static const struct doc_column cols[] = {
		{ .name = "tid", .type = DOC_U64, .width = 7, .sep = "" },
		{ .name = "name", .type = DOC_STR, .width = -16, .maxlen = 16, .sep = "  " },
		{ .name = "begin_ns", .type = DOC_I64, .width = 13 },
		{ .name = "end_ns", .type = DOC_I64, .width = 13 },
		{ .name = "cm_ns", .type = DOC_F64, .width = 11, .prec = 0 },
		{ .name = "parallelism", .type = DOC_F64, .heading = "avg.par", .width = 7, .prec = 2 },
		{ .name = "samples", .type = DOC_U64, .width = 7 },
		{ .name = "component", .type = DOC_STR, .sep = "  " },
	};
	const struct agg_parallelism *p = &r->agg.par;
	struct doc_table *t = doc_table(d, "slices", DOC_TEXT | DOC_JSON, cols, 8);
	size_t i;

	doc_table_title(d, t, "\n## the most critical slices (a thread's run from switch in to out), most CMetric first");
	for (i = 0; i < p->nr_critical; i++) {
		const struct par_slice *s = &p->critical[i];
		const struct par_thread *th = &p->threads[s->thread];
		uint32_t row = ATTR_NONE;
		size_t k;

		if (r->top && i >= (size_t)r->top)
			break;
		for (k = 0; k < p->nr_costs && s->top_outcome != ATTR_NONE &&
			    s->top_outcome != PAR_FILTERED; k++)
			if (p->costs[k].outcome == s->top_outcome)
				row = p->costs[k].row;
		doc_row(d, t, 0);
		doc_cell(d, t, doc_u64(th->tid));
		doc_cell(d, t, doc_str(th->name[0] ? th->name : "?"));
		doc_cell(d, t, doc_i64(s->begin_ns));
		doc_cell(d, t, doc_i64(s->end_ns));
		doc_cell(d, t, doc_f64(s->cm_ns));
		doc_cell(d, t, doc_f64(s->cm_ns > 0 ? (double)(s->end_ns - s->begin_ns) / s->cm_ns : 0));
		doc_cell(d, t, doc_u64(s->samples));
		doc_cell(d, t, doc_str(s->top_outcome == PAR_FILTERED ? "[filtered out]" :
				       row == ATTR_NONE ? "[unsampled]" : row_name(r, row)));
	}
}

/* Time with n threads active, and the mean over the run's buckets (JSON). */
static void activity_tables(const struct report *r, struct doc *d)
{
	static const struct doc_column hist_cols[] = {
		{ .name = "active", .type = DOC_U64 }, { .name = "ns", .type = DOC_U64 },
		{ .name = "share", .type = DOC_SHARE },
	};
	static const struct doc_column line_cols[] = {
		{ .name = "begin_ns", .type = DOC_I64 }, { .name = "mean_active", .type = DOC_F64, .prec = 3 },
	};
	const struct agg_parallelism *p = &r->agg.par;
	struct doc_table *hist = doc_table(d, "active", DOC_JSON, hist_cols, 3);
	struct doc_table *line = doc_table(d, "timeline", DOC_JSON, line_cols, 2);
	int64_t span = p->end_ns - p->begin_ns, width = span / TIMELINE_BUCKETS + 1;
	double total = (double)(span > 0 ? span : 1), integral = 0;
	int64_t at = p->begin_ns;
	uint32_t n, active = 0;
	size_t i, s = 0;

	for (n = 0; n <= p->max_active && n <= p->nr_threads; n++) {
		doc_row(d, hist, 0);
		doc_cell(d, hist, doc_u64(n));
		doc_cell(d, hist, doc_u64(p->ns_at[n]));
		doc_cell(d, hist, doc_share(100.0 * (double)p->ns_at[n] / total));
	}
	for (i = 0; i < TIMELINE_BUCKETS && span > 0; i++) {
		int64_t begin = p->begin_ns + (int64_t)i * width;
		int64_t end = begin + width < p->end_ns ? begin + width : p->end_ns;

		integral = 0;
		while (at < end) {
			int64_t next = s < p->nr_steps && p->steps[s].ns < end ? p->steps[s].ns : end;

			if (next > at)
				integral += (double)active * (double)(next - at);
			at = next > at ? next : at;
			while (s < p->nr_steps && p->steps[s].ns <= at)
				active = p->steps[s++].active;
		}
		doc_row(d, line, 0);
		doc_cell(d, line, doc_i64(begin));
		doc_cell(d, line, doc_f64(end > begin ? integral / (double)(end - begin) : 0));
		if (end >= p->end_ns)
			break;
	}
}

static void summary_table(const struct report *r, struct doc *d, size_t threads)
{
	static const struct doc_column cols[] = {
		{ .name = "pid", .type = DOC_U64 }, { .name = "threads", .type = DOC_U64 },
		{ .name = "switches", .type = DOC_U64 }, { .name = "wall_ns", .type = DOC_I64 },
		{ .name = "cm_ns", .type = DOC_F64 }, { .name = "critical_cm_ns", .type = DOC_F64 },
		{ .name = "threshold", .type = DOC_F64 }, { .name = "max_active", .type = DOC_U64 },
		{ .name = "samples", .type = DOC_U64 }, { .name = "samples_outside", .type = DOC_U64 },
		{ .name = "unsampled_slices", .type = DOC_U64 }, { .name = "wakeups", .type = DOC_U64 },
	};
	const struct agg_parallelism *p = &r->agg.par;
	struct doc_table *t = doc_table(d, "summary", DOC_JSON, cols, 12);

	doc_row(d, t, 0);
	doc_cell(d, t, doc_u64(p->pid));
	doc_cell(d, t, doc_u64(threads));
	doc_cell(d, t, doc_u64(p->switches));
	doc_cell(d, t, doc_i64(p->end_ns - p->begin_ns));
	doc_cell(d, t, doc_f64(p->cm_ns));
	doc_cell(d, t, doc_f64(p->critical_cm_ns));
	doc_cell(d, t, doc_f64(p->threshold));
	doc_cell(d, t, doc_u64(p->max_active));
	doc_cell(d, t, doc_u64(p->samples));
	doc_cell(d, t, doc_u64(p->samples_outside));
	doc_cell(d, t, doc_u64(p->unsampled_slices));
	doc_cell(d, t, doc_u64(p->wakeups));
}

static int build_parallelism(const struct report *r, struct doc *d)
{
	const struct agg_parallelism *p = &r->agg.par;
	char t1[32], t2[32], hist[512];
	const char *name = NULL;
	size_t i, n = 0, threads = 0, nkeys;
	struct code_key *keys;
	uint32_t a;

	for (i = 0; i < p->nr_threads; i++) {
		threads += p->threads[i].switches || p->threads[i].samples;
		if (p->threads[i].tid == p->pid && p->threads[i].name[0])
			name = p->threads[i].name;
	}
	report_header(r, d);
	if (p->pid)
		doc_header(d, "# parallelism of pid %u%s%s%s: %zu thread%s, %" PRIu64 " switches over %s",
			   p->pid, name ? " (" : "", name ? name : "", name ? ")" : "", threads,
			   threads == 1 ? "" : "s", p->switches,
			   fmt_ns((uint64_t)(p->end_ns - p->begin_ns), t1, sizeof(t1)));
	else
		doc_header(d, "# parallelism of every process's threads: %zu threads, %" PRIu64 " switches over %s",
			   threads, p->switches, fmt_ns((uint64_t)(p->end_ns - p->begin_ns), t1, sizeof(t1)));
	if (p->wakeups)
		doc_header(d, "# %" PRIu64 " wakeups: a woken thread can run from its wakeup", p->wakeups);
	doc_header(d, "# CMetric of the run %s; critical slices (average parallelism <= %.2f, --critical): %zu, %s (%.2f%%)",
		   fmt_ns((uint64_t)llround(p->cm_ns), t1, sizeof(t1)), p->threshold, p->nr_critical,
		   fmt_ns((uint64_t)llround(p->critical_cm_ns), t2, sizeof(t2)),
		   share_of(p->critical_cm_ns, p->cm_ns));
	for (a = 0; a <= p->max_active && a <= p->nr_threads && n < sizeof(hist); a++)
		n += snprintf(hist + n, sizeof(hist) - n, "%s%u: %.1f%%", a ? ", " : "", a,
			      100.0 * (double)p->ns_at[a] /
			      (double)(p->end_ns > p->begin_ns ? p->end_ns - p->begin_ns : 1));
	doc_header(d, "# time with N threads able to run: %s", hist);
	if (p->samples_outside)
		doc_header(d, "# %" PRIu64 " of %" PRIu64 " samples fell where their thread was switched out (clocks disagree, or switches were lost): counted, without CMetric",
			   p->samples_outside, p->samples);
	report_meta(r, d);
	keys = code_keys(r, &nkeys);
	if (!keys)
		return -1;
	code_table(r, d, DOC_DATA, keys, nkeys);
	thread_tables(r, d);
	code_table(r, d, DOC_TEXT, keys, nkeys);
	free(keys);
	slice_table(r, d);
	summary_table(r, d, threads);
	activity_tables(r, d);
	report_notes(r, d);
	return d->error;
}

const struct view view_parallelism = {
	.name = "parallelism",
	.help = "where the run was serial: the CMetric of threads and code",
	.needs = VIEW_NEEDS_SWITCHES | VIEW_NEEDS_STACK,
	.build = build_parallelism,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A filter's terms tested in the order that does the least work (seed 003:
 * predicates re-ordered by measured cost per tuple).
 *
 * What a term costs comes from the profiles: each term of a filter is a
 * task of its own (lower.c), so a profile at --level task gives its CPU
 * time, and dividing by the rows that reached it in that run's order
 * gives its cost a row.  Which rows pass which terms is counted here, on
 * the engine's own data: the filter reads a table, and each term is
 * evaluated on its rows (a strided sample of at most TERMS_SAMPLE_ROWS).
 * Counting the combinations, not one selectivity per term, gives each
 * order's work exactly, with no assumption that the terms are independent;
 * a filter has at most PLAN_MAX_CONJUNCTS terms, so every order is tried.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "feedback.h"

#define TERMS_SAMPLE_ROWS	65536
#define TERMS_MASKS		(1 << PLAN_MAX_CONJUNCTS)
/* A new order must promise this much less work than the one profiled. */
#define TERMS_GAIN		0.97

/* The columns an expression of the filter reads, by expression index. */
struct term_eval {
	const struct plan *plan;
	const int64_t *column[sizeof(((struct plan *)0)->exprs) /
			      sizeof(((struct plan *)0)->exprs[0])];
};

/* Resolve the columns of @e in @t; false if one is not @t's. */
static bool resolve(struct term_eval *ev, const struct database *db, const struct table *t,
		    const struct expr *e)
{
	const struct table *owner;
	const struct column *c;

	if (!e)
		return true;
	if (e->kind == E_COLUMN) {
		c = database_column(db, e->column, &owner);
		if (!c || owner != t)
			return false;
		ev->column[e - ev->plan->exprs] = c->values;
		return true;
	}
	return resolve(ev, db, t, e->left) && resolve(ev, db, t, e->right);
}

/* @e on row @r, as the generated C computes it (a division by 0 gives 0 here). */
static int64_t eval(const struct term_eval *ev, const struct expr *e, size_t r)
{
	int64_t a, b;

	switch (e->kind) {
	case E_COLUMN:
		return ev->column[e - ev->plan->exprs][r];
	case E_CONST:
		return e->value;
	default:
		break;
	}
	a = eval(ev, e->left, r);
	if (e->kind == E_AND && !a)
		return 0;
	b = eval(ev, e->right, r);
	switch (e->kind) {
	case E_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
	case E_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
	case E_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
	case E_DIV: return b && !(a == INT64_MIN && b == -1) ? a / b : 0;
	case E_LT: return a < b;
	case E_LE: return a <= b;
	case E_GT: return a > b;
	case E_GE: return a >= b;
	case E_EQ: return a == b;
	case E_AND: return b != 0;
	default: return 0;
	}
}

/* One filter's terms: what passes, what each costs, and the orders' work. */
struct terms {
	int n;
	/* reach[P]: share of the rows that pass every term in the set P. */
	double reach[TERMS_MASKS];
	double rows;			/* the table's rows: each run reads them all */
	double cost_ns[PLAN_MAX_CONJUNCTS];	/* CPU time a row reaching the term */
	double cost_sum[PLAN_MAX_CONJUNCTS];
	int cost_runs[PLAN_MAX_CONJUNCTS];
};

/* Counts which terms each sampled row passes; false if a term reads another table. */
static bool count_passes(struct terms *tm, const struct plan *plan, const struct op *f,
			 const struct database *db, const struct table *t)
{
	struct term_eval ev;
	double per_mask[TERMS_MASKS] = { 0 }, sampled = 0;
	size_t step = (t->rows + TERMS_SAMPLE_ROWS - 1) / TERMS_SAMPLE_ROWS, r;
	int i, m, p;

	memset(&ev, 0, sizeof(ev));
	ev.plan = plan;
	for (i = 0; i < f->nr_conjuncts; i++)
		if (!resolve(&ev, db, t, f->conjuncts[i]))
			return false;
	for (r = 0; r < t->rows; r += step, sampled++) {
		int mask = 0;

		for (i = 0; i < f->nr_conjuncts; i++)
			if (eval(&ev, f->conjuncts[i], r))
				mask |= 1 << i;
		per_mask[mask]++;
	}
	/* A set's reach: the rows whose passes include all of it. */
	for (p = 0; p < 1 << tm->n; p++) {
		tm->reach[p] = 0;
		for (m = 0; m < 1 << tm->n; m++)
			if ((m & p) == p)
				tm->reach[p] += per_mask[m];
		tm->reach[p] /= sampled ? sampled : 1;
	}
	tm->rows = (double)t->rows;
	return true;
}

/* CPU time one run spends on the terms in @order: each row tested until one fails. */
static double work_ns(const struct terms *tm, const int *order)
{
	double ns = 0;
	int j, passed = 0;

	for (j = 0; j < tm->n; j++) {
		ns += tm->reach[passed] * tm->rows * tm->cost_ns[order[j]];
		passed |= 1 << order[j];
	}
	return ns;
}

/* Every order of the terms (Heap's algorithm); the least work into @best. */
static void try_orders(const struct terms *tm, int *order, int k, int *best, double *best_ns)
{
	int i, tmp;

	if (k == 1) {
		double ns = work_ns(tm, order);

		if (ns < *best_ns) {
			*best_ns = ns;
			memcpy(best, order, sizeof(int) * (size_t)tm->n);
		}
		return;
	}
	for (i = 0; i < k; i++) {
		try_orders(tm, order, k - 1, best, best_ns);
		tmp = order[k - 1];
		order[k - 1] = order[k % 2 ? 0 : i];
		order[k % 2 ? 0 : i] = tmp;
	}
}

/*
 * What run @in says of the terms of @f: each term's cost a row, from its
 * samples and the rows that reached it in the order the run tested them.
 * The order into @tested; false if the profile names none of the terms.
 */
static bool learn_costs(struct terms *tm, const struct op *f, const char *query,
			const struct fb_input *in, const struct fb_run *run, int *tested,
			bool *order_known)
{
	const struct fb_times_query *tq = fb_input_times(in, query);
	double samples[PLAN_MAX_CONJUNCTS];
	long execs = tq ? tq->executions : run->executions;
	char name[128];
	bool named = false;
	int j, passed = 0;

	for (j = 0; j < tm->n; j++) {
		lower_term_task_name(f, j, name, sizeof(name));
		samples[j] = fb_row_samples(&in->profile, query, name, run->prefixed);
		named |= samples[j] >= 0;
	}
	if (!named)
		return false;
	*order_known = tq && tq->nr_terms[f->number] == tm->n;
	for (j = 0; j < tm->n; j++)
		tested[j] = *order_known ? tq->terms[f->number][j] : j;
	for (j = 0; j < tm->n; j++) {
		int t = tested[j];
		double reached = tm->reach[passed] * tm->rows * (double)execs;

		passed |= 1 << t;
		/* A term no row reached costs what it costs: nothing learnt. */
		if (reached < 1)
			continue;
		tm->cost_sum[t] += (samples[t] > 0 ? samples[t] : 0) * in->profile.sample_ns /
				   reached;
		tm->cost_runs[t]++;
	}
	return true;
}

static int order_filter(struct op *f, const struct plan *plan, const struct database *db,
			const struct fb_input *in, int nr_in, const struct fb_run *run, FILE *log)
{
	const struct table *t = f->input && f->input->kind == OP_SCAN ?
				database_table(db, f->input->table) : NULL;
	int tested[PLAN_MAX_CONJUNCTS], current[PLAN_MAX_CONJUNCTS], best[PLAN_MAX_CONJUNCTS];
	int order[PLAN_MAX_CONJUNCTS], i, j, known = 0, runs = 0;
	double best_ns = 1e300, current_ns, known_sum = 0;
	bool order_known = true;
	struct terms tm = { .n = f->nr_conjuncts };
	char sql[100];

	if (!t) {
		fprintf(log, "feedback: %s %.*s: its terms are tested as written (it does not "
			"read a table: its rows cannot be counted)\n", plan->query,
			(int)strcspn(f->name, " "), f->name);
		return 0;
	}
	if (!count_passes(&tm, plan, f, db, t)) {
		fprintf(log, "feedback: %s %.*s: its terms are tested as written (a term reads "
			"a column not of %s)\n", plan->query, (int)strcspn(f->name, " "), f->name,
			t->name);
		return 0;
	}
	for (i = 0; i < nr_in; i++) {
		bool this_known;

		if (!learn_costs(&tm, f, plan->query, &in[i], run, tested, &this_known))
			continue;
		/* The order the latest run that measured the terms tested them in. */
		memcpy(current, tested, sizeof(current));
		order_known = this_known;
		runs++;
	}
	if (!runs) {
		fprintf(log, "feedback: %s %.*s: no profile names its terms (a profile at "
			"--level task has them); tested as written\n", plan->query,
			(int)strcspn(f->name, " "), f->name);
		return 0;
	}
	for (j = 0; j < tm.n; j++)
		if (tm.cost_runs[j]) {
			tm.cost_ns[j] = tm.cost_sum[j] / tm.cost_runs[j];
			known_sum += tm.cost_ns[j];
			known++;
		}
	/* A term no run reached: as costly as the others on average. */
	for (j = 0; j < tm.n; j++)
		if (!tm.cost_runs[j]) {
			tm.cost_ns[j] = known ? known_sum / known : 0;
		}
	for (j = 0; j < tm.n; j++)
		order[j] = j;
	memcpy(best, current, sizeof(best));
	try_orders(&tm, order, tm.n, best, &best_ns);
	current_ns = work_ns(&tm, current);
	/* Noise in the samples must not flip the order back and forth. */
	if (!(best_ns < TERMS_GAIN * current_ns))
		memcpy(best, current, sizeof(best));
	memcpy(f->conjunct_order, best, sizeof(best[0]) * (size_t)tm.n);

	fprintf(log, "feedback: %s %.*s:", plan->query, (int)strcspn(f->name, " "), f->name);
	for (j = 0; j < tm.n; j++) {
		int term = best[j], single = 1 << term;

		expr_format(f->conjuncts[term], sql, sizeof(sql), 1);
		fprintf(log, "%s %s %.2f ns a row%s, %.1f%% pass", j ? ";" : "", sql,
			tm.cost_ns[term], tm.cost_runs[term] ? "" : " (not reached: the mean)",
			100 * tm.reach[single]);
	}
	fprintf(log, ": tested in this order (expected %.2f ms CPU a run, %.2f ms in the "
		"order profiled%s)\n", work_ns(&tm, best) / 1e6, current_ns / 1e6,
		order_known ? "" : ", taken as written: no --feedback-times");
	return memcmp(best, current, sizeof(best[0]) * (size_t)tm.n) != 0;
}

int fb_order_terms(struct plan *plan, const struct database *db, const struct fb_input *in,
		   int nr_in, const struct fb_run *run, FILE *log)
{
	int i, reordered = 0;

	if (nr_in > FB_MAX_INPUTS)
		nr_in = FB_MAX_INPUTS;
	for (i = 0; i < plan->nr_ops; i++)
		if (plan->ops[i].kind == OP_FILTER && plan->ops[i].nr_conjuncts > 1)
			reordered += order_filter(&plan->ops[i], plan, db, in, nr_in, run, log);
	return reordered;
}

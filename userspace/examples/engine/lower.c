// SPDX-License-Identifier: GPL-2.0-only
/*
 * Produce/consume code generation (Neumann, VLDB 2011) with Tailored
 * Profiling's Abstraction Trackers.  produce() of an operator starts the
 * pipelines its materialization points need; consume() emits the code that
 * handles one tuple.  Each (operator, pipeline) pair that emits code is a
 * task: the join has a build and a probe task, the group-by an aggregate
 * and an output task.  Every emitted line belongs to exactly one task.
 *
 * Shared runtime functions are called with the id of the calling task's
 * runtime task in the tag register, so samples in them are attributed to
 * the right operator even though two joins run the very same code, and
 * apart from the generated code's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lower.h"
#include "rt_abi.h"
#include "tailor/dictionary.h"
#include "tailor/tag.h"
#include "tailor/tag_word.h"

_Static_assert(RT_TUPLE_SLOTS == PLAN_MAX_OPERATORS + 1, "a tuple slot per operator number");

__attribute__((format(printf, 2, 3)))
static void lower_error(struct lowered *l, const char *fmt, ...)
{
	va_list ap;

	if (l->failed++)
		return;
	fprintf(stderr, "tailor-engine: lowering %s: ", l->plan->query);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void dict_check(struct lowered *l, int ret, const char *what)
{
	if (ret < 0)
		lower_error(l, "Tagging Dictionary: cannot add %s (error %d)", what, ret);
}

static const char *display_name(struct lowered *l, const char *name, char *buf, size_t size)
{
	if (!l->levels->prefix_names)
		return name;
	snprintf(buf, size, "%s: %s", l->plan->query, name);
	return buf;
}

void lower_term_task_name(const struct op *op, int term, char *name, size_t size)
{
	char sql[100];

	expr_format(op->conjuncts[term], sql, sizeof(sql), 1);
	snprintf(name, size, "%.*s filter: %s", (int)strcspn(op->name, " "), op->name, sql);
}

enum role { R_SCAN, R_FILTER, R_BUILD, R_PROBE, R_AGGREGATE, R_OUTPUT };
static const char *const role_names[] = {
	[R_SCAN] = "scan", [R_FILTER] = "filter", [R_BUILD] = "build",
	[R_PROBE] = "probe", [R_AGGREGATE] = "aggregate", [R_OUTPUT] = "output",
};

/* An earlier task of the filter whose task @i is: it named the filter already. */
static bool earlier_filter_task(const struct lowered *l, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (l->tasks[j].op == l->tasks[i].op && l->tasks[j].pipeline == l->tasks[i].pipeline)
			return true;
	return false;
}

void lower_pipeline_name(const struct lowered *l, int k, char *name, size_t size)
{
	const char *sep = "";
	size_t n;
	int i;

	n = (size_t)snprintf(name, size, "pipeline %d:", k + 1);
	for (i = 0; i < l->nr_tasks && n < size; i++) {
		const struct task *t = &l->tasks[i];

		if (t->pipeline != l->order[k] || t->runtime)
			continue;
		/*
		 * A filter's terms once, as the filter: the name must not
		 * change with the order --feedback tests them in, it is how
		 * the next profile's rows are found.
		 */
		if (t->role == R_FILTER && earlier_filter_task(l, i))
			continue;
		if (t->role == R_FILTER)
			n += (size_t)snprintf(name + n, size - n, "%s %.100s filter", sep,
					      t->op->name);
		else
			n += (size_t)snprintf(name + n, size - n, "%s %s", sep, t->name);
		sep = " ->";
	}
}

/* ---- step 1: operators -> pipelines of tasks ---- */

static int pipeline_begin(struct lowered *l)
{
	struct pipeline *p;

	if (l->nr_pipelines == LOWER_MAX_PIPELINES) {
		lower_error(l, "more than %d pipelines", LOWER_MAX_PIPELINES);
		return l->current;
	}
	p = &l->pipelines[l->nr_pipelines];
	memset(p, 0, sizeof(*p));
	p->first_task = -1;
	p->source = -1;
	p->order = -1;
	p->opt = -1;
	p->id = l->levels->next_pipeline++;
	l->current = l->nr_pipelines++;
	return l->current;
}

/* A pipeline ends at its materialization point: it runs before its consumer. */
static void pipeline_end(struct lowered *l, int previous)
{
	struct pipeline *p = &l->pipelines[l->current];

	/* After a failed pipeline_begin() there is no pipeline to end. */
	if (l->failed || l->nr_done == LOWER_MAX_PIPELINES) {
		l->current = previous;
		return;
	}
	p->order = l->nr_done;
	l->order[l->nr_done++] = l->current;
	l->current = previous;
}


/* The task of @op, @role and @term in @pipeline, the runtime's or not; -1: none yet. */
static int find_task(const struct lowered *l, const struct op *op, int pipeline, int role,
		     int term, bool runtime)
{
	int i;

	for (i = 0; i < l->nr_tasks; i++)
		if (l->tasks[i].op == op && l->tasks[i].pipeline == pipeline &&
		    l->tasks[i].role == role && l->tasks[i].term == term &&
		    l->tasks[i].runtime == runtime)
			return i;
	return -1;
}

/*
 * The task of @op in the current pipeline, created (and linked) on first
 * use; for a filter of several terms, one task per @term, named by its
 * operator's number and the term's SQL ("Filter#2 filter: l_discount < 1"),
 * so that a profile's row for it is found whatever the order.
 */
static int task_for_term(struct lowered *l, const struct op *op, enum role role, int term)
{
	struct pipeline *p = &l->pipelines[l->current];
	struct task *t;
	int i = find_task(l, op, l->current, (int)role, term, false);

	if (i >= 0)
		return i;
	if (l->nr_tasks == LOWER_MAX_TASKS) {
		lower_error(l, "more than %d tasks", LOWER_MAX_TASKS);
		return 0;
	}
	t = &l->tasks[l->nr_tasks];
	t->op = op;
	t->role = (int)role;
	t->pipeline = l->current;
	t->term = term;
	t->runtime = false;
	if (term >= 0) {
		lower_term_task_name(op, term, t->name, sizeof(t->name));
	} else {
		snprintf(t->name, sizeof(t->name), "%.100s %s", op->name, role_names[role]);
	}
	if (p->first_task < 0)
		p->first_task = l->nr_tasks;
	t->id = l->levels->next_task++;
	return l->nr_tasks++;
}

static int task_for(struct lowered *l, const struct op *op, enum role role)
{
	return task_for_term(l, op, role, -1);
}

/*
 * The runtime task of task @caller ("HashJoin#3 p_partkey = l_partkey probe
 * (runtime)"): what the shared runtime does for it, under its own tag.
 * Same operator, role and pipeline, so the operator and pipeline levels
 * are as without it; created on the first call.
 */
static int runtime_task_for(struct lowered *l, int caller)
{
	const struct task *c = &l->tasks[caller];
	int i = find_task(l, c->op, c->pipeline, c->role, c->term, true);
	struct task *t;
	size_t len;

	if (i >= 0)
		return i;
	if (l->nr_tasks == LOWER_MAX_TASKS) {
		lower_error(l, "more than %d tasks", LOWER_MAX_TASKS);
		return caller;
	}
	t = &l->tasks[l->nr_tasks];
	*t = *c;
	t->runtime = true;
	len = strlen(t->name);
	snprintf(t->name + len, sizeof(t->name) - len, " (runtime)");
	t->id = l->levels->next_task++;
	return l->nr_tasks++;
}

/*
 * ---- step 2: tasks -> C lines ----
 *
 * A pipeline's lines make two functions: tailor_pipeline_<order> runs one
 * morsel, tailor_finish_<order> (lines emitted with in_finish set) runs
 * once after the last morsel and merges the workers' breaker state.
 */

__attribute__((format(printf, 3, 4)))
static void emit(struct lowered *l, int task, const char *fmt, ...)
{
	struct pipeline *p = &l->pipelines[l->current];
	struct gen_line **lines = l->in_finish ? &p->finish : &p->lines;
	size_t *nr = l->in_finish ? &p->nr_finish : &p->nr_lines;
	size_t *cap = l->in_finish ? &p->cap_finish : &p->cap_lines;
	char body[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(body)) {
		lower_error(l, "a generated line is too long");
		return;
	}
	if (*nr == *cap) {
		size_t new_cap = *cap ? 2 * *cap : 32;
		struct gen_line *grown = realloc(*lines, new_cap * sizeof(*grown));

		if (!grown) {
			lower_error(l, "out of memory");
			return;
		}
		*lines = grown;
		*cap = new_cap;
	}
	(*lines)[*nr].task = task;
	if (asprintf(&(*lines)[*nr].text, "%*s%s", 8 * (l->in_finish ? 0 : l->depth), "",
		     body) < 0) {
		lower_error(l, "out of memory");
		return;
	}
	++*nr;
}

/*
 * A call into the shared runtime: a line of @task, whose call runs under
 * the id of @task's runtime task.  TAILOR_TAGGED's one-line definition at
 * the top of the file is the backend's (see lower_write_c()), so both
 * backends compile the very same lines.
 */
__attribute__((format(printf, 3, 4)))
static void emit_call(struct lowered *l, int task, const char *fmt, ...)
{
	int rt = runtime_task_for(l, task);
	char call[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(call, sizeof(call), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(call)) {
		lower_error(l, "a generated call is too long");
		return;
	}
	if (l->tasks[rt].id >> LOWER_WORD_TASK_BITS) {
		lower_error(l, "task id %llu does not fit the tag word's %d bits",
			    (unsigned long long)l->tasks[rt].id, LOWER_WORD_TASK_BITS);
		return;
	}
	emit(l, task, "TAILOR_TAGGED(%lluUL, %s)", (unsigned long long)l->tasks[rt].id, call);
}

/*
 * The oracle's known work: a dependent multiply chain of @n steps, the
 * same loop as tailor_work_calibrate(), counted so that the engine knows
 * how much of it ran.
 */
#define WORK_LOOP(n_fmt) \
	"{ unsigned long w = 1; for (unsigned long k = 0; k < " n_fmt "; k++) " \
	"{ w = w * 6364136223846793005UL + 1442695040888963407UL; __asm__ volatile(\"\" : \"+r\"(w)); } " \
	"__asm__ volatile(\"\" : : \"r\"(w)); }"

static void emit_extra_work(struct lowered *l, int task, const struct op *op)
{
	if (!op->extra_work)
		return;
	emit(l, task, WORK_LOOP("%lluUL") " ctx->extra_units[m->worker * %d] += %lluUL;",
	     (unsigned long long)op->extra_work, RT_EXTRA_STRIDE,
	     (unsigned long long)op->extra_work);
}

/*
 * --count-rows: @op produced a row (or, with @n, n rows).  The count
 * stays in a local of the pipeline function, added to ctx->tuples once a
 * morsel (lower_write_c()), so that counting costs an increment a row.
 */
static void emit_count(struct lowered *l, int task, const struct op *op, const char *n)
{
	if (!l->count_rows)
		return;
	l->pipelines[l->current].counted |= 1u << op->number;
	if (n)
		emit(l, task, "rows_out%d += (unsigned long)%s;", op->number, n);
	else
		emit(l, task, "rows_out%d++;", op->number);
}

static void note_column(const char *name, void *arg)
{
	struct lowered *l = arg;
	int i;

	for (i = 0; i < l->nr_referenced; i++)
		if (!strcmp(l->referenced[i], name))
			return;
	if (l->nr_referenced == LOWER_MAX_SLOTS) {
		lower_error(l, "more than %d columns", LOWER_MAX_SLOTS);
		return;
	}
	l->referenced[l->nr_referenced++] = name;
}

static int column_slot(struct lowered *l, const struct column *c)
{
	int i;

	for (i = 0; i < l->nr_columns; i++)
		if (l->columns[i] == c)
			return i;
	if (l->nr_columns == LOWER_MAX_SLOTS) {
		lower_error(l, "more than %d columns", LOWER_MAX_SLOTS);
		return 0;
	}
	l->columns[l->nr_columns] = c;
	return l->nr_columns++;
}

static int table_slot(struct lowered *l, const struct table *t)
{
	int i;

	for (i = 0; i < l->nr_tables; i++)
		if (l->tables[i] == t)
			return i;
	l->tables[l->nr_tables] = t;
	return l->nr_tables++;
}

static int ht_slot(struct lowered *l, const struct op *op, enum ht_kind kind, long width)
{
	l->hts[l->nr_hts] = (struct ht_slot){ kind, width };
	l->op_ht[op->number] = l->nr_hts;
	return l->nr_hts++;
}

/* The referenced columns that the scans under @op produce, in a stable order. */
static int subtree_columns(struct lowered *l, const struct op *op,
			   const struct column **out, int max)
{
	int n = 0, i;

	if (!op)
		return 0;
	if (op->kind == OP_SCAN) {
		for (i = 0; i < l->nr_referenced && n < max; i++) {
			const struct table *t;
			const struct column *c = database_column(l->db, l->referenced[i], &t);

			if (c && !strcmp(t->name, op->table))
				out[n++] = c;
		}
		return n;
	}
	n = subtree_columns(l, op->build, out, max);
	return n + subtree_columns(l, op->input, out + n, max - n);
}

static void consume(struct lowered *l, const struct op *op, const struct op *from);

static void produce(struct lowered *l, const struct op *op)
{
	const struct column *cols[LOWER_MAX_SLOTS];
	int task, previous, n, i, h;

	switch (op->kind) {
	case OP_SCAN: {
		const struct table *t = database_table(l->db, op->table);

		if (!t) {
			lower_error(l, "no table '%s'", op->table);
			return;
		}
		task = task_for(l, op, R_SCAN);
		l->pipelines[l->current].source = table_slot(l, t);
		emit(l, task, "for (long i%d = m->begin; i%d < m->end; i%d++) {", op->number,
		     op->number, op->number);
		l->depth++;
		n = subtree_columns(l, op, cols, LOWER_MAX_SLOTS);
		for (i = 0; i < n; i++)
			emit(l, task, "long %s = ctx->column[%d][i%d];", cols[i]->name,
			     column_slot(l, cols[i]), op->number);
		emit_count(l, task, op, NULL);
		emit_extra_work(l, task, op);
		consume(l, op->parent, op);
		l->depth--;
		emit(l, task, "}");
		break;
	}
	case OP_FILTER:
		produce(l, op->input);
		break;
	case OP_HASH_JOIN:
		n = subtree_columns(l, op->build, cols, LOWER_MAX_SLOTS);
		h = ht_slot(l, op, HT_JOIN, n);
		previous = l->current;
		pipeline_begin(l);
		produce(l, op->build);
		task = task_for(l, op, R_BUILD);
		l->in_finish = true;
		emit_call(l, task, "ctx->rt->join_finalize(ctx->ht[%d]);", h);
		l->in_finish = false;
		pipeline_end(l, previous);
		produce(l, op->input);
		break;
	case OP_GROUP_BY:
		h = ht_slot(l, op, HT_GROUP, op->nr_aggregates);
		previous = l->current;
		pipeline_begin(l);
		produce(l, op->input);
		task = task_for(l, op, R_AGGREGATE);
		l->in_finish = true;
		emit_call(l, task, "ctx->rt->group_merge(ctx->ht[%d]);", h);
		l->in_finish = false;
		pipeline_end(l, previous);
		task = task_for(l, op, R_OUTPUT);
		l->result_width = 1 + op->nr_aggregates;
		emit(l, task, "long groups%d; const long *row%d;", op->number, op->number);
		emit_call(l, task, "row%d = ctx->rt->group_rows(ctx->ht[%d], &groups%d);",
			  op->number, h, op->number);
		{
			char groups[32];

			snprintf(groups, sizeof(groups), "groups%d", op->number);
			emit_count(l, task, op, groups);
		}
		emit(l, task, "for (long g = 0; g < groups%d; g++, row%d += %d)", op->number,
		     op->number, 1 + op->nr_aggregates);
		l->depth++;
		emit_call(l, task, "ctx->rt->emit_row(ctx->result, row%d);", op->number);
		l->depth--;
		break;
	}
}

static void consume(struct lowered *l, const struct op *op, const struct op *from)
{
	const struct column *cols[LOWER_MAX_SLOTS];
	char key[512], e[512];
	int task, n, i;

	switch (op->kind) {
	case OP_SCAN:
		lower_error(l, "a scan has no input");
		break;
	case OP_FILTER: {
		/*
		 * A term per line and per task, in the order chosen: a
		 * profile then says what each costs (feedback.c).  One term
		 * stays the filter's one task, as before terms were split.
		 */
		int terms[PLAN_MAX_CONJUNCTS];

		/*
		 * The oracle's known work runs for every row whatever the
		 * order: in the filter's own task, not a term's, whose cost a
		 * row it would inflate.
		 */
		if (op->nr_conjuncts > 1 && op->extra_work)
			emit_extra_work(l, task_for(l, op, R_FILTER), op);
		for (i = 0; i < op->nr_conjuncts; i++) {
			int term = op->conjunct_order[i];

			terms[i] = op->nr_conjuncts > 1 ? task_for_term(l, op, R_FILTER, term) :
				   task_for(l, op, R_FILTER);
			if (op->nr_conjuncts == 1)
				emit_extra_work(l, terms[i], op);
			expr_format(op->conjuncts[term], e, sizeof(e), 0);
			emit(l, terms[i], "if (%s) {", e);
			l->depth++;
		}
		task = terms[op->nr_conjuncts - 1];
		emit_count(l, task, op, NULL);
		consume(l, op->parent, op);
		for (i = op->nr_conjuncts - 1; i >= 0; i--) {
			l->depth--;
			emit(l, terms[i], "}");
		}
		break;
	}
	case OP_HASH_JOIN:
		if (from == op->build) {
			task = task_for(l, op, R_BUILD);
			n = subtree_columns(l, op->build, cols, LOWER_MAX_SLOTS);
			emit_extra_work(l, task, op);
			e[0] = 0;
			for (i = 0; i < n; i++)
				snprintf(e + strlen(e), sizeof(e) - strlen(e), "%s%s",
					 i ? ", " : "", cols[i]->name);
			expr_format(op->build_key, key, sizeof(key), 0);
			emit(l, task, "const long payload%d[] = { %s };", op->number, e);
			emit_call(l, task, "ctx->rt->join_insert(ctx->ht[%d], m->worker, %s, payload%d);",
				  l->op_ht[op->number], key, op->number);
			break;
		}
		task = task_for(l, op, R_PROBE);
		n = subtree_columns(l, op->build, cols, LOWER_MAX_SLOTS);
		emit_extra_work(l, task, op);
		expr_format(op->probe_key, key, sizeof(key), 0);
		emit(l, task, "const long probe%d = %s;", op->number, key);
		emit(l, task, "const long *match%d;", op->number);
		emit_call(l, task, "match%d = ctx->rt->join_lookup(ctx->ht[%d], probe%d);",
			  op->number, l->op_ht[op->number], op->number);
		emit(l, task, "for (; match%d; match%d = (const long *)match%d[0]) {", op->number,
		     op->number, op->number);
		l->depth++;
		emit(l, task, "if (match%d[1] != probe%d)", op->number, op->number);
		l->depth++;
		emit(l, task, "continue;");
		l->depth--;
		for (i = 0; i < n; i++)
			emit(l, task, "long %s = match%d[%d];", cols[i]->name, op->number, 2 + i);
		emit_count(l, task, op, NULL);
		consume(l, op->parent, op);
		l->depth--;
		emit(l, task, "}");
		break;
	case OP_GROUP_BY:
		task = task_for(l, op, R_AGGREGATE);
		emit_extra_work(l, task, op);
		expr_format(op->group_key, key, sizeof(key), 0);
		emit(l, task, "long *agg%d;", op->number);
		emit_call(l, task, "agg%d = ctx->rt->group_find(ctx->ht[%d], m->worker, %s);",
			  op->number, l->op_ht[op->number], key);
		for (i = 0; i < op->nr_aggregates; i++) {
			if (op->aggregates[i].fn == AGG_COUNT) {
				emit(l, task, "agg%d[%d] += 1;", op->number, i);
				continue;
			}
			expr_format(op->aggregates[i].arg, e, sizeof(e), 0);
			emit(l, task, "agg%d[%d] += %s;", op->number, i, e);
		}
		break;
	}
}

static void note_expr_columns(struct lowered *l, const struct expr *e)
{
	expr_columns(e, note_column, l);
}

/* The first two lowering steps' links, now that every name is known. */
static void record_plan(struct lowered *l)
{
	struct dict_levels *lv = l->levels;
	struct tailor_dict *d = lv->dict;
	char name[LOWER_NAME_MAX], buf[LOWER_NAME_MAX + 64];
	uint64_t rt_op, rt_pipeline;
	int i, k, c;

	for (c = 0; c < lv->nr_clients; c++) {
		if (lv->nr_clients > 1)
			snprintf(name, sizeof(name), "%s (client %d)", l->plan->query, c + 1);
		else
			snprintf(name, sizeof(name), "%s", l->plan->query);
		dict_check(l, tailor_dict_component(d, lv->query, l->query_ids[c], name),
			   "the query");
	}
	for (i = 0; i < l->plan->nr_ops; i++) {
		const struct op *o = &l->plan->ops[i];

		dict_check(l, tailor_dict_component(d, lv->op, l->op_ids[o->number],
						    display_name(l, o->name, buf, sizeof(buf))),
			   "an operator");
	}
	for (i = 0; i < l->plan->nr_ops; i++) {
		const struct op *o = &l->plan->ops[i];

		if (o->parent)
			dict_check(l, tailor_dict_parent(d, lv->op, l->op_ids[o->number], lv->op,
							 l->op_ids[o->parent->number]),
				   "the plan tree");
	}
	for (k = 0; k < l->nr_done; k++) {
		const struct pipeline *p = &l->pipelines[l->order[k]];

		lower_pipeline_name(l, k, name, sizeof(name));
		dict_check(l, tailor_dict_component(d, lv->pipeline, p->id,
						    display_name(l, name, buf, sizeof(buf))),
			   "a pipeline");
	}
	for (i = 0; i < l->nr_tasks; i++) {
		const char *task_name = display_name(l, l->tasks[i].name, buf, sizeof(buf));

		dict_check(l, tailor_dict_component(d, lv->task, l->tasks[i].id, task_name),
			   "a task");
	}

	/* The engine's own work for this query: hash tables, results. */
	rt_op = lv->next_op++;
	rt_pipeline = lv->next_pipeline++;
	snprintf(name, sizeof(name), "[runtime] query %s", l->plan->query);
	dict_check(l, tailor_dict_component(d, lv->task, l->runtime_task, name), "a task");
	dict_check(l, tailor_dict_component(d, lv->op, rt_op, name), "an operator");
	dict_check(l, tailor_dict_component(d, lv->pipeline, rt_pipeline, name), "a pipeline");

	dict_check(l, tailor_dict_log(d, "query->operators, pipelines"), "a log");
	for (c = 0; c < lv->nr_clients; c++) {
		uint64_t q = l->query_ids[c];

		for (i = 0; i < l->plan->nr_ops; i++)
			dict_check(l, tailor_dict_link(d, lv->op, l->op_ids[l->plan->ops[i].number],
						       lv->query, q), "an operator link");
		for (k = 0; k < l->nr_done; k++)
			dict_check(l, tailor_dict_link(d, lv->pipeline,
						       l->pipelines[l->order[k]].id, lv->query, q),
				   "a pipeline link");
		dict_check(l, tailor_dict_link(d, lv->op, rt_op, lv->query, q), "a link");
		dict_check(l, tailor_dict_link(d, lv->pipeline, rt_pipeline, lv->query, q),
			   "a link");
	}

	dict_check(l, tailor_dict_log(d, "operators->pipelines of tasks"), "a log");
	for (i = 0; i < l->nr_tasks; i++) {
		const struct task *t = &l->tasks[i];
		uint64_t op = l->op_ids[t->op->number], pipeline = l->pipelines[t->pipeline].id;

		dict_check(l, tailor_dict_link(d, lv->task, t->id, lv->op, op),
			   "a task->operator link");
		dict_check(l, tailor_dict_link(d, lv->task, t->id, lv->pipeline, pipeline),
			   "a task->pipeline link");
	}
	dict_check(l, tailor_dict_link(d, lv->task, l->runtime_task, lv->op, rt_op), "a link");
	dict_check(l, tailor_dict_link(d, lv->task, l->runtime_task, lv->pipeline, rt_pipeline),
		   "a link");
}

int lower_plan(struct lowered *l, const struct plan *plan, const struct database *db,
	       struct dict_levels *levels, bool count_rows)
{
	int i, j, top;

	memset(l, 0, sizeof(*l));
	l->count_rows = count_rows;
	l->plan = plan;
	l->db = db;
	l->levels = levels;
	if (levels->nr_clients < 1 || levels->nr_clients > LOWER_MAX_CLIENTS) {
		lower_error(l, "%d clients: expected 1..%d", levels->nr_clients, LOWER_MAX_CLIENTS);
		return -1;
	}
	for (i = 0; i < levels->nr_clients; i++)
		l->query_ids[i] = levels->next_query++;
	l->runtime_task = levels->next_task++;
	l->tag_word_offset = tailor_tag_word_offset();
	for (j = 1; j <= plan->nr_ops; j++)
		l->op_ids[j] = levels->next_op++;
	for (i = 0; i < plan->nr_ops; i++) {
		const struct op *o = &plan->ops[i];

		note_expr_columns(l, o->predicate);
		note_expr_columns(l, o->build_key);
		note_expr_columns(l, o->probe_key);
		note_expr_columns(l, o->group_key);
		for (j = 0; j < o->nr_aggregates; j++)
			note_expr_columns(l, o->aggregates[j].arg);
	}
	for (i = 0; i < l->nr_referenced; i++)
		if (!database_column(db, l->referenced[i], NULL))
			lower_error(l, "no column '%s'", l->referenced[i]);
	if (l->failed)
		return -1;

	top = pipeline_begin(l);
	produce(l, plan->root);
	pipeline_end(l, top);
	if (!l->failed && levels->dict)
		record_plan(l);
	return l->failed ? -1 : 0;
}

/* One line of the generated file, linked to the task that owns it. */
__attribute__((format(printf, 6, 7)))
static void write_line(struct lowered *l, FILE *f, const char *path, unsigned int *lineno,
		       int owner, const char *fmt, ...)
{
	struct dict_levels *lv = l->levels;
	va_list ap;

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	++*lineno;
	if (!lv->dict || owner < 0)
		return;
	dict_check(l, tailor_track_push(lv->dict, lv->task, l->tasks[owner].id), "a tracker");
	dict_check(l, tailor_track_emit_line(lv->dict, path, *lineno), "a line link");
	dict_check(l, tailor_track_pop(lv->dict, lv->task), "a tracker");
}

int lower_write_c(struct lowered *l, const char *path, enum lower_backend backend)
{
	struct dict_levels *lv = l->levels;
	unsigned int lineno = 0;
	char attr[64];
	size_t i;
	FILE *f;
	int k, op;

	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "tailor-engine: cannot write %s: %m\n", path);
		return -1;
	}
	if (lv->dict)
		dict_check(l, tailor_dict_log(lv->dict, "tasks->code"), "a log");
	write_line(l, f, path, &lineno, -1,
		   "/* tailor-engine: query %s, generated code; every line belongs to one task. */",
	     l->plan->query);
	write_line(l, f, path, &lineno, -1, "%s", RT_ABI_SOURCE);
	/*
	 * One line each way, so that every later line has the same number
	 * in both: the C backend's compiler reserves r15, the tag register;
	 * clang cannot, so LLVM's code puts the task into bits 16-31 of the
	 * thread's tag word (at its offset from %fs, address space 257) and
	 * keeps the query's bits 0-15.  Volatile: the stores stay around the
	 * call, where a sample must see them.
	 */
	if (backend == LOWER_BACKEND_LLVM)
		write_line(l, f, path, &lineno, -1,
			   "#define TAILOR_TAGGED(tag_value, call) { volatile unsigned long "
			   "__attribute__((address_space(257))) *const word = (void "
			   "__attribute__((address_space(257))) *)(%lldL); const unsigned long "
			   "saved_word = *word; *word = (saved_word & %#llxUL) | "
			   "((unsigned long)(tag_value) << %d); call; *word = saved_word; }",
			   (long long)l->tag_word_offset,
			   (unsigned long long)LOWER_WORD_QUERY_MASK, LOWER_WORD_TASK_SHIFT);
	else
		write_line(l, f, path, &lineno, -1,
			   "#define TAILOR_TAGGED(tag_value, call) { unsigned long saved_tag; "
			   "const unsigned long tag = (tag_value); %s call; %s }",
			   TAILOR_TAG_C_SET("tag", "saved_tag"), TAILOR_TAG_C_RESTORE("saved_tag"));
	for (k = 0; k < l->nr_done; k++) {
		const struct pipeline *p = &l->pipelines[l->order[k]];
		int first = p->first_task;

		write_line(l, f, path, &lineno, -1, "%s", "");
		/* --feedback's level: on the definition's line, so no line moves. */
		if (p->opt >= 0)
			snprintf(attr, sizeof(attr), "__attribute__((optimize(\"O%d\"))) ", p->opt);
		else
			attr[0] = 0;
		write_line(l, f, path, &lineno, first,
			   "%svoid tailor_pipeline_%d(const struct query_ctx *ctx, "
			   "const struct morsel *m)", attr, k);
		write_line(l, f, path, &lineno, first, "{");
		for (op = 1; op <= PLAN_MAX_OPERATORS; op++)
			if (p->counted & (1u << op))
				write_line(l, f, path, &lineno, first,
					   "        unsigned long rows_out%d = 0;", op);
		for (i = 0; i < p->nr_lines; i++)
			write_line(l, f, path, &lineno, p->lines[i].task, "        %s",
				   p->lines[i].text);
		for (op = 1; op <= PLAN_MAX_OPERATORS; op++)
			if (p->counted & (1u << op))
				write_line(l, f, path, &lineno, first,
					   "        ctx->tuples[m->worker * %d + %d] += rows_out%d;",
					   RT_TUPLE_SLOTS, op, op);
		write_line(l, f, path, &lineno, first, "}");
		write_line(l, f, path, &lineno, -1, "%s", "");
		write_line(l, f, path, &lineno, first,
			   "%svoid tailor_finish_%d(const struct query_ctx *ctx)", attr, k);
		write_line(l, f, path, &lineno, first, "{");
		for (i = 0; i < p->nr_finish; i++)
			write_line(l, f, path, &lineno, p->finish[i].task, "        %s",
				   p->finish[i].text);
		write_line(l, f, path, &lineno, first, "}");
	}
	write_line(l, f, path, &lineno, -1, "%s", "");
	write_line(l, f, path, &lineno, -1, "const int tailor_pipelines = %d;", l->nr_done);
	/* Which ctx->rows[] each pipeline's morsels split; -1: it runs as one. */
	fprintf(f, "const int tailor_pipeline_source[] = {");
	for (k = 0; k < l->nr_done; k++)
		fprintf(f, " %d,", l->pipelines[l->order[k]].source);
	write_line(l, f, path, &lineno, -1, " };");
	write_line(l, f, path, &lineno, -1, "%s", "");
	write_line(l, f, path, &lineno, -1, "void tailor_work_calibrate(unsigned long n)");
	write_line(l, f, path, &lineno, -1, "{");
	write_line(l, f, path, &lineno, -1, "        " WORK_LOOP("n"));
	write_line(l, f, path, &lineno, -1, "}");
	if (fclose(f)) {
		fprintf(stderr, "tailor-engine: cannot write %s: %m\n", path);
		return -1;
	}
	return l->failed ? -1 : 0;
}

void lower_free(struct lowered *l)
{
	size_t i;
	int k;

	for (k = 0; k < l->nr_pipelines; k++) {
		for (i = 0; i < l->pipelines[k].nr_lines; i++)
			free(l->pipelines[k].lines[i].text);
		free(l->pipelines[k].lines);
		for (i = 0; i < l->pipelines[k].nr_finish; i++)
			free(l->pipelines[k].finish[i].text);
		free(l->pipelines[k].finish);
	}
	memset(l, 0, sizeof(*l));
}

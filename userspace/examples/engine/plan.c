// SPDX-License-Identifier: GPL-2.0-only
/* Plan and expression builders, names and printing. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "plan.h"

static struct expr *new_expr(struct plan *p)
{
	if (p->nr_exprs == (int)(sizeof(p->exprs) / sizeof(p->exprs[0]))) {
		fprintf(stderr, "tailor-engine: plan %s has too many expressions\n", p->query);
		abort();
	}
	return memset(&p->exprs[p->nr_exprs++], 0, sizeof(struct expr));
}

const struct expr *col(struct plan *p, const char *name)
{
	struct expr *e = new_expr(p);

	e->kind = E_COLUMN;
	e->column = name;
	return e;
}

const struct expr *lit(struct plan *p, int64_t value)
{
	struct expr *e = new_expr(p);

	e->kind = E_CONST;
	e->value = value;
	return e;
}

const struct expr *bin(struct plan *p, enum expr_kind kind,
		       const struct expr *l, const struct expr *r)
{
	struct expr *e = new_expr(p);

	e->kind = kind;
	e->left = l;
	e->right = r;
	return e;
}

static struct op *new_op(struct plan *p, enum op_kind kind, struct op *input)
{
	struct op *o;

	if (p->nr_ops == PLAN_MAX_OPERATORS) {
		fprintf(stderr, "tailor-engine: plan %s has too many operators\n", p->query);
		abort();
	}
	o = memset(&p->ops[p->nr_ops++], 0, sizeof(struct op));
	o->kind = kind;
	o->input = input;
	if (input)
		input->parent = o;
	return o;
}

struct op *scan(struct plan *p, const char *table)
{
	struct op *o = new_op(p, OP_SCAN, NULL);

	o->table = table;
	return o;
}

/* The AND-ed terms of @e, left to right, into the filter @o. */
static void split_conjuncts(struct plan *p, struct op *o, const struct expr *e)
{
	if (e->kind == E_AND) {
		split_conjuncts(p, o, e->left);
		split_conjuncts(p, o, e->right);
		return;
	}
	if (o->nr_conjuncts == PLAN_MAX_CONJUNCTS) {
		fprintf(stderr, "tailor-engine: plan %s: a filter of more than %d terms\n",
			p->query, PLAN_MAX_CONJUNCTS);
		abort();
	}
	o->conjunct_order[o->nr_conjuncts] = o->nr_conjuncts;
	o->conjuncts[o->nr_conjuncts++] = e;
}

struct op *filter(struct plan *p, struct op *input, const struct expr *pred)
{
	struct op *o = new_op(p, OP_FILTER, input);

	o->predicate = pred;
	split_conjuncts(p, o, pred);
	return o;
}

struct op *hash_join(struct plan *p, struct op *build, struct op *probe,
		     const struct expr *build_key, const struct expr *probe_key)
{
	struct op *o = new_op(p, OP_HASH_JOIN, probe);

	o->build = build;
	build->parent = o;
	o->build_key = build_key;
	o->probe_key = probe_key;
	return o;
}

struct op *group_by(struct plan *p, struct op *input, const struct expr *key)
{
	struct op *o = new_op(p, OP_GROUP_BY, input);

	o->group_key = key;
	return o;
}

void add_aggregate(struct plan *p, struct op *g, enum agg_fn fn,
		   const struct expr *arg)
{
	if (g->nr_aggregates == PLAN_MAX_AGGREGATES) {
		fprintf(stderr, "tailor-engine: plan %s: too many aggregates\n", p->query);
		abort();
	}
	g->aggregates[g->nr_aggregates++] = (struct aggregate){ fn, arg };
}

static const char *const op_kind_names[] = {
	[OP_SCAN] = "TableScan", [OP_FILTER] = "Filter",
	[OP_HASH_JOIN] = "HashJoin", [OP_GROUP_BY] = "GroupBy",
};

/* Numbered bottom-up, build side first, as the operators run. */
static void number_ops(struct op *o, int *next)
{
	char text[160];

	if (!o)
		return;
	number_ops(o->build, next);
	number_ops(o->input, next);
	o->number = (*next)++;
	switch (o->kind) {
	case OP_SCAN:
		snprintf(o->name, sizeof(o->name), "%s#%d %s",
			 op_kind_names[o->kind], o->number, o->table);
		break;
	case OP_FILTER:
		expr_format(o->predicate, text, sizeof(text), 1);
		snprintf(o->name, sizeof(o->name), "%s#%d %.80s",
			 op_kind_names[o->kind], o->number, text);
		break;
	case OP_HASH_JOIN: {
		char b[64], pr[64];

		expr_format(o->build_key, b, sizeof(b), 1);
		expr_format(o->probe_key, pr, sizeof(pr), 1);
		snprintf(o->name, sizeof(o->name), "%s#%d %.38s = %.38s",
			 op_kind_names[o->kind], o->number, b, pr);
		break;
	}
	case OP_GROUP_BY:
		expr_format(o->group_key, text, sizeof(text), 1);
		snprintf(o->name, sizeof(o->name), "%s#%d %.80s",
			 op_kind_names[o->kind], o->number, text);
		break;
	}
}

void plan_finish(struct plan *p, struct op *root)
{
	int next = 1;

	p->root = root;
	number_ops(root, &next);
}

static const char *const c_ops[] = {
	[E_ADD] = "+", [E_SUB] = "-", [E_MUL] = "*", [E_DIV] = "/",
	[E_LT] = "<", [E_LE] = "<=", [E_GT] = ">", [E_GE] = ">=",
	[E_EQ] = "==", [E_AND] = "&&",
};
static const char *const sql_ops[] = {
	[E_ADD] = "+", [E_SUB] = "-", [E_MUL] = "*", [E_DIV] = "/",
	[E_LT] = "<", [E_LE] = "<=", [E_GT] = ">", [E_GE] = ">=",
	[E_EQ] = "=", [E_AND] = "AND",
};

static size_t format(const struct expr *e, char *buf, size_t size, int sql, int top)
{
	size_t n = 0;

#define OUT(...) (n += (size_t)snprintf(buf + (n < size ? n : size), \
					   n < size ? size - n : 0, __VA_ARGS__))
	switch (e->kind) {
	case E_COLUMN:
		OUT("%s", e->column);
		break;
	case E_CONST:
		OUT("%lld%s", (long long)e->value, sql ? "" : "L");
		break;
	default:
		if (!top)
			OUT("(");
		n += format(e->left, buf + (n < size ? n : size), n < size ? size - n : 0, sql, 0);
		OUT(" %s ", sql ? sql_ops[e->kind] : c_ops[e->kind]);
		n += format(e->right, buf + (n < size ? n : size), n < size ? size - n : 0, sql, 0);
		if (!top)
			OUT(")");
		break;
	}
#undef OUT
	return n;
}

void expr_format(const struct expr *e, char *buf, size_t size, int sql)
{
	if (size)
		buf[0] = 0;
	format(e, buf, size, sql, 1);
}

void expr_columns(const struct expr *e, void (*fn)(const char *, void *), void *arg)
{
	if (!e)
		return;
	if (e->kind == E_COLUMN)
		fn(e->column, arg);
	expr_columns(e->left, fn, arg);
	expr_columns(e->right, fn, arg);
}

struct op *plan_find_op(struct plan *p, const char *name)
{
	size_t len = strlen(name);
	struct op *kind_match = NULL;
	int i, kind_matches = 0;
	char *end;
	long n = strtol(name, &end, 10);

	for (i = 0; i < p->nr_ops; i++) {
		struct op *o = &p->ops[i];

		if (end != name && !*end) {
			if (o->number == n)
				return o;
		} else if (!strncasecmp(o->name, name, len) && o->name[len] == ' ') {
			return o;	/* "HashJoin#2" */
		} else if (strcasestr(op_kind_names[o->kind], name)) {
			kind_match = o;	/* "join", "scan": when unique */
			kind_matches++;
		}
	}
	return kind_matches == 1 ? kind_match : NULL;
}

static void print_op(const struct op *o, FILE *out, int depth)
{
	fprintf(out, "  %*s%s\n", 2 * depth, "", o->name);
	if (o->build)
		print_op(o->build, out, depth + 1);
	if (o->input)
		print_op(o->input, out, depth + 1);
}

void plan_print(const struct plan *p, FILE *out)
{
	print_op(p->root, out, 0);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plan view (seed 000, Figures 6a, 9b): the plan tree the dictionary
 * declares, each component with its own share and its subtree's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

struct plan {
	uint64_t *inclusive;
	int *depth;
	uint32_t *order;	/* rows in tree order */
	size_t n;
};

static bool in_plan(const struct attr_row *row)
{
	return row->kind == ROW_COMPONENT && row->level == 0;
}

/* A row of the tree: of the plan and, with a query, of that query's plan. */
static bool in_tree(const struct report *r, const bool *include, int row)
{
	return row >= 0 && in_plan(attr_row(r->attr, row)) && (!include || include[row]);
}

static void plan_visit(const struct report *r, struct plan *p, const bool *include,
		       uint32_t row, int depth)
{
	size_t i, nr = attr_nr_rows(r->attr);

	p->depth[row] = depth;
	p->order[p->n++] = row;
	for (i = 0; i < nr; i++)
		if (attr_row(r->attr, i)->parent == (int)row && p->depth[i] < 0 &&
		    in_tree(r, include, (int)i))
			plan_visit(r, p, include, (uint32_t)i, depth + 1);
}

/* The tree of @include's rows (NULL: every plan row) with @g's samples. */
static int plan_build(const struct report *r, const struct agg *g, const bool *include,
		      struct plan *p)
{
	size_t i, nr = attr_nr_rows(r->attr);
	int guard;

	p->inclusive = calloc(nr + 1, sizeof(*p->inclusive));
	p->depth = malloc((nr + 1) * sizeof(*p->depth));
	p->order = malloc((nr + 1) * sizeof(*p->order));
	p->n = 0;
	if (!p->inclusive || !p->depth || !p->order)
		return -1;
	for (i = 0; i < nr; i++) {
		int at = (int)i;

		p->depth[i] = -1;
		if (!in_tree(r, include, (int)i))
			continue;
		/* Add a row's samples to each ancestor; a cycle stops at 64. */
		for (guard = 0; in_tree(r, include, at) && guard < 64; guard++) {
			p->inclusive[at] += agg_row_samples(g, i);
			at = attr_row(r->attr, at)->parent;
		}
	}
	for (i = 0; i < nr; i++) {
		const struct attr_row *row = attr_row(r->attr, i);

		if (in_tree(r, include, (int)i) && !in_tree(r, include, row->parent) &&
		    p->depth[i] < 0)
			plan_visit(r, p, include, (uint32_t)i, 0);
	}
	/* Components caught in a parent cycle are listed as roots. */
	for (i = 0; i < nr; i++)
		if (in_tree(r, include, (int)i) && p->depth[i] < 0)
			plan_visit(r, p, include, (uint32_t)i, 0);
	return 0;
}

static void plan_free(struct plan *p)
{
	free(p->inclusive);
	free(p->depth);
	free(p->order);
}

/* "   `- name": the row's place in the tree, for the text form. */
static const char *tree_name(struct doc *d, const char *name, int depth)
{
	char indent[256] = "";
	size_t n = 0;
	int i;

	for (i = 0; i < depth && n + 4 < sizeof(indent); i++)
		n += snprintf(indent + n, sizeof(indent) - n, "%s",
			      i + 1 == depth ? "`- " : "   ");
	return doc_printf(d, "%s%s", indent, name);
}

static const struct doc_column plan_cols[] = {
	{ .name = "name", .type = DOC_STR, .formats = DOC_DATA }, { .name = "parent", .type = DOC_STR, .formats = DOC_DATA },
	{ .name = "depth", .type = DOC_I64, .formats = DOC_DATA }, { .name = "self_samples", .type = DOC_U64, .formats = DOC_DATA },
	{ .name = "total_samples", .type = DOC_U64, .formats = DOC_DATA },
	{ .name = "self_share", .type = DOC_SHARE, .heading = "self", .width = 8, .sep = "" },
	{ .name = "total_share", .type = DOC_SHARE, .heading = "total", .width = 8 },
	{ .name = "plan", .type = DOC_STR, .formats = DOC_TEXT, .sep = "  " },
};
#define NR_PLAN_COLS	8

/*
 * The tree's rows into @t (the plan's whole table, or with a query the
 * text or the data one: @query's column first, its samples and share last).
 */
static void plan_rows(const struct report *r, const struct agg *g, const struct plan *p,
		      struct doc *d, struct doc_table *t, uint32_t query)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		uint32_t row = p->order[i];
		int parent = attr_row(r->attr, row)->parent;
		uint64_t self = agg_row_samples(g, row);

		doc_row(d, t, 0);
		if (query != ATTR_NONE && (t->formats & DOC_DATA))
			doc_cell(d, t, doc_str(row_name(r, query)));
		doc_cell(d, t, doc_str(row_name(r, row)));
		doc_cell(d, t, parent >= 0 ? doc_str(row_name(r, (uint32_t)parent)) : doc_null());
		doc_cell(d, t, doc_i64(p->depth[row]));
		doc_cell(d, t, doc_u64(self));
		doc_cell(d, t, doc_u64(p->inclusive[row]));
		doc_cell(d, t, doc_share(agg_share(g, self)));
		doc_cell(d, t, doc_share(agg_share(g, p->inclusive[row])));
		doc_cell(d, t, doc_str(tree_name(d, row_name(r, row), p->depth[row])));
		if (query != ATTR_NONE && (t->formats & DOC_DATA)) {
			doc_cell(d, t, doc_u64(g->total));
			doc_cell(d, t, doc_share(agg_share(&r->agg, g->total)));
		}
	}
}

/* The text form's last line: what the plan does not hold. */
static void plan_other(const struct report *r, const struct agg *g, const struct plan *p,
		       struct doc *d, struct doc_table *t)
{
	uint64_t other = g->total;
	size_t i;
	int c;

	for (i = 0; i < p->n; i++)
		other -= agg_row_samples(g, p->order[i]);
	doc_row(d, t, DOC_TEXT);
	for (c = 0; c < 5; c++)
		doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_share(agg_share(g, other)));
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_str(doc_printf(d, "(not attributed to %s %s: kernel, libraries, runtime, unknown)",
					  strchr("aeiou", attr_level_name(r->attr)[0]) ? "an" : "a",
					  attr_level_name(r->attr))));
}

/* With --by-query: a tree per query of the components linked to it or sampled in it. */
static int build_plan_by_query(const struct report *r, struct doc *d)
{
	struct doc_column data_cols[NR_PLAN_COLS + 3];
	const struct agg *g = &r->agg;
	size_t nr = attr_nr_rows(r->attr), i, j, n;
	bool *include = malloc(nr + 1);
	uint32_t *q = agg_queries_by_samples(g, &n);
	struct doc_table *data, *text, *queries;
	struct agg part;
	struct plan p;
	uint64_t none = 0;
	int ret = 0, guard, at;

	if (!include || !q) {
		free(include);
		free(q);
		return -1;
	}
	data_cols[0] = (struct doc_column){ .name = "query", .type = DOC_STR };
	/* The plan's columns between the query's name and its samples and share. */
	for (i = 0; i < NR_PLAN_COLS; i++)
		data_cols[i + 1] = plan_cols[i];
	data_cols[NR_PLAN_COLS + 1] = (struct doc_column){ .name = "query_samples",
							   .type = DOC_U64 };
	data_cols[NR_PLAN_COLS + 2] = (struct doc_column){ .name = "query_share",
							   .type = DOC_SHARE };
	/* Samples no query reached ([kernel], [libc.so.6]) are in no query's plan. */
	for (i = j = 0; i < n; i++) {
		if (attr_row(r->attr, q[i])->kind == ROW_COMPONENT)
			q[j++] = q[i];
		else
			none += agg_query_samples(g, q[i]);
	}
	n = j;
	report_header(r, d);
	doc_header(d, "# by query: %zu plans, most samples first; shares within each query", n);
	if (none)
		doc_header(d, "# %" PRIu64 " samples (%.2f%%) reached no query (kernel, libraries, unknown): in no plan",
			   none, agg_share(g, none));
	report_meta(r, d);
	doc_meta(d, NULL, "no_query", doc_u64(none));
	data = doc_table(d, "plan", DOC_DATA, data_cols, NR_PLAN_COLS + 3);
	queries = queries_table(d);
	for (i = 0; i < n && !ret; i++) {
		if (agg_query_part(g, q[i], &part)) {
			ret = -1;
			break;
		}
		queries_row(r, d, queries, q[i], part.total);
		for (j = 0; j < nr; j++)
			include[j] = in_plan(attr_row(r->attr, j)) &&
				     (agg_row_samples(&part, j) || attr_row_reaches(r->attr, (uint32_t)j, q[i]));
		/* And the plan parents of each, so that the tree holds together. */
		for (j = 0; j < nr; j++) {
			if (!include[j])
				continue;
			at = attr_row(r->attr, j)->parent;
			for (guard = 0; at >= 0 && guard < 64 && !include[at]; guard++) {
				include[at] = in_plan(attr_row(r->attr, at));
				at = attr_row(r->attr, at)->parent;
			}
		}
		if (plan_build(r, &part, include, &p)) {
			ret = -1;
		} else {
			text = doc_table(d, "plan", DOC_TEXT, plan_cols, NR_PLAN_COLS);
			doc_table_title(d, text, "%s", query_title(r, d, q[i], part.total));
			plan_rows(r, &part, &p, d, data, q[i]);
			plan_rows(r, &part, &p, d, text, q[i]);
			plan_other(r, &part, &p, d, text);
		}
		plan_free(&p);
		agg_part_free(&part);
	}
	report_notes(r, d);
	free(include);
	free(q);
	return ret ? ret : d->error;
}

static int build_plan(const struct report *r, struct doc *d)
{
	const struct agg *g = &r->agg;
	uint64_t other = g->total;
	struct doc_table *t;
	struct plan p;
	size_t i;

	if (r->by_query)
		return build_plan_by_query(r, d);
	if (plan_build(r, g, NULL, &p)) {
		plan_free(&p);
		return -1;
	}
	for (i = 0; i < p.n; i++)
		other -= agg_row_samples(g, p.order[i]);
	report_header(r, d);
	report_meta(r, d);
	t = doc_table(d, "plan", DOC_ALL, plan_cols, NR_PLAN_COLS);
	plan_rows(r, g, &p, d, t, ATTR_NONE);
	plan_other(r, g, &p, d, t);
	doc_meta(d, NULL, "not_attributed", doc_u64(other));
	report_notes(r, d);
	plan_free(&p);
	return d->error;
}

const struct view view_plan = {
	.name = "plan",
	.help = "the plan tree with each component's share",
	.needs = VIEW_NEEDS_DICT_LEVEL | VIEW_BY_QUERY,
	.build = build_plan,
};

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

static void plan_visit(const struct report *r, struct plan *p, uint32_t row, int depth)
{
	size_t i, nr = attr_nr_rows(r->attr);

	p->depth[row] = depth;
	p->order[p->n++] = row;
	for (i = 0; i < nr; i++)
		if (attr_row(r->attr, i)->parent == (int)row && p->depth[i] < 0 &&
		    in_plan(attr_row(r->attr, i)))
			plan_visit(r, p, (uint32_t)i, depth + 1);
}

static int plan_build(const struct report *r, struct plan *p)
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
		if (!in_plan(attr_row(r->attr, i)))
			continue;
		/* Add a row's samples to each ancestor; a cycle stops at 64. */
		for (guard = 0; at >= 0 && guard < 64; guard++) {
			p->inclusive[at] += agg_row_samples(&r->agg, i);
			at = attr_row(r->attr, at)->parent;
		}
	}
	for (i = 0; i < nr; i++) {
		const struct attr_row *row = attr_row(r->attr, i);

		if (in_plan(row) && row->parent < 0 && p->depth[i] < 0)
			plan_visit(r, p, (uint32_t)i, 0);
	}
	/* Components caught in a parent cycle are listed as roots. */
	for (i = 0; i < nr; i++)
		if (in_plan(attr_row(r->attr, i)) && p->depth[i] < 0)
			plan_visit(r, p, (uint32_t)i, 0);
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

static int build_plan(const struct report *r, struct doc *d)
{
	static const struct doc_column cols[] = {
		{ .name = "name", .type = DOC_STR, .formats = DOC_DATA }, { .name = "parent", .type = DOC_STR, .formats = DOC_DATA },
		{ .name = "depth", .type = DOC_I64, .formats = DOC_DATA }, { .name = "self_samples", .type = DOC_U64, .formats = DOC_DATA },
		{ .name = "total_samples", .type = DOC_U64, .formats = DOC_DATA },
		{ .name = "self_share", .type = DOC_SHARE, .heading = "self", .width = 8, .sep = "" },
		{ .name = "total_share", .type = DOC_SHARE, .heading = "total", .width = 8 },
		{ .name = "plan", .type = DOC_STR, .formats = DOC_TEXT, .sep = "  " },
	};
	const struct agg *g = &r->agg;
	uint64_t other = g->total;
	struct doc_table *t;
	struct plan p;
	size_t i;

	if (plan_build(r, &p)) {
		plan_free(&p);
		return -1;
	}
	for (i = 0; i < p.n; i++)
		other -= agg_row_samples(g, p.order[i]);
	report_header(r, d);
	report_meta(r, d);
	t = doc_table(d, "plan", DOC_ALL, cols, 8);
	for (i = 0; i < p.n; i++) {
		uint32_t row = p.order[i];
		int parent = attr_row(r->attr, row)->parent;
		uint64_t self = agg_row_samples(g, row);

		doc_row(d, t, 0);
		doc_cell(d, t, doc_str(row_name(r, row)));
		doc_cell(d, t, parent >= 0 ? doc_str(row_name(r, (uint32_t)parent)) : doc_null());
		doc_cell(d, t, doc_i64(p.depth[row]));
		doc_cell(d, t, doc_u64(self));
		doc_cell(d, t, doc_u64(p.inclusive[row]));
		doc_cell(d, t, doc_share(agg_share(g, self)));
		doc_cell(d, t, doc_share(agg_share(g, p.inclusive[row])));
		doc_cell(d, t, doc_str(tree_name(d, row_name(r, row), p.depth[row])));
	}
	/* What the plan does not hold, in the text form's last line. */
	doc_row(d, t, DOC_TEXT);
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_share(agg_share(g, other)));
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_str(doc_printf(d, "(not attributed to a %s: kernel, libraries, runtime, unknown)",
					  attr_level_name(r->attr))));
	doc_meta(d, NULL, "not_attributed", doc_u64(other));
	report_notes(r, d);
	plan_free(&p);
	return d->error;
}

const struct view view_plan = {
	.name = "plan",
	.help = "the plan tree with each component's share",
	.needs = VIEW_NEEDS_DICT_LEVEL,
	.build = build_plan,
};

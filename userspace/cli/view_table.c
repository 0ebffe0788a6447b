// SPDX-License-Identifier: GPL-2.0-only
/* The table view: cost per component of the level, most first. */
#include <inttypes.h>
#include <stdlib.h>
#include "cli.h"
#include "report.h"

static int build_table(const struct report *r, struct doc *d)
{
	const struct doc_column data_cols[] = {
		{ .name = "name", .type = DOC_STR }, { .name = "kind", .type = DOC_STR }, { .name = "samples", .type = DOC_U64 },
		{ .name = "share", .type = DOC_SHARE },
	};
	const struct doc_column text_cols[] = {
		{ .name = "share", .type = DOC_SHARE, .width = 8, .sep = "" },
		{ .name = "samples", .type = DOC_U64, .width = 10 },
		{ .name = "name", .type = DOC_STR, .heading = attr_level_name(r->attr), .sep = "  " },
	};
	const struct agg *g = &r->agg;
	struct doc_table *data, *text;
	size_t i, n;
	uint32_t *rows = agg_rows_by_samples(g, &n);

	if (!rows)
		return -1;
	report_header(r, d);
	report_meta(r, d);
	data = doc_table(d, "rows", DOC_DATA, data_cols, 4);
	text = doc_table(d, "table", DOC_TEXT, text_cols, 3);
	for (i = 0; i < n; i++) {
		const struct attr_row *row = attr_row(r->attr, rows[i]);
		uint64_t s = agg_row_samples(g, rows[i]);

		doc_row(d, data, 0);
		doc_cell(d, data, doc_str(row->name));
		doc_cell(d, data, doc_str(row_kind_name(row)));
		doc_cell(d, data, doc_u64(s));
		doc_cell(d, data, doc_share(agg_share(g, s)));
		if (r->top && i >= (size_t)r->top)
			continue;
		doc_row(d, text, 0);
		doc_cell(d, text, doc_share(agg_share(g, s)));
		doc_cell(d, text, doc_u64(s));
		doc_cell(d, text, doc_str(row->name));
	}
	if (r->top && n > (size_t)r->top)
		doc_footer(d, "# %zu more rows (--top 0 shows all)", n - r->top);
	report_notes(r, d);
	free(rows);
	return d->error;
}

const struct view view_table = {
	.name = "table",
	.help = "cost per component",
	.build = build_table,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The memory view (seed 000, Figure 12): the data addresses each
 * component touched, in all and per time bucket.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

struct mem_range {
	uint64_t lo, hi, n;
};

static void widen(struct mem_range *m, uint64_t addr)
{
	if (!m->n || addr < m->lo)
		m->lo = addr;
	if (addr > m->hi)
		m->hi = addr;
	m->n++;
}

static int build_memory(const struct report *r, struct doc *d)
{
	static const struct doc_column data_cols[] = {
		{ .name = "ns", .type = DOC_U64 }, { .name = "address", .type = DOC_HEX }, { .name = "name", .type = DOC_STR },
	};
	static const struct doc_column total_cols[] = {
		{ .name = "accesses", .type = DOC_U64, .width = 10, .sep = "" },
		{ .name = "lowest", .type = DOC_HEX, .width = -18, .prec = 16, .sep = "  " },
		{ .name = "highest", .type = DOC_HEX, .width = -18, .prec = 16 },
		{ .name = "component", .type = DOC_STR, .sep = "  " },
	};
	static const struct doc_column bucket_cols[] = {
		{ .name = "start", .type = DOC_STR, .width = 12, .sep = "" },
		{ .name = "component", .type = DOC_STR, .width = -24, .sep = "  " },
		{ .name = "accesses", .type = DOC_U64, .width = 8 },
		{ .name = "range", .type = DOC_STR, .sep = "  " },
	};
	const struct agg *g = &r->agg;
	size_t nr = attr_nr_rows(r->attr), i, n;
	struct mem_range *range = calloc(nr + 1, sizeof(*range));
	uint32_t *rows = agg_rows_by_samples(g, &n);
	struct doc_table *data, *totals, *per;
	char t[32];

	if (!range || !rows) {
		free(range);
		free(rows);
		return -1;
	}
	for (i = 0; i < g->nr_mem; i++)
		widen(&range[g->mem[i].row], g->mem[i].addr);
	doc_header(d, "# profile: %s: %zu samples with a data address, level %s",
		   r->input, g->nr_mem, attr_level_name(r->attr));
	data = doc_table(d, "accesses", DOC_DATA, data_cols, 3);
	for (i = 0; i < g->nr_mem; i++) {
		doc_row(d, data, 0);
		doc_cell(d, data, doc_u64(g->mem[i].ns));
		doc_cell(d, data, doc_hex(g->mem[i].addr));
		doc_cell(d, data, doc_str(row_name(r, g->mem[i].row)));
	}
	totals = doc_table(d, "totals", DOC_TEXT, total_cols, 4);
	for (i = 0; i < n; i++) {
		const struct mem_range *m = &range[rows[i]];

		if (!m->n)
			continue;
		doc_row(d, totals, 0);
		doc_cell(d, totals, doc_u64(m->n));
		doc_cell(d, totals, doc_hex(m->lo));
		doc_cell(d, totals, doc_hex(m->hi));
		doc_cell(d, totals, doc_str(row_name(r, rows[i])));
	}
	per = doc_table(d, "buckets", DOC_TEXT, bucket_cols, 4);
	if (per)
		per->headings = false;
	doc_table_title(d, per, "# per %s bucket: component, accesses, address range",
			fmt_ns(g->opt.bucket_ns, t, sizeof(t)));
	for (i = 0; i < g->nr_mem;) {
		uint64_t bucket = (g->mem[i].ns - g->opt.from_ns) / g->opt.bucket_ns;
		size_t j, k;

		memset(range, 0, (nr + 1) * sizeof(*range));
		for (j = i; j < g->nr_mem &&
		     (g->mem[j].ns - g->opt.from_ns) / g->opt.bucket_ns == bucket; j++)
			widen(&range[g->mem[j].row], g->mem[j].addr);
		for (k = 0; k < nr; k++) {
			if (!range[k].n)
				continue;
			doc_row(d, per, 0);
			doc_cell(d, per, doc_str(fmt_ns(g->opt.from_ns + bucket * g->opt.bucket_ns,
							t, sizeof(t))));
			doc_cell(d, per, doc_str(row_name(r, (uint32_t)k)));
			doc_cell(d, per, doc_u64(range[k].n));
			doc_cell(d, per, doc_str(doc_printf(d, "0x%" PRIx64 "..0x%" PRIx64,
							    range[k].lo, range[k].hi)));
		}
		i = j;
	}
	free(range);
	free(rows);
	return d->error;
}

const struct view view_memory = {
	.name = "memory",
	.help = "data addresses over time per component",
	.needs = VIEW_NEEDS_MEMORY | VIEW_NEEDS_ADDRESSES,
	.build = build_memory,
};

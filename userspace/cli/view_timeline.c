// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timeline view (seed 000, Figures 7 and 11): component activity per
 * time bucket.  Buckets are positions on the TSC axis.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

#define LEGEND_ROWS	8
#define BAR_WIDTH	50

static int build_timeline(const struct report *r, struct doc *d)
{
	static const struct doc_column data_cols[] = {
		{ .name = "bucket", .type = DOC_U64 }, { .name = "start_ns", .type = DOC_U64, .formats = DOC_CSV },
		{ .name = "name", .type = DOC_STR }, { .name = "samples", .type = DOC_U64 },
	};
	static const struct doc_column text_cols[] = {
		{ .name = "start", .type = DOC_STR, .width = 12, .sep = "" },
		{ .name = "samples", .type = DOC_U64, .width = 8 },
		{ .name = "activity", .type = DOC_STR, .width = -BAR_WIDTH, .sep = "  " },
		{ .name = "top", .type = DOC_STR, .sep = "  " },
	};
	const struct agg *g = &r->agg;
	size_t nr = attr_nr_rows(r->attr), i = 0, k;
	struct agg_bucket_count *b = agg_sorted_buckets(g);
	int *rank = agg_row_ranks(g);
	struct doc_table *data, *text;
	char t1[32], t2[32], t3[32], legend[4096];
	uint64_t max, bucket;
	size_t n = 0;

	if (!b || !rank) {
		free(b);
		free(rank);
		return -1;
	}
	max = agg_fullest_bucket(b, g->nr_bucket_counts);
	doc_header(d, "# profile: %s: %" PRIu64 " samples in the window %s..%s, buckets of %s, level %s",
		   r->input, g->total, fmt_ns(g->opt.from_ns, t1, sizeof(t1)),
		   fmt_ns(g->opt.from_ns + g->span_ns, t2, sizeof(t2)),
		   fmt_ns(g->opt.bucket_ns, t3, sizeof(t3)), attr_level_name(r->attr));
	for (k = 0; k < nr && n < sizeof(legend); k++)
		if (rank[k] < LEGEND_ROWS)
			n += snprintf(legend + n, sizeof(legend) - n, " %c=%s", 'A' + rank[k],
				      row_name(r, (uint32_t)k));
	doc_header(d, "# legend:%s +=other", n ? legend : "");
	doc_header(d, "# bar: %d columns = the fullest bucket (%" PRIu64 " samples)", BAR_WIDTH, max);
	doc_meta(d, NULL, "level", doc_str(attr_level_name(r->attr)));
	doc_meta(d, NULL, "bucket_ns", doc_u64(g->opt.bucket_ns));
	doc_meta(d, NULL, "from_ns", doc_u64(g->opt.from_ns));
	doc_meta(d, NULL, "buckets", doc_u64(g->nr_buckets));
	doc_meta(d, NULL, "total", doc_u64(g->total));
	data = doc_table(d, "counts", DOC_DATA, data_cols, 4);
	text = doc_table(d, "timeline", DOC_TEXT, text_cols, 4);
	for (k = 0; k < g->nr_bucket_counts; k++) {
		doc_row(d, data, 0);
		doc_cell(d, data, doc_u64(b[k].bucket));
		doc_cell(d, data, doc_u64(g->opt.from_ns + b[k].bucket * g->opt.bucket_ns));
		doc_cell(d, data, doc_str(row_name(r, b[k].row)));
		doc_cell(d, data, doc_u64(b[k].samples));
	}
	for (bucket = 0; bucket < g->nr_buckets; bucket++) {
		char bar[BAR_WIDTH + 1];
		uint64_t sum = 0, acc = 0;
		size_t j, start = i;
		int col = 0, end;

		for (j = i; j < g->nr_bucket_counts && b[j].bucket == bucket; j++)
			sum += b[j].samples;
		i = j;
		for (j = start; j < i; j++) {
			acc += b[j].samples;
			end = max ? (int)((acc * BAR_WIDTH + max / 2) / max) : 0;
			for (; col < end && col < BAR_WIDTH; col++)
				bar[col] = rank[b[j].row] < LEGEND_ROWS ? 'A' + rank[b[j].row] : '+';
		}
		bar[col] = '\0';
		doc_row(d, text, 0);
		doc_cell(d, text, doc_str(fmt_ns(g->opt.from_ns + bucket * g->opt.bucket_ns,
						 t1, sizeof(t1))));
		doc_cell(d, text, doc_u64(sum));
		doc_cell(d, text, doc_str(bar));
		doc_cell(d, text, start < i ?
			 doc_str(doc_printf(d, "%s %.0f%%", row_name(r, b[start].row),
					    100.0 * b[start].samples / sum)) : doc_null());
	}
	free(b);
	free(rank);
	return d->error;
}

const struct view view_timeline = {
	.name = "timeline",
	.help = "activity over time",
	.needs = VIEW_NEEDS_BUCKETS,
	.build = build_timeline,
};

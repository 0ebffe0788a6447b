// SPDX-License-Identifier: GPL-2.0-only
/*
 * The self-contained HTML report: every view on one page, plots as inline
 * SVG, no script and nothing fetched from the network.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

static const char style[] =
"body{font-family:sans-serif;margin:2em;color:#222}"
"table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}"
"td.n{text-align:right;font-variant-numeric:tabular-nums}"
".bar{background:#4e79a7;height:10px;display:inline-block}"
"pre{font-size:12px;background:#f6f6f6;padding:8px;overflow-x:auto}"
"h2{border-bottom:1px solid #ccc}";

/* A view as text, escaped into <pre>. */
static int embed_view(const struct report *r, FILE *out, const struct view *v)
{
	struct doc *d = doc_new();
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int ret = 1;

	if (d && mem && !v->build(r, d) && !export_text.write_doc(d, mem))
		ret = 0;
	if (mem && fclose(mem))
		ret = 1;
	if (!ret) {
		fputs("<pre>", out);
		xml_str(out, text);
		fputs("</pre>\n", out);
	}
	free(text);
	doc_free(d);
	return ret;
}

static void html_table(const struct report *r, FILE *out)
{
	const struct agg *g = &r->agg;
	size_t i, n;
	uint32_t *rows = agg_rows_by_samples(g, &n);

	if (!rows)
		return;
	fprintf(out, "<table><tr><th>share</th><th>samples</th><th></th><th>%s</th></tr>\n",
		attr_level_name(r->attr));
	for (i = 0; i < n; i++) {
		uint64_t s = agg_row_samples(g, rows[i]);

		fprintf(out, "<tr><td class=\"n\">%.2f%%</td><td class=\"n\">%" PRIu64
			"</td><td><span class=\"bar\" style=\"width:%dpx\"></span></td><td>",
			agg_share(g, s), s, (int)(agg_share(g, s) * 3));
		xml_str(out, row_name(r, rows[i]));
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	free(rows);
}

static size_t threads_with_samples(const struct agg *g)
{
	size_t i, n = 0;

	for (i = 0; i < g->nr_threads; i++)
		n += g->threads[i].samples != 0;
	return n;
}

int write_html(const struct report *r, const char *path)
{
	FILE *out = fopen(path, "w");
	int ret = 0;

	if (!out) {
		err_msg("report: cannot write %s: %m", path);
		return 1;
	}
	fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tailor report: ");
	xml_str(out, r->input);
	fprintf(out, "</title><style>%s</style></head><body>\n<h1>tailor report</h1>\n<p>", style);
	xml_str(out, r->input);
	fprintf(out, " (%s, %s): %" PRIu64 " samples; level <b>", r->info->format,
		r->info->complete ? "complete" : "cut short", r->agg.total);
	xml_str(out, attr_level_name(r->attr));
	fprintf(out, "</b>: %.1f%% attributed.</p>\n",
		agg_share(&r->agg, agg_attributed(&r->agg)));
	fputs("<h2>Cost per component</h2>\n", out);
	html_table(r, out);
	if (attr_level_is_dict(r->attr)) {
		fputs("<h2>Plan</h2>\n", out);
		ret |= embed_view(r, out, &view_plan);
	}
	if (attr_has_queries(r->attr)) {
		struct report per_query = *r;

		per_query.by_query = true;
		fputs("<h2>Cost per query</h2>\n", out);
		ret |= embed_view(&per_query, out, attr_level_is_dict(r->attr) ? &view_plan :
				  &view_table);
	}
	fputs("<h2>Activity over time</h2>\n", out);
	ret |= svg_timeline(&r->agg, out);
	if (threads_with_samples(&r->agg) > 1) {
		fputs("<h2>Threads over time</h2>\n", out);
		ret |= svg_lanes(&r->agg, out);
	}
	if (r->agg.opt.parallelism) {
		fputs("<h2>Parallelism: where the run was serial</h2>\n", out);
		ret |= svg_parallelism(&r->agg, out);
		ret |= embed_view(r, out, &view_parallelism);
	}
	if (r->agg.nr_mem) {
		fputs("<h2>Memory accesses over time</h2>\n", out);
		ret |= svg_memory(&r->agg, out);
	}
	fputs("<h2>Annotated source</h2>\n", out);
	ret |= embed_view(r, out, &view_source);
	fputs("</body></html>\n", out);
	if (fclose(out) || ret) {
		err_msg("report: writing %s failed", path);
		return 1;
	}
	return 0;
}

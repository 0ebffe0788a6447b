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

/* A text view, captured and escaped into <pre>. */
static int embed_view(const struct report *r, FILE *out,
		      int (*view)(const struct report *, FILE *, enum report_format))
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int ret;

	if (!mem)
		return 1;
	ret = view(r, mem, FMT_TEXT);
	if (fclose(mem) || ret) {
		free(text);
		return 1;
	}
	fputs("<pre>", out);
	xml_str(out, text);
	fputs("</pre>\n", out);
	free(text);
	return 0;
}

static void html_table(const struct report *r, FILE *out)
{
	size_t i, n;
	uint32_t *rows = rows_by_samples(r, &n);

	if (!rows)
		return;
	fprintf(out, "<table><tr><th>share</th><th>samples</th><th></th><th>%s</th></tr>\n",
		attr_level_name(r->attr));
	for (i = 0; i < n; i++) {
		uint64_t s = report_row_samples(r, rows[i]);

		fprintf(out, "<tr><td class=\"n\">%.2f%%</td><td class=\"n\">%" PRIu64
			"</td><td><span class=\"bar\" style=\"width:%dpx\"></span></td><td>",
			report_share(r, s), s, (int)(report_share(r, s) * 3));
		xml_str(out, attr_row(r->attr, rows[i])->name);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	free(rows);
}

int write_html(const struct report *r, const char *path)
{
	FILE *out = fopen(path, "w");
	uint64_t attributed = report_attributed(r);
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
		r->info->complete ? "complete" : "cut short", r->total);
	xml_str(out, attr_level_name(r->attr));
	fprintf(out, "</b>: %.1f%% attributed.</p>\n", report_share(r, attributed));
	fputs("<h2>Cost per component</h2>\n", out);
	html_table(r, out);
	if (attr_level_is_dict(r->attr)) {
		fputs("<h2>Plan</h2>\n", out);
		ret |= embed_view(r, out, view_plan);
	}
	fputs("<h2>Activity over time</h2>\n", out);
	ret |= write_timeline_svg(r, out);
	if (r->nr_mem) {
		fputs("<h2>Memory accesses over time</h2>\n", out);
		ret |= write_memory_svg(r, out);
	}
	fputs("<h2>Annotated source</h2>\n", out);
	ret |= embed_view(r, out, view_source);
	fputs("</body></html>\n", out);
	if (fclose(out) || ret) {
		err_msg("report: writing %s failed", path);
		return 1;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor report's views of the cost per component: the table, the plan
 * tree (seed 000, Figures 6a, 9b) and the annotated source (Figure 6b).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

void csv_str(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void xml_str(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

const char *row_kind_name(const struct attr_row *row)
{
	static const char *const names[] = {
		[ROW_COMPONENT] = "component", [ROW_FUNCTION] = "function",
		[ROW_LINE] = "line", [ROW_INSTRUCTION] = "instruction",
		[ROW_KERNEL] = "kernel", [ROW_OBJECT] = "object",
		[ROW_UNKNOWN] = "unknown", [ROW_UNRESOLVED] = "unresolved",
	};

	return names[row->kind];
}

const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 10000000000ull)
		snprintf(buf, len, "%.3fs", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.3fus", ns / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	return buf;
}

static const struct report *sort_report;

static int cmp_rows(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t sx = report_row_samples(sort_report, x);
	uint64_t sy = report_row_samples(sort_report, y);

	if (sx != sy)
		return sx < sy ? 1 : -1;
	return strcmp(attr_row(sort_report->attr, x)->name,
		      attr_row(sort_report->attr, y)->name);
}

uint32_t *rows_by_samples(const struct report *r, size_t *n)
{
	size_t i, nr = attr_nr_rows(r->attr);
	uint32_t *rows = malloc((nr ? nr : 1) * sizeof(*rows));

	*n = 0;
	if (!rows)
		return NULL;
	for (i = 0; i < nr; i++)
		if (report_row_samples(r, i))
			rows[(*n)++] = (uint32_t)i;
	sort_report = r;
	qsort(rows, *n, sizeof(*rows), cmp_rows);
	return rows;
}

static void text_header(const struct report *r, FILE *out)
{
	uint64_t attributed = report_attributed(r);
	int i;

	fprintf(out, "# profile: %s (%s, %s): %" PRIu64 " samples, event %s\n",
		r->input, r->info->format, r->info->complete ? "complete" : "cut short",
		r->info->nr_samples, r->info->event[0] ? r->info->event : "?");
	if (r->nr_dicts) {
		fprintf(out, "# dictionaries:");
		for (i = 0; i < r->nr_dicts; i++)
			fprintf(out, " %s", r->dict_paths[i]);
		fputc('\n', out);
	}
	if (r->filtered_out)
		fprintf(out, "# filters left %" PRIu64 " samples (%" PRIu64 " filtered out)\n",
			r->total, r->filtered_out);
	fprintf(out, "# level: %s; %" PRIu64 " of %" PRIu64 " samples (%.1f%%) attributed to %ss\n",
		attr_level_name(r->attr), attributed, r->total,
		report_share(r, attributed), attr_level_name(r->attr));
}

static void text_notes(const struct report *r, FILE *out)
{
	enum attr_note n;
	uint64_t count;
	size_t i;
	bool any = false;

	for (n = NOTE_NONE + 1; n < NOTE_MAX; n++) {
		count = attr_note_count(r->attr, n);
		if (!count)
			continue;
		if (!any)
			fputs("# notes:\n", out);
		any = true;
		fprintf(out, "#   %" PRIu64 " samples (%.1f%%) %s\n", count,
			report_share(r, count), attr_note_text(n));
	}
	for (i = 0; i < attr_nr_nodebug(r->attr); i++) {
		const char *obj = attr_nodebug(r->attr, i, &count);

		if (count)
			fprintf(out, "#   %" PRIu64 " samples in %s, which has no line information (build with -g, or install its debug symbols)\n",
				count, obj);
	}
}

static void json_notes(const struct report *r, FILE *out)
{
	enum attr_note n;
	const char *sep = "";

	fputs("\"notes\":[", out);
	for (n = NOTE_NONE + 1; n < NOTE_MAX; n++) {
		uint64_t count = attr_note_count(r->attr, n);

		if (!count)
			continue;
		fprintf(out, "%s{\"samples\":%" PRIu64 ",\"note\":", sep, count);
		json_str(out, attr_note_text(n));
		fputc('}', out);
		sep = ",";
	}
	fputs("]", out);
}

static void json_profile(const struct report *r, FILE *out)
{
	fputs("\"profile\":{\"input\":", out);
	json_str(out, r->input);
	fprintf(out, ",\"format\":\"%s\",\"complete\":%s,\"samples\":%" PRIu64
		",\"filtered_out\":%" PRIu64 "},\"level\":",
		r->info->format, r->info->complete ? "true" : "false",
		r->info->nr_samples, r->filtered_out);
	json_str(out, attr_level_name(r->attr));
	fprintf(out, ",\"total\":%" PRIu64 ",\"attributed\":%" PRIu64 ",",
		r->total, report_attributed(r));
}

int view_table(const struct report *r, FILE *out, enum report_format fmt)
{
	size_t i, n;
	uint32_t *rows = rows_by_samples(r, &n);
	const char *sep = "";

	if (!rows)
		return 1;
	switch (fmt) {
	case FMT_TEXT:
		text_header(r, out);
		fprintf(out, "%8s %10s  %s\n", "share", "samples", attr_level_name(r->attr));
		for (i = 0; i < n && (!r->top || i < (size_t)r->top); i++)
			fprintf(out, "%7.2f%% %10" PRIu64 "  %s\n",
				report_share(r, report_row_samples(r, rows[i])),
				report_row_samples(r, rows[i]), attr_row(r->attr, rows[i])->name);
		if (i < n)
			fprintf(out, "# %zu more rows (--top 0 shows all)\n", n - i);
		text_notes(r, out);
		break;
	case FMT_CSV:
		fputs("name,kind,samples,share\n", out);
		for (i = 0; i < n; i++) {
			const struct attr_row *row = attr_row(r->attr, rows[i]);

			csv_str(out, row->name);
			fprintf(out, ",%s,%" PRIu64 ",%.4f\n", row_kind_name(row),
				report_row_samples(r, rows[i]),
				report_share(r, report_row_samples(r, rows[i])));
		}
		break;
	case FMT_JSON:
		fputc('{', out);
		json_profile(r, out);
		fputs("\"rows\":[", out);
		for (i = 0; i < n; i++) {
			const struct attr_row *row = attr_row(r->attr, rows[i]);

			fprintf(out, "%s{\"name\":", sep);
			json_str(out, row->name);
			fprintf(out, ",\"kind\":\"%s\",\"samples\":%" PRIu64 ",\"share\":%.4f}",
				row_kind_name(row), report_row_samples(r, rows[i]),
				report_share(r, report_row_samples(r, rows[i])));
			sep = ",";
		}
		fputs("],", out);
		json_notes(r, out);
		fputs("}\n", out);
		break;
	}
	free(rows);
	return 0;
}

/* ---- the plan tree ---- */

struct plan {
	uint64_t *inclusive;
	int *depth;
	uint32_t *order;	/* rows in tree order */
	size_t n;
};

static void plan_visit(const struct report *r, struct plan *p, uint32_t row, int depth)
{
	size_t i, nr = attr_nr_rows(r->attr);

	p->depth[row] = depth;
	p->order[p->n++] = row;
	for (i = 0; i < nr; i++)
		if (attr_row(r->attr, i)->parent == (int)row && p->depth[i] < 0)
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
		if (attr_row(r->attr, i)->kind != ROW_COMPONENT)
			continue;
		/* Add a row's samples to each ancestor; a cycle stops at 64. */
		for (guard = 0; at >= 0 && guard < 64; guard++) {
			p->inclusive[at] += report_row_samples(r, i);
			at = attr_row(r->attr, at)->parent;
		}
	}
	for (i = 0; i < nr; i++) {
		const struct attr_row *row = attr_row(r->attr, i);

		if (row->kind == ROW_COMPONENT && row->parent < 0 && p->depth[i] < 0)
			plan_visit(r, p, (uint32_t)i, 0);
	}
	/* Components caught in a parent cycle are listed as roots. */
	for (i = 0; i < nr; i++)
		if (attr_row(r->attr, i)->kind == ROW_COMPONENT && p->depth[i] < 0)
			plan_visit(r, p, (uint32_t)i, 0);
	return 0;
}

static void plan_free(struct plan *p)
{
	free(p->inclusive);
	free(p->depth);
	free(p->order);
}

int view_plan(const struct report *r, FILE *out, enum report_format fmt)
{
	struct plan p;
	const char *sep = "";
	uint64_t other = r->total;
	size_t i;
	int d;

	if (plan_build(r, &p)) {
		plan_free(&p);
		return 1;
	}
	for (i = 0; i < p.n; i++)
		other -= report_row_samples(r, p.order[i]);
	switch (fmt) {
	case FMT_TEXT:
		text_header(r, out);
		fprintf(out, "%8s %8s  %s\n", "self", "total", "plan");
		for (i = 0; i < p.n; i++) {
			uint32_t row = p.order[i];

			fprintf(out, "%7.2f%% %7.2f%%  ", report_share(r, report_row_samples(r, row)),
				report_share(r, p.inclusive[row]));
			for (d = 0; d < p.depth[row]; d++)
				fputs(d + 1 == p.depth[row] ? "`- " : "   ", out);
			fprintf(out, "%s\n", attr_row(r->attr, row)->name);
		}
		fprintf(out, "%7.2f%% %8s  (not attributed to a %s: kernel, libraries, runtime, unknown)\n",
			report_share(r, other), "", attr_level_name(r->attr));
		text_notes(r, out);
		break;
	case FMT_CSV:
		fputs("name,parent,depth,self_samples,total_samples,self_share,total_share\n", out);
		for (i = 0; i < p.n; i++) {
			uint32_t row = p.order[i];
			int parent = attr_row(r->attr, row)->parent;

			csv_str(out, attr_row(r->attr, row)->name);
			fputc(',', out);
			if (parent >= 0)
				csv_str(out, attr_row(r->attr, parent)->name);
			fprintf(out, ",%d,%" PRIu64 ",%" PRIu64 ",%.4f,%.4f\n", p.depth[row],
				report_row_samples(r, row), p.inclusive[row],
				report_share(r, report_row_samples(r, row)),
				report_share(r, p.inclusive[row]));
		}
		break;
	case FMT_JSON:
		fputc('{', out);
		json_profile(r, out);
		fputs("\"plan\":[", out);
		for (i = 0; i < p.n; i++) {
			uint32_t row = p.order[i];
			int parent = attr_row(r->attr, row)->parent;

			fprintf(out, "%s{\"name\":", sep);
			json_str(out, attr_row(r->attr, row)->name);
			fputs(",\"parent\":", out);
			if (parent >= 0)
				json_str(out, attr_row(r->attr, parent)->name);
			else
				fputs("null", out);
			fprintf(out, ",\"depth\":%d,\"self_samples\":%" PRIu64 ",\"total_samples\":%" PRIu64 "}",
				p.depth[row], report_row_samples(r, row), p.inclusive[row]);
			sep = ",";
		}
		fprintf(out, "],\"not_attributed\":%" PRIu64 ",", other);
		json_notes(r, out);
		fputs("}\n", out);
		break;
	}
	plan_free(&p);
	return 0;
}

/* ---- the annotated source ---- */

struct line_total {
	uint32_t line;		/* index into the attributor's lines */
	uint64_t samples;
	uint32_t owner;		/* the row with most samples on it */
	uint64_t owner_samples;
};

static const struct attributor *sort_attr;

static int cmp_line_total(const void *a, const void *b)
{
	const struct line_total *x = a, *y = b;
	const struct attr_line *lx = attr_line(sort_attr, x->line);
	const struct attr_line *ly = attr_line(sort_attr, y->line);
	int c = strcmp(lx->file, ly->file);

	if (c)
		return c;
	return lx->line < ly->line ? -1 : lx->line > ly->line;
}

/* Per source line: samples and owner, sorted by (file, line). */
static struct line_total *line_totals(const struct report *r, size_t *n)
{
	size_t nr = attr_nr_lines(r->attr), i;
	struct line_total *t = calloc(nr + 1, sizeof(*t));

	*n = 0;
	if (!t)
		return NULL;
	for (i = 0; i < nr; i++)
		t[i].line = (uint32_t)i;
	for (i = 0; i < r->nr_lines; i++) {
		struct line_total *lt = &t[r->lines[i].line];

		lt->samples += r->lines[i].samples;
		if (r->lines[i].samples > lt->owner_samples) {
			lt->owner_samples = r->lines[i].samples;
			lt->owner = r->lines[i].row;
		}
	}
	for (i = 0; i < nr; i++)
		if (t[i].samples && (!r->source_filter ||
				     strstr(attr_line(r->attr, t[i].line)->file, r->source_filter)))
			t[(*n)++] = t[i];
	sort_attr = r->attr;
	qsort(t, *n, sizeof(*t), cmp_line_total);
	return t;
}

/* One file's text, all lines, with the sampled ones annotated. */
static void source_file_text(const struct report *r, FILE *out,
			     const struct line_total *t, size_t n)
{
	const char *file = attr_line(r->attr, t[0].line)->file;
	FILE *src = fopen(file, "r");
	char buf[4096];
	unsigned int lineno = 0;
	size_t i = 0;
	uint64_t sum = 0;

	for (i = 0; i < n; i++)
		sum += t[i].samples;
	fprintf(out, "\n## %s: %" PRIu64 " samples (%.2f%%)\n", file, sum, report_share(r, sum));
	if (!src) {
		fprintf(out, "# (source not readable: %m; sampled lines only)\n");
		for (i = 0; i < n; i++)
			fprintf(out, "%7.2f%% %8" PRIu64 "  %-24.24s %6u\n",
				report_share(r, t[i].samples), t[i].samples,
				attr_row(r->attr, t[i].owner)->name,
				attr_line(r->attr, t[i].line)->line);
		return;
	}
	i = 0;
	while (fgets(buf, sizeof(buf), src)) {
		size_t len = strlen(buf);

		lineno++;
		if (len && buf[len - 1] == '\n')
			buf[len - 1] = '\0';
		while (i < n && attr_line(r->attr, t[i].line)->line < lineno)
			i++;
		if (i < n && attr_line(r->attr, t[i].line)->line == lineno)
			fprintf(out, "%7.2f%% %8" PRIu64 "  %-24.24s %6u| %s\n",
				report_share(r, t[i].samples), t[i].samples,
				attr_row(r->attr, t[i].owner)->name, lineno, buf);
		else
			fprintf(out, "%8s %8s  %-24s %6u| %s\n", "", "", "", lineno, buf);
	}
	fclose(src);
}

int view_source(const struct report *r, FILE *out, enum report_format fmt)
{
	size_t n, i, start;
	struct line_total *t = line_totals(r, &n);
	const char *sep = "";

	if (!t)
		return 1;
	switch (fmt) {
	case FMT_TEXT:
		text_header(r, out);
		fprintf(out, "# columns: share, samples, owner (the %s with most samples on the line), line| source\n",
			attr_level_name(r->attr));
		for (start = 0; start < n; start = i) {
			const char *file = attr_line(r->attr, t[start].line)->file;

			for (i = start; i < n && !strcmp(attr_line(r->attr, t[i].line)->file, file); i++)
				;
			source_file_text(r, out, t + start, i - start);
		}
		if (!n)
			fprintf(out, "# no sample has line information%s\n",
				r->source_filter ? " in the files --source-file selects" : "");
		break;
	case FMT_CSV:
		fputs("file,line,samples,share,owner\n", out);
		for (i = 0; i < n; i++) {
			csv_str(out, attr_line(r->attr, t[i].line)->file);
			fprintf(out, ",%u,%" PRIu64 ",%.4f,", attr_line(r->attr, t[i].line)->line,
				t[i].samples, report_share(r, t[i].samples));
			csv_str(out, attr_row(r->attr, t[i].owner)->name);
			fputc('\n', out);
		}
		break;
	case FMT_JSON:
		fputc('{', out);
		json_profile(r, out);
		fputs("\"lines\":[", out);
		for (i = 0; i < n; i++) {
			fprintf(out, "%s{\"file\":", sep);
			json_str(out, attr_line(r->attr, t[i].line)->file);
			fprintf(out, ",\"line\":%u,\"samples\":%" PRIu64 ",\"owner\":",
				attr_line(r->attr, t[i].line)->line, t[i].samples);
			json_str(out, attr_row(r->attr, t[i].owner)->name);
			fputc('}', out);
			sep = ",";
		}
		fputs("]}\n", out);
		break;
	}
	free(t);
	return 0;
}

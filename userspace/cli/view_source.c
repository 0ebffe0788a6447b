// SPDX-License-Identifier: GPL-2.0-only
/*
 * The source view (seed 000, Figure 6b): every sampled source line with
 * its share and the component owning most of its samples; in text, the
 * whole file beside it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"
#include "util/grow.h"

struct line_total {
	uint32_t line;		/* index into the attributor's lines */
	uint64_t samples;
	uint32_t owner;		/* the row with most samples on it */
	uint64_t owner_samples;
};

static int cmp_line_total(const void *a, const void *b, void *ctx)
{
	const struct attributor *attr = ctx;
	const struct line_total *x = a, *y = b;
	const struct attr_line *lx = attr_line(attr, x->line);
	const struct attr_line *ly = attr_line(attr, y->line);
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
	const struct agg *g = &r->agg;

	*n = 0;
	if (!t)
		return NULL;
	for (i = 0; i < nr; i++)
		t[i].line = (uint32_t)i;
	for (i = 0; i < g->nr_lines; i++) {
		struct line_total *lt = &t[g->lines[i].line];

		lt->samples += g->lines[i].samples;
		if (g->lines[i].samples > lt->owner_samples) {
			lt->owner_samples = g->lines[i].samples;
			lt->owner = g->lines[i].row;
		}
	}
	for (i = 0; i < nr; i++)
		if (t[i].samples && (!r->source_filter ||
				     strstr(attr_line(r->attr, t[i].line)->file, r->source_filter)))
			t[(*n)++] = t[i];
	qsort_r(t, *n, sizeof(*t), cmp_line_total, r->attr);
	return t;
}

/* One file's text, every line, the sampled ones annotated. */
static void source_file(const struct report *r, struct doc *d,
			const struct line_total *t, size_t n)
{
	static const struct doc_column cols[] = {
		{ .name = "share", .type = DOC_SHARE, .width = 8, .sep = "" },
		{ .name = "samples", .type = DOC_U64, .width = 8 },
		{ .name = "owner", .type = DOC_STR, .width = -24, .maxlen = 24, .sep = "  " },
		{ .name = "line", .type = DOC_U64, .width = 6 },
		{ .name = "source", .type = DOC_STR, .sep = "| " },
	};
	const char *file = attr_line(r->attr, t[0].line)->file;
	FILE *src = fopen(file, "r");
	const struct agg *g = &r->agg;
	struct doc_table *tab;
	unsigned int lineno = 0;
	uint64_t sum = 0;
	char buf[4096];
	size_t i;
	int err = errno;

	for (i = 0; i < n; i++)
		sum += t[i].samples;
	/* Unreadable source: the sampled lines alone, without the column. */
	tab = doc_table(d, "source", DOC_TEXT, cols, src ? 5 : 4);
	if (!tab)
		return;
	tab->headings = false;
	doc_table_title(d, tab, "\n## %s: %" PRIu64 " samples (%.2f%%)%s%s%s", file, sum,
			agg_share(g, sum), src ? "" : "\n# (source not readable: ",
			src ? "" : strerror(err), src ? "" : "; sampled lines only)");
	if (!src) {
		for (i = 0; i < n; i++) {
			doc_row(d, tab, 0);
			doc_cell(d, tab, doc_share(agg_share(g, t[i].samples)));
			doc_cell(d, tab, doc_u64(t[i].samples));
			doc_cell(d, tab, doc_str(row_name(r, t[i].owner)));
			doc_cell(d, tab, doc_u64(attr_line(r->attr, t[i].line)->line));
		}
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
		doc_row(d, tab, 0);
		if (i < n && attr_line(r->attr, t[i].line)->line == lineno) {
			doc_cell(d, tab, doc_share(agg_share(g, t[i].samples)));
			doc_cell(d, tab, doc_u64(t[i].samples));
			doc_cell(d, tab, doc_str(row_name(r, t[i].owner)));
		} else {
			doc_cell(d, tab, doc_null());
			doc_cell(d, tab, doc_null());
			doc_cell(d, tab, doc_null());
		}
		doc_cell(d, tab, doc_u64(lineno));
		doc_cell(d, tab, doc_str(buf));
	}
	fclose(src);
}

/* One file's lines in the sorted totals, and their samples. */
struct file_span {
	size_t start, n;
	uint64_t samples;
};

/* Costliest first; ties by name (the totals' order), for stable output. */
static int cmp_file_cost(const void *a, const void *b)
{
	const struct file_span *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int build_source(const struct report *r, struct doc *d)
{
	static const struct doc_column cols[] = {
		{ .name = "file", .type = DOC_STR }, { .name = "line", .type = DOC_U64 }, { .name = "samples", .type = DOC_U64 },
		{ .name = "share", .type = DOC_SHARE }, { .name = "owner", .type = DOC_STR },
	};
	size_t n, i, start, nr_files = 0, cap = 0;
	struct line_total *t = line_totals(r, &n);
	struct file_span *files = NULL;
	struct doc_table *data;

	if (!t)
		return -1;
	report_header(r, d);
	report_meta(r, d);
	doc_header(d, "# columns: share, samples, owner (the %s with most samples on the line), line| source",
		   attr_level_name(r->attr));
	data = doc_table(d, "lines", DOC_DATA, cols, 5);
	for (i = 0; i < n; i++) {
		const struct attr_line *l = attr_line(r->attr, t[i].line);

		doc_row(d, data, 0);
		doc_cell(d, data, doc_str(l->file));
		doc_cell(d, data, doc_u64(l->line));
		doc_cell(d, data, doc_u64(t[i].samples));
		doc_cell(d, data, doc_share(agg_share(&r->agg, t[i].samples)));
		doc_cell(d, data, doc_str(row_name(r, t[i].owner)));
	}
	/* The files, costliest first, as many as --top asks for. */
	for (start = 0; start < n; start = i) {
		const char *file = attr_line(r->attr, t[start].line)->file;
		uint64_t sum = 0;

		for (i = start; i < n && !strcmp(attr_line(r->attr, t[i].line)->file, file); i++)
			sum += t[i].samples;
		if (array_grow((void **)&files, &cap, nr_files + 1, sizeof(*files))) {
			free(files);
			free(t);
			return -1;
		}
		files[nr_files++] = (struct file_span){ start, i - start, sum };
	}
	qsort(files, nr_files, sizeof(*files), cmp_file_cost);
	for (i = 0; i < nr_files && (!r->top || i < (size_t)r->top); i++)
		source_file(r, d, t + files[i].start, files[i].n);
	if (i < nr_files)
		doc_footer(d, "\n# %zu more file%s (--top 0 shows all)", nr_files - i,
			   nr_files - i == 1 ? "" : "s");
	free(files);
	if (!n)
		doc_footer(d, "# no sample has line information%s",
			   r->source_filter ? " in the files --source-file selects" : "");
	free(t);
	return d->error;
}

const struct view view_source = {
	.name = "source",
	.help = "the source annotated per line with its share and owner",
	.needs = VIEW_NEEDS_LINES,
	.build = build_source,
};

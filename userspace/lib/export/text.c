// SPDX-License-Identifier: GPL-2.0-only
/*
 * Documents as text for a terminal: comment lines, then each table in
 * columns of fixed width, then the closing lines.  Trailing blanks are
 * trimmed from every line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "tailor/export.h"

/* One cell as the column formats it, into @buf. */
static void format_cell(const struct doc_column *c, const struct doc_value *v,
			char *buf, size_t len)
{
	int w = c->width < 0 ? -c->width : c->width;

	switch (v->type) {
	case DOC_NULL:
		buf[0] = '\0';
		break;
	case DOC_STR:
		snprintf(buf, len, "%.*s", c->maxlen ? c->maxlen : (int)len, v->s);
		break;
	case DOC_U64:
		snprintf(buf, len, "%" PRIu64, v->u);
		break;
	case DOC_I64:
		snprintf(buf, len, "%" PRId64, v->i);
		break;
	case DOC_F64:
		snprintf(buf, len, "%.*f", c->prec, v->f);
		break;
	case DOC_SHARE:
		/* The % sign sits in the column's last place. */
		snprintf(buf, len, "%*.*f%%", w > 1 ? w - 1 : 0, c->prec ? c->prec : 2, v->f);
		break;
	case DOC_HEX:
		snprintf(buf, len, "0x%0*" PRIx64, c->prec, v->u);
		break;
	case DOC_BOOL:
		snprintf(buf, len, "%s", v->b ? "yes" : "no");
		break;
	}
}

/* A line with its trailing blanks trimmed. */
static void put_line(FILE *out, char *line, size_t n)
{
	while (n && line[n - 1] == ' ')
		n--;
	fwrite(line, 1, n, out);
	fputc('\n', out);
}

/* Append @s to the line, padded to the column's width. */
static size_t place(char *line, size_t at, size_t cap, const struct doc_column *c,
		    const char *s, bool first)
{
	const char *sep = c->sep ? c->sep : first ? "" : " ";
	int n = snprintf(line + at, cap - at, "%s%*s", sep, c->width, s);

	if (n < 0 || (size_t)n >= cap - at)
		return cap - 1;
	return at + n;
}

static void write_table(const struct doc_table *t, FILE *out)
{
	char line[16384], cell[8192];
	size_t r, at;
	int c;
	bool first;

	if (t->title)
		fprintf(out, "%s\n", t->title);
	if (t->headings) {
		at = 0;
		first = true;
		for (c = 0; c < t->nr_cols; c++) {
			if (!(t->cols[c].formats & DOC_TEXT))
				continue;
			at = place(line, at, sizeof(line), &t->cols[c],
				   t->cols[c].heading ? t->cols[c].heading : t->cols[c].name, first);
			first = false;
		}
		put_line(out, line, at);
	}
	for (r = 0; r < t->nr_rows; r++) {
		if (!(t->row_formats[r] & DOC_TEXT))
			continue;
		at = 0;
		first = true;
		for (c = 0; c < t->nr_cols; c++) {
			if (!(t->cols[c].formats & DOC_TEXT))
				continue;
			format_cell(&t->cols[c], &t->cells[r * t->nr_cols + c], cell, sizeof(cell));
			at = place(line, at, sizeof(line), &t->cols[c], cell, first);
			first = false;
		}
		put_line(out, line, at);
	}
}

static int write_text(const struct doc *d, FILE *out)
{
	int i;

	if (d->error)
		return d->error;
	for (i = 0; i < d->nr_header; i++)
		fprintf(out, "%s\n", d->header[i]);
	for (i = 0; i < d->nr_tables; i++)
		if (d->tables[i].formats & DOC_TEXT)
			write_table(&d->tables[i], out);
	for (i = 0; i < d->nr_footer; i++)
		fprintf(out, "%s\n", d->footer[i]);
	return ferror(out) ? -1 : 0;
}

const struct exporter export_text = {
	.name = "text",
	.help = "aligned columns for a terminal (the default)",
	.write_doc = write_text,
};

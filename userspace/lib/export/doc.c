// SPDX-License-Identifier: GPL-2.0-only
/*
 * Documents (tailor/export.h): what a view shows, as data.  Running out
 * of memory is sticky in d->error, so a view builds its document without
 * checking every call and the writer refuses a damaged one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/export.h"
#include "util/grow.h"

struct doc *doc_new(void)
{
	return calloc(1, sizeof(struct doc));
}

void doc_free(struct doc *d)
{
	size_t i;
	int t;

	if (!d)
		return;
	for (i = 0; i < d->nr_strings; i++)
		free(d->strings[i]);
	for (t = 0; t < d->nr_tables; t++) {
		free(d->tables[t].cells);
		free(d->tables[t].row_formats);
	}
	free(d->strings);
	free(d->tables);
	free(d->header);
	free(d->footer);
	free(d->meta);
	free(d);
}

/* Keep @s (malloc'ed) for the document's lifetime; NULL if out of memory. */
static char *own(struct doc *d, char *s)
{
	size_t cap = d->cap_strings;

	if (!s || array_grow((void **)&d->strings, &cap, d->nr_strings + 1, sizeof(char *))) {
		free(s);
		d->error = -ENOMEM;
		return NULL;
	}
	d->cap_strings = cap;
	d->strings[d->nr_strings++] = s;
	return s;
}

const char *doc_strdup(struct doc *d, const char *s)
{
	return s ? own(d, strdup(s)) : NULL;
}

static char *vformat(struct doc *d, const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	return own(d, s);
}

const char *doc_printf(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vformat(d, fmt, ap);
	va_end(ap);
	return s;
}

static void add_line(struct doc *d, char ***lines, int *nr, int *cap, char *s)
{
	size_t c = (size_t)*cap;

	if (!s)
		return;
	if (array_grow((void **)lines, &c, (size_t)*nr + 1, sizeof(char *))) {
		d->error = -ENOMEM;
		return;
	}
	*cap = (int)c;
	(*lines)[(*nr)++] = s;
}

void doc_header(struct doc *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(d, &d->header, &d->nr_header, &d->cap_header, vformat(d, fmt, ap));
	va_end(ap);
}

void doc_footer(struct doc *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(d, &d->footer, &d->nr_footer, &d->cap_footer, vformat(d, fmt, ap));
	va_end(ap);
}

void doc_meta(struct doc *d, const char *group, const char *key, struct doc_value v)
{
	size_t cap = (size_t)d->cap_meta;

	if (array_grow((void **)&d->meta, &cap, (size_t)d->nr_meta + 1, sizeof(*d->meta))) {
		d->error = -ENOMEM;
		return;
	}
	d->cap_meta = (int)cap;
	if (v.type == DOC_STR)
		v.s = doc_strdup(d, v.s);
	d->meta[d->nr_meta++] = (struct doc_meta){ group, key, v };
}

struct doc_table *doc_table(struct doc *d, const char *name, unsigned int formats,
			    const struct doc_column *cols, int n)
{
	size_t cap = (size_t)d->cap_tables;
	struct doc_table *t;
	int i;

	if (n > (int)(sizeof(t->cols) / sizeof(t->cols[0])) ||
	    array_grow((void **)&d->tables, &cap, (size_t)d->nr_tables + 1, sizeof(*d->tables))) {
		d->error = -ENOMEM;
		return NULL;
	}
	d->cap_tables = (int)cap;
	t = &d->tables[d->nr_tables++];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->formats = formats ? formats : DOC_ALL;
	t->headings = true;
	t->nr_cols = n;
	for (i = 0; i < n; i++) {
		t->cols[i] = cols[i];
		if (!t->cols[i].formats)
			t->cols[i].formats = DOC_ALL;
	}
	t->filled = n;
	return t;
}

void doc_table_title(struct doc *d, struct doc_table *t, const char *fmt, ...)
{
	va_list ap;

	if (!t)
		return;
	va_start(ap, fmt);
	t->title = vformat(d, fmt, ap);
	va_end(ap);
}

void doc_row(struct doc *d, struct doc_table *t, unsigned int formats)
{
	if (!t || d->error)
		return;
	/* A row cut short by the caller is padded, never misaligned. */
	while (t->nr_rows && t->filled < t->nr_cols)
		t->cells[(t->nr_rows - 1) * t->nr_cols + t->filled++] = doc_null();
	if (array_grow((void **)&t->cells, &t->cap_cells, (t->nr_rows + 1) * t->nr_cols,
		       sizeof(*t->cells)) ||
	    array_grow((void **)&t->row_formats, &t->cap_rows, t->nr_rows + 1,
		       sizeof(*t->row_formats))) {
		d->error = -ENOMEM;
		return;
	}
	t->row_formats[t->nr_rows++] = formats ? formats : DOC_ALL;
	t->filled = 0;
}

void doc_cell(struct doc *d, struct doc_table *t, struct doc_value v)
{
	if (!t || d->error || !t->nr_rows || t->filled >= t->nr_cols)
		return;
	if (v.type == DOC_STR)
		v.s = doc_strdup(d, v.s);
	t->cells[(t->nr_rows - 1) * t->nr_cols + t->filled++] = v;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Documents as one JSON object: the metadata fields (grouped into objects
 * where they say so), then each table as an array of objects keyed by
 * column name.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tailor/export.h"

static void write_value(const struct doc_value *v, FILE *out)
{
	switch (v->type) {
	case DOC_NULL:
		fputs("null", out);
		break;
	case DOC_STR:
		json_str(out, v->s);
		break;
	case DOC_U64:
	case DOC_HEX:
		fprintf(out, "%" PRIu64, v->u);
		break;
	case DOC_I64:
		fprintf(out, "%" PRId64, v->i);
		break;
	case DOC_F64:
	case DOC_SHARE:
		/* JSON has no NaN or infinity. */
		if (isfinite(v->f))
			fprintf(out, "%.4f", v->f);
		else
			fputs("null", out);
		break;
	case DOC_BOOL:
		fputs(v->b ? "true" : "false", out);
		break;
	}
}

static void write_meta(const struct doc *d, FILE *out, const char **sep)
{
	const char *group = NULL;
	int i;

	for (i = 0; i < d->nr_meta; i++) {
		const struct doc_meta *m = &d->meta[i];

		if (group && (!m->group || strcmp(m->group, group))) {
			fputc('}', out);
			group = NULL;
		}
		if (m->group && !group) {
			fputs(*sep, out);
			json_str(out, m->group);
			fputs(":{", out);
			group = m->group;
			*sep = "";
		}
		fputs(*sep, out);
		json_str(out, m->key);
		fputc(':', out);
		write_value(&m->v, out);
		*sep = ",";
	}
	if (group)
		fputc('}', out);
}

static void write_table(const struct doc_table *t, FILE *out)
{
	const char *rsep = "", *csep;
	size_t r;
	int c;

	json_str(out, t->name);
	fputs(":[", out);
	for (r = 0; r < t->nr_rows; r++) {
		if (!(t->row_formats[r] & DOC_JSON))
			continue;
		fputs(rsep, out);
		fputc('{', out);
		csep = "";
		for (c = 0; c < t->nr_cols; c++) {
			if (!(t->cols[c].formats & DOC_JSON))
				continue;
			fputs(csep, out);
			json_str(out, t->cols[c].name);
			fputc(':', out);
			write_value(&t->cells[r * t->nr_cols + c], out);
			csep = ",";
		}
		fputc('}', out);
		rsep = ",";
	}
	fputc(']', out);
}

static int write_json(const struct doc *d, FILE *out)
{
	const char *sep = "";
	int i;

	if (d->error)
		return d->error;
	fputc('{', out);
	write_meta(d, out, &sep);
	for (i = 0; i < d->nr_tables; i++) {
		if (!(d->tables[i].formats & DOC_JSON))
			continue;
		fputs(sep, out);
		write_table(&d->tables[i], out);
		sep = ",";
	}
	fputs("}\n", out);
	return ferror(out) ? -1 : 0;
}

const struct exporter export_json = {
	.name = "json",
	.help = "one JSON object: the view's fields and tables",
	.write_doc = write_json,
};

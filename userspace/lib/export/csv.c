// SPDX-License-Identifier: GPL-2.0-only
/* Documents as CSV (RFC 4180): the view's data table, a heading line first. */
#include <inttypes.h>
#include <stdio.h>
#include "tailor/export.h"

static void write_cell(const struct doc_value *v, FILE *out)
{
	switch (v->type) {
	case DOC_NULL:
		break;
	case DOC_STR:
		csv_str(out, v->s);
		break;
	case DOC_U64:
		fprintf(out, "%" PRIu64, v->u);
		break;
	case DOC_I64:
		fprintf(out, "%" PRId64, v->i);
		break;
	case DOC_F64:
	case DOC_SHARE:
		fprintf(out, "%.4f", v->f);
		break;
	case DOC_HEX:
		fprintf(out, "0x%" PRIx64, v->u);
		break;
	case DOC_BOOL:
		fputs(v->b ? "true" : "false", out);
		break;
	}
}

static int write_csv(const struct doc *d, FILE *out)
{
	const struct doc_table *t = NULL;
	const char *sep;
	size_t r;
	int i, c;

	if (d->error)
		return d->error;
	for (i = 0; i < d->nr_tables && !t; i++)
		if (d->tables[i].formats & DOC_CSV)
			t = &d->tables[i];
	if (!t)
		return 0;
	sep = "";
	for (c = 0; c < t->nr_cols; c++) {
		if (!(t->cols[c].formats & DOC_CSV))
			continue;
		fputs(sep, out);
		csv_str(out, t->cols[c].name);
		sep = ",";
	}
	fputc('\n', out);
	for (r = 0; r < t->nr_rows; r++) {
		if (!(t->row_formats[r] & DOC_CSV))
			continue;
		sep = "";
		for (c = 0; c < t->nr_cols; c++) {
			if (!(t->cols[c].formats & DOC_CSV))
				continue;
			fputs(sep, out);
			write_cell(&t->cells[r * t->nr_cols + c], out);
			sep = ",";
		}
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}

const struct exporter export_csv = {
	.name = "csv",
	.help = "the view's table as CSV, a heading line first",
	.write_doc = write_csv,
};

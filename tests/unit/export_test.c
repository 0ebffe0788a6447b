// SPDX-License-Identifier: GPL-2.0-only
/*
 * Documents and their writers (userspace/lib/export/): one document, as
 * a view builds it, written as text, CSV and JSON, each compared whole --
 * columns and rows shown only where they say, blanks, shares, hex,
 * escaping of what would break each format.  Built with ASan and UBSan.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tailor/export.h"

static struct doc *sample_doc(void)
{
	static const struct doc_column cols[] = {
		{ .name = "name", .type = DOC_STR, .formats = DOC_DATA },
		{ .name = "share", .type = DOC_SHARE, .width = 8, .sep = "" },
		{ .name = "samples", .type = DOC_U64, .width = 6 },
		{ .name = "address", .type = DOC_HEX, .prec = 4 },
		{ .name = "tree", .type = DOC_STR, .formats = DOC_TEXT, .sep = "  ",
		  .width = -6, .maxlen = 6 },
	};
	struct doc *d = doc_new();
	struct doc_table *t;

	doc_header(d, "# a header, %d", 1);
	doc_meta(d, "profile", "input", doc_str("in \"x\".rec"));
	doc_meta(d, "profile", "complete", doc_bool(true));
	doc_meta(d, NULL, "total", doc_u64(30));
	t = doc_table(d, "rows", DOC_ALL, cols, 5);
	doc_row(d, t, 0);
	doc_cell(d, t, doc_str("a,b"));
	doc_cell(d, t, doc_share(66.666));
	doc_cell(d, t, doc_u64(20));
	doc_cell(d, t, doc_hex(0x1f));
	doc_cell(d, t, doc_str("`- long name"));
	doc_row(d, t, DOC_DATA);	/* not in the text */
	doc_cell(d, t, doc_str("tab\there\nnewline"));
	doc_cell(d, t, doc_share(33.334));
	doc_cell(d, t, doc_u64(10));
	doc_cell(d, t, doc_hex(0));
	doc_cell(d, t, doc_null());
	doc_row(d, t, DOC_TEXT);	/* a row cut short: the rest blank */
	doc_cell(d, t, doc_null());
	doc_cell(d, t, doc_share(0));
	doc_footer(d, "# the end");
	return d;
}

static char *write_with(const struct exporter *e, const struct doc *d, int *ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	*ret = out ? e->write_doc(d, out) : -ENOMEM;
	if (out)
		fclose(out);
	return text;
}

static void as_text(void)
{
	struct doc *d = sample_doc();
	char *out;
	int ret;

	out = write_with(&export_text, d, &ret);
	check_int(ret, ==, 0);
	check_str(out, "# a header, 1\n"
		       "   share samples address  tree\n"
		       "  66.67%     20 0x001f  `- lon\n"
		       "   0.00%\n"
		       "# the end\n");
	free(out);
	doc_free(d);
}

static void as_csv(void)
{
	struct doc *d = sample_doc();
	char *out;
	int ret;

	out = write_with(&export_csv, d, &ret);
	check_int(ret, ==, 0);
	check_str(out, "name,share,samples,address\n"
		       "\"a,b\",66.6660,20,0x1f\n"
		       "\"tab\there\nnewline\",33.3340,10,0x0\n");
	free(out);
	doc_free(d);
}

static void as_json(void)
{
	struct doc *d = sample_doc();
	char *out;
	int ret;

	out = write_with(&export_json, d, &ret);
	check_int(ret, ==, 0);
	check_str(out, "{\"profile\":{\"input\":\"in \\\"x\\\".rec\",\"complete\":true},\"total\":30,"
		       "\"rows\":[{\"name\":\"a,b\",\"share\":66.6660,\"samples\":20,\"address\":31},"
		       "{\"name\":\"tab\\u0009here\\u000anewline\",\"share\":33.3340,\"samples\":10,"
		       "\"address\":0}]}\n");
	free(out);
	doc_free(d);
}

static void formats_table(void)
{
	const struct exporter *const *e;
	int n = 0;

	for (e = exporters; *e; e++, n++) {
		check(exporter_find((*e)->name) == *e);
		check(!(*e)->write_doc != !(*e)->write_profile);	/* one of the two */
		check((*e)->help && *(*e)->help);
	}
	check_int(n, ==, 6);
	check(exporter_find("pprof")->binary);
	check(exporter_find("xml") == NULL);
}

int main(void)
{
	TEST(as_text(), "text: headings, widths, shares, hex, text-only columns and rows, blanks trimmed");
	TEST(as_csv(), "CSV: the data columns and rows, fields with commas and line breaks quoted");
	TEST(as_json(), "JSON: grouped fields, tables of objects, control characters escaped");
	TEST(formats_table(), "every format is in the table once, documents or profiles");
	return test_done();
}

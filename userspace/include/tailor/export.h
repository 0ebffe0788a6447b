/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What leaves tailor.  Two kinds of output, each format a file of its
 * own (lib/export/) listed in one table:
 *
 * Documents: a view says what it shows as data -- comment lines, typed
 * tables, metadata -- and the text, CSV and JSON writers decide how it
 * looks; no view writes a format itself.
 *
 * Profiles: pprof, folded stacks and Chrome trace JSON are written from
 * the aggregation pass (aggregate.h) for readers elsewhere: go tool
 * pprof, flame graph tools, ui.perfetto.dev, speedscope.
 */
#ifndef TAILOR_EXPORT_H
#define TAILOR_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct agg;
struct attributor;
struct session_info;
struct symbolizer;

/* ---- documents ---- */

enum doc_type {
	DOC_NULL,		/* nothing: blank in text, empty in CSV, null in JSON */
	DOC_STR,
	DOC_U64,
	DOC_I64,
	DOC_F64,		/* decimals: the column's prec */
	DOC_SHARE,		/* a percentage: "12.50%" in text, 12.5000 elsewhere */
	DOC_HEX,		/* "0x1f" in text and CSV, a number in JSON */
	DOC_BOOL,
};

/* Which formats show a table, column or row. */
#define DOC_TEXT	1u
#define DOC_CSV		2u
#define DOC_JSON	4u
#define DOC_DATA	(DOC_CSV | DOC_JSON)
#define DOC_ALL		(DOC_TEXT | DOC_DATA)

struct doc_column {
	const char *name;	/* CSV heading and JSON key */
	enum doc_type type;	/* of its cells (DOC_NULL cells aside) */
	unsigned int formats;	/* DOC_*; 0 means DOC_ALL */
	/* Text: heading (NULL: the name), width (< 0: left-aligned), what
	 * goes before it (NULL: one space; "" at the first column), at most
	 * maxlen characters (0: all), prec decimals (F64, SHARE) or digits
	 * (HEX, zero-padded). */
	const char *heading;
	int width;
	const char *sep;
	int maxlen;
	int prec;
};

struct doc_value {
	enum doc_type type;
	union {
		const char *s;	/* owned by the document */
		uint64_t u;
		int64_t i;
		double f;
		bool b;
	};
};

struct doc_table {
	const char *name;	/* its JSON key */
	unsigned int formats;	/* DOC_*; the CSV writer takes the DOC_CSV one */
	char *title;		/* text: lines before it */
	bool headings;		/* text: a line of column headings */
	struct doc_column cols[24];
	int nr_cols;
	struct doc_value *cells;	/* nr_rows * nr_cols */
	unsigned int *row_formats;	/* per row, DOC_* */
	size_t nr_rows, cap_rows, cap_cells;
	int filled;		/* cells of the last row so far */
};

struct doc_meta {
	const char *group;	/* JSON: an object of consecutive entries, or NULL */
	const char *key;
	struct doc_value v;
};

struct doc {
	char **header;		/* text: comment lines before the tables */
	int nr_header, cap_header;
	struct doc_table *tables;
	int nr_tables, cap_tables;
	char **footer;		/* text: lines after */
	int nr_footer, cap_footer;
	struct doc_meta *meta;	/* JSON: fields before the tables */
	int nr_meta, cap_meta;
	char **strings;		/* everything the document owns */
	size_t nr_strings, cap_strings;
	int error;		/* -ENOMEM once anything failed; sticky */
};

struct doc *doc_new(void);
void doc_free(struct doc *d);
void doc_header(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_footer(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_meta(struct doc *d, const char *group, const char *key, struct doc_value v);
/* A copy of @s the document owns (NULL stays NULL). */
const char *doc_strdup(struct doc *d, const char *s);
const char *doc_printf(struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A table with @n columns; NULL once memory ran out (d->error says so). */
struct doc_table *doc_table(struct doc *d, const char *name, unsigned int formats,
			    const struct doc_column *cols, int n);
void doc_table_title(struct doc *d, struct doc_table *t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Start a row shown in @formats (0: all); then one cell per column. */
void doc_row(struct doc *d, struct doc_table *t, unsigned int formats);
void doc_cell(struct doc *d, struct doc_table *t, struct doc_value v);

static inline struct doc_value doc_str(const char *s)
{
	return (struct doc_value){ .type = s ? DOC_STR : DOC_NULL, .s = s };
}
static inline struct doc_value doc_u64(uint64_t u) { return (struct doc_value){ .type = DOC_U64, .u = u }; }
static inline struct doc_value doc_i64(int64_t i) { return (struct doc_value){ .type = DOC_I64, .i = i }; }
static inline struct doc_value doc_f64(double f) { return (struct doc_value){ .type = DOC_F64, .f = f }; }
static inline struct doc_value doc_share(double f) { return (struct doc_value){ .type = DOC_SHARE, .f = f }; }
static inline struct doc_value doc_hex(uint64_t u) { return (struct doc_value){ .type = DOC_HEX, .u = u }; }
static inline struct doc_value doc_bool(bool b) { return (struct doc_value){ .type = DOC_BOOL, .b = b }; }
static inline struct doc_value doc_null(void) { return (struct doc_value){ .type = DOC_NULL }; }

/* ---- profiles ---- */

struct export_profile {
	const char *input;		/* the profile's file name */
	const struct session_info *info;
	const struct agg *agg;
	const struct attributor *attr;
	/*
	 * The pass's symbolizer, for what an exporter asks of the code beyond
	 * the attribution (pprof: inline frames, objects' build-ids); NULL:
	 * nothing more is asked.
	 */
	struct symbolizer *sym;
};

/* ---- the formats ---- */

/* What a profile format needs the aggregation pass to keep. */
#define EXPORT_NEEDS_STACKS	1u
#define EXPORT_NEEDS_SLICES	2u
#define EXPORT_NEEDS_BUCKETS	4u
/* The threads' running, runnable and blocked runs, where there are switches. */
#define EXPORT_NEEDS_STATES	8u
/* Each sample's call stack and time, where the input has call stacks. */
#define EXPORT_NEEDS_SAMPLE_STACKS	16u

struct exporter {
	const char *name;
	const char *help;		/* one line, for --help */
	bool binary;			/* not for a terminal: needs -o */
	unsigned int needs;		/* EXPORT_NEEDS_* */
	/* One of the two: documents (any view), or the profile itself. */
	int (*write_doc)(const struct doc *d, FILE *out);
	int (*write_profile)(const struct export_profile *p, FILE *out);
};

extern const struct exporter export_text, export_csv, export_json;
extern const struct exporter export_pprof, export_folded, export_chrome;

/* Every format, NULL-terminated, in the order --help lists them. */
extern const struct exporter *const exporters[];
const struct exporter *exporter_find(const char *name);

/* ---- plots (svg.c): inline SVG for the HTML report, or --svg ---- */

/* Samples per bucket, stacked per row (needs the pass's buckets). */
int svg_timeline(const struct agg *g, FILE *out);
/* Data addresses over time, coloured per row (needs its memory). */
int svg_memory(const struct agg *g, FILE *out);
/*
 * A lane per thread: the query and row it ran over time, coloured per
 * (query, row) pair (needs the pass's lanes).
 */
int svg_lanes(const struct agg *g, FILE *out);
/*
 * How many threads could run over time (critical columns in red) and
 * each thread's running, runnable and blocked states (needs the pass's
 * parallelism).
 */
int svg_parallelism(const struct agg *g, FILE *out);

/* "12.500ms": @ns for people, into @buf. */
const char *fmt_ns(uint64_t ns, char *buf, size_t len);

/* ---- escaping (escape.c), for every writer of text formats ---- */

void csv_str(FILE *out, const char *s);
void json_str(FILE *out, const char *s);
void xml_str(FILE *out, const char *s);

#endif /* TAILOR_EXPORT_H */

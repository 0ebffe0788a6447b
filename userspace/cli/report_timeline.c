// SPDX-License-Identifier: GPL-2.0-only
/*
 * Views over time: component activity per time bucket (seed 000, Figures
 * 7 and 11) and data addresses per component (Figure 12), as text, CSV,
 * JSON and SVG.  Buckets are positions on the TSC axis, so samples of all
 * CPUs fall in order by their TSC whatever order the file has them in.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "report.h"

#define LEGEND_ROWS	8
#define BAR_WIDTH	50
#define SVG_MAX_POINTS	20000

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};

static int cmp_bucket(const void *a, const void *b)
{
	const struct bucket_count *x = a, *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* The bucket counts sorted by (bucket, samples desc); caller frees. */
static struct bucket_count *sorted_buckets(const struct report *r)
{
	struct bucket_count *b = malloc((r->nr_bucket_counts + 1) * sizeof(*b));

	if (!b)
		return NULL;
	memcpy(b, r->buckets, r->nr_bucket_counts * sizeof(*b));
	qsort(b, r->nr_bucket_counts, sizeof(*b), cmp_bucket);
	return b;
}

/* Rank of each row by samples (0 = most), for legends and colours. */
static int *row_ranks(const struct report *r)
{
	size_t i, n, nr = attr_nr_rows(r->attr);
	uint32_t *rows = rows_by_samples(r, &n);
	int *rank = malloc((nr + 1) * sizeof(*rank));

	if (!rows || !rank) {
		free(rows);
		free(rank);
		return NULL;
	}
	for (i = 0; i < nr; i++)
		rank[i] = INT32_MAX;
	for (i = 0; i < n; i++)
		rank[rows[i]] = (int)i;
	free(rows);
	return rank;
}

static uint64_t max_bucket(const struct bucket_count *b, size_t n)
{
	uint64_t max = 0, sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i && b[i].bucket != b[i - 1].bucket)
			sum = 0;
		sum += b[i].samples;
		if (sum > max)
			max = sum;
	}
	return max;
}

static const char *row_name(const struct report *r, uint32_t row)
{
	return attr_row(r->attr, row)->name;
}

static void timeline_text(const struct report *r, FILE *out,
			  const struct bucket_count *b, const int *rank)
{
	uint64_t max = max_bucket(b, r->nr_bucket_counts), bucket;
	size_t i = 0, nr = attr_nr_rows(r->attr), k;
	char t1[32], t2[32], t3[32];

	fprintf(out, "# profile: %s: %" PRIu64 " samples in the window %s..%s, buckets of %s, level %s\n",
		r->input, r->total, fmt_ns(r->from_ns, t1, sizeof(t1)),
		fmt_ns(r->from_ns + r->span_ns, t2, sizeof(t2)),
		fmt_ns(r->bucket_ns, t3, sizeof(t3)), attr_level_name(r->attr));
	fputs("# legend:", out);
	for (k = 0; k < nr; k++)
		if (rank[k] < LEGEND_ROWS)
			fprintf(out, " %c=%s", 'A' + rank[k], row_name(r, (uint32_t)k));
	fprintf(out, " +=other\n# bar: %d columns = the fullest bucket (%" PRIu64 " samples)\n",
		BAR_WIDTH, max);
	fprintf(out, "%12s %8s  %-*s  %s\n", "start", "samples", BAR_WIDTH, "activity", "top");
	for (bucket = 0; bucket < r->nr_buckets; bucket++) {
		uint64_t sum = 0, acc = 0;
		size_t j, start = i;
		int col = 0, end;

		for (j = i; j < r->nr_bucket_counts && b[j].bucket == bucket; j++)
			sum += b[j].samples;
		i = j;
		fprintf(out, "%12s %8" PRIu64 "  ",
			fmt_ns(r->from_ns + bucket * r->bucket_ns, t1, sizeof(t1)), sum);
		for (j = start; j < i; j++) {
			acc += b[j].samples;
			end = max ? (int)((acc * BAR_WIDTH + max / 2) / max) : 0;
			for (; col < end; col++)
				fputc(rank[b[j].row] < LEGEND_ROWS ? 'A' + rank[b[j].row] : '+', out);
		}
		fprintf(out, "%*s", BAR_WIDTH - col, "");
		if (start < i)
			fprintf(out, "  %s %.0f%%", row_name(r, b[start].row),
				100.0 * b[start].samples / sum);
		fputc('\n', out);
	}
}

int view_timeline(const struct report *r, FILE *out, enum report_format fmt)
{
	struct bucket_count *b = sorted_buckets(r);
	int *rank = row_ranks(r);
	size_t i;

	if (!b || !rank) {
		free(b);
		free(rank);
		return 1;
	}
	switch (fmt) {
	case FMT_TEXT:
		timeline_text(r, out, b, rank);
		break;
	case FMT_CSV:
		fputs("bucket,start_ns,name,samples\n", out);
		for (i = 0; i < r->nr_bucket_counts; i++) {
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",", b[i].bucket,
				r->from_ns + b[i].bucket * r->bucket_ns);
			csv_str(out, row_name(r, b[i].row));
			fprintf(out, ",%" PRIu64 "\n", b[i].samples);
		}
		break;
	case FMT_JSON:
		fprintf(out, "{\"level\":");
		json_str(out, attr_level_name(r->attr));
		fprintf(out, ",\"bucket_ns\":%" PRIu64 ",\"from_ns\":%" PRIu64
			",\"buckets\":%" PRIu64 ",\"total\":%" PRIu64 ",\"counts\":[",
			r->bucket_ns, r->from_ns, r->nr_buckets, r->total);
		for (i = 0; i < r->nr_bucket_counts; i++) {
			fprintf(out, "%s{\"bucket\":%" PRIu64 ",\"name\":", i ? "," : "",
				b[i].bucket);
			json_str(out, row_name(r, b[i].row));
			fprintf(out, ",\"samples\":%" PRIu64 "}", b[i].samples);
		}
		fputs("]}\n", out);
		break;
	}
	free(b);
	free(rank);
	return 0;
}

static const char *colour(const int *rank, uint32_t row)
{
	int n = (int)(sizeof(palette) / sizeof(palette[0]));

	return rank[row] < n - 1 ? palette[rank[row]] : palette[n - 1];
}

static void svg_legend(const struct report *r, FILE *out, const int *rank,
		       int x, int y)
{
	size_t k, nr = attr_nr_rows(r->attr);
	int n = (int)(sizeof(palette) / sizeof(palette[0]));

	for (k = 0; k < nr; k++) {
		if (rank[k] >= n - 1)
			continue;
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">", x, y + 14 * rank[k],
			colour(rank, (uint32_t)k), x + 14, y + 14 * rank[k] + 9);
		xml_str(out, row_name(r, (uint32_t)k));
		fputs("</text>\n", out);
	}
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
		"<text x=\"%d\" y=\"%d\" font-size=\"11\">other</text>\n",
		x, y + 14 * (n - 1), palette[n - 1], x + 14, y + 14 * (n - 1) + 9);
}

int write_timeline_svg(const struct report *r, FILE *out)
{
	const int width = 720, height = 260, left = 60, top = 20, legend = 200;
	struct bucket_count *b = sorted_buckets(r);
	int *rank = row_ranks(r);
	uint64_t max, base = 0;
	double bw;
	size_t i;
	char t[32];
	int tick;

	if (!b || !rank) {
		free(b);
		free(rank);
		return 1;
	}
	max = max_bucket(b, r->nr_bucket_counts);
	bw = (double)width / (double)(r->nr_buckets ? r->nr_buckets : 1);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
		left + width + legend, top + height + 40);
	fprintf(out, "<text x=\"%d\" y=\"14\" font-size=\"12\">%s activity: samples per %s bucket</text>\n",
		left, attr_level_name(r->attr), fmt_ns(r->bucket_ns, t, sizeof(t)));
	for (i = 0; i < r->nr_bucket_counts; i++) {
		double h = max ? (double)b[i].samples * height / (double)max : 0;

		if (i && b[i].bucket != b[i - 1].bucket)
			base = 0;
		fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>",
			left + b[i].bucket * bw,
			top + height - (double)base * height / (double)(max ? max : 1) - h,
			bw > 1.5 ? bw - 0.5 : bw, h, colour(rank, b[i].row));
		xml_str(out, row_name(r, b[i].row));
		fprintf(out, ": %" PRIu64 " samples</title></rect>\n", b[i].samples);
		base += b[i].samples;
	}
	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
		left, top + height, left + width, top + height);
	for (tick = 0; tick <= 4; tick++)
		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n",
			left + tick * width / 4, top + height + 14,
			fmt_ns(r->from_ns + (uint64_t)((double)r->span_ns * tick / 4), t, sizeof(t)));
	fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%" PRIu64 "</text>\n",
		left - 4, top + 8, max);
	svg_legend(r, out, rank, left + width + 12, top);
	fputs("</svg>\n", out);
	free(b);
	free(rank);
	return 0;
}

int write_memory_svg(const struct report *r, FILE *out)
{
	const int width = 720, height = 260, left = 60, top = 20, legend = 200;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, stride;
	int *rank = row_ranks(r);

	if (!rank)
		return 1;
	for (i = 0; i < r->nr_mem; i++) {
		if (r->mem[i].addr < lo)
			lo = r->mem[i].addr;
		if (r->mem[i].addr > hi)
			hi = r->mem[i].addr;
	}
	stride = r->nr_mem / SVG_MAX_POINTS + 1;
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
		left + width + legend, top + height + 40);
	fprintf(out, "<text x=\"%d\" y=\"14\" font-size=\"12\">data addresses over time (0x%" PRIx64 "..0x%" PRIx64 ", every %zu. sample)</text>\n",
		left, lo, hi, stride);
	for (i = 0; i < r->nr_mem; i += stride) {
		double x = left + (double)(r->mem[i].ns - r->from_ns) * width / (double)r->span_ns;
		double y = top + height - (hi > lo ? (double)(r->mem[i].addr - lo) * height /
					   (double)(hi - lo) : 0);

		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.2\" fill=\"%s\"/>\n",
			x, y, colour(rank, r->mem[i].row));
	}
	svg_legend(r, out, rank, left + width + 12, top);
	fputs("</svg>\n", out);
	free(rank);
	return 0;
}

struct mem_range {
	uint64_t lo, hi, n;
};

int view_memory(const struct report *r, FILE *out, enum report_format fmt)
{
	size_t nr = attr_nr_rows(r->attr), i, n;
	struct mem_range *range = calloc(nr + 1, sizeof(*range));
	uint32_t *rows = rows_by_samples(r, &n);
	char t[32];

	if (!range || !rows) {
		free(range);
		free(rows);
		return 1;
	}
	for (i = 0; i < r->nr_mem; i++) {
		struct mem_range *m = &range[r->mem[i].row];

		if (!m->n || r->mem[i].addr < m->lo)
			m->lo = r->mem[i].addr;
		if (r->mem[i].addr > m->hi)
			m->hi = r->mem[i].addr;
		m->n++;
	}
	switch (fmt) {
	case FMT_TEXT:
		fprintf(out, "# profile: %s: %zu samples with a data address, level %s\n",
			r->input, r->nr_mem, attr_level_name(r->attr));
		fprintf(out, "%10s  %-18s %-18s  %s\n", "accesses", "lowest", "highest", "component");
		for (i = 0; i < n; i++) {
			const struct mem_range *m = &range[rows[i]];

			if (m->n)
				fprintf(out, "%10" PRIu64 "  0x%016" PRIx64 " 0x%016" PRIx64 "  %s\n",
					m->n, m->lo, m->hi, row_name(r, rows[i]));
		}
		fprintf(out, "# per %s bucket: component, accesses, address range\n",
			fmt_ns(r->bucket_ns, t, sizeof(t)));
		for (i = 0; i < r->nr_mem;) {
			uint64_t bucket = (r->mem[i].ns - r->from_ns) / r->bucket_ns;
			size_t j, k;

			memset(range, 0, (nr + 1) * sizeof(*range));
			for (j = i; j < r->nr_mem &&
			     (r->mem[j].ns - r->from_ns) / r->bucket_ns == bucket; j++) {
				struct mem_range *m = &range[r->mem[j].row];

				if (!m->n || r->mem[j].addr < m->lo)
					m->lo = r->mem[j].addr;
				if (r->mem[j].addr > m->hi)
					m->hi = r->mem[j].addr;
				m->n++;
			}
			for (k = 0; k < nr; k++)
				if (range[k].n)
					fprintf(out, "%12s  %-24s %8" PRIu64 "  0x%" PRIx64 "..0x%" PRIx64 "\n",
						fmt_ns(r->from_ns + bucket * r->bucket_ns, t, sizeof(t)),
						row_name(r, (uint32_t)k), range[k].n, range[k].lo,
						range[k].hi);
			i = j;
		}
		break;
	case FMT_CSV:
		fputs("ns,address,name\n", out);
		for (i = 0; i < r->nr_mem; i++) {
			fprintf(out, "%" PRIu64 ",0x%" PRIx64 ",", r->mem[i].ns, r->mem[i].addr);
			csv_str(out, row_name(r, r->mem[i].row));
			fputc('\n', out);
		}
		break;
	case FMT_JSON:
		fputs("{\"accesses\":[", out);
		for (i = 0; i < r->nr_mem; i++) {
			fprintf(out, "%s{\"ns\":%" PRIu64 ",\"address\":%" PRIu64 ",\"name\":",
				i ? "," : "", r->mem[i].ns, r->mem[i].addr);
			json_str(out, row_name(r, r->mem[i].row));
			fputc('}', out);
		}
		fputs("]}\n", out);
		break;
	}
	free(range);
	free(rows);
	return 0;
}

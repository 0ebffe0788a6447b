// SPDX-License-Identifier: GPL-2.0-only
/*
 * Plots as inline SVG, no script (tailor/export.h): component activity
 * over time (seed 000, Figures 7 and 11), data addresses per component
 * over time (Figure 12), per-thread lanes of the query and component
 * each thread ran, and the parallelism: how many threads could run over
 * time, and each thread's running, runnable and blocked states.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/export.h"

#define SVG_MAX_POINTS	20000
#define WIDTH	720
#define HEIGHT	260
#define LEFT	60
#define TOP	20
#define LEGEND	200

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define NR_COLOURS	((int)(sizeof(palette) / sizeof(palette[0])))

static const char *colour(const int *rank, uint32_t row)
{
	return rank[row] < NR_COLOURS - 1 ? palette[rank[row]] : palette[NR_COLOURS - 1];
}

static void legend(const struct agg *g, FILE *out, const int *rank, int x, int y)
{
	size_t k, nr = attr_nr_rows(g->attr);

	for (k = 0; k < nr; k++) {
		if (rank[k] >= NR_COLOURS - 1)
			continue;
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">", x, y + 14 * rank[k],
			colour(rank, (uint32_t)k), x + 14, y + 14 * rank[k] + 9);
		xml_str(out, attr_row(g->attr, k)->name);
		fputs("</text>\n", out);
	}
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
		"<text x=\"%d\" y=\"%d\" font-size=\"11\">other</text>\n",
		x, y + 14 * (NR_COLOURS - 1), palette[NR_COLOURS - 1], x + 14,
		y + 14 * (NR_COLOURS - 1) + 9);
}

int svg_timeline(const struct agg *g, FILE *out)
{
	struct agg_bucket_count *b = agg_sorted_buckets(g);
	int *rank = agg_row_ranks(g);
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
	max = agg_fullest_bucket(b, g->nr_bucket_counts);
	bw = (double)WIDTH / (double)(g->nr_buckets ? g->nr_buckets : 1);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
		LEFT + WIDTH + LEGEND, TOP + HEIGHT + 40);
	fprintf(out, "<text x=\"%d\" y=\"14\" font-size=\"12\">%s activity: samples per %s bucket</text>\n",
		LEFT, attr_level_name(g->attr), fmt_ns(g->opt.bucket_ns, t, sizeof(t)));
	for (i = 0; i < g->nr_bucket_counts; i++) {
		double h = max ? (double)b[i].samples * HEIGHT / (double)max : 0;

		if (i && b[i].bucket != b[i - 1].bucket)
			base = 0;
		fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>",
			LEFT + b[i].bucket * bw,
			TOP + HEIGHT - (double)base * HEIGHT / (double)(max ? max : 1) - h,
			bw > 1.5 ? bw - 0.5 : bw, h, colour(rank, b[i].row));
		xml_str(out, attr_row(g->attr, b[i].row)->name);
		fprintf(out, ": %" PRIu64 " samples</title></rect>\n", b[i].samples);
		base += b[i].samples;
	}
	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
		LEFT, TOP + HEIGHT, LEFT + WIDTH, TOP + HEIGHT);
	for (tick = 0; tick <= 4; tick++)
		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n",
			LEFT + tick * WIDTH / 4, TOP + HEIGHT + 14,
			fmt_ns(g->opt.from_ns + (uint64_t)((double)g->span_ns * tick / 4), t, sizeof(t)));
	fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%" PRIu64 "</text>\n",
		LEFT - 4, TOP + 8, max);
	legend(g, out, rank, LEFT + WIDTH + 12, TOP);
	fputs("</svg>\n", out);
	free(b);
	free(rank);
	return ferror(out) ? 1 : 0;
}

int svg_memory(const struct agg *g, FILE *out)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, stride;
	int *rank = agg_row_ranks(g);

	if (!rank)
		return 1;
	for (i = 0; i < g->nr_mem; i++) {
		if (g->mem[i].addr < lo)
			lo = g->mem[i].addr;
		if (g->mem[i].addr > hi)
			hi = g->mem[i].addr;
	}
	stride = g->nr_mem / SVG_MAX_POINTS + 1;
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
		LEFT + WIDTH + LEGEND, TOP + HEIGHT + 40);
	fprintf(out, "<text x=\"%d\" y=\"14\" font-size=\"12\">data addresses over time (0x%" PRIx64 "..0x%" PRIx64 ", every %zu. sample)</text>\n",
		LEFT, lo, hi, stride);
	for (i = 0; i < g->nr_mem; i += stride) {
		double x = LEFT + (double)(g->mem[i].ns - g->opt.from_ns) * WIDTH / (double)g->span_ns;
		double y = TOP + HEIGHT - (hi > lo ? (double)(g->mem[i].addr - lo) * HEIGHT /
					   (double)(hi - lo) : 0);

		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.2\" fill=\"%s\"/>\n",
			x, y, colour(rank, g->mem[i].row));
	}
	legend(g, out, rank, LEFT + WIDTH + 12, TOP);
	fputs("</svg>\n", out);
	free(rank);
	return ferror(out) ? 1 : 0;
}

#define LANE_HEIGHT	14
#define LANE_LABEL	200
#define LANE_COLUMNS	360
#define LANE_MAX	64

static void lane_key_name(const struct agg *g, const struct agg_lane_key *k, FILE *out)
{
	if (k->query != ATTR_NONE && attr_row(g->attr, k->query)->kind == ROW_COMPONENT) {
		xml_str(out, attr_row(g->attr, k->query)->name);
		fputs(": ", out);
	}
	xml_str(out, attr_row(g->attr, k->row)->name);
}

/*
 * Per-thread lanes: a lane per thread, coloured by the (query, component)
 * that ran longest in each of its columns; white where it ran nothing.
 */
int svg_lanes(const struct agg *g, FILE *out)
{
	size_t nkeys, t, c, shown = g->nr_threads < LANE_MAX ? g->nr_threads : LANE_MAX;
	struct agg_lane_key *keys = agg_lane_keys(g, &nkeys);
	uint64_t col_ns = g->span_ns / LANE_COLUMNS + 1;
	double cw = (double)WIDTH / LANE_COLUMNS;
	int *grid = keys ? agg_lane_grid(g, keys, nkeys, col_ns, LANE_COLUMNS) : NULL;
	int height = TOP + (int)shown * (LANE_HEIGHT + 2) + 40, k, tick;
	char t1[32];

	if (!keys || !grid) {
		free(keys);
		free(grid);
		return 1;
	}
	if (height < TOP + 14 * NR_COLOURS + 20)
		height = TOP + 14 * NR_COLOURS + 20;
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
		LANE_LABEL + WIDTH + LEGEND + 100, height);
	fprintf(out, "<text x=\"%d\" y=\"14\" font-size=\"12\">what each thread ran: query and %s over time</text>\n",
		LANE_LABEL, attr_level_name(g->attr));
	for (t = 0; t < shown; t++) {
		const struct agg_thread *th = &g->threads[t];
		int y = TOP + (int)t * (LANE_HEIGHT + 2);

		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%u/%u ",
			LANE_LABEL - 6, y + LANE_HEIGHT - 3, th->pid, th->tid);
		xml_str(out, th->name);
		fputs("</text>\n", out);
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#ddd\"/>\n",
			LANE_LABEL, y, WIDTH, LANE_HEIGHT);
		for (c = 0; c < LANE_COLUMNS; c++) {
			size_t end = c;

			k = grid[t * LANE_COLUMNS + c];
			if (k < 0)
				continue;
			while (end + 1 < LANE_COLUMNS && grid[t * LANE_COLUMNS + end + 1] == k)
				end++;
			fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>",
				LANE_LABEL + c * cw, y, (double)(end - c + 1) * cw, LANE_HEIGHT,
				k < NR_COLOURS - 1 ? palette[k] : palette[NR_COLOURS - 1]);
			lane_key_name(g, &keys[k], out);
			fprintf(out, " (from %s)</title></rect>\n",
				fmt_ns(g->opt.from_ns + (g->span_ns / LANE_COLUMNS) * c, t1, sizeof(t1)));
			c = end;
		}
	}
	if (shown < g->nr_threads)
		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">and %zu more threads (--tid selects)</text>\n",
			LANE_LABEL, TOP + (int)shown * (LANE_HEIGHT + 2) + 10, g->nr_threads - shown);
	for (tick = 0; tick <= 4; tick++)
		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n",
			LANE_LABEL + tick * WIDTH / 4, TOP + (int)shown * (LANE_HEIGHT + 2) + 26,
			fmt_ns(g->opt.from_ns + g->span_ns / 4 * tick, t1, sizeof(t1)));
	for (k = 0; k < (int)nkeys && k < NR_COLOURS - 1; k++) {
		int x = LANE_LABEL + WIDTH + 12, y = TOP + 14 * k;

		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">", x, y, palette[k], x + 14, y + 9);
		lane_key_name(g, &keys[k], out);
		fputs("</text>\n", out);
	}
	if ((int)nkeys >= NR_COLOURS)
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">other</text>\n",
			LANE_LABEL + WIDTH + 12, TOP + 14 * (NR_COLOURS - 1), palette[NR_COLOURS - 1],
			LANE_LABEL + WIDTH + 26, TOP + 14 * (NR_COLOURS - 1) + 9);
	fputs("</svg>\n", out);
	free(keys);
	free(grid);
	return ferror(out) ? 1 : 0;
}

/* ---- parallelism ---- */

#define PAR_COLUMNS	720
#define PAR_PLOT	120

static const char *const state_colour[] = {
	[PAR_UNSEEN] = "none", [PAR_RUNNING] = "#59a14f", [PAR_RUNNABLE] = "#f28e2b",
	[PAR_BLOCKED] = "#e8e8e8",
};

/* The mean number of active threads in each of @ncols columns from @begin. */
static void mean_active(const struct agg_parallelism *p, int64_t begin, double col_ns,
			double *mean, size_t ncols)
{
	uint32_t active = 0;
	size_t s = 0, c;

	for (c = 0; c < ncols; c++) {
		double from = begin + c * col_ns, to = from + col_ns, at = from, sum = 0;

		while (s < p->nr_steps && p->steps[s].ns <= at)
			active = p->steps[s++].active;
		while (at < to) {
			double next = s < p->nr_steps && p->steps[s].ns < to ? (double)p->steps[s].ns : to;

			sum += active * (next - at);
			at = next;
			while (s < p->nr_steps && p->steps[s].ns <= at)
				active = p->steps[s++].active;
		}
		mean[c] = sum / col_ns;
	}
}

int svg_parallelism(const struct agg *g, FILE *out)
{
	const struct agg_parallelism *p = &g->par;
	size_t shown = p->nr_threads < LANE_MAX ? p->nr_threads : LANE_MAX, c, i;
	double span = p->end_ns > p->begin_ns ? (double)(p->end_ns - p->begin_ns) : 1;
	double col_ns = span / PAR_COLUMNS, cw = (double)WIDTH / PAR_COLUMNS;
	double *mean = calloc(PAR_COLUMNS, sizeof(*mean));
	uint32_t top = p->max_active ? p->max_active : 1, n;
	int lanes_y = TOP + PAR_PLOT + 30, height = lanes_y + (int)shown * (LANE_HEIGHT + 2) + 40;
	int tick;
	char t1[32];

	if (!mean)
		return 1;
	mean_active(p, p->begin_ns, col_ns, mean, PAR_COLUMNS);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
		LANE_LABEL + WIDTH + LEGEND, height);
	fprintf(out, "<text x=\"%d\" y=\"14\" font-size=\"12\">threads able to run (mean per column; critical at or below %.2f)</text>\n",
		LANE_LABEL, p->threshold);
	for (n = 0; n <= top; n++) {
		int y = TOP + PAR_PLOT - (int)(n * PAR_PLOT / top);

		fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%u</text>\n",
			LANE_LABEL, y, LANE_LABEL + WIDTH, y, LANE_LABEL - 4, y + 3, n);
	}
	for (c = 0; c < PAR_COLUMNS; c++) {
		double h = mean[c] * PAR_PLOT / top;

		if (h <= 0)
			continue;
		fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
			LANE_LABEL + c * cw, TOP + PAR_PLOT - h, cw, h,
			mean[c] <= p->threshold ? "#e15759" : "#4e79a7");
	}
	for (i = 0; i < shown; i++) {
		const struct par_thread *th = &p->threads[i];
		int y = lanes_y + (int)i * (LANE_HEIGHT + 2);

		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%u/%u ",
			LANE_LABEL - 6, y + LANE_HEIGHT - 3, th->pid, th->tid);
		xml_str(out, th->name);
		fputs("</text>\n", out);
	}
	for (i = 0; i < p->nr_runs; i++) {
		const struct par_run *r = &p->runs[i];
		double x0 = (double)(r->begin_ns - p->begin_ns) / span * WIDTH;
		double x1 = (double)(r->end_ns - p->begin_ns) / span * WIDTH;

		if (r->thread >= shown || r->state == PAR_UNSEEN || r->state > PAR_BLOCKED ||
		    x1 - x0 < 0.05)
			continue;
		fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n",
			LANE_LABEL + x0, lanes_y + (int)r->thread * (LANE_HEIGHT + 2), x1 - x0,
			LANE_HEIGHT, state_colour[r->state]);
	}
	if (shown < p->nr_threads)
		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">and %zu more threads</text>\n",
			LANE_LABEL, lanes_y + (int)shown * (LANE_HEIGHT + 2) + 10, p->nr_threads - shown);
	for (tick = 0; tick <= 4; tick++)
		fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n",
			LANE_LABEL + tick * WIDTH / 4, lanes_y + (int)shown * (LANE_HEIGHT + 2) + 26,
			fmt_ns((uint64_t)(span / 4 * tick), t1, sizeof(t1)));
	for (n = PAR_RUNNING; n <= PAR_BLOCKED; n++) {
		int x = LANE_LABEL + WIDTH + 12, y = lanes_y + 14 * (int)(n - PAR_RUNNING);

		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\" stroke=\"#999\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n",
			x, y, state_colour[n], x + 14, y + 9, par_state_name(n));
	}
	fputs("</svg>\n", out);
	free(mean);
	return ferror(out) ? 1 : 0;
}

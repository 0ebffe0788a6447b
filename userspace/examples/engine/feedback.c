// SPDX-License-Identifier: GPL-2.0-only
/* Profiles fed back into compilation (see feedback.h). */
#include <stdio.h>
#include <string.h>
#include "feedback.h"

/*
 * The model's priors, measured on this project's 2-vCPU VM (2026-11-24)
 * with GCC 12 over the fixed queries at scales 0.05 and 1 (README,
 * "Profiles fed back into compilation"):
 *  - execution CPU time relative to -O2: -O0 took 1.5-2.8x, -O1 0.9-1.2x,
 *    -O3 -march=native 0.75-1.1x;
 *  - compile time: GCC, as and ld cost about 30 ms for a query at -O0;
 *    each line of a pipeline's functions adds about 0.25 ms at -O1,
 *    0.58 ms at -O2 and 0.62 ms at -O3 (optimize attributes per function
 *    in one file, sfja).
 * The compile costs are scaled by the profiled run's measured compile
 * time where --feedback-times gives it, so a slower host scales them.
 * The execution times are never priors: they are the profile's.
 */
static const double exec_factor[FB_NR_LEVELS] = { 2.0, 1.1, 1.0, 0.9 };
static const double compile_line_ns[FB_NR_LEVELS] = { 0, 0.25e6, 0.58e6, 0.62e6 };
static const double compile_fixed_ns = 30e6;

const char *fb_level_name(int level)
{
	static const char *const names[FB_NR_LEVELS] = { "O0", "O1", "O2", "O3" };

	return level >= 0 && level < FB_NR_LEVELS ? names[level] : "O?";
}

/* The profile's samples of the pipeline named @name (plain or query-prefixed). */
static const struct fb_row *find_row(const struct fb_profile *prof, const char *query,
				     const char *name, int prefixed)
{
	const struct fb_row *plain = NULL, *with_query = NULL;
	size_t i, qlen = strlen(query);

	for (i = 0; i < prof->nr_rows; i++) {
		const char *n = prof->rows[i].name;

		if (!strcmp(n, name))
			plain = &prof->rows[i];
		else if (!strncmp(n, query, qlen) && !strncmp(n + qlen, ": ", 2) &&
			 !strcmp(n + qlen + 2, name))
			with_query = &prof->rows[i];
	}
	/* The name this run's dictionary gives first: a profile of the same runs. */
	if (prefixed)
		return with_query ? with_query : plain;
	return plain ? plain : with_query;
}

int fb_choose(struct lowered *l, const struct fb_profile *prof, const struct fb_times *times,
	      const struct fb_run *run, FILE *log)
{
	const struct fb_times_query *tq = NULL;
	const struct fb_row *rows[LOWER_MAX_PIPELINES];
	const char *query = l->plan->query;
	double scale = 1, predicted = compile_fixed_ns;
	long prof_execs = run->executions;
	int k, level, found = 0;
	char name[LOWER_NAME_MAX];

	for (k = 0; times && k < times->nr_queries; k++)
		if (!strcmp(times->queries[k].name, query))
			tq = &times->queries[k];
	if (tq && tq->nr_pipelines != l->nr_done) {
		fprintf(log, "feedback: %s: --feedback-times has %d pipelines, the query %d; "
			"its times are not used\n", query, tq->nr_pipelines, l->nr_done);
		tq = NULL;
	}
	for (k = 0; k < l->nr_done; k++) {
		lower_pipeline_name(l, k, name, sizeof(name));
		rows[k] = find_row(prof, query, name, run->prefixed);
		found += rows[k] != NULL;
	}
	if (!found) {
		fprintf(log, "feedback: %s: the profile names none of its %d pipelines; compiled "
			"as without feedback\n", query, l->nr_done);
		return 0;
	}
	if (tq) {
		/* Scale the compile priors to this host: measured against predicted. */
		for (k = 0; k < l->nr_done; k++) {
			const struct pipeline *p = &l->pipelines[l->order[k]];

			predicted += (double)(p->nr_lines + p->nr_finish) *
				     compile_line_ns[tq->opt[k]];
		}
		scale = tq->compile_ns / predicted;
		prof_execs = tq->executions;
	}
	for (k = 0; k < l->nr_done; k++) {
		struct pipeline *p = &l->pipelines[l->order[k]];
		int ran_at = tq ? tq->opt[k] : FB_DEFAULT_LEVEL, best = FB_DEFAULT_LEVEL;
		double lines = (double)(p->nr_lines + p->nr_finish);
		double samples = rows[k] ? rows[k]->samples : 0;
		/* CPU time of one execution at -O2, and the wall time it stands for. */
		double cpu = samples * prof->sample_ns / (double)prof_execs / exec_factor[ran_at];
		double wall = cpu / (p->source >= 0 ? run->threads : 1);
		double cost[FB_NR_LEVELS];

		for (level = 0; level < FB_NR_LEVELS; level++)
			cost[level] = scale * lines * compile_line_ns[level] +
				      (double)run->executions * wall * exec_factor[level];
		/* Ties keep -O2, the level without feedback. */
		for (level = 0; level < FB_NR_LEVELS; level++)
			if (cost[level] < cost[best])
				best = level;
		p->opt = best;
		fprintf(log, "feedback: %s pipeline %d: %.0f samples, %.2f ms CPU a run at -%s "
			"(%.2f ms at -O2), %.0f lines: -%s%s (expected %.1f ms compile + run, "
			"%.1f ms at -O2)\n", query, k + 1, samples,
			cpu * exec_factor[ran_at] / 1e6, fb_level_name(ran_at), cpu / 1e6, lines,
			fb_level_name(best), best == 3 ? " -march=native" : "", cost[best] / 1e6,
			cost[FB_DEFAULT_LEVEL] / 1e6);
	}
	if (!prof->complete)
		fprintf(log, "feedback: the profile's recording was not read to its end\n");
	return found;
}

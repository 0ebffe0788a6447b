// SPDX-License-Identifier: GPL-2.0-only
/* Profiles fed back into compilation (see feedback.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "feedback.h"

/*
 * The model's priors, measured on this project's 2-vCPU VM (2026-11-24)
 * with GCC 12 over the fixed queries at scales 0.05 and 1 (docs/example-engine.md,
 * "Profiles fed back into compilation"):
 *  - execution CPU time relative to -O2: -O0 took 1.5-2.8x, -O1 0.9-1.2x,
 *    -O3 -march=native 0.75-1.1x;
 *  - compile time: GCC, as and ld cost about 30 ms for a query at -O0;
 *    each line of a pipeline's functions adds about 0.25 ms at -O1,
 *    0.58 ms at -O2 and 0.62 ms at -O3 (optimize attributes per function
 *    in one file, sfja).
 * The compile costs are scaled by the profiled run's measured compile
 * time where --feedback-times gives it, so a slower host scales them.
 * The execution times are never priors: they are the profiles'.  A level
 * no profiled run measured gets the runs' time normalized to -O2 by
 * exec_factor, times its own factor; a level a run measured gets what it
 * measured, since the factors are means over queries.  Only the
 * generated code's time is scaled: a profile by task names the time the
 * precompiled runtime spends for a pipeline (its runtime tasks: groups'
 * hash table), which no level changes.  A profile by pipeline cannot, and
 * the time a run measured at a level is the better guess there.
 */
static const double exec_factor[FB_NR_LEVELS] = { 2.0, 1.1, 1.0, 0.9 };
static const double compile_line_ns[FB_NR_LEVELS] = { 0, 0.25e6, 0.58e6, 0.62e6 };
static const double compile_fixed_ns = 30e6;

const char *fb_level_name(int level)
{
	static const char *const names[FB_NR_LEVELS] = { "O0", "O1", "O2", "O3" };

	return level >= 0 && level < FB_NR_LEVELS ? names[level] : "O?";
}

/* A row of @query's: its own row with --by-query ("sfja", "sfja (client 2)"), else any. */
static bool row_of_query(const struct fb_row *row, const char *query)
{
	size_t qlen = strlen(query);

	return !row->query || !strcmp(row->query, query) ||
	       (!strncmp(row->query, query, qlen) && !strncmp(row->query + qlen, " (client ", 9));
}

double fb_row_samples(const struct fb_profile *prof, const char *query, const char *name,
		      int prefixed)
{
	double plain = -1, with_query = -1;
	size_t i, qlen = strlen(query);

	for (i = 0; i < prof->nr_rows; i++) {
		const struct fb_row *row = &prof->rows[i];
		const char *n = row->name;

		if (!row_of_query(row, query))
			continue;
		if (!strcmp(n, name))
			plain = (plain < 0 ? 0 : plain) + row->samples;
		else if (!strncmp(n, query, qlen) && !strncmp(n + qlen, ": ", 2) &&
			 !strcmp(n + qlen + 2, name))
			with_query = (with_query < 0 ? 0 : with_query) + row->samples;
	}
	/* The name this run's dictionary gives first: a profile of the same runs. */
	if (prefixed)
		return with_query >= 0 ? with_query : plain;
	return plain >= 0 ? plain : with_query;
}

/*
 * Pipeline @k of @l in @prof: its row, or the sum of its tasks' rows in a
 * profile by task; -1 when the profile names none of it.  Of a profile by
 * task, the samples of its runtime tasks (the precompiled runtime's, which
 * no -O level changes) are added to *@runtime as well; a profile by
 * pipeline cannot tell them apart and adds none.
 */
static double pipeline_samples(const struct fb_profile *prof, const struct lowered *l, int k,
			       int prefixed, double *runtime)
{
	char name[LOWER_NAME_MAX];
	double sum = -1, s;
	int i;

	*runtime = 0;
	if (!prof->by_task) {
		lower_pipeline_name(l, k, name, sizeof(name));
		return fb_row_samples(prof, l->plan->query, name, prefixed);
	}
	for (i = 0; i < l->nr_tasks; i++) {
		if (l->tasks[i].pipeline != l->order[k])
			continue;
		s = fb_row_samples(prof, l->plan->query, l->tasks[i].name, prefixed);
		if (s < 0)
			continue;
		sum = (sum < 0 ? 0 : sum) + s;
		if (l->tasks[i].runtime)
			*runtime += s;
	}
	return sum;
}

/*
 * The entry of the profiled run @in's --times for the query of @l, or
 * NULL: none given, or one of another shape (said so on @log).
 */
static const struct fb_times_query *times_of(const struct fb_input *in,
					     const struct lowered *l, FILE *log)
{
	const struct fb_times_query *tq = fb_input_times(in, l->plan->query);

	if (!tq || tq->nr_pipelines == l->nr_done)
		return tq;
	fprintf(log, "feedback: %s: --feedback-times %s has %d pipelines, the query %d; "
		"its times are not used\n", l->plan->query, in->times_path, tq->nr_pipelines,
		l->nr_done);
	return NULL;
}

int fb_choose(struct lowered *l, const struct fb_input *in, int nr_in,
	      const struct fb_run *run, FILE *log)
{
	const struct fb_times_query *tq[FB_MAX_INPUTS];
	/*
	 * Each run's samples of each pipeline; -1 where its profile names
	 * none.  Of them, those in the runtime.
	 */
	double rows[FB_MAX_INPUTS][LOWER_MAX_PIPELINES];
	double in_runtime[FB_MAX_INPUTS][LOWER_MAX_PIPELINES];
	const char *query = l->plan->query;
	double compile_ns = 0, predicted_ns = 0, scale = 1;
	int i, k, level, found = 0, last = -1, nr_used = 0;
	bool used[FB_MAX_INPUTS] = { false }, by_task = true;

	if (nr_in > FB_MAX_INPUTS)
		nr_in = FB_MAX_INPUTS;
	for (i = 0; i < nr_in; i++)
		tq[i] = times_of(&in[i], l, log);
	for (k = 0; k < l->nr_done; k++) {
		int named = 0;

		for (i = 0; i < nr_in; i++) {
			rows[i][k] = pipeline_samples(&in[i].profile, l, k, run->prefixed,
						      &in_runtime[i][k]);
			named |= rows[i][k] >= 0;
			used[i] |= rows[i][k] >= 0;
		}
		found += named;
	}
	/* A profile that names none of the query's pipelines is of another query. */
	for (i = 0; i < nr_in; i++)
		if (used[i]) {
			last = i;
			nr_used++;
			by_task &= in[i].profile.by_task;
		}
	/*
	 * A profile by pipeline holds the runtime's samples in the pipeline's:
	 * with one among the runs, none is split, or a level's time would be
	 * the generated code's in one run and the whole pipeline's in another.
	 */
	if (!by_task)
		memset(in_runtime, 0, sizeof(in_runtime));
	if (!found) {
		fprintf(log, "feedback: %s: the profile names none of its %d pipelines; compiled "
			"as without feedback\n", query, l->nr_done);
		return 0;
	}
	/* Scale the compile priors to this host: measured against predicted. */
	for (i = 0; i < nr_in; i++) {
		if (!used[i] || !tq[i])
			continue;
		compile_ns += tq[i]->compile_ns;
		predicted_ns += compile_fixed_ns;
		for (k = 0; k < l->nr_done; k++) {
			const struct pipeline *p = &l->pipelines[l->order[k]];

			predicted_ns += (double)(p->nr_lines + p->nr_finish) *
					compile_line_ns[tq[i]->opt[k]];
		}
	}
	if (predicted_ns > 0)
		scale = compile_ns / predicted_ns;
	for (k = 0; k < l->nr_done; k++) {
		struct pipeline *p = &l->pipelines[l->order[k]];
		int last_at = tq[last] ? tq[last]->opt[k] : FB_DEFAULT_LEVEL;
		long last_execs = tq[last] ? tq[last]->executions : run->executions;
		int best = FB_DEFAULT_LEVEL, nr_measured[FB_NR_LEVELS] = { 0 };
		double lines = (double)(p->nr_lines + p->nr_finish);
		double last_samples = rows[last][k] > 0 ? rows[last][k] - in_runtime[last][k] : 0;
		double measured[FB_NR_LEVELS] = { 0 }, cost[FB_NR_LEVELS], at_o2 = 0;
		double runtime_cpu = 0, runtime_samples = in_runtime[last][k];
		char seen[160] = "", in_rt[96];
		size_t len = 0;

		/*
		 * CPU time of one execution of the generated code at the level
		 * each run compiled it at; the runtime's, the same at every
		 * level, averaged over the runs.
		 */
		for (i = 0; i < nr_in; i++) {
			int ran_at = tq[i] ? tq[i]->opt[k] : FB_DEFAULT_LEVEL;
			long execs = tq[i] ? tq[i]->executions : run->executions;
			double samples = rows[i][k] > 0 ? rows[i][k] - in_runtime[i][k] : 0;
			double ns = in[i].profile.sample_ns / (double)execs;

			if (!used[i])
				continue;
			measured[ran_at] += samples * ns;
			nr_measured[ran_at]++;
			at_o2 += samples * ns / exec_factor[ran_at];
			runtime_cpu += in_runtime[i][k] * ns;
		}
		at_o2 /= nr_used;
		runtime_cpu /= nr_used;
		for (level = 0; level < FB_NR_LEVELS; level++) {
			/* What a run measured at a level beats the prior for it. */
			double cpu = nr_measured[level] ? measured[level] / nr_measured[level]
							: at_o2 * exec_factor[level];
			/* A split pipeline's wall time is its CPU time over the workers. */
			double wall = (cpu + runtime_cpu) / (p->source >= 0 ? run->threads : 1);

			cost[level] = scale * lines * compile_line_ns[level] +
				      (double)run->executions * wall;
			if (nr_used > 1 && nr_measured[level] && len < sizeof(seen))
				len += (size_t)snprintf(seen + len, sizeof(seen) - len,
							"%s-%s %.2f ms", len ? ", " : ", measured ",
							fb_level_name(level),
							measured[level] / nr_measured[level] / 1e6);
		}
		/* Ties keep -O2, the level without feedback. */
		for (level = 0; level < FB_NR_LEVELS; level++)
			if (cost[level] < cost[best])
				best = level;
		p->opt = best;
		if (runtime_samples > 0)
			snprintf(in_rt, sizeof(in_rt), ", %.0f samples, %.2f ms a run in the runtime "
				 "(at any level)", runtime_samples,
				 runtime_samples * in[last].profile.sample_ns / (double)last_execs /
				 1e6);
		else
			in_rt[0] = 0;
		fprintf(log, "feedback: %s pipeline %d: %.0f samples, %.2f ms CPU a run at -%s "
			"(%.2f ms at -O2)%s, %.0f lines%s: -%s%s (expected %.1f ms compile + run, "
			"%.1f ms at -O2)\n", query, k + 1, last_samples,
			last_samples * in[last].profile.sample_ns / (double)last_execs / 1e6,
			fb_level_name(last_at), at_o2 / 1e6, in_rt, lines, seen, fb_level_name(best),
			best == 3 ? " -march=native" : "", cost[best] / 1e6,
			cost[FB_DEFAULT_LEVEL] / 1e6);
	}
	for (i = 0; i < nr_in; i++)
		if (!in[i].profile.complete)
			fprintf(log, "feedback: profile %d's recording was not read to its end\n",
				i + 1);
	return found;
}

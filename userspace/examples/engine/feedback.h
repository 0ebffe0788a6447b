/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Profiles fed back into compilation (seed 003): tailor report's
 * per-pipeline profile (--level pipeline -f json, docs/exports.md) says
 * how much CPU time each pipeline of a previous run took; the engine then
 * compiles each pipeline at the GCC optimization level that minimizes its
 * expected compile time plus execution time: cold pipelines cheaply, hot
 * ones at -O3 -march=native.  The profiles of the runs that followed
 * teach it what each level it tried measured, so a level that ran slower
 * than its prior promised is not chosen again on the prior.
 */
#ifndef ENGINE_FEEDBACK_H
#define ENGINE_FEEDBACK_H

#include <stddef.h>
#include <stdio.h>
#include "lower.h"

#define FB_NR_LEVELS	4	/* -O0 .. -O3; -O3 adds -march=native to the file */
#define FB_DEFAULT_LEVEL 2	/* the file's level without feedback: -O2 */

struct fb_row {
	char *name;
	char *query;			/* with --by-query: "sfja", "sfja (client 2)"; else NULL */
	double samples;
};

/*
 * A profile: tailor report --level pipeline --format json, or --level
 * task (a pipeline's samples are then its tasks', and a filter's terms
 * have rows of their own).  With --by-query, each row says its query,
 * and only a query's own rows count for it.
 */
struct fb_profile {
	struct fb_row *rows;
	size_t nr_rows;
	int by_task;			/* rows are tasks, not pipelines */
	double sample_ns;		/* what one sample stands for */
	int complete;			/* the recording was read to its end */
	void *doc;			/* the parsed document the names live in */
};

/* What the profiled run's --times says of one query. */
struct fb_times_query {
	char name[64];
	double compile_ns;
	long executions;		/* clients x repeat */
	int nr_pipelines;
	int opt[LOWER_MAX_PIPELINES];	/* levels by execution order */
	/* terms=2:1.0: the order filter 2 tested its terms in (0 terms: as written). */
	int nr_terms[PLAN_MAX_OPERATORS + 1];
	int terms[PLAN_MAX_OPERATORS + 1][PLAN_MAX_CONJUNCTS];
};

struct fb_times {
	struct fb_times_query *queries;
	int nr_queries;
};

/*
 * Parse a profile of @len bytes named @what.  0, or -1 with a message
 * naming @what and the problem in @err.
 */
int fb_profile_parse(struct fb_profile *p, const char *text, size_t len, const char *what,
		     char *err, size_t errlen);
/* Read and parse the file @path; 0, or -1 after a message on stderr. */
int fb_profile_read(struct fb_profile *p, const char *path);
void fb_profile_free(struct fb_profile *p);

/*
 * Parse a --times file from @f, named @what: 0, or -1 with a message in
 * @err.  fb_times_read() opens @path and reports on stderr.
 */
int fb_times_parse(struct fb_times *t, FILE *f, const char *what, char *err, size_t errlen);
int fb_times_read(struct fb_times *t, const char *path);
void fb_times_free(struct fb_times *t);

/* How this run will execute the query: the choice depends on it. */
struct fb_run {
	long executions;		/* clients x repeat */
	int threads;			/* workers: a split pipeline's wall time is CPU / this */
	int prefixed;			/* the dictionary prefixes names with the query */
};

/* A profiled run: its profile and, where given, its --times. */
struct fb_input {
	struct fb_profile profile;
	struct fb_times times;
	int have_times;
	const char *times_path;		/* for messages */
};

#define FB_MAX_INPUTS	16	/* --feedback given this many times at most */

/*
 * The entry of the profiled run @in's --times for @query, or NULL: no
 * --feedback-times for it, or none of that query.
 */
const struct fb_times_query *fb_input_times(const struct fb_input *in, const char *query);

/*
 * Choose each pipeline's level of the lowered query @l (sets
 * pipelines[].opt) from the profiled runs @in[0..@nr_in), oldest first,
 * printing one line per pipeline to @log.  A level a run measured is
 * judged by what it measured (the mean where several did); a level none
 * ran is judged by the priors, from the runs' CPU time normalized to -O2.
 * Returns the number of pipelines the profiles name (0: the query keeps
 * the default levels).
 */
int fb_choose(struct lowered *l, const struct fb_input *in, int nr_in,
	      const struct fb_run *run, FILE *log);

/*
 * Order the terms of each filter of @plan (sets conjunct_order[]) by what
 * the profiled runs measured: a term's CPU time a row that reached it
 * (its task's samples, at --level task), and which rows pass which terms,
 * counted on @db's rows of the filtered table; the order chosen makes the
 * least work a run.  Before the plan is lowered.  One line per filter with
 * terms to @log; returns the number of filters reordered.
 */
int fb_order_terms(struct plan *plan, const struct database *db, const struct fb_input *in,
		   int nr_in, const struct fb_run *run, FILE *log);

/*
 * The samples of the component @name of @query in @prof (plain, or
 * prefixed "QUERY: " as a run of several queries names it), over the
 * query's clients; -1 when no row names it.
 */
double fb_row_samples(const struct fb_profile *prof, const char *query, const char *name,
		      int prefixed);

/* "O2" for level 2. */
const char *fb_level_name(int level);

#endif /* ENGINE_FEEDBACK_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * EXPLAIN ANALYZE from samples (seed 003, the paper's Figure 9): the
 * query runs once more, in a child engine that counts its operators' rows,
 * under a sampling profiler; the plan is printed with each operator's CPU
 * time and share from the profile beside the rows the engine counted.
 */
#ifndef ENGINE_EXPLAIN_ANALYZE_H
#define ENGINE_EXPLAIN_ANALYZE_H

#include "plan.h"

/* Who samples: tailor record where /dev/tailor opens, else perf record. */
enum ea_profiler { EA_AUTO, EA_TAILOR, EA_PERF };

struct ea_request {
	const struct plan *plan;	/* the query's, built as the child builds it */
	const char *summary;		/* one line on the query */
	enum ea_profiler profiler;
	const char *keep_dir;		/* -w: files go and stay there; NULL: a temporary directory */
	long repeat;			/* executions in the child's run */
	int llvm;			/* --backend llvm: record the tag word */
	/*
	 * The child engine's options that shape the run (scale, repeat,
	 * threads, backend, --extra ...).  explain_analyze() adds
	 * --count-rows, -r 0, its files (-d, -t, -w) and the query.
	 */
	const char *const *args;
	int nr_args;
};

/* Runs and prints.  Returns the exit status: 0, or 1 after saying what failed. */
int explain_analyze(const struct ea_request *req);

#endif /* ENGINE_EXPLAIN_ANALYZE_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lowering a plan in the paper's steps (seed 000, section 4.3): operators
 * to pipelines of tasks, fused up to materialization points (a join's
 * build side, a group-by's input), and the tasks to C source lines.
 * Each step records its links in the Tagging Dictionary as it goes.
 */
#ifndef ENGINE_LOWER_H
#define ENGINE_LOWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "database.h"
#include "plan.h"

struct tailor_dict;

#define LOWER_MAX_TASKS		48
#define LOWER_MAX_PIPELINES	12
#define LOWER_MAX_SLOTS		32
#define LOWER_MAX_CLIENTS	16
#define LOWER_NAME_MAX		1024	/* a pipeline's name: its tasks' names */

/* The dictionary's levels and the next free id of each. */
/* Who compiles the generated C: the system compiler, or clang and LLVM's ORC JIT. */
enum lower_backend { LOWER_BACKEND_C, LOWER_BACKEND_LLVM };

/*
 * The tag word's fields (tailor/tag_word.h): the query execution in bits
 * 0-15, and, under the LLVM backend's runtime calls, the task in 16-31.
 */
#define LOWER_WORD_QUERY_BITS	16
#define LOWER_WORD_QUERY_MASK	((1ull << LOWER_WORD_QUERY_BITS) - 1)
#define LOWER_WORD_TASK_SHIFT	16
#define LOWER_WORD_TASK_BITS	16

struct dict_levels {
	struct tailor_dict *dict;	/* NULL: no dictionary */
	int task, op, pipeline, query;
	uint64_t next_task, next_op, next_pipeline, next_query;
	int prefix_names;		/* several queries: "fig3: HashJoin#3" */
	int nr_clients;			/* executions of each query, one per client */
};

struct task {
	uint64_t id;			/* the tag and the dictionary id */
	const struct op *op;
	int pipeline;			/* index into lowered.pipelines */
	int role;			/* scan, build, probe, ... */
	int term;			/* a filter's conjunct (op->conjuncts[]), or -1 */
	/*
	 * The shared runtime's work for the task of the same op, role and
	 * pipeline: the tag of its TAILOR_TAGGED calls.  It has no lines; a
	 * profile by task tells the generated code, whose time the -O level
	 * changes, from the precompiled runtime's, whose time it does not.
	 */
	bool runtime;
	char name[128];
};

struct gen_line {
	char *text;
	int task;			/* index into lowered.tasks */
};

struct pipeline {
	uint64_t id;
	int order;			/* execution order: tailor_pipeline_<order> */
	int first_task;			/* owns the function's own lines */
	int source;			/* ctx->rows[] of the scanned table; -1: one morsel */
	struct gen_line *lines;		/* tailor_pipeline_<order>: one morsel */
	size_t nr_lines, cap_lines;
	struct gen_line *finish;	/* tailor_finish_<order>: merge breaker state */
	size_t nr_finish, cap_finish;
	uint32_t counted;		/* bit n: operator n counts its rows here */
	int opt;			/* --feedback: GCC's -O level for its functions; -1: the file's */
};

enum ht_kind { HT_JOIN, HT_GROUP };

struct ht_slot {
	enum ht_kind kind;
	long width;			/* join payload or group aggregates */
};

struct lowered {
	const struct plan *plan;
	const struct database *db;
	struct dict_levels *levels;
	uint64_t op_ids[PLAN_MAX_OPERATORS + 1];	/* by operator number */
	/*
	 * The query level's components are executions: client c's run of the
	 * plan is query_ids[c].  The plan's operators and pipelines link to
	 * every one; the tag word tells them apart at run time.
	 */
	uint64_t query_ids[LOWER_MAX_CLIENTS];
	uint64_t runtime_task;
	int64_t tag_word_offset;	/* of tailor_tag_word from %fs: LLVM's code stores there */
	struct task tasks[LOWER_MAX_TASKS];
	int nr_tasks;
	struct pipeline pipelines[LOWER_MAX_PIPELINES];	/* creation order */
	int nr_pipelines;
	int order[LOWER_MAX_PIPELINES];	/* pipelines by execution order */
	int nr_done;
	const struct column *columns[LOWER_MAX_SLOTS];	/* ctx->column[] */
	int nr_columns;
	const struct table *tables[LOWER_MAX_SLOTS];	/* ctx->rows[] */
	int nr_tables;
	struct ht_slot hts[PLAN_MAX_OPERATORS];	/* ctx->ht[] */
	int nr_hts;
	int op_ht[PLAN_MAX_OPERATORS + 1];	/* by operator number */
	long result_width;
	bool count_rows;		/* tailor-engine --count-rows */
	/* While lowering. */
	const char *referenced[LOWER_MAX_SLOTS];
	int nr_referenced;
	int current, depth, failed;
	bool in_finish;			/* emit() goes to the finish function */
};

/*
 * 0, or -1 with a message.  With @count_rows, the code counts the rows
 * each operator produces into ctx->tuples (rt_abi.h).
 */
int lower_plan(struct lowered *l, const struct plan *plan, const struct database *db,
	       struct dict_levels *levels, bool count_rows);
/*
 * Write the C file and link each of its lines to its task (the last
 * lowering step's log).  0, or -1 with a message.
 */
int lower_write_c(struct lowered *l, const char *path, enum lower_backend backend);
void lower_free(struct lowered *l);
/*
 * The name of the @k-th pipeline in execution order, as the dictionary
 * gives it ("pipeline 2: TableScan#2 lineitem scan -> ..."), without the
 * query's prefix that several queries add.
 */
void lower_pipeline_name(const struct lowered *l, int k, char *name, size_t size);
/*
 * The task of term @term of the filter @op of several terms, as the
 * dictionary names it whatever the order: "Filter#2 filter: l_discount < 1".
 */
void lower_term_task_name(const struct op *op, int term, char *name, size_t size);

#endif /* ENGINE_LOWER_H */

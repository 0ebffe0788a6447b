/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Query plans: a tree of relational operators (the engine's top level of
 * abstraction) over expressions on 64-bit integer columns.
 */
#ifndef ENGINE_PLAN_H
#define ENGINE_PLAN_H

#include <stdint.h>
#include <stdio.h>

enum expr_kind {
	E_COLUMN, E_CONST,
	E_ADD, E_SUB, E_MUL, E_DIV,
	E_LT, E_LE, E_GT, E_GE, E_EQ, E_AND,
};

struct expr {
	enum expr_kind kind;
	const char *column;		/* E_COLUMN */
	int64_t value;			/* E_CONST */
	const struct expr *left, *right;
};

enum op_kind { OP_SCAN, OP_FILTER, OP_HASH_JOIN, OP_GROUP_BY };

enum agg_fn { AGG_COUNT, AGG_SUM };

struct aggregate {
	enum agg_fn fn;
	const struct expr *arg;		/* AGG_SUM */
};

#define PLAN_MAX_AGGREGATES	8
#define PLAN_MAX_OPERATORS	16
#define PLAN_MAX_CONJUNCTS	6

/*
 * An operator.  A hash join builds on @build and probes with @input;
 * every other operator reads @input (a scan reads @table).
 */
struct op {
	enum op_kind kind;
	int number;			/* 1.. in the order of the plan's list */
	struct op *input, *build, *parent;
	const char *table;		/* OP_SCAN */
	const struct expr *predicate;	/* OP_FILTER */
	/*
	 * OP_FILTER: the predicate's AND-ed terms as written, and the order
	 * the generated code tests them in (indexes into conjuncts[]): as
	 * written, unless --feedback measured a cheaper one.
	 */
	const struct expr *conjuncts[PLAN_MAX_CONJUNCTS];
	int conjunct_order[PLAN_MAX_CONJUNCTS];
	int nr_conjuncts;
	const struct expr *build_key, *probe_key;	/* OP_HASH_JOIN */
	const struct expr *group_key;	/* OP_GROUP_BY */
	struct aggregate aggregates[PLAN_MAX_AGGREGATES];
	int nr_aggregates;
	/* Accuracy oracle: extra work units per tuple this operator handles. */
	uint64_t extra_work;
	char name[96];			/* "HashJoin#3 (l_partkey = p_partkey)" */
};

struct plan {
	const char *query;
	const char *sql;
	struct op *root;		/* a group-by: every query aggregates */
	struct op ops[PLAN_MAX_OPERATORS];
	int nr_ops;
	struct expr exprs[128];
	int nr_exprs;
};

/* Builders; they abort on exhaustion, the plans being fixed in the code. */
const struct expr *col(struct plan *p, const char *name);
const struct expr *lit(struct plan *p, int64_t value);
const struct expr *bin(struct plan *p, enum expr_kind kind,
		       const struct expr *l, const struct expr *r);
struct op *scan(struct plan *p, const char *table);
struct op *filter(struct plan *p, struct op *input, const struct expr *pred);
struct op *hash_join(struct plan *p, struct op *build, struct op *probe,
		     const struct expr *build_key, const struct expr *probe_key);
struct op *group_by(struct plan *p, struct op *input, const struct expr *key);
void add_aggregate(struct plan *p, struct op *g, enum agg_fn fn,
		   const struct expr *arg);
/* Numbers the operators and names them; call once the tree is built. */
void plan_finish(struct plan *p, struct op *root);

/* Expression as SQL (text != 0) or C (text == 0) into @buf. */
void expr_format(const struct expr *e, char *buf, size_t size, int sql);
/* Calls @fn for every column name the expression reads. */
void expr_columns(const struct expr *e, void (*fn)(const char *, void *), void *arg);

/* The operator of @p with @name as given on the command line: 2, join, HashJoin#2. */
struct op *plan_find_op(struct plan *p, const char *name);
void plan_print(const struct plan *p, FILE *out);

/* The fixed queries. */
struct query_def {
	const char *name;
	const char *summary;
	void (*build)(struct plan *p);
};
extern const struct query_def queries[];
const struct query_def *query_find(const char *name);

#endif /* ENGINE_PLAN_H */

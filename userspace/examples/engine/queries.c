// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fixed queries.  Each is checked against an evaluation of its own in
 * reference.c; a new query needs one there too.
 */
#include <string.h>
#include "database.h"
#include "plan.h"

/*
 * Seed 000, Figure 3: a join feeding a group-by with divisions.
 *   SELECT l_suppkey, count(*), sum(l_extendedprice / l_quantity),
 *          sum(p_retailprice / p_size)
 *   FROM lineitem, part WHERE p_partkey = l_partkey GROUP BY l_suppkey
 */
static void build_fig3(struct plan *p)
{
	struct op *j, *g;

	p->sql = "SELECT l_suppkey, count(*), sum(l_extendedprice / l_quantity), "
		 "sum(p_retailprice / p_size) FROM lineitem, part "
		 "WHERE p_partkey = l_partkey GROUP BY l_suppkey";
	j = hash_join(p, scan(p, "part"), scan(p, "lineitem"),
		      col(p, "p_partkey"), col(p, "l_partkey"));
	g = group_by(p, j, col(p, "l_suppkey"));
	add_aggregate(p, g, AGG_COUNT, NULL);
	add_aggregate(p, g, AGG_SUM,
		      bin(p, E_DIV, col(p, "l_extendedprice"), col(p, "l_quantity")));
	add_aggregate(p, g, AGG_SUM, bin(p, E_DIV, col(p, "p_retailprice"), col(p, "p_size")));
	plan_finish(p, g);
}

/*
 * Two joins calling the same precompiled hash-table functions, told
 * apart by their tags.
 *   SELECT c_nationkey, count(*), sum(l_extendedprice * (100 - l_discount) / 100)
 *   FROM lineitem, orders, customer
 *   WHERE o_orderkey = l_orderkey AND c_custkey = o_custkey GROUP BY c_nationkey
 */
static void build_twojoins(struct plan *p)
{
	struct op *j1, *j2, *g;

	p->sql = "SELECT c_nationkey, count(*), sum(l_extendedprice * (100 - l_discount) / 100) "
		 "FROM lineitem, orders, customer WHERE o_orderkey = l_orderkey "
		 "AND c_custkey = o_custkey GROUP BY c_nationkey";
	j1 = hash_join(p, scan(p, "orders"), scan(p, "lineitem"),
		       col(p, "o_orderkey"), col(p, "l_orderkey"));
	j2 = hash_join(p, scan(p, "customer"), j1, col(p, "c_custkey"), col(p, "o_custkey"));
	g = group_by(p, j2, col(p, "c_nationkey"));
	add_aggregate(p, g, AGG_COUNT, NULL);
	add_aggregate(p, g, AGG_SUM,
		      bin(p, E_DIV, bin(p, E_MUL, col(p, "l_extendedprice"),
					bin(p, E_SUB, lit(p, 100), col(p, "l_discount"))),
			  lit(p, 100)));
	plan_finish(p, g);
}

/*
 * TPC-H Q1's shape: a filter and a group-by with many aggregates.
 *   SELECT l_returnflag * 2 + l_linestatus, count(*), sum(l_quantity),
 *          sum(l_extendedprice), sum(l_extendedprice * (100 - l_discount) / 100),
 *          sum(l_extendedprice * (100 - l_discount) / 100 * (100 + l_tax) / 100)
 *   FROM lineitem WHERE l_shipdate <= 2436 GROUP BY 1
 */
static void build_q1(struct plan *p)
{
	const struct expr *disc;
	struct op *f, *g;

	p->sql = "SELECT l_returnflag * 2 + l_linestatus, count(*), sum(l_quantity), "
		 "sum(l_extendedprice), sum(l_extendedprice * (100 - l_discount) / 100), "
		 "sum(l_extendedprice * (100 - l_discount) / 100 * (100 + l_tax) / 100) "
		 "FROM lineitem WHERE l_shipdate <= 2436 GROUP BY 1";
	f = filter(p, scan(p, "lineitem"),
		   bin(p, E_LE, col(p, "l_shipdate"), lit(p, DB_LAST_DAY - 90)));
	g = group_by(p, f, bin(p, E_ADD, bin(p, E_MUL, col(p, "l_returnflag"), lit(p, 2)),
			       col(p, "l_linestatus")));
	disc = bin(p, E_DIV, bin(p, E_MUL, col(p, "l_extendedprice"),
				 bin(p, E_SUB, lit(p, 100), col(p, "l_discount"))), lit(p, 100));
	add_aggregate(p, g, AGG_COUNT, NULL);
	add_aggregate(p, g, AGG_SUM, col(p, "l_quantity"));
	add_aggregate(p, g, AGG_SUM, col(p, "l_extendedprice"));
	add_aggregate(p, g, AGG_SUM, disc);
	add_aggregate(p, g, AGG_SUM, bin(p, E_DIV, bin(p, E_MUL, disc,
						       bin(p, E_ADD, lit(p, 100), col(p, "l_tax"))),
					 lit(p, 100)));
	plan_finish(p, g);
}

/*
 * Seed 004's canonical pipeline: scan, filter, join, aggregate, the query
 * the accuracy oracle adds work to.
 *   SELECT p_brand, count(*), sum(l_extendedprice / p_size)
 *   FROM lineitem, part
 *   WHERE l_quantity < 45 AND l_discount < 9 AND p_partkey = l_partkey
 *   GROUP BY p_brand
 */
static void build_sfja(struct plan *p)
{
	struct op *f, *j, *g;

	p->sql = "SELECT p_brand, count(*), sum(l_extendedprice / p_size) FROM lineitem, part "
		 "WHERE l_quantity < 45 AND l_discount < 9 AND p_partkey = l_partkey "
		 "GROUP BY p_brand";
	f = filter(p, scan(p, "lineitem"),
		   bin(p, E_AND, bin(p, E_LT, col(p, "l_quantity"), lit(p, 45)),
		       bin(p, E_LT, col(p, "l_discount"), lit(p, 9))));
	j = hash_join(p, scan(p, "part"), f, col(p, "p_partkey"), col(p, "l_partkey"));
	g = group_by(p, j, col(p, "p_brand"));
	add_aggregate(p, g, AGG_COUNT, NULL);
	add_aggregate(p, g, AGG_SUM, bin(p, E_DIV, col(p, "l_extendedprice"), col(p, "p_size")));
	plan_finish(p, g);
}

/*
 * A group-by with nearly a group per row (an order's lines mostly differ
 * in quantity): its workers' tables are as large as their input, and
 * folding them together (--merge) is a real part of the query.
 *   SELECT l_orderkey * 100 + l_quantity, count(*), sum(l_extendedprice)
 *   FROM lineitem GROUP BY 1
 */
static void build_groups(struct plan *p)
{
	struct op *g;

	p->sql = "SELECT l_orderkey * 100 + l_quantity, count(*), sum(l_extendedprice) "
		 "FROM lineitem GROUP BY 1";
	g = group_by(p, scan(p, "lineitem"),
		     bin(p, E_ADD, bin(p, E_MUL, col(p, "l_orderkey"), lit(p, 100)),
			 col(p, "l_quantity")));
	add_aggregate(p, g, AGG_COUNT, NULL);
	add_aggregate(p, g, AGG_SUM, col(p, "l_extendedprice"));
	plan_finish(p, g);
}

/*
 * A filter whose terms are written in the costly order: the first passes
 * nearly every row and costs three dependent divisions, the second is one
 * comparison and passes one row in eleven.  Tested as written, every row
 * pays the divisions; --feedback, from a profile by task, tests the
 * comparison first (feedback_terms.c).
 *   SELECT l_returnflag, count(*), sum(l_quantity) FROM lineitem
 *   WHERE l_extendedprice / l_quantity / (l_tax + 1) / (l_discount + 1) > 2000
 *     AND l_discount < 1
 *   GROUP BY l_returnflag
 */
static void build_terms(struct plan *p)
{
	const struct expr *per_unit;
	struct op *f, *g;

	p->sql = "SELECT l_returnflag, count(*), sum(l_quantity) FROM lineitem "
		 "WHERE l_extendedprice / l_quantity / (l_tax + 1) / (l_discount + 1) > 2000 "
		 "AND l_discount < 1 GROUP BY l_returnflag";
	per_unit = bin(p, E_DIV, bin(p, E_DIV, bin(p, E_DIV, col(p, "l_extendedprice"),
						   col(p, "l_quantity")),
				     bin(p, E_ADD, col(p, "l_tax"), lit(p, 1))),
		       bin(p, E_ADD, col(p, "l_discount"), lit(p, 1)));
	f = filter(p, scan(p, "lineitem"),
		   bin(p, E_AND, bin(p, E_GT, per_unit, lit(p, 2000)),
		       bin(p, E_LT, col(p, "l_discount"), lit(p, 1))));
	g = group_by(p, f, col(p, "l_returnflag"));
	add_aggregate(p, g, AGG_COUNT, NULL);
	add_aggregate(p, g, AGG_SUM, col(p, "l_quantity"));
	plan_finish(p, g);
}

const struct query_def queries[] = {
	{ "fig3", "join feeding a group-by with divisions (seed 000, Figure 3)", build_fig3 },
	{ "twojoins", "two joins sharing the precompiled hash-table functions", build_twojoins },
	{ "q1", "TPC-H Q1 shape: filter, group-by, many aggregates", build_q1 },
	{ "sfja", "scan, filter, join, aggregate (seed 004; the accuracy oracle's query)", build_sfja },
	{ "groups", "a group by nearly every row: large worker tables to merge (--merge)", build_groups },
	{ "terms", "a filter's costly, unselective term written first (--feedback orders them)",
	  build_terms },
	{ NULL, NULL, NULL },
};

const struct query_def *query_find(const char *name)
{
	const struct query_def *q;

	for (q = queries; q->name; q++)
		if (!strcmp(q->name, name))
			return q;
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queries and lanes in the library: which components --query selects (by
 * name, by the name without a dictionary's label, by id; what it says
 * when none or no level matches), which operators belong to a query
 * execution, the sections of --by-query, and the lanes' keys and grid --
 * on dictionaries and aggregates made here, so every expectation is
 * written out.  Built with ASan and UBSan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/dictionary_reader.h"

/* Two clients' runs of one plan (scan, join) and a query of its own (agg). */
static const char dict_text[] =
	"tailor-dictionary\t1\n"
	"level\toperator\n"
	"level\tquery\n"
	"component\toperator\t1\tscan\n"
	"component\toperator\t2\tjoin\n"
	"component\toperator\t3\tagg\n"
	"component\tquery\t1\tq1 (client 1)\n"
	"component\tquery\t2\tq1 (client 2)\n"
	"component\tquery\t7\tq2\n"
	"link\toperator\t1\tquery\t1\n"
	"link\toperator\t1\tquery\t2\n"
	"link\toperator\t2\tquery\t1\n"
	"link\toperator\t2\tquery\t2\n"
	"link\toperator\t3\tquery\t7\n"
	"tag-word\tquery\t0\t16\n";

static const char plain_text[] =
	"tailor-dictionary\t1\n"
	"level\toperator\n"
	"component\toperator\t1\tscan\n";

static struct tdict *parse(const char *text)
{
	char err[256];
	struct tdict *d = tdict_parse(text, strlen(text), "test", err, sizeof(err));

	if (!d)
		printf("# %s\n", err);
	return d;
}

/* The row named @name (of a component), or ATTR_NONE. */
static uint32_t row_named(const struct attributor *a, const char *name)
{
	size_t i;

	for (i = 0; i < attr_nr_rows(a); i++)
		if (!strcmp(attr_row(a, i)->name, name))
			return (uint32_t)i;
	return ATTR_NONE;
}

static struct attributor *new_attr(struct tdict **dicts, const char **labels, int n,
				   bool queries)
{
	struct attr_options o = { .dicts = dicts, .labels = labels, .nr_dicts = n,
				  .level = "operator", .queries = queries };
	char err[256];
	struct attributor *a = attr_new(&o, err, sizeof(err));

	if (!a)
		printf("# %s\n", err);
	return a;
}

static void test_select(void)
{
	struct tdict *d = parse(dict_text);
	const char *sel[3];
	char err[512];
	struct attributor *a;
	uint32_t c1, c2, q2;

	check(d);
	if (!d)
		return;
	a = new_attr(&d, NULL, 1, true);
	check(a && attr_has_queries(a));
	if (!a) {
		tdict_free(d);
		return;
	}
	c1 = row_named(a, "q1 (client 1)");
	c2 = row_named(a, "q1 (client 2)");
	q2 = row_named(a, "q2");
	check(c1 != ATTR_NONE && c2 != ATTR_NONE && q2 != ATTR_NONE);
	/* Nothing selected: every sample is kept, even one without a query. */
	check(attr_query_selected(a, c1) && attr_query_selected(a, ATTR_NONE));
	sel[0] = "q1 (client 2)";
	sel[1] = "7";
	check_int(attr_select_queries(a, sel, 2, err, sizeof(err)), ==, 0);
	check(!attr_query_selected(a, c1));
	check(attr_query_selected(a, c2));
	check(attr_query_selected(a, q2));
	check(!attr_query_selected(a, ATTR_NONE));
	check(!attr_query_selected(a, row_named(a, "[kernel]")));
	/* An id no component has, or a name, says what there is. */
	sel[0] = "3";
	check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, -EINVAL);
	check_str(err, "no query is named or numbered '3'; there are 'q1 (client 1)' (1), "
		  "'q1 (client 2)' (2), 'q2' (7)");
	sel[0] = "q1";
	check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, -EINVAL);
	check_contains(err, "no query is named or numbered 'q1'");
	/* An operator's name is no query's. */
	sel[0] = "scan";
	check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, -EINVAL);
	/* The operators of each execution, by the links. */
	check(attr_row_reaches(a, row_named(a, "scan"), c1));
	check(attr_row_reaches(a, row_named(a, "scan"), c2));
	check(!attr_row_reaches(a, row_named(a, "scan"), q2));
	check(attr_row_reaches(a, row_named(a, "agg"), q2));
	check(!attr_row_reaches(a, row_named(a, "[kernel]"), q2));
	attr_free(a);
	tdict_free(d);
}

static void test_select_refused(void)
{
	struct tdict *d = parse(dict_text), *plain = parse(plain_text);
	const char *sel[1] = { "1" };
	char err[512];
	struct attributor *a;

	check(d && plain);
	if (!d || !plain)
		goto out;
	/* Not asked for: no query level, though the dictionary has one. */
	a = new_attr(&d, NULL, 1, false);
	check(a && !attr_has_queries(a));
	if (a) {
		check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, -EINVAL);
		check_contains(err, "no dictionary declares the level 'query'");
		attr_free(a);
	}
	a = new_attr(&plain, NULL, 1, true);
	check(a && !attr_has_queries(a));
	if (a) {
		check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, -EINVAL);
		check_contains(err, "no dictionary declares the level 'query'");
		attr_free(a);
	}
out:
	tdict_free(d);
	tdict_free(plain);
}

/* Two dictionaries: names carry their label, which a selector may leave out. */
static void test_select_two_dicts(void)
{
	struct tdict *d[2] = { parse(dict_text), parse(dict_text) };
	const char *labels[2] = { "a", "b" }, *sel[1];
	char err[512];
	struct attributor *a = d[0] && d[1] ? new_attr(d, labels, 2, true) : NULL;

	check(a);
	if (!a)
		goto out;
	sel[0] = "b: q2";
	check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, 0);
	check(!attr_query_selected(a, row_named(a, "a: q2")));
	check(attr_query_selected(a, row_named(a, "b: q2")));
	sel[0] = "q2";
	check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, 0);
	check(attr_query_selected(a, row_named(a, "a: q2")));
	check(attr_query_selected(a, row_named(a, "b: q2")));
	check(!attr_query_selected(a, row_named(a, "b: q1 (client 1)")));
	sel[0] = "2";
	check_int(attr_select_queries(a, sel, 1, err, sizeof(err)), ==, 0);
	check(attr_query_selected(a, row_named(a, "a: q1 (client 2)")));
	check(attr_query_selected(a, row_named(a, "b: q1 (client 2)")));
	check(!attr_query_selected(a, row_named(a, "b: q2")));
	/* Operators of one dictionary never reach another's queries. */
	check(!attr_row_reaches(a, row_named(a, "a: agg"), row_named(a, "b: q2")));
	attr_free(a);
out:
	tdict_free(d[0]);
	tdict_free(d[1]);
}

static void test_by_query(void)
{
	struct tdict *d = parse(dict_text);
	struct attributor *a = d ? new_attr(&d, NULL, 1, true) : NULL;
	struct agg g = { 0 }, part;
	uint32_t c1, c2, scan, join, *q;
	size_t n;

	check(a);
	if (!a)
		goto out;
	c1 = row_named(a, "q1 (client 1)");
	c2 = row_named(a, "q1 (client 2)");
	scan = row_named(a, "scan");
	join = row_named(a, "join");
	{
		struct agg_query_count counts[] = {
			{ c1, scan, 10 }, { c2, scan, 30 }, { c1, join, 5 }, { c2, join, 5 },
		};

		g.attr = a;
		g.total = 50;
		g.query_counts = counts;
		g.nr_query_counts = 4;
		check_uint(agg_query_samples(&g, c1), ==, 15);
		check_uint(agg_query_samples(&g, c2), ==, 35);
		q = agg_queries_by_samples(&g, &n);
		check(q && n == 2 && q[0] == c2 && q[1] == c1);
		free(q);
		check_int(agg_query_part(&g, c1, &part), ==, 0);
		check_uint(part.total, ==, 15);
		check_uint(agg_row_samples(&part, scan), ==, 10);
		check_uint(agg_row_samples(&part, join), ==, 5);
		/* Shares within the query. */
		check(agg_share(&part, 10) > 66.66 && agg_share(&part, 10) < 66.67);
		agg_part_free(&part);
	}
	attr_free(a);
out:
	tdict_free(d);
}

/* The lanes of two threads: keys by samples, a grid of the longest runs. */
static void test_lanes(void)
{
	struct tdict *d = parse(dict_text);
	struct attributor *a = d ? new_attr(&d, NULL, 1, true) : NULL;
	struct agg g = { 0 };
	struct agg_thread threads[2] = { { .pid = 1, .tid = 1 }, { .pid = 1, .tid = 2 } };
	struct agg_lane_key *keys;
	uint32_t c1, c2, scan, join;
	int *grid;
	size_t n;

	check(a);
	if (!a)
		goto out;
	c1 = row_named(a, "q1 (client 1)");
	c2 = row_named(a, "q1 (client 2)");
	scan = row_named(a, "scan");
	join = row_named(a, "join");
	{
		/* Columns of 10 ns from 100: thread 0 runs c1:scan, then c2:scan. */
		struct agg_lane lanes[] = {
			{ 0, c1, scan, 100, 114, 4 },	/* cols 0, 1 (4 ns) */
			{ 0, c2, scan, 114, 120, 2 },	/* col 1 (6 ns): wins */
			{ 1, c1, join, 125, 125, 1 },	/* an instant: col 2 */
			{ 1, c2, scan, 135, 137, 1 },	/* col 3 */
			{ 1, c1, scan, 137, 139, 1 },	/* col 3, as long: more samples win */
		};

		g.attr = a;
		g.opt.from_ns = 100;
		g.span_ns = 50;
		g.threads = threads;
		g.nr_threads = 2;
		g.lanes = lanes;
		g.nr_lanes = 5;
		keys = agg_lane_keys(&g, &n);
		check(keys && n == 3);
		if (!keys || n != 3)
			goto out_attr;
		/* c1:scan 5, c2:scan 3, c1:join 1 */
		check(keys[0].query == c1 && keys[0].row == scan && keys[0].samples == 5);
		check(keys[1].query == c2 && keys[1].row == scan && keys[1].samples == 3);
		check(keys[2].query == c1 && keys[2].row == join);
		check_int(agg_lane_key_index(keys, n, c2, scan), ==, 1);
		check_int(agg_lane_key_index(keys, n, c2, join), ==, -1);
		grid = agg_lane_grid(&g, keys, n, 10, 5);
		check(grid);
		if (grid) {
			int want[] = { 0, 1, -1, -1, -1,   -1, -1, 2, 0, -1 };
			int i;

			for (i = 0; i < 10; i++)
				check_int(grid[i], ==, want[i]);
		}
		free(grid);
		free(keys);
	}
out_attr:
	attr_free(a);
out:
	tdict_free(d);
}

int main(void)
{
	TEST(test_select(), "--query selects by name and id; an unknown one lists what there is");
	TEST(test_select_refused(), "no query level (not asked for, or not declared): refused, said so");
	TEST(test_select_two_dicts(), "two dictionaries: labelled names, bare names and ids select in each");
	TEST(test_by_query(), "by query: sections by samples, each query's rows and total");
	TEST(test_lanes(), "lanes: keys by samples, each column the longest run (ties: more samples)");
	return test_done();
}

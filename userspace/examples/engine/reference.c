// SPDX-License-Identifier: GPL-2.0-only
/* The reference evaluation of every fixed query (see reference.h). */
#include <stdlib.h>
#include <string.h>
#include "reference.h"

#define COL(db, t, i)	((db)->tables[t].columns[i].values)

/* Group arrays indexed by key, then the non-empty groups as rows. */
struct groups {
	long keys, aggs;
	long *v;		/* keys * aggs; aggregate 0 is the count */
};

static int groups_init(struct groups *g, long keys, long aggs)
{
	g->keys = keys;
	g->aggs = aggs;
	g->v = calloc((size_t)(keys * aggs), sizeof(long));
	return g->v ? 0 : -1;
}

static long *group(struct groups *g, long key)
{
	return g->v + key * g->aggs;
}

static void groups_emit(struct groups *g, struct result *out)
{
	long k, row[16];

	result_init(out, 1 + g->aggs);
	for (k = 0; k < g->keys; k++) {
		if (!group(g, k)[0])
			continue;
		row[0] = k;
		memcpy(row + 1, group(g, k), (size_t)g->aggs * sizeof(long));
		runtime_api.emit_row(out, row);
	}
	free(g->v);
}

static int fig3(const struct database *db, struct result *out)
{
	const struct table *l = &db->tables[T_LINEITEM];
	const int64_t *size = COL(db, T_PART, 1), *price = COL(db, T_PART, 2);
	struct groups g;
	size_t i;

	if (groups_init(&g, (long)db->tables[T_SUPPLIER].rows + 1, 3))
		return -2;
	for (i = 0; i < l->rows; i++) {
		long *a = group(&g, COL(db, T_LINEITEM, 2)[i]);
		int64_t p = COL(db, T_LINEITEM, 1)[i] - 1;

		a[0]++;
		a[1] += COL(db, T_LINEITEM, 4)[i] / COL(db, T_LINEITEM, 3)[i];
		a[2] += price[p] / size[p];
	}
	groups_emit(&g, out);
	return 0;
}

static int twojoins(const struct database *db, struct result *out)
{
	const struct table *l = &db->tables[T_LINEITEM];
	const int64_t *custkey = COL(db, T_ORDERS, 1), *nation = COL(db, T_CUSTOMER, 1);
	struct groups g;
	size_t i;

	if (groups_init(&g, 25, 2))
		return -2;
	for (i = 0; i < l->rows; i++) {
		int64_t o = COL(db, T_LINEITEM, 0)[i] - 1;
		long *a = group(&g, nation[custkey[o] - 1]);

		a[0]++;
		a[1] += COL(db, T_LINEITEM, 4)[i] * (100 - COL(db, T_LINEITEM, 5)[i]) / 100;
	}
	groups_emit(&g, out);
	return 0;
}

static int q1(const struct database *db, struct result *out)
{
	const struct table *l = &db->tables[T_LINEITEM];
	struct groups g;
	size_t i;

	if (groups_init(&g, 6, 5))
		return -2;
	for (i = 0; i < l->rows; i++) {
		int64_t price = COL(db, T_LINEITEM, 4)[i];
		int64_t disc = price * (100 - COL(db, T_LINEITEM, 5)[i]) / 100;
		long *a;

		if (COL(db, T_LINEITEM, 7)[i] > DB_LAST_DAY - 90)
			continue;
		a = group(&g, COL(db, T_LINEITEM, 8)[i] * 2 + COL(db, T_LINEITEM, 9)[i]);
		a[0]++;
		a[1] += COL(db, T_LINEITEM, 3)[i];
		a[2] += price;
		a[3] += disc;
		a[4] += disc * (100 + COL(db, T_LINEITEM, 6)[i]) / 100;
	}
	groups_emit(&g, out);
	return 0;
}

static int sfja(const struct database *db, struct result *out)
{
	const struct table *l = &db->tables[T_LINEITEM];
	const int64_t *size = COL(db, T_PART, 1), *brand = COL(db, T_PART, 3);
	struct groups g;
	size_t i;

	if (groups_init(&g, 26, 2))
		return -2;
	for (i = 0; i < l->rows; i++) {
		int64_t p = COL(db, T_LINEITEM, 1)[i] - 1;
		long *a;

		if (COL(db, T_LINEITEM, 3)[i] >= 45 || COL(db, T_LINEITEM, 5)[i] >= 9)
			continue;
		a = group(&g, brand[p]);
		a[0]++;
		a[1] += COL(db, T_LINEITEM, 4)[i] / size[p];
	}
	groups_emit(&g, out);
	return 0;
}

static int terms(const struct database *db, struct result *out)
{
	const struct table *l = &db->tables[T_LINEITEM];
	struct groups g;
	size_t i;

	if (groups_init(&g, 3, 2))
		return -2;
	for (i = 0; i < l->rows; i++) {
		int64_t per_unit = COL(db, T_LINEITEM, 4)[i] / COL(db, T_LINEITEM, 3)[i] /
				   (COL(db, T_LINEITEM, 6)[i] + 1) / (COL(db, T_LINEITEM, 5)[i] + 1);
		long *a;

		if (per_unit <= 2000 || COL(db, T_LINEITEM, 5)[i] >= 1)
			continue;
		a = group(&g, COL(db, T_LINEITEM, 8)[i]);
		a[0]++;
		a[1] += COL(db, T_LINEITEM, 3)[i];
	}
	groups_emit(&g, out);
	return 0;
}

struct keyed {
	long key, price;
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Too many keys for arrays indexed by key: sorted rows, then runs of a key. */
static int groups(const struct database *db, struct result *out)
{
	const struct table *l = &db->tables[T_LINEITEM];
	struct keyed *k = malloc((l->rows ? l->rows : 1) * sizeof(*k));
	size_t i, j;
	long row[3];

	if (!k)
		return -2;
	for (i = 0; i < l->rows; i++)
		k[i] = (struct keyed){ COL(db, T_LINEITEM, 0)[i] * 100 + COL(db, T_LINEITEM, 3)[i],
				       COL(db, T_LINEITEM, 4)[i] };
	qsort(k, l->rows, sizeof(*k), by_key);
	result_init(out, 3);
	for (i = 0; i < l->rows; i = j) {
		row[0] = k[i].key;
		row[1] = 0;
		row[2] = 0;
		for (j = i; j < l->rows && k[j].key == k[i].key; j++) {
			row[1]++;
			row[2] += k[j].price;
		}
		runtime_api.emit_row(out, row);
	}
	free(k);
	return 0;
}

int reference_evaluate(const char *query, const struct database *db, struct result *out)
{
	static const struct {
		const char *name;
		int (*fn)(const struct database *, struct result *);
	} refs[] = {
		{ "fig3", fig3 }, { "twojoins", twojoins }, { "q1", q1 }, { "sfja", sfja },
		{ "groups", groups }, { "terms", terms },
	};
	size_t i;

	for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)
		if (!strcmp(refs[i].name, query))
			return refs[i].fn(db, out);
	return -1;
}

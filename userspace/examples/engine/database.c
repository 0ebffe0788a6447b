// SPDX-License-Identifier: GPL-2.0-only
/*
 * TPC-H-like data at a scale factor: the row counts and value ranges of
 * the TPC-H generator (part 200k, supplier 10k, customer 150k, orders 1.5M,
 * lineitem 1..7 per order, all times the scale), from a fixed seed, so
 * every run at a scale sees the same data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "database.h"

/* splitmix64: fast, and good enough for data that only has to look random. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int64_t uniform(uint64_t *state, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(next_random(state) % (uint64_t)(hi - lo + 1));
}

static int table_init(struct table *t, const char *name, size_t rows,
		      const char *const *columns)
{
	t->name = name;
	t->rows = rows;
	t->nr_columns = 0;
	for (; *columns; columns++) {
		struct column *c = &t->columns[t->nr_columns++];

		c->name = *columns;
		c->values = malloc((rows ? rows : 1) * sizeof(*c->values));
		if (!c->values) {
			fprintf(stderr, "tailor-engine: out of memory for %s.%s (%zu rows)\n",
				name, *columns, rows);
			return -1;
		}
	}
	return 0;
}

static size_t scaled(double base, double scale, size_t min)
{
	double n = base * scale;

	return n < (double)min ? min : (size_t)n;
}

/* TPC-H's retail price formula, in cents. */
static int64_t retail_price(int64_t partkey)
{
	return 90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000);
}

static int generate_lineitems(struct database *db, uint64_t *rnd)
{
	const struct table *orders = &db->tables[T_ORDERS];
	struct table *l = &db->tables[T_LINEITEM];
	size_t parts = db->tables[T_PART].rows;
	size_t suppliers = db->tables[T_SUPPLIER].rows;
	uint8_t *per_order;
	size_t o, n = 0;
	static const char *const cols[] = {
		"l_orderkey", "l_partkey", "l_suppkey", "l_quantity",
		"l_extendedprice", "l_discount", "l_tax", "l_shipdate",
		"l_returnflag", "l_linestatus", NULL };

	/* Count first, so the columns are allocated once. */
	per_order = malloc(orders->rows);
	if (!per_order) {
		fprintf(stderr, "tailor-engine: out of memory for lineitem\n");
		return -1;
	}
	for (o = 0; o < orders->rows; o++) {
		per_order[o] = (uint8_t)uniform(rnd, 1, 7);
		n += per_order[o];
	}
	if (table_init(l, "lineitem", n, cols)) {
		free(per_order);
		return -1;
	}
	n = 0;
	for (o = 0; o < orders->rows; o++) {
		int64_t orderdate = orders->columns[2].values[o];
		int k;

		for (k = 0; k < per_order[o]; k++, n++) {
			int64_t partkey = uniform(rnd, 1, (int64_t)parts);
			int64_t quantity = uniform(rnd, 1, 50);
			int64_t shipdate = orderdate + uniform(rnd, 1, 121);

			l->columns[0].values[n] = orders->columns[0].values[o];
			l->columns[1].values[n] = partkey;
			l->columns[2].values[n] = uniform(rnd, 1, (int64_t)suppliers);
			l->columns[3].values[n] = quantity;
			l->columns[4].values[n] = quantity * retail_price(partkey);
			l->columns[5].values[n] = uniform(rnd, 0, 10);
			l->columns[6].values[n] = uniform(rnd, 0, 8);
			l->columns[7].values[n] = shipdate;
			/* TPC-H: R or A if shipped long enough ago, else N. */
			l->columns[8].values[n] = shipdate <= 2000 ? uniform(rnd, 0, 1) : 2;
			l->columns[9].values[n] = shipdate <= 2100 ? 0 : 1;
		}
	}
	free(per_order);
	return 0;
}

int database_generate(struct database *db, double scale)
{
	static const char *const part_cols[] = {
		"p_partkey", "p_size", "p_retailprice", "p_brand", NULL };
	static const char *const supplier_cols[] = {
		"s_suppkey", "s_nationkey", "s_acctbal", NULL };
	static const char *const customer_cols[] = {
		"c_custkey", "c_nationkey", "c_mktsegment", NULL };
	static const char *const orders_cols[] = {
		"o_orderkey", "o_custkey", "o_orderdate", "o_orderpriority", NULL };
	uint64_t rnd = 0x7461696c6f72ull;	/* "tailor" */
	struct table *t;
	size_t i;

	memset(db, 0, sizeof(*db));
	db->scale = scale;

	t = &db->tables[T_PART];
	if (table_init(t, "part", scaled(200000, scale, 100), part_cols))
		goto fail;
	for (i = 0; i < t->rows; i++) {
		t->columns[0].values[i] = (int64_t)i + 1;
		t->columns[1].values[i] = uniform(&rnd, 1, 50);
		t->columns[2].values[i] = retail_price((int64_t)i + 1);
		t->columns[3].values[i] = uniform(&rnd, 1, 25);
	}

	t = &db->tables[T_SUPPLIER];
	if (table_init(t, "supplier", scaled(10000, scale, 10), supplier_cols))
		goto fail;
	for (i = 0; i < t->rows; i++) {
		t->columns[0].values[i] = (int64_t)i + 1;
		t->columns[1].values[i] = uniform(&rnd, 0, 24);
		t->columns[2].values[i] = uniform(&rnd, -99999, 999999);
	}

	t = &db->tables[T_CUSTOMER];
	if (table_init(t, "customer", scaled(150000, scale, 100), customer_cols))
		goto fail;
	for (i = 0; i < t->rows; i++) {
		t->columns[0].values[i] = (int64_t)i + 1;
		t->columns[1].values[i] = uniform(&rnd, 0, 24);
		t->columns[2].values[i] = uniform(&rnd, 0, 4);
	}

	t = &db->tables[T_ORDERS];
	if (table_init(t, "orders", scaled(1500000, scale, 1000), orders_cols))
		goto fail;
	for (i = 0; i < t->rows; i++) {
		t->columns[0].values[i] = (int64_t)i + 1;
		t->columns[1].values[i] = uniform(&rnd, 1, (int64_t)db->tables[T_CUSTOMER].rows);
		t->columns[2].values[i] = uniform(&rnd, 0, DB_LAST_DAY - 121);
		t->columns[3].values[i] = uniform(&rnd, 1, 5);
	}

	if (generate_lineitems(db, &rnd))
		goto fail;
	return 0;
fail:
	database_free(db);
	return -1;
}

void database_free(struct database *db)
{
	int t, c;

	for (t = 0; t < NR_TABLES; t++)
		for (c = 0; c < db->tables[t].nr_columns; c++)
			free(db->tables[t].columns[c].values);
	memset(db, 0, sizeof(*db));
}

const struct table *database_table(const struct database *db, const char *name)
{
	int t;

	for (t = 0; t < NR_TABLES; t++)
		if (db->tables[t].name && !strcmp(db->tables[t].name, name))
			return &db->tables[t];
	return NULL;
}

const struct column *database_column(const struct database *db, const char *name,
				     const struct table **table)
{
	int t, c;

	for (t = 0; t < NR_TABLES; t++)
		for (c = 0; c < db->tables[t].nr_columns; c++)
			if (!strcmp(db->tables[t].columns[c].name, name)) {
				if (table)
					*table = &db->tables[t];
				return &db->tables[t].columns[c];
			}
	return NULL;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * In-memory tables of TPC-H-like data, column-wise, every value a 64-bit
 * integer (prices in cents, dates in days since 1992-01-01).  Keys are
 * dense (1..rows), which the reference evaluation relies on.
 */
#ifndef ENGINE_DATABASE_H
#define ENGINE_DATABASE_H

#include <stddef.h>
#include <stdint.h>

#define TABLE_MAX_COLUMNS	10

struct column {
	const char *name;
	int64_t *values;
};

struct table {
	const char *name;
	size_t rows;
	int nr_columns;
	struct column columns[TABLE_MAX_COLUMNS];
};

enum { T_PART, T_SUPPLIER, T_CUSTOMER, T_ORDERS, T_LINEITEM, NR_TABLES };

struct database {
	double scale;
	struct table tables[NR_TABLES];
};

/* Deterministic for a scale; 0, or -1 with a message on stderr. */
int database_generate(struct database *db, double scale);
void database_free(struct database *db);

const struct table *database_table(const struct database *db, const char *name);
/* The column and its table, by the column's unique name (l_quantity). */
const struct column *database_column(const struct database *db, const char *name,
				     const struct table **table);

/* Last day of the data: shipdates run up to here. */
#define DB_LAST_DAY	2526

#endif /* ENGINE_DATABASE_H */

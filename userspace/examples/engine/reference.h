/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Each query's result computed a second, independent way: plain loops over
 * the columns, joins by direct indexing (the keys are dense), groups in
 * arrays.  No plan, no generated code, no hash table is shared with the
 * engine's path, so a bug in either shows as a difference.
 */
#ifndef ENGINE_REFERENCE_H
#define ENGINE_REFERENCE_H

#include "database.h"
#include "runtime.h"

/* Fills @out (key order); 0, -1 if the query has no reference, -2 out of memory. */
int reference_evaluate(const char *query, const struct database *db, struct result *out);

#endif /* ENGINE_REFERENCE_H */

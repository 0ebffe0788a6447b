// SPDX-License-Identifier: GPL-2.0-only
/* Rows and source lines of an attributor, each made once (attr/attr.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attr/attr.h"
#include "util/grow.h"
#include "util/path.h"

int rows_add(struct row_table *t, enum attr_row_kind kind, int level,
	     const char *name, const char *object, uint32_t *row)
{
	struct attr_row *r;

	if (t->nr >= UINT32_MAX - 1 ||
	    array_grow((void **)&t->rows, &t->cap, t->nr + 1, sizeof(*r)))
		return -ENOMEM;
	r = &t->rows[t->nr];
	*r = (struct attr_row){ .kind = kind, .level = level, .parent = -1, .dict = -1 };
	r->name = strdup(name);
	r->object = object ? strdup(object) : NULL;
	if (!r->name || (object && !r->object)) {
		free(r->name);
		free(r->object);
		return -ENOMEM;
	}
	*row = (uint32_t)t->nr++;
	return 0;
}

int rows_named(struct row_table *t, enum attr_row_kind kind, int level,
	       const char *name, const char *object, uint32_t *row)
{
	bool by_object = (kind == ROW_FUNCTION || kind == ROW_LINE) && object;
	char small[512], *key = small;
	size_t len;
	int ret = 0;

	/*
	 * The kind keeps a function and a line of the same spelling apart;
	 * the object, a function (or line) of each object: a static helper()
	 * in two libraries is two rows, as perf's dso,sym sorting has it.
	 * Whole, however long: a C++ name may run to kilobytes, and two
	 * cut alike would be one row.
	 */
	len = strlen(name) + (by_object ? strlen(object) + 1 : 0) + 16;
	if (len > sizeof(small) && !(key = malloc(len)))
		return -ENOMEM;
	if (by_object)
		snprintf(key, len, "%d %s\t%s", (int)kind, name, object);
	else
		snprintf(key, len, "%d %s", (int)kind, name);
	if (!str_map_get(&t->by_name, key, row))
		ret = (rows_add(t, kind, level, name, object, row) ||
		       str_map_put(&t->by_name, key, *row)) ? -ENOMEM : 0;
	if (key != small)
		free(key);
	return ret;
}

void attr_object_name(const char *path, char *name, size_t len)
{
	const char *base = path_base(path);
	size_t n = strlen(base);

	/* A pseudo-file is bracketed already: [vdso], not [[vdso]]. */
	if (n >= 2 && base[0] == '[' && base[n - 1] == ']')
		snprintf(name, len, "%s", base);
	else
		snprintf(name, len, "[%s]", base);
}

int rows_object(struct row_table *t, const char *path, uint32_t *row)
{
	char name[512];

	attr_object_name(path, name, sizeof(name));
	return rows_named(t, ROW_OBJECT, -1, name, path, row);
}

void rows_free(struct row_table *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		free(t->rows[i].name);
		free(t->rows[i].object);
	}
	free(t->rows);
	str_map_free(&t->by_name);
}

int lines_intern(struct line_table *t, const char *file, unsigned int line,
		 const char *key, uint32_t *idx)
{
	struct attr_line *l;

	if (str_map_get(&t->by_key, key, idx))
		return 0;
	if (array_grow((void **)&t->lines, &t->cap, t->nr + 1, sizeof(*l)))
		return -ENOMEM;
	l = &t->lines[t->nr];
	l->file = strdup(file);
	l->line = line;
	if (!l->file || str_map_put(&t->by_key, key, (uint32_t)t->nr)) {
		free(l->file);
		return -ENOMEM;
	}
	*idx = (uint32_t)t->nr++;
	return 0;
}

void lines_free(struct line_table *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		free(t->lines[i].file);
	free(t->lines);
	str_map_free(&t->by_key);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The perf map reader (jit_sources.h): "START SIZE NAME" a line, START
 * and SIZE in hex with or without 0x, the name the rest of the line
 * (V8's contain spaces).  A JIT appends lines as it compiles; a map read
 * while it writes may end in the middle of one, and a map from a foreign
 * tool may hold anything: such lines are skipped and counted, never
 * guessed at.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "symbols/jit_sources.h"

/* A hex number at *@p before @end, at most 16 digits; false if none. */
static bool hex_at(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	*v = 0;
	for (; s < end; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	*p = s;
	return digits > 0;
}

static bool parse_line(const char *p, const char *end, struct perfmap_entry *e)
{
	if (!hex_at(&p, end, &e->start) || p == end || *p != ' ')
		return false;
	while (p < end && *p == ' ')
		p++;
	if (!hex_at(&p, end, &e->size) || p == end || *p != ' ')
		return false;
	while (p < end && *p == ' ')
		p++;
	while (end > p && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	if (p == end || !e->size || e->start + e->size < e->start)
		return false;
	e->name = p;
	e->name_len = (size_t)(end - p);
	return memchr(p, 0, e->name_len) == NULL;
}

int perfmap_read(const char *buf, size_t len,
		 int (*fn)(void *ctx, const struct perfmap_entry *e), void *ctx,
		 size_t *bad, char *err, size_t errlen)
{
	const char *p = buf, *end;
	size_t lineno = 0;

	*bad = 0;
	if (errlen)
		err[0] = 0;
	if (!len)
		return 0;	/* an empty file may come as NULL */
	end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct perfmap_entry e;

		lineno++;
		if (eol > p && parse_line(p, eol, &e)) {
			int ret = fn(ctx, &e);

			if (ret)
				return ret;
		} else if (eol > p) {
			if (!*bad)
				snprintf(err, errlen, "line %zu (offset %zu): %s", lineno,
					 (size_t)(p - buf), nl ? "not START SIZE NAME in hex" :
					 "cut short (the JIT still writing?)");
			++*bad;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/* The --times line's fields and lists, for its readers: see times.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "times.h"

const char *times_field(const char *line, const char *key, char *buf, size_t size)
{
	size_t n = strlen(key);
	const char *at = line;

	for (;;) {
		at = strstr(at, key);
		if (!at)
			return NULL;
		/* A whole key: "rows=" must not match inside "op_rows=". */
		if ((at == line || at[-1] == ' ') && at[n] == '=')
			break;
		at += n;
	}
	at += n + 1;
	n = strcspn(at, " \n");
	if (n >= size)
		return NULL;
	memcpy(buf, at, n);
	buf[n] = 0;
	return buf;
}

int times_list(const char *text, char (*values)[TIMES_VALUE_MAX], int max)
{
	const char *s = text;
	int n = 0;

	while (*s) {
		char *end;
		size_t len;
		long k;

		if (*s < '1' || *s > '9')
			return -1;
		errno = 0;
		k = strtol(s, &end, 10);
		if (errno || k != n + 1 || k > max || *end != ':')
			return -1;
		s = end + 1;
		len = strcspn(s, ",");
		if (!len || len >= TIMES_VALUE_MAX)
			return -1;
		memcpy(values[n], s, len);
		values[n++][len] = 0;
		s += len;
		/* A comma must be followed by another entry. */
		if (*s == ',' && !*++s)
			return -1;
	}
	return n;
}

int times_number(const char *text, unsigned long long max, unsigned long long *value)
{
	char *end;

	/* strtoull() would take a sign or leading spaces. */
	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	*value = strtoull(text, &end, 10);
	return errno || *end || *value > max ? -1 : 0;
}

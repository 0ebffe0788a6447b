/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small strict JSON reader (RFC 8259) for the engine's inputs from
 * other programs, such as tailor report's profiles (--feedback).  The
 * whole document becomes a tree of values in one allocation; a bad
 * document is refused with the byte offset of the problem.
 */
#ifndef ENGINE_JSON_H
#define ENGINE_JSON_H

#include <stdbool.h>
#include <stddef.h>

enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY,
		 JSON_OBJECT };

struct json_value {
	enum json_type type;
	double number;			/* JSON_NUMBER */
	char *string;			/* JSON_STRING, NUL-terminated (\u0000 is refused) */
	size_t len;			/* JSON_STRING: bytes; ARRAY/OBJECT: members */
	struct json_value *first;	/* ARRAY/OBJECT: the first member */
	struct json_value *next;	/* the next member of the parent */
	char *key;			/* a member of an object: its name */
};

struct json_doc {
	struct json_value *root;
	void *pool;			/* every value and string */
};

/*
 * Parse @len bytes of @text.  0, or -1 with "offset N: what" in @err.
 * Nesting deeper than 64 is refused.
 */
int json_parse(struct json_doc *doc, const char *text, size_t len, char *err, size_t errlen);
void json_free(struct json_doc *doc);

/* The member @key of object @obj (the last if repeated), or NULL. */
const struct json_value *json_get(const struct json_value *obj, const char *key);

#endif /* ENGINE_JSON_H */

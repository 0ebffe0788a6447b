// SPDX-License-Identifier: GPL-2.0-only
/* A small strict JSON reader (see json.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

#define JSON_MAX_DEPTH	64

/* Values and strings come from chunks freed together. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct parser {
	const char *text;
	size_t len, pos;
	struct chunk *chunks;
	char *err;
	size_t errlen;
	int failed;
};

__attribute__((format(printf, 2, 3)))
static void fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->failed)
		return;
	p->failed = 1;
	n = snprintf(p->err, p->errlen, "offset %zu: ", p->pos);
	if (n < 0 || (size_t)n >= p->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void *alloc(struct parser *p, size_t size)
{
	struct chunk *c = p->chunks;
	void *ret;

	size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!c || c->size - c->used < size) {
		size_t bytes = size > 65536 ? size : 65536;

		c = malloc(sizeof(*c) + bytes);
		if (!c) {
			fail(p, "out of memory");
			return NULL;
		}
		c->size = bytes;
		c->used = 0;
		c->next = p->chunks;
		p->chunks = c;
	}
	ret = (char *)c->data + c->used;
	c->used += size;
	return ret;
}

static void skip_space(struct parser *p)
{
	while (p->pos < p->len && (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
				   p->text[p->pos] == '\n' || p->text[p->pos] == '\r'))
		p->pos++;
}

static int hex4(struct parser *p, unsigned int *out)
{
	unsigned int v = 0;
	int i;

	if (p->len - p->pos < 4) {
		fail(p, "a \\u escape needs 4 hex digits");
		return -1;
	}
	for (i = 0; i < 4; i++) {
		char c = p->text[p->pos++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned int)(c - 'A' + 10);
		else {
			p->pos--;
			fail(p, "byte 0x%02x is not a hex digit in a \\u escape", (unsigned char)c);
			return -1;
		}
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *out, unsigned int cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At the opening quote; the decoded string (never longer than its source). */
static char *string(struct parser *p, size_t *out_len)
{
	size_t start = ++p->pos, n = 0;
	char *s;

	while (p->pos < p->len && p->text[p->pos] != '"')
		p->pos += p->text[p->pos] == '\\' ? 2 : 1;
	if (p->pos >= p->len) {
		p->pos = start - 1;
		fail(p, "a string that does not end");
		return NULL;
	}
	s = alloc(p, p->pos - start + 1);
	if (!s)
		return NULL;
	p->pos = start;
	while (p->text[p->pos] != '"') {
		unsigned char c = (unsigned char)p->text[p->pos];
		unsigned int cp, low;

		if (c < 0x20) {
			fail(p, "control character 0x%02x in a string", c);
			return NULL;
		}
		if (c != '\\') {
			s[n++] = (char)c;
			p->pos++;
			continue;
		}
		p->pos++;
		switch (p->text[p->pos++]) {
		case '"': s[n++] = '"'; break;
		case '\\': s[n++] = '\\'; break;
		case '/': s[n++] = '/'; break;
		case 'b': s[n++] = '\b'; break;
		case 'f': s[n++] = '\f'; break;
		case 'n': s[n++] = '\n'; break;
		case 'r': s[n++] = '\r'; break;
		case 't': s[n++] = '\t'; break;
		case 'u':
			if (hex4(p, &cp))
				return NULL;
			if (cp >= 0xd800 && cp < 0xdc00) {
				/* A surrogate pair: \uD83D\uDE00 is one code point. */
				if (p->len - p->pos < 6 || p->text[p->pos] != '\\' ||
				    p->text[p->pos + 1] != 'u') {
					fail(p, "a high surrogate without its low half");
					return NULL;
				}
				p->pos += 2;
				if (hex4(p, &low))
					return NULL;
				if (low < 0xdc00 || low > 0xdfff) {
					fail(p, "a high surrogate without its low half");
					return NULL;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				fail(p, "a low surrogate alone");
				return NULL;
			} else if (!cp) {
				/* Names are C strings here: a NUL would cut one short. */
				fail(p, "\\u0000 in a string");
				return NULL;
			}
			/* 6 or 12 source bytes become at most 4. */
			n += put_utf8(s + n, cp);
			break;
		default:
			p->pos--;
			fail(p, "unknown escape: byte 0x%02x after a backslash",
			     (unsigned char)p->text[p->pos]);
			return NULL;
		}
		if (p->pos >= p->len) {
			fail(p, "a string that does not end");
			return NULL;
		}
	}
	p->pos++;
	s[n] = 0;
	*out_len = n;
	return s;
}

/* Past a run of digits; how many there were. */
static size_t skip_digits(struct parser *p)
{
	size_t start = p->pos;

	while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9')
		p->pos++;
	return p->pos - start;
}

static int number(struct parser *p, double *out)
{
	size_t start = p->pos;
	char buf[64], *end;

	if (p->pos < p->len && p->text[p->pos] == '-')
		p->pos++;
	/* RFC 8259: no leading zero before other digits. */
	if (p->pos < p->len && p->text[p->pos] == '0') {
		p->pos++;
	} else if (!skip_digits(p)) {
		fail(p, "expected a value");
		return -1;
	}
	if (p->pos < p->len && p->text[p->pos] == '.') {
		p->pos++;
		if (!skip_digits(p)) {
			fail(p, "a digit must follow the decimal point");
			return -1;
		}
	}
	if (p->pos < p->len && (p->text[p->pos] == 'e' || p->text[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->text[p->pos] == '+' || p->text[p->pos] == '-'))
			p->pos++;
		if (!skip_digits(p)) {
			fail(p, "a digit must follow the exponent");
			return -1;
		}
	}
	if (p->pos - start >= sizeof(buf)) {
		p->pos = start;
		fail(p, "a number of more than %zu characters", sizeof(buf) - 1);
		return -1;
	}
	memcpy(buf, p->text + start, p->pos - start);
	buf[p->pos - start] = 0;
	errno = 0;
	*out = strtod(buf, &end);
	if (errno == ERANGE && (*out > 1 || *out < -1)) {
		p->pos = start;
		fail(p, "number %s out of range", buf);
		return -1;
	}
	return 0;
}

static int literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->text + p->pos, word, n)) {
		fail(p, "expected a value");
		return -1;
	}
	p->pos += n;
	return 0;
}

static struct json_value *value(struct parser *p, int depth)
{
	struct json_value *v, **tail;
	char close;

	skip_space(p);
	if (p->pos >= p->len) {
		fail(p, "the document ends where a value should be");
		return NULL;
	}
	if (depth >= JSON_MAX_DEPTH) {
		fail(p, "nested deeper than %d", JSON_MAX_DEPTH);
		return NULL;
	}
	v = alloc(p, sizeof(*v));
	if (!v)
		return NULL;
	memset(v, 0, sizeof(*v));
	switch (p->text[p->pos]) {
	case '"':
		v->type = JSON_STRING;
		v->string = string(p, &v->len);
		return v->string ? v : NULL;
	case 'n':
		v->type = JSON_NULL;
		return literal(p, "null") ? NULL : v;
	case 't':
		v->type = JSON_TRUE;
		return literal(p, "true") ? NULL : v;
	case 'f':
		v->type = JSON_FALSE;
		return literal(p, "false") ? NULL : v;
	case '[':
	case '{':
		break;
	default:
		v->type = JSON_NUMBER;
		return number(p, &v->number) ? NULL : v;
	}
	v->type = p->text[p->pos] == '[' ? JSON_ARRAY : JSON_OBJECT;
	close = v->type == JSON_ARRAY ? ']' : '}';
	p->pos++;
	tail = &v->first;
	skip_space(p);
	if (p->pos < p->len && p->text[p->pos] == close) {
		p->pos++;
		return v;
	}
	for (;;) {
		struct json_value *m;
		char *key = NULL;
		size_t key_len;

		if (v->type == JSON_OBJECT) {
			skip_space(p);
			if (p->pos >= p->len || p->text[p->pos] != '"') {
				fail(p, "expected a member's name in quotes");
				return NULL;
			}
			key = string(p, &key_len);
			if (!key)
				return NULL;
			skip_space(p);
			if (p->pos >= p->len || p->text[p->pos] != ':') {
				fail(p, "expected ':' after a member's name");
				return NULL;
			}
			p->pos++;
		}
		m = value(p, depth + 1);
		if (!m)
			return NULL;
		m->key = key;
		*tail = m;
		tail = &m->next;
		v->len++;
		skip_space(p);
		if (p->pos < p->len && p->text[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->text[p->pos] == close) {
			p->pos++;
			return v;
		}
		fail(p, "expected ',' or '%c'", close);
		return NULL;
	}
}

static void free_chunks(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;

		free(c);
		c = next;
	}
}

int json_parse(struct json_doc *doc, const char *text, size_t len, char *err, size_t errlen)
{
	struct parser p = { .text = text, .len = len, .err = err, .errlen = errlen };

	memset(doc, 0, sizeof(*doc));
	doc->root = value(&p, 0);
	if (doc->root) {
		skip_space(&p);
		if (p.pos < p.len)
			fail(&p, "text after the document");
	}
	if (p.failed) {
		free_chunks(p.chunks);
		memset(doc, 0, sizeof(*doc));
		return -1;
	}
	doc->pool = p.chunks;
	return 0;
}

void json_free(struct json_doc *doc)
{
	free_chunks(doc->pool);
	memset(doc, 0, sizeof(*doc));
}

const struct json_value *json_get(const struct json_value *obj, const char *key)
{
	const struct json_value *m, *found = NULL;

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (m = obj->first; m; m = m->next)
		if (!strcmp(m->key, key))
			found = m;
	return found;
}

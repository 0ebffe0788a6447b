// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loads a Tagging Dictionary (docs/dictionary-format.md).  Dictionaries
 * come from other programs, possibly other languages, so every line is
 * checked and a bad one is reported with its line number; the result is
 * sorted once so that report lookups are binary searches.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tailor/dictionary_reader.h"

#define MAX_FIELDS	6
#define MAX_DICT_BYTES	(256u << 20)

struct parser {
	struct tdict *d;
	const char *name;
	unsigned int lineno;
	char *err;
	size_t errlen;
	size_t cap_components, cap_links, cap_shared;
	int cap_logs;
	int version;		/* of the first line */
};

static int perr(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int perr(struct parser *p, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->lineno);
	if (n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	void *a;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	a = realloc(*arr, c * size);
	if (!a)
		return -1;
	*arr = a;
	*cap = c;
	return 0;
}

static int parse_u64(struct parser *p, const char *s, const char *what,
		     uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return perr(p, "%s '%s' is not a number", what, s);
	*out = strtoull(s, &end, 10);
	if (errno || *end || *out < min || *out > max)
		return perr(p, "%s '%s' is out of range (%llu..%llu)", what, s,
			    (unsigned long long)min, (unsigned long long)max);
	return 0;
}

static int find_level(struct parser *p, const char *name, int min_level)
{
	int l = tdict_level(p->d, name);

	if (l < 0)
		return perr(p, "unknown level '%s' (declare it with a level line first)", name);
	if (l < min_level)
		return perr(p, "level '%s' cannot be used here", name);
	return l;
}

static int cmp_component(const void *a, const void *b)
{
	const struct tdict_component *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_link(const void *a, const void *b)
{
	const struct tdict_link *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (!x->level)
		return strcmp(x->key_line, y->key_line);
	return x->key_id < y->key_id ? -1 : x->key_id > y->key_id;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "file:line" with a line number >= 1 after the last colon. */
static int valid_file_line(const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end;
	unsigned long line;

	if (!colon || colon == s || !colon[1])
		return 0;
	line = strtoul(colon + 1, &end, 10);
	return !*end && line >= 1 && colon[1] >= '0' && colon[1] <= '9';
}

static int add_component(struct parser *p, char **f)
{
	struct tdict *d = p->d;
	struct tdict_component c = { .parent_level = -1 };

	c.level = find_level(p, f[1], 1);
	if (c.level < 0 || parse_u64(p, f[2], "component id", 1, (1ull << 63) - 1, &c.id))
		return -1;
	if (!*f[3])
		return perr(p, "component %s %s has no name", f[1], f[2]);
	c.name = f[3];
	/* Duplicates are caught after sorting (check_references()). */
	if (grow((void **)&d->components, &p->cap_components, d->nr_components, sizeof(c)))
		return perr(p, "out of memory");
	c.lineno = p->lineno;
	d->components[d->nr_components++] = c;
	return 0;
}

static int add_link(struct parser *p, char **f)
{
	struct tdict *d = p->d;
	struct tdict_link k = { .log = d->nr_logs - 1 };

	k.level = find_level(p, f[1], 0);
	if (k.level < 0)
		return -1;
	if (!k.level) {
		if (!valid_file_line(f[2]))
			return perr(p, "line key '%s' is not file:line", f[2]);
		k.key_line = f[2];
	} else if (parse_u64(p, f[2], "component id", 1, (1ull << 63) - 1, &k.key_id)) {
		return -1;
	}
	k.upper_level = find_level(p, f[3], 1);
	if (k.upper_level < 0 ||
	    parse_u64(p, f[4], "component id", 1, (1ull << 63) - 1, &k.upper_id))
		return -1;
	if (k.upper_level <= k.level)
		return perr(p, "link from level '%s' to '%s' does not go up", f[1], f[3]);
	if (grow((void **)&d->links, &p->cap_links, d->nr_links, sizeof(k)))
		return perr(p, "out of memory");
	k.lineno = p->lineno;
	d->links[d->nr_links++] = k;
	return 0;
}

/* module PATH BUILD-ID: code the dictionary describes (version 2). */
static int add_module(struct parser *p, char **f)
{
	struct tdict *d = p->d;
	size_t i, n = strlen(f[2]);
	void *a;

	if (p->version < 2)
		return perr(p, "'module' lines are format version 2's; the first line says 1");
	if (f[1][0] != '/')
		return perr(p, "module path '%s' is not absolute", f[1]);
	if (strcmp(f[2], "-")) {
		if (n < 2 || n > 80 || n % 2)
			return perr(p, "build-id '%s' is not 2 to 80 hex digits (or '-' for none)", f[2]);
		for (i = 0; i < n; i++)
			if (!strchr("0123456789abcdef", f[2][i]))
				return perr(p, "build-id '%s' is not lowercase hex (or '-' for none)",
					    f[2]);
	}
	for (i = 0; i < d->nr_modules; i++)
		if (!strcmp(d->modules[i].path, f[1]))
			return perr(p, "module '%s' named twice", f[1]);
	a = realloc(d->modules, (d->nr_modules + 1) * sizeof(*d->modules));
	if (!a)
		return perr(p, "out of memory");
	d->modules = a;
	d->modules[d->nr_modules++] = (struct tdict_module){
		.path = f[1], .build_id = strcmp(f[2], "-") ? f[2] : NULL, .lineno = p->lineno };
	return 0;
}

static int add_line(struct parser *p, char **f, int nf)
{
	struct tdict *d = p->d;
	static const struct {
		const char *kind;
		int fields;
	} kinds[] = {
		{ "level", 2 }, { "component", 4 }, { "parent", 5 }, { "log", 2 },
		{ "link", 5 }, { "shared", 2 }, { "tag", 4 }, { "tag-register", 2 },
		{ "tag-word", 4 }, { "module", 3 },
	};
	uint64_t v1, v2;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(f[0], kinds[i].kind))
			break;
	if (i == sizeof(kinds) / sizeof(kinds[0])) {
		if (!strncmp(f[0], "x-", 2))
			return 0;
		return perr(p, "unknown line kind '%s'", f[0]);
	}
	if (nf != kinds[i].fields)
		return perr(p, "'%s' takes %d TAB-separated fields, this line has %d",
			    f[0], kinds[i].fields - 1, nf - 1);

	if (!strcmp(f[0], "level")) {
		if (tdict_level(d, f[1]) >= 0)
			return perr(p, "level '%s' declared twice", f[1]);
		if (d->nr_levels == (int)(sizeof(d->levels) / sizeof(d->levels[0])))
			return perr(p, "too many levels");
		d->levels[d->nr_levels++] = f[1];
		return 0;
	}
	if (!strcmp(f[0], "component"))
		return add_component(p, f);
	if (!strcmp(f[0], "module"))
		return add_module(p, f);
	if (!strcmp(f[0], "link"))
		return add_link(p, f);
	if (!strcmp(f[0], "log")) {
		void *a = realloc(d->logs, (d->nr_logs + 1) * sizeof(*d->logs));

		if (!a)
			return perr(p, "out of memory");
		d->logs = a;
		d->logs[d->nr_logs++] = f[1];
		return 0;
	}
	if (!strcmp(f[0], "shared")) {
		if (!valid_file_line(f[1]))
			return perr(p, "shared location '%s' is not file:line", f[1]);
		if (grow((void **)&d->shared, &p->cap_shared, d->nr_shared, sizeof(char *)))
			return perr(p, "out of memory");
		d->shared[d->nr_shared++] = f[1];
		return 0;
	}
	if (!strcmp(f[0], "tag-register")) {
		if (strlen(f[1]) >= sizeof(d->tag_register))
			return perr(p, "register name '%s' too long", f[1]);
		strcpy(d->tag_register, f[1]);
		return 0;
	}
	if (!strcmp(f[0], "parent")) {
		struct tdict_component *c = NULL;
		int l = find_level(p, f[1], 1), pl;

		if (l < 0 || parse_u64(p, f[2], "component id", 1, (1ull << 63) - 1, &v1))
			return -1;
		pl = find_level(p, f[3], 1);
		if (pl < 0 || parse_u64(p, f[4], "component id", 1, (1ull << 63) - 1, &v2))
			return -1;
		for (i = 0; i < d->nr_components && !c; i++)
			if (d->components[i].level == l && d->components[i].id == v1)
				c = &d->components[i];
		if (!c)
			return perr(p, "parent of undeclared component %s %s", f[1], f[2]);
		c->parent_level = pl;
		c->parent_id = v2;
		return 0;
	}
	/* tag, tag-word */
	{
		struct tdict_tag t;
		int l = find_level(p, f[1], 1);

		if (l < 0 || parse_u64(p, f[2], "tag shift", 0, 63, &v1) ||
		    parse_u64(p, f[3], "tag bits", 1, 64, &v2))
			return -1;
		if (v1 + v2 > 64)
			return perr(p, "tag field %llu+%llu does not fit 64 bits",
				    (unsigned long long)v1, (unsigned long long)v2);
		if (d->nr_tags == (int)(sizeof(d->tags) / sizeof(d->tags[0])))
			return perr(p, "too many tag fields");
		t = (struct tdict_tag){ .level = l, .shift = v1, .bits = v2,
					.in_word = !strcmp(f[0], "tag-word") };
		d->tags[d->nr_tags++] = t;
		return 0;
	}
}

/* After sorting: duplicates, and links to components never declared. */
static int check_references(struct parser *p)
{
	struct tdict *d = p->d;
	size_t i;

	p->lineno = 0;
	for (i = 1; i < d->nr_components; i++)
		if (!cmp_component(&d->components[i - 1], &d->components[i])) {
			p->lineno = d->components[i].lineno;
			return perr(p, "component %s %llu declared twice",
				    d->levels[d->components[i].level],
				    (unsigned long long)d->components[i].id);
		}
	for (i = 0; i < d->nr_links; i++) {
		const struct tdict_link *k = &d->links[i];

		p->lineno = k->lineno;
		if (!tdict_component(d, k->upper_level, k->upper_id))
			return perr(p, "a link names %s %llu, which is not declared",
				    d->levels[k->upper_level],
				    (unsigned long long)k->upper_id);
		if (k->level && !tdict_component(d, k->level, k->key_id))
			return perr(p, "a link names %s %llu, which is not declared",
				    d->levels[k->level], (unsigned long long)k->key_id);
	}
	return 0;
}

struct tdict *tdict_parse(const char *text, size_t len, const char *name,
			  char *err, size_t errlen)
{
	struct parser p = { .name = name, .err = err, .errlen = errlen };
	char *s, *line, *next;
	struct tdict *d;

	d = calloc(1, sizeof(*d));
	if (!d || !(d->arena = malloc(len + 1))) {
		free(d);
		snprintf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	memcpy(d->arena, text, len);
	d->arena[len] = 0;
	d->levels[0] = "line";
	d->nr_levels = 1;
	strcpy(d->tag_register, "r15");
	p.d = d;

	if (memchr(text, 0, len)) {
		p.lineno = 1;
		perr(&p, "a NUL byte: not a text dictionary");
		goto fail;
	}
	for (s = d->arena; *s; s = next) {
		char *f[MAX_FIELDS + 1];
		int nf = 0;

		p.lineno++;
		next = strchr(s, '\n');
		if (next) {
			*next++ = 0;
		} else {
			/*
			 * Every line ends with a newline: one without it was
			 * cut (a dictionary still being written, or copied
			 * short), and its last field may be a prefix.
			 */
			perr(&p, "the last line is cut short (no newline at its end): a dictionary still being written, or truncated");
			goto fail;
		}
		line = s;
		if (p.lineno == 1) {
			/* Version 2 adds module lines; a version 1 file reads as before. */
			if (!strcmp(line, "tailor-dictionary\t1") ||
			    !strcmp(line, "tailor-dictionary\t2")) {
				p.version = line[18] - '0';
				d->version = p.version;
				continue;
			}
			if (!strncmp(line, "tailor-dictionary\t", 18))
				perr(&p, "dictionary format %s is not a version this tailor reads (1 and 2)",
				     line + 18);
			else
				perr(&p, "not a tailor dictionary (the first line must be 'tailor-dictionary<TAB>2', or 1)");
			goto fail;
		}
		if (!*line || *line == '#')
			continue;
		while (nf <= MAX_FIELDS) {
			char *tab = strchr(line, '\t');

			f[nf++] = line;
			if (!tab)
				break;
			*tab = 0;
			line = tab + 1;
		}
		if (nf > MAX_FIELDS) {
			perr(&p, "too many fields");
			goto fail;
		}
		if (add_line(&p, f, nf))
			goto fail;
	}
	if (!p.lineno) {
		p.lineno = 1;
		perr(&p, "empty file, not a tailor dictionary");
		goto fail;
	}
	/* qsort() and bsearch() take no NULL array, even an empty one. */
	if (d->nr_components)
		qsort(d->components, d->nr_components, sizeof(*d->components),
		      cmp_component);
	if (d->nr_links)
		qsort(d->links, d->nr_links, sizeof(*d->links), cmp_link);
	if (d->nr_shared)
		qsort(d->shared, d->nr_shared, sizeof(*d->shared), cmp_str);
	if (check_references(&p))
		goto fail;
	return d;
fail:
	tdict_free(d);
	return NULL;
}

struct tdict *tdict_load(const char *path, char *err, size_t errlen)
{
	struct tdict *d = NULL;
	struct stat st;
	char *text;
	FILE *f;
	size_t n;

	f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) || st.st_size > MAX_DICT_BYTES) {
		snprintf(err, errlen, "%s: %s", path,
			 st.st_size > MAX_DICT_BYTES ? "larger than 256 MiB" : strerror(errno));
		fclose(f);
		return NULL;
	}
	text = malloc(st.st_size + 1);
	if (text) {
		n = fread(text, 1, st.st_size, f);
		d = tdict_parse(text, n, path, err, errlen);
		free(text);
	} else {
		snprintf(err, errlen, "%s: out of memory", path);
	}
	fclose(f);
	return d;
}

void tdict_free(struct tdict *d)
{
	if (!d)
		return;
	free(d->components);
	free(d->links);
	free(d->logs);
	free(d->shared);
	free(d->modules);
	free(d->arena);
	free(d);
}

int tdict_level(const struct tdict *d, const char *name)
{
	int i;

	for (i = 0; i < d->nr_levels; i++)
		if (!strcmp(d->levels[i], name))
			return i;
	return -1;
}

const struct tdict_component *tdict_component(const struct tdict *d,
					      int level, uint64_t id)
{
	struct tdict_component key = { .level = level, .id = id };

	if (!d->nr_components)
		return NULL;
	return bsearch(&key, d->components, d->nr_components,
		       sizeof(key), cmp_component);
}

/* The run of links equal to @key in the sorted array. */
static const struct tdict_link *link_run(const struct tdict *d,
					 const struct tdict_link *key, size_t *n)
{
	const struct tdict_link *hit, *first, *last, *end = d->links + d->nr_links;

	*n = 0;
	if (!d->nr_links)
		return NULL;
	hit = bsearch(key, d->links, d->nr_links, sizeof(*key), cmp_link);
	if (!hit)
		return NULL;
	for (first = hit; first > d->links && !cmp_link(first - 1, key); first--)
		;
	for (last = hit; last + 1 < end && !cmp_link(last + 1, key); last++)
		;
	*n = last - first + 1;
	return first;
}

const struct tdict_link *tdict_line_links(const struct tdict *d,
					  const char *file_line, size_t *n)
{
	struct tdict_link key = { .level = 0, .key_line = file_line };

	return link_run(d, &key, n);
}

const struct tdict_link *tdict_component_links(const struct tdict *d,
					       int level, uint64_t id,
					       size_t *n)
{
	struct tdict_link key = { .level = level, .key_id = id };

	if (level <= 0) {
		*n = 0;
		return NULL;
	}
	return link_run(d, &key, n);
}

int tdict_is_shared(const struct tdict *d, const char *file_line)
{
	return d->nr_shared && bsearch(&file_line, d->shared, d->nr_shared,
				       sizeof(char *), cmp_str) != NULL;
}

uint64_t tdict_tag_field(const struct tdict_tag *t, uint64_t value)
{
	return t->bits == 64 ? value >> t->shift :
	       (value >> t->shift) & ((1ull << t->bits) - 1);
}

uint64_t tdict_tag_component(const struct tdict *d, int level, uint64_t tag)
{
	int i;

	for (i = 0; i < d->nr_tags; i++) {
		const struct tdict_tag *t = &d->tags[i];

		if (t->level == level && !t->in_word)
			return tdict_tag_field(t, tag);
	}
	return 0;
}

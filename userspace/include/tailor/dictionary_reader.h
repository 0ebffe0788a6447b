/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading Tagging Dictionaries (docs/dictionary-format.md) for reports.
 * A loaded dictionary is immutable; lookups are binary searches over
 * arrays sorted at load time.
 */
#ifndef TAILOR_DICTIONARY_READER_H
#define TAILOR_DICTIONARY_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tdict_component {
	int level;
	uint64_t id;
	const char *name;
	int parent_level;	/* -1: none */
	uint64_t parent_id;
	unsigned int lineno;	/* where the file declares it */
};

struct tdict_link {
	int level;		/* 0: key_line is set, else key_id */
	uint64_t key_id;
	const char *key_line;	/* "file:line" */
	int upper_level;
	uint64_t upper_id;
	int log;		/* index into logs, -1 before any log line */
	unsigned int lineno;	/* where the file has it */
};

struct tdict_tag {
	int level;
	unsigned int shift;
	unsigned int bits;
	bool in_word;		/* a field of the tag word, else of the register */
};

/* Code the dictionary describes (version 2's module lines). */
struct tdict_module {
	const char *path;
	const char *build_id;	/* lowercase hex, NULL if the file has none */
	unsigned int lineno;
};

struct tdict {
	int version;		/* of the file's format: 1 or 2 */
	struct tdict_module *modules;	/* none in version 1 */
	size_t nr_modules;
	char *levels[16];	/* [0] = "line" */
	int nr_levels;
	struct tdict_component *components;	/* sorted by (level, id) */
	size_t nr_components;
	struct tdict_link *links;		/* sorted by (level, key) */
	size_t nr_links;
	char **logs;
	int nr_logs;
	char **shared;				/* sorted "file:line" */
	size_t nr_shared;
	struct tdict_tag tags[16];
	int nr_tags;
	char tag_register[16];
	char *arena;				/* the file's text; strings point in */
};

/* NULL on failure, with "PATH:LINE: problem" in @err. */
struct tdict *tdict_load(const char *path, char *err, size_t errlen);
struct tdict *tdict_parse(const char *text, size_t len, const char *name,
			  char *err, size_t errlen);
void tdict_free(struct tdict *d);

int tdict_level(const struct tdict *d, const char *name);	/* -1 if none */
const struct tdict_component *tdict_component(const struct tdict *d,
					      int level, uint64_t id);
/* The links of a source location, or of a component; count in *n. */
const struct tdict_link *tdict_line_links(const struct tdict *d,
					  const char *file_line, size_t *n);
const struct tdict_link *tdict_component_links(const struct tdict *d,
					       int level, uint64_t id,
					       size_t *n);
int tdict_is_shared(const struct tdict *d, const char *file_line);
/* The component of @level a tag register value names, or 0 if none. */
uint64_t tdict_tag_component(const struct tdict *d, int level, uint64_t tag);
/* The value of field @t in @value (the register's or the word's). */
uint64_t tdict_tag_field(const struct tdict_tag *t, uint64_t value);

#endif /* TAILOR_DICTIONARY_READER_H */

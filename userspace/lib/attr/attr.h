/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside the attributor (tailor/attribution.h), split by concern:
 *   intern.c      rows and source lines, each made once
 *   policy.c      what a site (a code address) and a tag come to at a level
 *   notes.c       why samples were attributed as they were: the counts
 *   attributor.c  sites, outcomes and their caches; the public API
 */
#ifndef TAILOR_LIB_ATTR_ATTR_H
#define TAILOR_LIB_ATTR_ATTR_H

#include <stdbool.h>
#include <stdint.h>
#include "tailor/attribution.h"
#include "tailor/dictionary_reader.h"
#include "tailor/events.h"
#include "tailor/symbols.h"
#include "util/hashmap.h"

#define ATTR_MAX_DICTS		64
#define ATTR_MAX_LEVELS		16
/* As many as tailor-engine's clients: a line of a plan run by each links to each run. */
#define ATTR_MAX_CANDIDATES	16

/* ---- intern.c ---- */

struct row_table {
	struct attr_row *rows;
	size_t nr, cap;
	struct str_map by_name;		/* named rows, by kind and name */
};

struct line_table {
	struct attr_line *lines;
	size_t nr, cap;
	struct str_map by_key;		/* "file:line" */
};

/* A new row; 0 and *@row, or -ENOMEM. */
int rows_add(struct row_table *t, enum attr_row_kind kind, int level,
	     const char *name, const char *object, uint32_t *row);
/* The row of @kind named @name, made on first use. */
int rows_named(struct row_table *t, enum attr_row_kind kind, int level,
	       const char *name, const char *object, uint32_t *row);
/* "[libc.so.6]": the bucket of samples in @path no level reached. */
int rows_object(struct row_table *t, const char *path, uint32_t *row);
void rows_free(struct row_table *t);
/* The line @key ("file:line") of @file, made on first use. */
int lines_intern(struct line_table *t, const char *file, unsigned int line,
		 const char *key, uint32_t *idx);
void lines_free(struct line_table *t);

/* ---- levels ---- */

enum level_kind { LEVEL_INSTRUCTION, LEVEL_LINE, LEVEL_FUNCTION, LEVEL_DICT };

struct attr_level {
	enum level_kind kind;
	char name[64];
	int dict_level[ATTR_MAX_DICTS];	/* -1: the dictionary lacks it */
	/* Rows of the level's components: row_base + index among them. */
	uint32_t row_base[ATTR_MAX_DICTS];
	const struct tdict_component *first[ATTR_MAX_DICTS];
};

/* How one level attributes the samples of a site, before their tag. */
struct site_level {
	uint32_t row;			/* the row, unless needs_tag */
	uint8_t note;
	bool needs_tag;
	bool tag_matters;		/* shared or generated: a tag naming nothing is news */
	uint8_t nr_cand;
	bool cand_overflow;		/* links name more than cand[] holds */
	uint32_t cand[ATTR_MAX_CANDIDATES];	/* the components its links name */
	uint32_t fallback;		/* the row when the tag decides nothing */
	uint8_t fallback_note;
};

/* ---- notes.c ---- */

struct nodebug_object {
	const char *object;
	uint64_t count;
	bool stripped;		/* no symbols either (sym_result.stripped) */
};

struct attr_notes {
	uint64_t count[NOTE_MAX];
	struct nodebug_object *nodebug;
	size_t nr_nodebug;
	uint64_t dict_hits[ATTR_MAX_DICTS];
};

/* The index of @object among the objects without debug info; -ENOMEM. */
int notes_nodebug_index(struct attr_notes *n, const char *object, bool stripped,
			uint32_t *idx);

/* ---- the attributor ---- */

/* A code address (or [kernel] entry) and what it is, at every level. */
struct site {
	uint32_t line;			/* or ATTR_NONE */
	/* The symbolizer's answer it is of: file (the symbolizer's) and ELF address, 0 if none. */
	const char *path;
	uint64_t address;
	uint32_t nodebug;		/* into notes.nodebug, or ATTR_NONE */
	/* No level needs the tag: every sample here has this outcome. */
	uint32_t fixed_outcome;		/* or ATTR_NONE */
	/* levels[] of this site: site_levels[site * nr_levels + level] */
};

/* A (site, tag) result: the main level's row and note, rows per stack level. */
struct outcome {
	uint32_t row;
	uint8_t note;
	uint32_t line;
	uint32_t site;			/* its user code's, or ATTR_NONE (kernel, [unknown]) */
	uint32_t nodebug;
	uint32_t query;			/* row at the query level, or ATTR_NONE */
	/* A kernel outcome's entry site's function row, or ATTR_NONE. */
	uint32_t entered_from;
	/* stack rows: outcome_rows[outcome * nr_stack + i] */
};

struct attributor {
	struct tdict *const *dicts;
	const char *const *labels;
	int nr_dicts;
	bool kernel_apart;
	uint32_t tag_pid;		/* attr_options.tag_pid */
	/*
	 * The modules the dictionaries name (version 2): a process's tags
	 * count only where it maps one.  Per pid: (pid, 0) -> whether it
	 * does; (pid, 1) -> the mappings' generation of that answer.
	 */
	const char **module_paths;
	size_t nr_module_paths;
	struct pair_map module_pids;
	/* levels[0] is the main level; stack[i] indexes levels[]. */
	struct attr_level levels[ATTR_MAX_LEVELS];
	int nr_levels;
	int stack[ATTR_MAX_LEVELS];
	int nr_stack;
	int query_level;		/* index into levels[], or -1 */
	int function_level;		/* index into levels[], or -1 */
	/* attr_select_queries(): per row, whether its samples are kept. */
	bool *query_selected;
	size_t nr_query_selected;	/* rows it covers; later rows are not */
	struct str_map dict_files[ATTR_MAX_DICTS];	/* files named by links */

	struct row_table rows;
	struct line_table lines;
	uint32_t kernel_row, unknown_row, unresolved_row;

	struct site *sites;
	size_t nr_sites, cap_sites;
	struct site_level *site_levels;
	size_t cap_site_levels;
	uint32_t *site_of_sym;		/* symbolizer result id -> site + 1 */
	size_t cap_site_of_sym;
	uint32_t kernel_site;		/* a kernel sample with no user site */

	struct outcome *outcomes;
	size_t nr_outcomes, cap_outcomes;
	uint32_t *outcome_rows;
	size_t cap_outcome_rows;
	struct pair_map outcome_of;	/* (site key, tag) -> outcome */
	struct pair_map kernel_outcome_of; /* (entry site key, tag) -> outcome */
	/* With kernel names: (entry site key, kernel function + 1) -> that key. */
	struct pair_map kernel_key_of;
	uint64_t nr_kernel_keys;
	struct pair_map kernel_named_outcome_of;	/* (that key, tag) -> outcome */
	const struct kallsyms *kallsyms;
	uint64_t kernel_delta;
	/*
	 * A site's outcome also depends on the thread's tag word: (site,
	 * word) -> k, and the site key is k << 32 | site.  0: no word.
	 */
	struct pair_map word_key_of;
	uint32_t nr_word_keys;
	uint32_t unknown_outcome;

	struct attr_notes notes;
};

static inline struct site_level *site_level(const struct attributor *a,
					    uint32_t site, int level)
{
	return &a->site_levels[(size_t)site * a->nr_levels + level];
}

/* ---- policy.c ---- */

/* What @lv makes of a symbolized site, before any tag. */
int policy_site(struct attributor *a, const struct attr_level *lv,
		const struct sym_result *r, const char *file_line,
		struct site_level *out);
/* A site's row at @lv under @s's tag, and why. */
int policy_tag(struct attributor *a, const struct attr_level *lv,
	       const struct site_level *sl, const struct tev_sample *s,
	       uint32_t *row, uint8_t *note);
/*
 * A kernel sample's row at @lv: by the site it entered from (@entry,
 * NULL if unknown), else by its user tag; [kernel] when unsure.
 */
int policy_kernel(struct attributor *a, const struct attr_level *lv,
		  const struct site_level *entry, const struct site_level *untagged,
		  const struct tev_sample *s, uint32_t *row, uint8_t *note);

#endif /* TAILOR_LIB_ATTR_ATTR_H */

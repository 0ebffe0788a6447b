/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Attribution (Tailored Profiling, seed 000, section 4): a sample's IP is
 * symbolized to a source line, the line's dictionary links are followed
 * upward to the level asked, and samples in shared code (or on lines no
 * link names) are attributed by the tag register.  What no link and no
 * tag reaches goes to a named bucket -- the kernel, the object it ran in
 * ("[libc.so.6]"), or "[unknown]" -- never to a guess.
 *
 * One attributor answers for a main level (the report's rows) and,
 * optionally, a stack of levels (query > pipeline > operator > function
 * > line) for flame graphs.  Every distinct code address, and every
 * (address, tag), is resolved once: a sample costs a mapping search and
 * a lookup or two.
 */
#ifndef TAILOR_ATTRIBUTION_H
#define TAILOR_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tdict;
struct symbolizer;
struct tev_sample;

enum attr_row_kind {
	ROW_COMPONENT,		/* a component of a dictionary level */
	ROW_FUNCTION,		/* the built-in levels */
	ROW_LINE,
	ROW_INSTRUCTION,
	ROW_KERNEL,		/* [kernel] */
	ROW_OBJECT,		/* [object]: its code, not reached by the level */
	ROW_UNKNOWN,		/* [unknown]: no mapping covers the IP */
	ROW_UNRESOLVED,		/* [tag without link] */
};

struct attr_row {
	enum attr_row_kind kind;
	char *name;
	int level;		/* the level it belongs to (0: main); -1: buckets */
	int dict;		/* ROW_COMPONENT: its dictionary */
	uint64_t id;		/* ROW_COMPONENT: its id */
	int parent;		/* row of the plan parent, or -1 */
	char *object;		/* the mapped file, when one is known */
};

/* A source line samples fell on (for the annotated source view). */
struct attr_line {
	char *file;
	unsigned int line;
};

#define ATTR_NONE	UINT32_MAX

/* What one sample comes to. */
struct attr_result {
	uint32_t row;		/* at the main level */
	uint32_t line;		/* index into the lines, or ATTR_NONE */
	/*
	 * The outcome: samples with equal outcomes have equal rows at every
	 * level (attr_outcome_rows()); dense from 0.
	 */
	uint32_t outcome;
	/* The row at the level "query" (attr_options.queries), else ATTR_NONE. */
	uint32_t query;
	/*
	 * Its query is not among those attr_select_queries() chose: the
	 * sample counts nowhere, not even in the notes.
	 */
	bool excluded;
};

/* Why samples could not be attributed, or how they were; counts. */
enum attr_note {
	NOTE_NONE,
	NOTE_NO_MAPPING,	/* a user IP outside every recorded mapping */
	NOTE_NO_FILE,		/* the mapped file is gone */
	NOTE_NO_DEBUGINFO,	/* no line information (DWARF) for the IP */
	NOTE_NO_SYMBOL,		/* no symbol covers the IP (function level) */
	NOTE_UNLINKED_LINE,	/* a line of a dictionary's file with no link */
	NOTE_TAG_NO_LINK,	/* a tag value that names no component */
	NOTE_UNTAGGED,		/* shared code, tag register 0 */
	NOTE_AMBIGUOUS,		/* linked to several components, tag silent */
	NOTE_BY_TAG,		/* attributed by the tag register */
	NOTE_KERNEL_BY_TAG,	/* kernel sample, by the user tag at entry */
	NOTE_KERNEL_BY_ENTRY,	/* kernel sample, by the linked code it entered from */
	NOTE_MAX
};

struct attr_options {
	struct tdict *const *dicts;
	const char *const *labels;	/* name the dictionaries in rows */
	int nr_dicts;
	/* "instruction", "line", "function" or a level the dictionaries declare */
	const char *level;
	/* Levels of a stack, root first; none: no stacks. */
	const char *const *stack;
	int nr_stack;
	/*
	 * Keep every kernel sample in [kernel].  Otherwise, at a dictionary
	 * level, a kernel sample goes to the component linked to the user
	 * code the thread entered the kernel from (TEV_HAS_ENTRY_IP), else to
	 * the one its user tag names (TEV_USER_TAG): kernel work on its
	 * behalf, such as page faults in its hash table.
	 */
	bool kernel_apart;
	/*
	 * Trust tags (register and word) only in this process's samples; 0:
	 * in every process's.  A recording of a command that forked others
	 * (session_info.target_pid) has the children's samples too, whose r15
	 * holds that program's own data.
	 */
	uint32_t tag_pid;
	/*
	 * Also attribute each sample to a component of the level "query",
	 * when a dictionary declares it: one execution of a query (a client's
	 * run of a cached plan is a query of its own, told apart by the tag
	 * word).  It costs a level's work per site; reports that group,
	 * filter or label by query ask for it.
	 */
	bool queries;
	/*
	 * Kernel function names (--kallsyms): at the function level a kernel
	 * sample no component took is named by its function, as perf names
	 * it.  @kernel_delta: the profile's kernel address minus the file's
	 * (KASLR: _text where it was recorded, less _text in the file).
	 */
	const struct kallsyms *kallsyms;
	uint64_t kernel_delta;
};

struct attributor;

/* NULL and a message in @err if a level is unknown. */
struct attributor *attr_new(const struct attr_options *o, char *err, size_t errlen);
void attr_free(struct attributor *a);
/* 0, or -ENOMEM. */
int attr_sample(struct attributor *a, struct symbolizer *sym,
		const struct tev_sample *s, struct attr_result *out);

size_t attr_nr_rows(const struct attributor *a);
const struct attr_row *attr_row(const struct attributor *a, size_t i);
size_t attr_nr_lines(const struct attributor *a);
const struct attr_line *attr_line(const struct attributor *a, size_t i);
/* True for rows a level reached (components, functions, lines ...). */
bool attr_row_attributed(const struct attr_row *r);
bool attr_level_is_dict(const struct attributor *a);
const char *attr_level_name(const struct attributor *a);

/* The stack levels, root first. */
int attr_nr_stack_levels(const struct attributor *a);
const char *attr_stack_level_name(const struct attributor *a, int i);
size_t attr_nr_outcomes(const struct attributor *a);
/* An outcome's row at each stack level (attr_nr_stack_levels() of them). */
const uint32_t *attr_outcome_rows(const struct attributor *a, uint32_t outcome);
/*
 * An outcome's frames for a flame graph, root first: the stack levels'
 * rows that were attributed, a name repeated on the next level once; in
 * front, when no dictionary level was reached, the bucket ([kernel],
 * [libc.so.6]).  Returns the count (at most @max).
 */
int attr_outcome_frames(const struct attributor *a, uint32_t outcome,
			uint32_t *frames, int max);
/*
 * A kernel sample's outcome: the function row of the user code that
 * entered the kernel (a syscall, a page fault), where the sample carries
 * the entry IP and a function level was asked for; else ATTR_NONE.
 */
/*
 * Where a sample's callers (perf record -g) go among @frames (from
 * attr_outcome_frames()): before the first frame of code -- a function,
 * line or instruction, or the [kernel] or [object] bucket -- below the
 * dictionary's components; @n if there is none.
 */
int attr_code_frame(const struct attributor *a, const uint32_t *frames, int n);
/* The bucket name of code in @path no level reached: [libc.so.6], [vdso]. */
void attr_object_name(const char *path, char *name, size_t len);
/* An outcome's row at the report's level. */
uint32_t attr_outcome_row(const struct attributor *a, uint32_t outcome);
/*
 * The code an outcome is of -- the symbolizer's answer its site was made
 * from -- for exporters that ask the symbolizer more about it than the
 * levels keep (pprof: the functions inlined there, the object's build-id).
 */
struct attr_site {
	const char *path;	/* the mapped file; the symbolizer's, valid until sym_free() */
	uint64_t address;	/* the ELF virtual address in it; 0 if none was found */
	uint32_t line;		/* its source line: into the lines (attr_line()), or ATTR_NONE */
};
/* False for outcomes of no user code: kernel samples, [unknown]. */
bool attr_outcome_site(const struct attributor *a, uint32_t outcome, struct attr_site *out);
uint32_t attr_outcome_entered_from(const struct attributor *a, uint32_t outcome);

/* ---- queries (attr_options.queries) ---- */

#define ATTR_QUERY_LEVEL	"query"

/* Whether samples get a query: asked for, and a dictionary declares the level. */
/*
 * The sample's tag register is a tag: a dictionary declares tags, and the
 * sample is of the process they describe.  Elsewhere r15 is whatever the
 * program keeps there: no key for stacks, no label.
 */
bool attr_tag_counts(const struct attributor *a, const struct tev_sample *s);
/* The kernel's symbols it was given (attr_options.kallsyms, and its delta), or NULL. */
const struct kallsyms *attr_kernel_symbols(const struct attributor *a, uint64_t *delta);
bool attr_has_queries(const struct attributor *a);
/* An outcome's row at the query level, or ATTR_NONE. */
uint32_t attr_outcome_query(const struct attributor *a, uint32_t outcome);
/*
 * Keep only the samples whose query is one of @sel, each a component's
 * name (as reports show it, or without its dictionary's label) or its
 * numeric id; a selector names every component it matches.  0, or
 * -EINVAL with a message in @err: no dictionary declares the level (or
 * queries were not asked for), or a selector names no component (the
 * message lists some that exist).  Call before the first sample.
 */
int attr_select_queries(struct attributor *a, const char *const *sel, int n,
			char *err, size_t errlen);
/* Whether the selection keeps @query's samples (all, without one). */
bool attr_query_selected(const struct attributor *a, uint32_t query);
/*
 * Whether the dictionary's links lead from component row @row up to
 * component row @upper (an operator to the query execution it belongs
 * to); false for other rows or rows of different dictionaries.
 */
bool attr_row_reaches(const struct attributor *a, uint32_t row, uint32_t upper);

/* Samples counted per note so far (at the main level). */
uint64_t attr_note_count(const struct attributor *a, enum attr_note n);
const char *attr_note_text(enum attr_note n);
/* Objects whose samples had no debug info, with counts. */
size_t attr_nr_nodebug(const struct attributor *a);
const char *attr_nodebug(const struct attributor *a, size_t i, uint64_t *count,
			 bool *stripped);
/* Samples a dictionary's links or tags attributed. */
uint64_t attr_dict_hits(const struct attributor *a, int dict);

#endif /* TAILOR_ATTRIBUTION_H */

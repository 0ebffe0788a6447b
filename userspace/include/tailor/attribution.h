/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Attribution (Tailored Profiling, seed 000, section 4): a sample's IP is
 * symbolized to a source line, the line's dictionary links are followed
 * upward to the level asked, and samples in shared code (or on lines no
 * link names) are attributed by the tag register.  What no link and no
 * tag reaches goes to a named bucket -- the kernel, the object it ran in
 * ("[libc.so.6]"), or "[unknown]" -- never to a guess.
 *
 * Every distinct (code address) and (location, tag) is resolved once and
 * cached, so a sample costs a mapping search and two hash lookups.
 */
#ifndef TAILOR_ATTRIBUTION_H
#define TAILOR_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tdict;
struct symbolizer;
struct prof_sample;

enum attr_row_kind {
	ROW_COMPONENT,		/* a component of a dictionary level */
	ROW_FUNCTION,		/* the built-in levels */
	ROW_LINE,
	ROW_INSTRUCTION,
	ROW_KERNEL,		/* [kernel] */
	ROW_OBJECT,		/* [object]: its code, not reached by the level */
	ROW_UNKNOWN,		/* [unknown]: no mapping covers the IP */
	ROW_UNRESOLVED,		/* [tag without link], [untagged shared code] */
};

struct attr_row {
	enum attr_row_kind kind;
	char *name;
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

#define ATTR_NO_LINE	UINT32_MAX

struct attr_result {
	uint32_t row;
	uint32_t line;		/* index into the lines, or ATTR_NO_LINE */
};

/* Why samples could not be attributed, or how they were; counts. */
enum attr_note {
	NOTE_NONE,
	NOTE_NO_MAPPING,	/* a user IP outside every recorded mapping */
	NOTE_NO_FILE,		/* the mapped file is gone */
	NOTE_NO_DEBUGINFO,	/* no line information (DWARF) for the IP */
	NOTE_UNLINKED_LINE,	/* a line of a dictionary's file with no link */
	NOTE_TAG_NO_LINK,	/* a tag value that names no component */
	NOTE_UNTAGGED,		/* shared code, tag register 0 */
	NOTE_AMBIGUOUS,		/* linked to several components, tag silent */
	NOTE_BY_TAG,		/* attributed by the tag register */
	NOTE_KERNEL_BY_TAG,	/* kernel sample, by the user tag at entry */
	NOTE_KERNEL_BY_ENTRY,	/* kernel sample, by the linked code it entered from */
	NOTE_MAX
};

struct attributor;

/*
 * @level: "instruction", "line", "function" or a level the dictionaries
 * declare.  @labels name the dictionaries in reports.  NULL and a message
 * in @err if the level is unknown.
 */
struct attributor *attr_new(struct tdict *const *dicts,
			    const char *const *labels, int nr_dicts,
			    const char *level, char *err, size_t errlen);
void attr_free(struct attributor *a);
/*
 * Kernel samples at a dictionary level go to the component linked to the
 * user code the thread entered the kernel from (PROF_HAS_ENTRY_IP), else
 * to the one their user tag names (PROF_USER_TAG): kernel work on its
 * behalf, such as page faults in its hash table.  On by default.
 */
void attr_set_kernel_by_entry(struct attributor *a, bool on);
int attr_sample(struct attributor *a, struct symbolizer *sym,
		const struct prof_sample *s, struct attr_result *out);

size_t attr_nr_rows(const struct attributor *a);
const struct attr_row *attr_row(const struct attributor *a, size_t i);
size_t attr_nr_lines(const struct attributor *a);
const struct attr_line *attr_line(const struct attributor *a, size_t i);
/* Samples counted per note so far. */
uint64_t attr_note_count(const struct attributor *a, enum attr_note n);
const char *attr_note_text(enum attr_note n);
/* Objects whose samples had no debug info, with counts. */
size_t attr_nr_nodebug(const struct attributor *a);
const char *attr_nodebug(const struct attributor *a, size_t i, uint64_t *count);
/* Samples a dictionary's links or tags attributed. */
uint64_t attr_dict_hits(const struct attributor *a, int dict);
/* True for rows the level reached (components, functions, lines ...). */
bool attr_row_attributed(const struct attr_row *r);
bool attr_level_is_dict(const struct attributor *a);
const char *attr_level_name(const struct attributor *a);

#endif /* TAILOR_ATTRIBUTION_H */

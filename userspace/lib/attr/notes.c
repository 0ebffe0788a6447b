// SPDX-License-Identifier: GPL-2.0-only
/*
 * Why samples were attributed as they were: every reason a sample did
 * not reach the level, or reached it by the tag, is counted, so a report
 * can say how much of itself to trust (attr/attr.h).
 */
#include <errno.h>
#include <stdlib.h>
#include "attr/attr.h"

static const char *const note_texts[NOTE_MAX] = {
	[NOTE_NO_MAPPING] = "outside every recorded mapping",
	[NOTE_NO_FILE] = "in a mapped file that cannot be opened",
	[NOTE_NO_DEBUGINFO] = "in code without line information (no DWARF)",
	[NOTE_NO_SYMBOL] = "in code no symbol names (a stripped object, or code between functions)",
	[NOTE_UNLINKED_LINE] = "on lines of a dictionary's files that it does not link (does the dictionary match the binary?)",
	[NOTE_TAG_NO_LINK] = "carry a tag that names no component",
	[NOTE_UNTAGGED] = "in shared code with no tag set",
	[NOTE_AMBIGUOUS] = "on lines linked to several components, the tag not deciding (first link taken)",
	[NOTE_BY_TAG] = "attributed by the tag register (shared code)",
	[NOTE_KERNEL_BY_TAG] = "in the kernel, attributed by the tag the thread entered it with (--kernel-apart: keep them [kernel])",
	[NOTE_KERNEL_BY_ENTRY] = "in the kernel, attributed by the linked code the thread entered it from (--kernel-apart: keep them [kernel])",
};

const char *attr_note_text(enum attr_note n)
{
	return n < NOTE_MAX && note_texts[n] ? note_texts[n] : "";
}

int notes_nodebug_index(struct attr_notes *n, const char *object, bool stripped,
			uint32_t *idx)
{
	struct nodebug_object *nd;
	size_t i;

	/* Paths are the symbolizer's: equal objects, equal pointers. */
	for (i = 0; i < n->nr_nodebug; i++) {
		if (n->nodebug[i].object == object) {
			*idx = (uint32_t)i;
			return 0;
		}
	}
	nd = realloc(n->nodebug, (i + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	n->nodebug = nd;
	nd[i] = (struct nodebug_object){ object, 0, stripped };
	n->nr_nodebug++;
	*idx = (uint32_t)i;
	return 0;
}

uint64_t attr_note_count(const struct attributor *a, enum attr_note n)
{
	return n < NOTE_MAX ? a->notes.count[n] : 0;
}

size_t attr_nr_nodebug(const struct attributor *a)
{
	return a->notes.nr_nodebug;
}

const char *attr_nodebug(const struct attributor *a, size_t i, uint64_t *count,
			 bool *stripped)
{
	*count = a->notes.nodebug[i].count;
	*stripped = a->notes.nodebug[i].stripped;
	return a->notes.nodebug[i].object;
}

uint64_t attr_dict_hits(const struct attributor *a, int dict)
{
	return dict >= 0 && dict < a->nr_dicts ? a->notes.dict_hits[dict] : 0;
}

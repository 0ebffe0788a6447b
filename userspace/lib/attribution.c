// SPDX-License-Identifier: GPL-2.0-only
/* Samples to rows of a report level (tailor/attribution.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "hashmap.h"
#include "tailor/attribution.h"
#include "tailor/dictionary_reader.h"
#include "tailor/profile.h"
#include "tailor/symbols.h"

#define MAX_DICTS	64
#define MAX_CANDIDATES	4
#define NEEDS_TAG	UINT32_MAX
#define KERNEL_START	0xffff800000000000ull

enum level_kind { LEVEL_INSTRUCTION, LEVEL_LINE, LEVEL_FUNCTION, LEVEL_DICT };

/* What one code address resolves to, before its tag is looked at. */
struct loc {
	uint32_t row;		/* or NEEDS_TAG */
	uint32_t line;
	uint8_t note;
	uint8_t tag_matters;	/* shared or generated: a bad tag is news */
	uint8_t nr_cand;
	uint32_t fallback;	/* the row when the tag decides nothing */
	uint8_t fallback_note;
	uint32_t cand[MAX_CANDIDATES];
	uint32_t nodebug;	/* index into nodebug, or UINT32_MAX */
};

struct nodebug_object {
	const char *object;
	uint64_t count;
};

struct attributor {
	struct tdict *const *dicts;
	const char *const *labels;
	int nr_dicts;
	enum level_kind kind;
	char level[64];
	int dict_level[MAX_DICTS];		/* -1: the dictionary lacks it */
	uint32_t row_base[MAX_DICTS];
	const struct tdict_component *first[MAX_DICTS];
	struct str_map dict_files[MAX_DICTS];	/* files named by links */
	uint64_t dict_hits[MAX_DICTS];

	struct attr_row *rows;
	size_t nr_rows, cap_rows;
	struct str_map row_names;		/* on-demand rows by name */
	struct attr_line *lines;
	size_t nr_lines, cap_lines;
	struct str_map line_keys;
	struct loc *locs;
	size_t nr_locs, cap_locs;
	struct pair_map loc_cache;		/* (path, address) -> loc */
	struct pair_map tag_cache;		/* (loc, tag) -> note<<28 | row */
	struct nodebug_object *nodebug;
	size_t nr_nodebug;
	uint64_t notes[NOTE_MAX];
	uint32_t kernel_row, unknown_row;
	uint32_t kernel_loc;			/* kernel samples' tag lookups */
	bool kernel_by_entry;
};

static const char *const note_texts[NOTE_MAX] = {
	[NOTE_NO_MAPPING] = "outside every recorded mapping",
	[NOTE_NO_FILE] = "in a mapped file that cannot be opened",
	[NOTE_NO_DEBUGINFO] = "in code without line information (no DWARF)",
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

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static uint32_t add_row(struct attributor *a, enum attr_row_kind kind,
			const char *name, const char *object)
{
	struct attr_row *r;

	if (array_grow((void **)&a->rows, &a->cap_rows, a->nr_rows + 1, sizeof(*r)))
		return NEEDS_TAG;
	r = &a->rows[a->nr_rows];
	*r = (struct attr_row){ .kind = kind, .parent = -1, .dict = -1 };
	r->name = strdup(name);
	r->object = object ? strdup(object) : NULL;
	if (!r->name || (object && !r->object)) {
		free(r->name);
		free(r->object);
		return NEEDS_TAG;
	}
	return (uint32_t)a->nr_rows++;
}

/* The row named @name, made on first use. */
static uint32_t named_row(struct attributor *a, enum attr_row_kind kind,
			  const char *name, const char *object)
{
	uint32_t row;

	if (str_map_get(&a->row_names, name, &row))
		return row;
	row = add_row(a, kind, name, object);
	if (row != NEEDS_TAG && str_map_put(&a->row_names, name, row))
		return NEEDS_TAG;
	return row;
}

static uint32_t object_row(struct attributor *a, const char *path)
{
	char name[512];

	snprintf(name, sizeof(name), "[%s]", basename_of(path));
	return named_row(a, ROW_OBJECT, name, path);
}

static uint32_t line_index(struct attributor *a, const char *file,
			   unsigned int line, const char *key)
{
	struct attr_line *l;
	uint32_t idx;

	if (str_map_get(&a->line_keys, key, &idx))
		return idx;
	if (array_grow((void **)&a->lines, &a->cap_lines, a->nr_lines + 1, sizeof(*l)))
		return ATTR_NO_LINE;
	l = &a->lines[a->nr_lines];
	l->file = strdup(file);
	l->line = line;
	if (!l->file || str_map_put(&a->line_keys, key, (uint32_t)a->nr_lines)) {
		free(l->file);
		return ATTR_NO_LINE;
	}
	return (uint32_t)a->nr_lines++;
}

/* The component of @target a component of @level leads up to, or NULL. */
static const struct tdict_component *climb(const struct tdict *d, int level,
					   uint64_t id, int target, int depth)
{
	const struct tdict_link *links;
	size_t i, n;

	if (level == target)
		return tdict_component(d, level, id);
	if (level > target || depth > 16)
		return NULL;
	links = tdict_component_links(d, level, id, &n);
	for (i = 0; i < n; i++) {
		const struct tdict_component *c;

		if (links[i].upper_level > target)
			continue;
		c = climb(d, links[i].upper_level, links[i].upper_id, target,
			  depth + 1);
		if (c)
			return c;
	}
	return NULL;
}

/* Whether links lead from component @id of @level up to @to_id of @to_level. */
static bool reaches(const struct tdict *d, int level, uint64_t id, int to_level,
		    uint64_t to_id, int depth)
{
	const struct tdict_link *links;
	size_t i, n;

	if (level == to_level)
		return id == to_id;
	if (level > to_level || depth > 16)
		return false;
	links = tdict_component_links(d, level, id, &n);
	for (i = 0; i < n; i++)
		if (reaches(d, links[i].upper_level, links[i].upper_id, to_level,
			    to_id, depth + 1))
			return true;
	return false;
}

static uint32_t component_row(const struct attributor *a, int di,
			      const struct tdict_component *c)
{
	return a->row_base[di] + (uint32_t)(c - a->first[di]);
}

static void add_candidate(struct loc *l, uint32_t row)
{
	uint8_t i;

	for (i = 0; i < l->nr_cand; i++)
		if (l->cand[i] == row)
			return;
	if (l->nr_cand < MAX_CANDIDATES)
		l->cand[l->nr_cand++] = row;
}

static bool file_known(const struct attributor *a, int di, const char *file)
{
	uint32_t dummy;

	return str_map_get(&a->dict_files[di], file, &dummy);
}

/* Dictionary levels: links first; what they do not settle waits for a tag. */
static void resolve_dict(struct attributor *a, const struct sym_result *r,
			 const char *file_line, struct loc *l)
{
	bool shared = false, known = false;
	int di;

	l->fallback = object_row(a, r->path);
	l->fallback_note = NOTE_NONE;
	if (!file_line)
		l->fallback_note = r->status == SYM_NO_FILE ? NOTE_NO_FILE :
				   NOTE_NO_DEBUGINFO;
	for (di = 0; file_line && di < a->nr_dicts; di++) {
		const struct tdict *d = a->dicts[di];
		const struct tdict_link *links;
		size_t i, n;

		if (a->dict_level[di] < 0)
			continue;
		if (tdict_is_shared(d, file_line)) {
			shared = true;
			continue;
		}
		links = tdict_line_links(d, file_line, &n);
		for (i = 0; i < n; i++) {
			const struct tdict_component *c;

			c = climb(d, links[i].upper_level, links[i].upper_id,
				  a->dict_level[di], 0);
			if (c)
				add_candidate(l, component_row(a, di, c));
		}
		if (!n && file_known(a, di, r->file))
			known = true;
	}
	if (l->nr_cand == 1) {
		l->row = l->cand[0];
		return;
	}
	l->row = NEEDS_TAG;
	l->tag_matters = shared || known || l->nr_cand > 1;
	if (l->nr_cand > 1) {
		l->fallback = l->cand[0];
		l->fallback_note = NOTE_AMBIGUOUS;
	} else if (shared) {
		l->fallback_note = NOTE_UNTAGGED;
	} else if (known) {
		l->fallback_note = NOTE_UNLINKED_LINE;
	}
}

static uint32_t new_loc(struct attributor *a, const struct sym_result *r)
{
	char key[4200], name[4300];
	const char *file_line = NULL;
	struct loc *l;
	uint32_t idx;

	if (array_grow((void **)&a->locs, &a->cap_locs, a->nr_locs + 1, sizeof(*l)))
		return NEEDS_TAG;
	idx = (uint32_t)a->nr_locs;
	l = &a->locs[idx];
	*l = (struct loc){ .row = NEEDS_TAG, .line = ATTR_NO_LINE,
			   .nodebug = UINT32_MAX };
	if (r->file && r->line) {
		snprintf(key, sizeof(key), "%s:%u", r->file, r->line);
		file_line = key;
		l->line = line_index(a, r->file, r->line, key);
	}
	switch (a->kind) {
	case LEVEL_INSTRUCTION:
		snprintf(name, sizeof(name), "%s+0x%" PRIx64 "%s%s",
			 basename_of(r->path), r->address,
			 r->function ? " " : "", r->function ? r->function : "");
		l->row = named_row(a, ROW_INSTRUCTION, name, r->path);
		break;
	case LEVEL_LINE:
		l->row = file_line ? named_row(a, ROW_LINE, file_line, r->path) :
			 object_row(a, r->path);
		l->note = file_line ? NOTE_NONE : NOTE_NO_DEBUGINFO;
		break;
	case LEVEL_FUNCTION:
		l->row = r->function ? named_row(a, ROW_FUNCTION, r->function, r->path) :
			 object_row(a, r->path);
		l->note = r->function ? NOTE_NONE : r->status == SYM_NO_FILE ?
			  NOTE_NO_FILE : NOTE_NO_DEBUGINFO;
		break;
	case LEVEL_DICT:
		resolve_dict(a, r, file_line, l);
		break;
	}
	if (l->note == NOTE_NO_DEBUGINFO ||
	    (l->row == NEEDS_TAG && l->fallback_note == NOTE_NO_DEBUGINFO)) {
		size_t i;

		for (i = 0; i < a->nr_nodebug; i++)
			if (a->nodebug[i].object == r->path)
				break;
		if (i == a->nr_nodebug) {
			struct nodebug_object *nd;

			nd = realloc(a->nodebug, (i + 1) * sizeof(*nd));
			if (nd) {
				a->nodebug = nd;
				nd[i] = (struct nodebug_object){ r->path, 0 };
				a->nr_nodebug++;
			}
		}
		if (i < a->nr_nodebug)
			l->nodebug = (uint32_t)i;
	}
	if ((a->kind != LEVEL_DICT && l->row == NEEDS_TAG) ||
	    (l->row == NEEDS_TAG && l->fallback == NEEDS_TAG) ||
	    pair_map_put(&a->loc_cache, (uintptr_t)r->path, r->address, idx))
		return NEEDS_TAG;
	a->nr_locs++;
	return idx;
}

/*
 * The component of the asked level that a tag's component of @level
 * names: up the links when the tag is below, and when it is above (an
 * operator tag, a pipeline report) the component of the level whose links
 * lead up to it -- *@ambiguous if there are several (a join's build and
 * probe pipelines).
 */
static const struct tdict_component *tag_component(const struct attributor *a,
						   int di, int level,
						   uint64_t id, bool *ambiguous)
{
	const struct tdict *d = a->dicts[di];
	int target = a->dict_level[di];
	const struct tdict_component *c, *found = NULL;

	*ambiguous = false;
	if (level <= target)
		return climb(d, level, id, target, 0);
	if (!tdict_component(d, level, id))
		return NULL;
	for (c = a->first[di]; c < d->components + d->nr_components &&
	     c->level == target; c++) {
		if (!reaches(d, target, c->id, level, id, 0))
			continue;
		if (found) {
			*ambiguous = true;
			break;
		}
		found = c;
	}
	return found;
}

/* A location's row for a tag; note in the top 4 bits. */
static uint32_t resolve_tag(struct attributor *a, const struct loc *l,
			    const struct prof_sample *s)
{
	bool nonzero = false, ambiguous;
	uint8_t i;
	int di, t;

	for (di = 0; (s->flags & PROF_HAS_TAG) && di < a->nr_dicts; di++) {
		const struct tdict *d = a->dicts[di];

		if (a->dict_level[di] < 0)
			continue;
		for (t = 0; t < d->nr_tags; t++) {
			uint64_t id = tdict_tag_component(d, d->tags[t].level, s->tag);
			const struct tdict_component *c;
			uint32_t row;

			if (!id)
				continue;
			nonzero = true;
			c = tag_component(a, di, d->tags[t].level, id, &ambiguous);
			if (!c)
				continue;
			row = component_row(a, di, c);
			if (ambiguous && !l->nr_cand)
				return (uint32_t)NOTE_AMBIGUOUS << 28 | row;
			if (!l->nr_cand)
				return (uint32_t)NOTE_BY_TAG << 28 | row;
			for (i = 0; i < l->nr_cand; i++)
				if (l->cand[i] == row)
					return (uint32_t)NOTE_BY_TAG << 28 | row;
		}
	}
	if (nonzero && l->tag_matters && l->nr_cand <= 1)
		return (uint32_t)NOTE_TAG_NO_LINK << 28 |
		       named_row(a, ROW_UNRESOLVED, "[tag without link]", NULL);
	return (uint32_t)l->fallback_note << 28 | l->fallback;
}

void attr_set_kernel_by_entry(struct attributor *a, bool on)
{
	a->kernel_by_entry = on;
}

/* The row (note in the top 4 bits) of location @idx under @s's tag. */
static int tag_row(struct attributor *a, uint32_t idx, const struct prof_sample *s,
		   uint32_t *v)
{
	uint64_t tag = (s->flags & PROF_HAS_TAG) ? s->tag : 0;

	if (pair_map_get(&a->tag_cache, idx, tag, v))
		return 0;
	*v = resolve_tag(a, &a->locs[idx], s);
	if ((*v & 0x0fffffff) == 0x0fffffff || pair_map_put(&a->tag_cache, idx, tag, *v))
		return -ENOMEM;
	return 0;
}

/* *@idx: the location of @ip in @pid at @time; 1 if no mapping covers it. */
static int find_loc(struct attributor *a, struct symbolizer *sym, uint32_t pid,
		    uint64_t ip, uint64_t time, uint32_t *idx)
{
	struct sym_result r;

	sym_lookup(sym, pid, ip, time, &r);
	if (r.status == SYM_NO_MAPPING || !r.path)
		return 1;
	if (!pair_map_get(&a->loc_cache, (uintptr_t)r.path, r.address, idx)) {
		*idx = new_loc(a, &r);
		if (*idx == NEEDS_TAG)
			return -ENOMEM;
	}
	return 0;
}

/*
 * At a dictionary level, a kernel sample goes where a user sample at the
 * IP the thread entered the kernel from would go: by the link of that
 * code (generated code runs untagged), else by the user tag (shared code,
 * or a line linked to several components, among them).  Without an entry
 * IP, the tag alone decides.  Anything less certain -- no component, or
 * an ambiguous one -- keeps it [kernel]: kernel time is neither libc's
 * nor a guess.
 */
static int attr_kernel(struct attributor *a, struct symbolizer *sym,
		       const struct prof_sample *s, struct attr_result *out)
{
	uint32_t idx, v, row, note;
	int ret;

	out->row = a->kernel_row;
	if (a->kind != LEVEL_DICT || !a->kernel_by_entry)
		return 0;
	ret = s->flags & PROF_HAS_ENTRY_IP ?
	      find_loc(a, sym, s->pid, s->entry_ip, s->time, &idx) : 1;
	if (ret < 0)
		return ret;
	if (!ret && a->locs[idx].row != NEEDS_TAG) {
		row = a->locs[idx].row;
		note = NOTE_KERNEL_BY_ENTRY;
	} else {
		/* Shared code, a line linked several times, or no entry IP. */
		if ((s->flags & (PROF_HAS_TAG | PROF_USER_TAG)) !=
		    (PROF_HAS_TAG | PROF_USER_TAG) || !s->tag)
			return 0;
		if (tag_row(a, ret ? a->kernel_loc : idx, s, &v))
			return -ENOMEM;
		if ((v >> 28) != NOTE_BY_TAG)
			return 0;
		row = v & 0x0fffffff;
		note = NOTE_KERNEL_BY_TAG;
	}
	if (a->rows[row].kind == ROW_COMPONENT) {
		out->row = row;
		a->notes[note]++;
		a->dict_hits[a->rows[row].dict]++;
	}
	return 0;
}

int attr_sample(struct attributor *a, struct symbolizer *sym,
		const struct prof_sample *s, struct attr_result *out)
{
	const struct loc *l;
	uint32_t idx, v, note;
	int ret;

	out->line = ATTR_NO_LINE;
	if ((s->flags & PROF_KERNEL) || s->ip >= KERNEL_START)
		return attr_kernel(a, sym, s, out);
	ret = find_loc(a, sym, s->pid, s->ip, s->time, &idx);
	if (ret < 0)
		return ret;
	if (ret) {
		out->row = a->unknown_row;
		a->notes[NOTE_NO_MAPPING]++;
		return 0;
	}
	l = &a->locs[idx];
	out->line = l->line;
	if (l->row != NEEDS_TAG) {
		out->row = l->row;
		note = l->note;
	} else {
		if (tag_row(a, idx, s, &v))
			return -ENOMEM;
		out->row = v & 0x0fffffff;
		note = v >> 28;
	}
	a->notes[note]++;
	if (note == NOTE_NO_DEBUGINFO && l->nodebug != UINT32_MAX)
		a->nodebug[l->nodebug].count++;
	if (a->rows[out->row].kind == ROW_COMPONENT)
		a->dict_hits[a->rows[out->row].dict]++;
	return 0;
}

static int add_dict_rows(struct attributor *a, int di)
{
	const struct tdict *d = a->dicts[di];
	int level = a->dict_level[di];
	size_t i, j;

	for (i = 0; i < d->nr_links; i++) {
		const char *fl = d->links[i].key_line;
		char file[4096];

		if (d->links[i].level || !fl || !strrchr(fl, ':'))
			continue;
		snprintf(file, sizeof(file), "%.*s", (int)(strrchr(fl, ':') - fl), fl);
		if (str_map_put(&a->dict_files[di], file, 1))
			return -ENOMEM;
	}
	a->row_base[di] = (uint32_t)a->nr_rows;
	for (i = 0; i < d->nr_components && d->components[i].level != level; i++)
		;
	a->first[di] = d->components + i;
	for (j = i; j < d->nr_components && d->components[j].level == level; j++) {
		char name[512];
		uint32_t row;

		if (a->nr_dicts > 1)
			snprintf(name, sizeof(name), "%s: %s", a->labels[di],
				 d->components[j].name);
		else
			snprintf(name, sizeof(name), "%s", d->components[j].name);
		row = add_row(a, ROW_COMPONENT, name, NULL);
		if (row == NEEDS_TAG)
			return -ENOMEM;
		a->rows[row].dict = di;
		a->rows[row].id = d->components[j].id;
	}
	for (j = i; j < d->nr_components && d->components[j].level == level; j++) {
		const struct tdict_component *c = &d->components[j], *p;

		if (c->parent_level != level)
			continue;
		p = tdict_component(d, level, c->parent_id);
		if (p)
			a->rows[component_row(a, di, c)].parent =
				(int)component_row(a, di, p);
	}
	return 0;
}

struct attributor *attr_new(struct tdict *const *dicts,
			    const char *const *labels, int nr_dicts,
			    const char *level, char *err, size_t errlen)
{
	struct attributor *a;
	bool found = false;
	int di;

	if (nr_dicts > MAX_DICTS) {
		snprintf(err, errlen, "at most %d dictionaries", MAX_DICTS);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->dicts = dicts;
	a->labels = labels;
	a->nr_dicts = nr_dicts;
	snprintf(a->level, sizeof(a->level), "%s", level);
	if (!strcmp(level, "instruction")) {
		a->kind = LEVEL_INSTRUCTION;
	} else if (!strcmp(level, "line")) {
		a->kind = LEVEL_LINE;
	} else if (!strcmp(level, "function")) {
		a->kind = LEVEL_FUNCTION;
	} else {
		a->kind = LEVEL_DICT;
		for (di = 0; di < nr_dicts; di++) {
			a->dict_level[di] = tdict_level(dicts[di], level);
			found |= a->dict_level[di] > 0;
		}
		if (!found) {
			snprintf(err, errlen, nr_dicts ?
				 "no dictionary declares the level '%s'" :
				 "level '%s' needs a Tagging Dictionary (--dict)",
				 level);
			free(a);
			return NULL;
		}
	}
	for (di = 0; a->kind == LEVEL_DICT && di < nr_dicts; di++) {
		if (a->dict_level[di] > 0 && add_dict_rows(a, di)) {
			snprintf(err, errlen, "out of memory");
			attr_free(a);
			return NULL;
		}
	}
	a->kernel_row = named_row(a, ROW_KERNEL, "[kernel]", NULL);
	a->unknown_row = named_row(a, ROW_UNKNOWN, "[unknown]", NULL);
	a->kernel_loc = NEEDS_TAG;
	a->kernel_by_entry = true;
	if (a->kernel_row != NEEDS_TAG &&
	    !array_grow((void **)&a->locs, &a->cap_locs, a->nr_locs + 1, sizeof(*a->locs))) {
		/* Like code outside every dictionary: a tag decides, else [kernel]. */
		a->kernel_loc = (uint32_t)a->nr_locs++;
		a->locs[a->kernel_loc] = (struct loc){ .row = NEEDS_TAG, .line = ATTR_NO_LINE,
						       .nodebug = UINT32_MAX,
						       .fallback = a->kernel_row };
	}
	if (a->kernel_row == NEEDS_TAG || a->unknown_row == NEEDS_TAG ||
	    a->kernel_loc == NEEDS_TAG) {
		snprintf(err, errlen, "out of memory");
		attr_free(a);
		return NULL;
	}
	return a;
}

void attr_free(struct attributor *a)
{
	size_t i;
	int di;

	if (!a)
		return;
	for (i = 0; i < a->nr_rows; i++) {
		free(a->rows[i].name);
		free(a->rows[i].object);
	}
	for (i = 0; i < a->nr_lines; i++)
		free(a->lines[i].file);
	for (di = 0; di < a->nr_dicts; di++)
		str_map_free(&a->dict_files[di]);
	str_map_free(&a->row_names);
	str_map_free(&a->line_keys);
	pair_map_free(&a->loc_cache);
	pair_map_free(&a->tag_cache);
	free(a->rows);
	free(a->lines);
	free(a->locs);
	free(a->nodebug);
	free(a);
}

size_t attr_nr_rows(const struct attributor *a)
{
	return a->nr_rows;
}

const struct attr_row *attr_row(const struct attributor *a, size_t i)
{
	return &a->rows[i];
}

size_t attr_nr_lines(const struct attributor *a)
{
	return a->nr_lines;
}

const struct attr_line *attr_line(const struct attributor *a, size_t i)
{
	return &a->lines[i];
}

uint64_t attr_note_count(const struct attributor *a, enum attr_note n)
{
	return n < NOTE_MAX ? a->notes[n] : 0;
}

size_t attr_nr_nodebug(const struct attributor *a)
{
	return a->nr_nodebug;
}

const char *attr_nodebug(const struct attributor *a, size_t i, uint64_t *count)
{
	*count = a->nodebug[i].count;
	return a->nodebug[i].object;
}

uint64_t attr_dict_hits(const struct attributor *a, int dict)
{
	return dict >= 0 && dict < a->nr_dicts ? a->dict_hits[dict] : 0;
}

bool attr_row_attributed(const struct attr_row *r)
{
	return r->kind <= ROW_INSTRUCTION;
}

bool attr_level_is_dict(const struct attributor *a)
{
	return a->kind == LEVEL_DICT;
}

const char *attr_level_name(const struct attributor *a)
{
	return a->level;
}

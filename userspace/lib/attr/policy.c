// SPDX-License-Identifier: GPL-2.0-only
/*
 * The attribution policy (seed 000, section 4.2): what the samples of a
 * code address come to at a level, first by the dictionary's links, then
 * by the tag register where links leave it open; and kernel samples by
 * where the thread came from.  Nothing here caches: attributor.c asks
 * once per site and per (site, tag).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "attr/attr.h"
#include "dict/graph.h"
#include "util/path.h"

static uint32_t component_row(const struct attr_level *lv, int di,
			      const struct tdict_component *c)
{
	return lv->row_base[di] + (uint32_t)(c - lv->first[di]);
}

static void add_candidate(struct site_level *l, uint32_t row)
{
	uint8_t i;

	for (i = 0; i < l->nr_cand; i++)
		if (l->cand[i] == row)
			return;
	if (l->nr_cand < ATTR_MAX_CANDIDATES)
		l->cand[l->nr_cand++] = row;
	else
		l->cand_overflow = true;
}

static bool file_known(const struct attributor *a, int di, const char *file)
{
	uint32_t dummy;

	return str_map_get(&a->dict_files[di], file, &dummy);
}

/* Dictionary levels: links first; what they do not settle waits for a tag. */
static int site_dict(struct attributor *a, const struct attr_level *lv,
		     const struct sym_result *r, const char *file_line,
		     struct site_level *l)
{
	bool shared = false, known = false, direct;
	int di;

	if (rows_object(&a->rows, r->path, &l->fallback))
		return -ENOMEM;
	l->fallback_note = NOTE_NONE;
	if (!file_line)
		l->fallback_note = r->status == SYM_NO_FILE ? NOTE_NO_FILE :
				   NOTE_NO_DEBUGINFO;
	for (di = 0; file_line && di < a->nr_dicts; di++) {
		const struct tdict *d = a->dicts[di];
		const struct tdict_link *links;
		size_t i, n;

		if (lv->dict_level[di] < 0)
			continue;
		if (tdict_is_shared(d, file_line)) {
			shared = true;
			continue;
		}
		links = tdict_line_links(d, file_line, &n);
		/*
		 * A line's own links at the level say what it is; only without
		 * one do the links of lower levels lead up (a pipeline names
		 * all its operators, an operator every client's run of it).
		 */
		direct = false;
		for (i = 0; i < n; i++) {
			const struct tdict_component *c;

			if (links[i].upper_level != lv->dict_level[di])
				continue;
			c = tdict_component(d, links[i].upper_level, links[i].upper_id);
			if (c) {
				add_candidate(l, component_row(lv, di, c));
				direct = true;
			}
		}
		for (i = 0; i < n && !direct; i++) {
			const struct tdict_component *up[ATTR_MAX_CANDIDATES];
			size_t j, nr_up;

			nr_up = dict_climb_all(d, links[i].upper_level, links[i].upper_id,
					       lv->dict_level[di], up, ATTR_MAX_CANDIDATES);
			for (j = 0; j < nr_up; j++)
				add_candidate(l, component_row(lv, di, up[j]));
		}
		if (!n && file_known(a, di, r->file))
			known = true;
	}
	if (l->nr_cand == 1) {
		l->row = l->cand[0];
		return 0;
	}
	l->needs_tag = true;
	l->tag_matters = shared || known || l->nr_cand > 1;
	if (l->nr_cand > 1) {
		l->fallback = l->cand[0];
		l->fallback_note = NOTE_AMBIGUOUS;
	} else if (shared) {
		l->fallback_note = NOTE_UNTAGGED;
	} else if (known) {
		l->fallback_note = NOTE_UNLINKED_LINE;
	}
	return 0;
}

int policy_site(struct attributor *a, const struct attr_level *lv,
		const struct sym_result *r, const char *file_line,
		struct site_level *out)
{
	char name[4300];

	*out = (struct site_level){ .row = ATTR_NONE, .fallback = ATTR_NONE };
	switch (lv->kind) {
	case LEVEL_INSTRUCTION:
		snprintf(name, sizeof(name), "%s+0x%" PRIx64 "%s%s",
			 path_base(r->path), r->address,
			 r->function ? " " : "", r->function ? r->function : "");
		return rows_named(&a->rows, ROW_INSTRUCTION, lv - a->levels, name,
				  r->path, &out->row);
	case LEVEL_LINE:
		out->note = file_line ? NOTE_NONE : NOTE_NO_DEBUGINFO;
		return file_line ? rows_named(&a->rows, ROW_LINE, lv - a->levels, file_line,
					      r->path, &out->row) :
		       rows_object(&a->rows, r->path, &out->row);
	case LEVEL_FUNCTION:
		out->note = r->function ? NOTE_NONE : r->status == SYM_NO_FILE ?
			    NOTE_NO_FILE : NOTE_NO_SYMBOL;
		return r->function ? rows_named(&a->rows, ROW_FUNCTION, lv - a->levels,
						r->function, r->path, &out->row) :
		       rows_object(&a->rows, r->path, &out->row);
	case LEVEL_DICT:
		return site_dict(a, lv, r, file_line, out);
	}
	return -EINVAL;
}

/*
 * Field @t of the sample's tag word or tag register, 0 if the sample has
 * no trustworthy value for it.  The word is the thread's wherever the
 * tick landed; the register is the thread's own only in user mode or as
 * the user state saved at kernel entry.
 */
static uint64_t sample_tag_field(const struct tdict_tag *t, const struct tev_sample *s)
{
	if (t->in_word)
		return (s->flags & TEV_HAS_TAG_WORD) ? tdict_tag_field(t, s->tag_word) : 0;
	if (!(s->flags & TEV_HAS_TAG) ||
	    ((s->flags & TEV_KERNEL) && !(s->flags & TEV_USER_TAG)))
		return 0;
	return tdict_tag_field(t, s->tag);
}

int policy_tag(struct attributor *a, const struct attr_level *lv,
	       const struct site_level *sl, const struct tev_sample *s,
	       uint32_t *row, uint8_t *note)
{
	bool nonzero = false, ambiguous;
	uint32_t guess = ATTR_NONE;
	uint8_t i;
	int di, t, pass;

	for (di = 0; (s->flags & (TEV_HAS_TAG | TEV_HAS_TAG_WORD)) && di < a->nr_dicts; di++) {
		const struct tdict *d = a->dicts[di];

		if (lv->dict_level[di] < 0)
			continue;
		/*
		 * The word's fields first (pass 0), then the register's: the
		 * word holds where the register cannot be trusted.
		 */
		for (pass = 0; pass < 2; pass++)
		for (t = 0; t < d->nr_tags; t++) {
			uint64_t id;
			const struct tdict_component *c;
			uint32_t r;

			if (d->tags[t].in_word != (pass == 0))
				continue;
			id = sample_tag_field(&d->tags[t], s);
			if (!id)
				continue;
			nonzero = true;
			c = dict_tag_component(d, d->tags[t].level, id,
					       lv->dict_level[di], &ambiguous);
			if (!c)
				continue;
			r = component_row(lv, di, c);
			/*
			 * A field of a higher level names several components
			 * here (the word's query, all its operators): another
			 * field may name one (the register's task), else the
			 * first is taken.
			 */
			if (ambiguous && !sl->nr_cand) {
				if (guess == ATTR_NONE)
					guess = r;
				continue;
			}
			*row = r;
			*note = NOTE_BY_TAG;
			/* Among too many candidates to keep, the tag is believed. */
			if (!sl->nr_cand || sl->cand_overflow)
				return 0;
			for (i = 0; i < sl->nr_cand; i++)
				if (sl->cand[i] == r)
					return 0;
		}
	}
	if (guess != ATTR_NONE) {
		*row = guess;
		*note = NOTE_AMBIGUOUS;
		return 0;
	}
	if (nonzero && sl->tag_matters && sl->nr_cand <= 1) {
		*row = a->unresolved_row;
		*note = NOTE_TAG_NO_LINK;
		return 0;
	}
	*row = sl->fallback;
	*note = sl->fallback_note;
	return 0;
}

/*
 * At a dictionary level, a kernel sample goes where a user sample at the
 * IP the thread entered the kernel from would go: by the link of that
 * code (generated code runs untagged), else by the user tag (shared code,
 * or a line linked to several components, among them).  Without an entry
 * IP, the tag alone decides, as for code outside every dictionary.
 * Anything less certain -- no component, or an ambiguous one -- stays
 * [kernel]: kernel time is neither libc's nor a guess.
 */
int policy_kernel(struct attributor *a, const struct attr_level *lv,
		  const struct site_level *entry, const struct site_level *untagged,
		  const struct tev_sample *s, uint32_t *row, uint8_t *note)
{
	uint32_t r;
	uint8_t n;

	*row = a->kernel_row;
	*note = NOTE_NONE;
	if (lv->kind != LEVEL_DICT || a->kernel_apart)
		return 0;
	if (entry && !entry->needs_tag) {
		r = entry->row;
		n = NOTE_KERNEL_BY_ENTRY;
	} else {
		bool user_tag = (s->flags & (TEV_HAS_TAG | TEV_USER_TAG)) ==
				(TEV_HAS_TAG | TEV_USER_TAG) && s->tag;
		bool word = (s->flags & TEV_HAS_TAG_WORD) && s->tag_word;

		if (!user_tag && !word)
			return 0;
		if (policy_tag(a, lv, entry ? entry : untagged, s, &r, &n))
			return -ENOMEM;
		if (n != NOTE_BY_TAG)
			return 0;
		n = NOTE_KERNEL_BY_TAG;
	}
	if (a->rows.rows[r].kind == ROW_COMPONENT) {
		*row = r;
		*note = n;
	}
	return 0;
}

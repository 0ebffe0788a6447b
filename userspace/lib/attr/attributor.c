// SPDX-License-Identifier: GPL-2.0-only
/*
 * The attributor (tailor/attribution.h): sites and outcomes, each worked
 * out once by the policy (policy.c) and then looked up.
 *
 * A site is what a code address is, at every level the report asks for;
 * the symbolizer numbers its answers, so finding a sample's site is an
 * array index.  An outcome is what a sample comes to: its row at each
 * level and the reason; a site that no level needs a tag for has one
 * outcome, others one per (site, tag), found in a hash map.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/kallsyms.h"
#include "tailor/x86_regs.h"
#include "attr/attr.h"
#include "dict/graph.h"
#include "util/grow.h"

#define NO_ENTRY_SITE	UINT32_MAX

/* ---- levels and their rows ---- */

static int level_setup(struct attributor *a, struct attr_level *lv, const char *name,
		       char *err, size_t errlen)
{
	bool found = false;
	int di;

	memset(lv, 0, sizeof(*lv));
	snprintf(lv->name, sizeof(lv->name), "%s", name);
	if (!strcmp(name, "instruction")) {
		lv->kind = LEVEL_INSTRUCTION;
	} else if (!strcmp(name, "line")) {
		lv->kind = LEVEL_LINE;
	} else if (!strcmp(name, "function")) {
		lv->kind = LEVEL_FUNCTION;
	} else {
		lv->kind = LEVEL_DICT;
		for (di = 0; di < a->nr_dicts; di++) {
			lv->dict_level[di] = tdict_level(a->dicts[di], name);
			found |= lv->dict_level[di] > 0;
		}
		if (!found) {
			char levels[512] = "";
			size_t n = 0;
			int l;

			/* The levels there are, the dictionaries' first, to choose from. */
			for (di = 0; di < a->nr_dicts; di++)
				for (l = 1; l < a->dicts[di]->nr_levels && n < sizeof(levels); l++)
					if (!strstr(levels, a->dicts[di]->levels[l]))
						n += snprintf(levels + n, sizeof(levels) - n, "%s, ",
							      a->dicts[di]->levels[l]);
			snprintf(err, errlen, a->nr_dicts ?
				 "no dictionary declares the level '%s'; the levels are %sfunction, line and instruction" :
				 "level '%s' needs a Tagging Dictionary (--dict); without one the levels are %sfunction, line and instruction",
				 name, levels);
			return -EINVAL;
		}
	}
	return 0;
}

/* The level named @name, set up on first use; its index or -errno. */
static int level_index(struct attributor *a, const char *name, char *err, size_t errlen)
{
	int i, ret;

	for (i = 0; i < a->nr_levels; i++)
		if (!strcmp(a->levels[i].name, name))
			return i;
	if (a->nr_levels == ATTR_MAX_LEVELS) {
		snprintf(err, errlen, "at most %d levels", ATTR_MAX_LEVELS);
		return -EINVAL;
	}
	ret = level_setup(a, &a->levels[a->nr_levels], name, err, errlen);
	return ret ? ret : a->nr_levels++;
}

/* Rows for the components a dictionary has at @lv, with their plan parents. */
static int add_dict_rows(struct attributor *a, int li, int di)
{
	struct attr_level *lv = &a->levels[li];
	const struct tdict *d = a->dicts[di];
	const struct tdict_component *c;
	size_t i, n;
	uint32_t row;

	c = dict_level_components(d, lv->dict_level[di], &n);
	lv->first[di] = c;
	lv->row_base[di] = (uint32_t)a->rows.nr;
	for (i = 0; i < n; i++) {
		char name[512];

		if (a->nr_dicts > 1)
			snprintf(name, sizeof(name), "%s: %s", a->labels[di], c[i].name);
		else
			snprintf(name, sizeof(name), "%s", c[i].name);
		if (rows_add(&a->rows, ROW_COMPONENT, li, name, NULL, &row))
			return -ENOMEM;
		a->rows.rows[row].dict = di;
		a->rows.rows[row].id = c[i].id;
	}
	for (i = 0; i < n; i++) {
		const struct tdict_component *p;

		if (c[i].parent_level != lv->dict_level[di])
			continue;
		p = tdict_component(d, lv->dict_level[di], c[i].parent_id);
		if (p)
			a->rows.rows[lv->row_base[di] + i].parent =
				(int)(lv->row_base[di] + (p - c));
	}
	return 0;
}

/* The files each dictionary's line links name: their other lines are news. */
static int index_dict_files(struct attributor *a, int di)
{
	const struct tdict *d = a->dicts[di];
	size_t i;

	for (i = 0; i < d->nr_links; i++) {
		const char *fl = d->links[i].key_line, *colon;
		char file[4096];

		if (d->links[i].level || !fl || !(colon = strrchr(fl, ':')))
			continue;
		snprintf(file, sizeof(file), "%.*s", (int)(colon - fl), fl);
		if (str_map_put(&a->dict_files[di], file, 1))
			return -ENOMEM;
	}
	return 0;
}

/* ---- outcomes ---- */

static int new_outcome(struct attributor *a, uint32_t *idx)
{
	size_t n = a->nr_outcomes;

	if (n >= UINT32_MAX - 1 ||
	    array_grow((void **)&a->outcomes, &a->cap_outcomes, n + 1, sizeof(*a->outcomes)) ||
	    array_grow((void **)&a->outcome_rows, &a->cap_outcome_rows,
		       (n + 1) * (a->nr_stack ? a->nr_stack : 1), sizeof(*a->outcome_rows)))
		return -ENOMEM;
	a->outcomes[n] = (struct outcome){ .row = ATTR_NONE, .line = ATTR_NONE,
					   .site = ATTR_NONE, .nodebug = ATTR_NONE,
					   .query = ATTR_NONE,
					   .entered_from = ATTR_NONE };
	*idx = (uint32_t)a->nr_outcomes++;
	return 0;
}

static uint32_t *rows_of(const struct attributor *a, uint32_t outcome)
{
	return &a->outcome_rows[(size_t)outcome * a->nr_stack];
}

/* A level's row for a user sample at @site. */
static int user_row(struct attributor *a, uint32_t site, int li,
		    const struct tev_sample *s, uint32_t *row, uint8_t *note)
{
	const struct site_level *sl = site_level(a, site, li);

	if (!sl->needs_tag) {
		*row = sl->row;
		*note = sl->note;
		return 0;
	}
	return policy_tag(a, &a->levels[li], sl, s, row, note);
}

static int user_outcome(struct attributor *a, uint32_t site, const struct tev_sample *s,
			uint32_t *idx)
{
	struct outcome *o;
	uint32_t row;
	uint8_t note;
	int i;

	if (new_outcome(a, idx))
		return -ENOMEM;
	o = &a->outcomes[*idx];
	o->line = a->sites[site].line;
	o->site = site;
	o->nodebug = a->sites[site].nodebug;
	if (user_row(a, site, 0, s, &o->row, &o->note))
		return -ENOMEM;
	if (a->query_level >= 0 &&
	    user_row(a, site, a->query_level, s, &a->outcomes[*idx].query, &note))
		return -ENOMEM;
	for (i = 0; i < a->nr_stack; i++) {
		if (user_row(a, site, a->stack[i], s, &row, &note))
			return -ENOMEM;
		rows_of(a, *idx)[i] = row;
	}
	return 0;
}

/* A level's row for a kernel sample that entered from @entry (or NO_ENTRY_SITE). */
static int kernel_row(struct attributor *a, uint32_t entry, int li,
		      const struct tev_sample *s, uint32_t *row, uint8_t *note)
{
	const struct site_level *e = entry == NO_ENTRY_SITE ? NULL : site_level(a, entry, li);

	return policy_kernel(a, &a->levels[li], e, site_level(a, a->kernel_site, li),
			     s, row, note);
}

/* A level's kernel bucket named by the kernel function (--kallsyms), at the function level. */
static int kernel_function_row(struct attributor *a, int li, const char *kname, uint32_t *row)
{
	if (!kname || *row != a->kernel_row || a->levels[li].kind != LEVEL_FUNCTION)
		return 0;
	return rows_named(&a->rows, ROW_FUNCTION, li, kname, "[kernel.kallsyms]", row);
}

static int kernel_outcome(struct attributor *a, uint32_t entry, const struct tev_sample *s,
			  const char *kname, uint32_t *idx)
{
	struct outcome *o;
	uint32_t row;
	uint8_t note;
	int i;

	if (new_outcome(a, idx))
		return -ENOMEM;
	o = &a->outcomes[*idx];
	if (entry != NO_ENTRY_SITE && a->function_level >= 0)
		o->entered_from = site_level(a, entry, a->function_level)->row;
	if (kernel_row(a, entry, 0, s, &o->row, &o->note) ||
	    kernel_function_row(a, 0, kname, &o->row) ||
	    (a->query_level >= 0 && kernel_row(a, entry, a->query_level, s, &o->query, &note)))
		return -ENOMEM;
	for (i = 0; i < a->nr_stack; i++) {
		if (kernel_row(a, entry, a->stack[i], s, &row, &note) ||
		    kernel_function_row(a, a->stack[i], kname, &row))
			return -ENOMEM;
		rows_of(a, *idx)[i] = row;
	}
	return 0;
}

/* ---- sites ---- */

static int new_site(struct attributor *a, uint32_t *idx)
{
	size_t n = a->nr_sites, i;

	if (n >= UINT32_MAX - 1 ||
	    array_grow((void **)&a->sites, &a->cap_sites, n + 1, sizeof(*a->sites)) ||
	    array_grow((void **)&a->site_levels, &a->cap_site_levels,
		       (n + 1) * a->nr_levels, sizeof(*a->site_levels)))
		return -ENOMEM;
	a->sites[n] = (struct site){ .line = ATTR_NONE, .nodebug = ATTR_NONE,
				     .fixed_outcome = ATTR_NONE };
	for (i = 0; i < (size_t)a->nr_levels; i++)
		*site_level(a, (uint32_t)n, (int)i) =
			(struct site_level){ .row = ATTR_NONE, .fallback = ATTR_NONE };
	*idx = (uint32_t)a->nr_sites++;
	return 0;
}

/* What the code at @r is, at every level; made once per symbolizer answer. */
static int site_of(struct attributor *a, const struct sym_result *r, uint32_t *idx)
{
	char key[4200];
	const char *file_line = NULL;
	const struct site_level *main;
	bool needs_tag = false;
	struct site *st;
	int li;

	if (r->id < a->cap_site_of_sym && a->site_of_sym[r->id]) {
		*idx = a->site_of_sym[r->id] - 1;
		return 0;
	}
	if (r->id == UINT32_MAX ||
	    array_grow((void **)&a->site_of_sym, &a->cap_site_of_sym, (size_t)r->id + 1,
		       sizeof(*a->site_of_sym)) ||
	    new_site(a, idx))
		return -ENOMEM;
	st = &a->sites[*idx];
	st->path = r->path;
	st->address = r->address;
	if (r->file && r->line) {
		snprintf(key, sizeof(key), "%s:%u", r->file, r->line);
		file_line = key;
		if (lines_intern(&a->lines, r->file, r->line, key, &st->line))
			return -ENOMEM;
	}
	for (li = 0; li < a->nr_levels; li++) {
		if (policy_site(a, &a->levels[li], r, file_line, site_level(a, *idx, li)))
			return -ENOMEM;
		needs_tag |= site_level(a, *idx, li)->needs_tag;
	}
	main = site_level(a, *idx, 0);
	if ((main->note == NOTE_NO_DEBUGINFO || main->note == NOTE_NO_SYMBOL ||
	     (main->needs_tag && main->fallback_note == NOTE_NO_DEBUGINFO)) &&
	    notes_nodebug_index(&a->notes, r->path, r->stripped, &st->nodebug))
		return -ENOMEM;
	if (!needs_tag) {
		struct tev_sample untagged = { 0 };

		if (user_outcome(a, *idx, &untagged, &a->sites[*idx].fixed_outcome))
			return -ENOMEM;
	}
	a->site_of_sym[r->id] = *idx + 1;
	return 0;
}

/* The site of @ip in @pid at @time; 1 if no mapping covers it. */
static int find_site(struct attributor *a, struct symbolizer *sym, uint32_t pid,
		     uint64_t ip, uint64_t time, uint32_t *idx)
{
	struct sym_result r;

	sym_lookup(sym, pid, ip, time, &r);
	if (r.status == SYM_NO_MAPPING || !r.path)
		return 1;
	return site_of(a, &r, idx);
}

/* ---- samples ---- */

static void count(struct attributor *a, const struct outcome *o)
{
	const struct attr_row *row = &a->rows.rows[o->row];

	a->notes.count[o->note]++;
	if ((o->note == NOTE_NO_DEBUGINFO || o->note == NOTE_NO_SYMBOL) &&
	    o->nodebug != ATTR_NONE)
		a->notes.nodebug[o->nodebug].count++;
	if (row->kind == ROW_COMPONENT)
		a->notes.dict_hits[row->dict]++;
}

/*
 * Whether a kernel sample's entry site is looked up: it picks the
 * component at a dictionary level, and names the function the kernel
 * was entered from (attr_outcome_entered_from()).
 */
static bool entry_matters(const struct attributor *a)
{
	int i;

	if (a->kernel_apart)
		return false;
	if (a->function_level >= 0)
		return true;
	for (i = 0; i < a->nr_levels; i++)
		if (a->levels[i].kind == LEVEL_DICT)
			return true;
	return false;
}

/* The key of @site (or entry site) for @s's outcome: the word counts too. */
static int site_key(struct attributor *a, uint32_t site,
		    const struct tev_sample *s, uint64_t *key)
{
	uint32_t k;

	*key = site;
	if (!(s->flags & TEV_HAS_TAG_WORD) || !s->tag_word)
		return 0;
	if (!pair_map_get(&a->word_key_of, site, s->tag_word, &k)) {
		k = ++a->nr_word_keys;
		if (pair_map_put(&a->word_key_of, site, s->tag_word, k))
			return -ENOMEM;
	}
	*key = (uint64_t)k << 32 | site;
	return 0;
}

static int sample_kernel(struct attributor *a, struct symbolizer *sym,
			 const struct tev_sample *s, uint32_t *idx)
{
	uint64_t key;
	uint32_t entry = NO_ENTRY_SITE, kfn = 0;
	const char *kname = NULL;
	uint64_t tag = 0;
	int ret;

	if ((s->flags & TEV_HAS_ENTRY_IP) && entry_matters(a)) {
		ret = find_site(a, sym, s->pid, s->entry_ip, s->time, &entry);
		if (ret < 0)
			return ret;
		if (ret)
			entry = NO_ENTRY_SITE;
	}
	if ((s->flags & (TEV_HAS_TAG | TEV_USER_TAG)) == (TEV_HAS_TAG | TEV_USER_TAG))
		tag = s->tag;
	if (site_key(a, entry, s, &key))
		return -ENOMEM;
	if (a->kallsyms)
		kname = kallsyms_name(a->kallsyms, s->ip - a->kernel_delta, &kfn);
	if (kname) {
		/* Named kernel outcomes: per (entry site, function), then tag. */
		uint32_t kk;

		if (!pair_map_get(&a->kernel_key_of, key, kfn, &kk)) {
			kk = (uint32_t)a->nr_kernel_keys++;
			if (pair_map_put(&a->kernel_key_of, key, kfn, kk))
				return -ENOMEM;
		}
		if (pair_map_get(&a->kernel_named_outcome_of, kk, tag, idx))
			return 0;
		if (kernel_outcome(a, entry, s, kname, idx) ||
		    pair_map_put(&a->kernel_named_outcome_of, kk, tag, *idx))
			return -ENOMEM;
		return 0;
	}
	if (pair_map_get(&a->kernel_outcome_of, key, tag, idx))
		return 0;
	if (kernel_outcome(a, entry, s, NULL, idx) ||
	    pair_map_put(&a->kernel_outcome_of, key, tag, *idx))
		return -ENOMEM;
	return 0;
}

/*
 * Whether @s's process maps a module a dictionary names: where none does
 * (another program in a system-wide profile, a program the engine ran),
 * its r15 and tag word are that program's own values.  Remembered per
 * process until the mappings change (an mmap, a fork, an exec -- which
 * ends the image a fork inherited); the generation kept is its low 32
 * bits, and a stale answer would need 2^32 changes between two samples
 * of one process.  (pid, 1): the generation of the answer, (pid, 0):
 * the answer.
 */
static bool maps_described_module(struct attributor *a, struct symbolizer *sym,
				  const struct tev_sample *s)
{
	uint32_t now = (uint32_t)sym_generation(sym), asked, yes;
	bool maps;

	if (pair_map_get(&a->module_pids, s->pid, 1, &asked) && asked == now &&
	    pair_map_get(&a->module_pids, s->pid, 0, &yes))
		return yes;
	maps = sym_pid_maps(sym, s->pid, a->module_paths, a->nr_module_paths, s->time);
	/* Without memory it is asked again: the answer stays right. */
	if (!pair_map_put(&a->module_pids, s->pid, 0, maps))
		pair_map_put(&a->module_pids, s->pid, 1, now);
	return maps;
}

int attr_sample(struct attributor *a, struct symbolizer *sym,
		const struct tev_sample *s, struct attr_result *out)
{
	const uint32_t tag_flags = TEV_HAS_TAG | TEV_USER_TAG | TEV_HAS_TAG_WORD;
	struct tev_sample untagged;
	uint32_t site, idx;
	uint64_t tag, key;
	int ret;

	/*
	 * In a process mapping none of the dictionaries' modules (a program
	 * the engine ran, another program of a system-wide profile), r15 is
	 * whatever that program keeps there, not a tag: its samples go where
	 * their code does, never by a tag that happens to name a component.
	 * Dictionaries that name no module (version 1): the recorded
	 * process's tags count, its children's not (the engine's compiler).
	 * The modules decide better: the backends a server forks map its
	 * module; a compiler it runs does not.
	 */
	if ((s->flags & tag_flags) &&
	    (a->nr_module_paths ? !maps_described_module(a, sym, s) :
	     a->tag_pid && s->pid != a->tag_pid)) {
		untagged = *s;
		untagged.flags &= ~tag_flags;
		untagged.tag = untagged.tag_word = 0;
		s = &untagged;
	}
	if ((s->flags & TEV_KERNEL) || x86_kernel_address(s->ip)) {
		ret = sample_kernel(a, sym, s, &idx);
	} else {
		ret = find_site(a, sym, s->pid, s->ip, s->time, &site);
		if (ret > 0) {
			idx = a->unknown_outcome;
			ret = 0;
		} else if (!ret && a->sites[site].fixed_outcome != ATTR_NONE) {
			idx = a->sites[site].fixed_outcome;
		} else if (!ret) {
			tag = (s->flags & TEV_HAS_TAG) ? s->tag : 0;
			if (site_key(a, site, s, &key) ||
			    (!pair_map_get(&a->outcome_of, key, tag, &idx) &&
			     (user_outcome(a, site, s, &idx) ||
			      pair_map_put(&a->outcome_of, key, tag, idx))))
				ret = -ENOMEM;
		}
	}
	if (ret)
		return ret;
	out->row = a->outcomes[idx].row;
	out->line = a->outcomes[idx].line;
	out->outcome = idx;
	out->query = a->outcomes[idx].query;
	out->excluded = !attr_query_selected(a, out->query);
	if (!out->excluded)
		count(a, &a->outcomes[idx]);
	return 0;
}

/* ---- setting up ---- */

static int fixed_rows(struct attributor *a)
{
	struct site_level *kl;
	uint32_t *rows;
	int li, i;

	if (rows_named(&a->rows, ROW_KERNEL, -1, "[kernel]", NULL, &a->kernel_row) ||
	    rows_named(&a->rows, ROW_UNKNOWN, -1, "[unknown]", NULL, &a->unknown_row) ||
	    rows_named(&a->rows, ROW_UNRESOLVED, -1, "[tag without link]", NULL,
		       &a->unresolved_row))
		return -ENOMEM;
	/* Kernel samples with no user site: like code outside every dictionary. */
	if (new_site(a, &a->kernel_site))
		return -ENOMEM;
	for (li = 0; li < a->nr_levels; li++) {
		kl = site_level(a, a->kernel_site, li);
		kl->needs_tag = true;
		kl->fallback = a->kernel_row;
	}
	if (new_outcome(a, &a->unknown_outcome))
		return -ENOMEM;
	a->outcomes[a->unknown_outcome].row = a->unknown_row;
	a->outcomes[a->unknown_outcome].note = NOTE_NO_MAPPING;
	if (a->query_level >= 0)
		a->outcomes[a->unknown_outcome].query = a->unknown_row;
	rows = rows_of(a, a->unknown_outcome);
	for (i = 0; i < a->nr_stack; i++)
		rows[i] = a->unknown_row;
	return 0;
}

struct attributor *attr_new(const struct attr_options *o, char *err, size_t errlen)
{
	struct attributor *a;
	int i, li, di;

	if (o->nr_dicts > ATTR_MAX_DICTS) {
		snprintf(err, errlen, "at most %d dictionaries", ATTR_MAX_DICTS);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->dicts = o->dicts;
	a->labels = o->labels;
	a->nr_dicts = o->nr_dicts;
	a->kernel_apart = o->kernel_apart;
	a->kallsyms = o->kallsyms;
	a->kernel_delta = o->kernel_delta;
	a->tag_pid = o->tag_pid;
	for (di = 0; di < a->nr_dicts; di++) {
		const struct tdict *d = a->dicts[di];
		size_t m;

		for (m = 0; m < d->nr_modules; m++) {
			const char **grown = realloc(a->module_paths,
						     (a->nr_module_paths + 1) * sizeof(*grown));

			if (!grown)
				goto oom;
			a->module_paths = grown;
			a->module_paths[a->nr_module_paths++] = d->modules[m].path;
		}
	}
	if (level_index(a, o->level, err, errlen) < 0)
		goto fail;
	for (i = 0; i < o->nr_stack; i++) {
		li = level_index(a, o->stack[i], err, errlen);
		if (li < 0)
			goto fail;
		a->stack[a->nr_stack++] = li;
	}
	a->query_level = -1;
	for (di = 0; o->queries && di < a->nr_dicts && a->query_level < 0; di++)
		if (tdict_level(a->dicts[di], ATTR_QUERY_LEVEL) > 0)
			a->query_level = level_index(a, ATTR_QUERY_LEVEL, err, errlen);
	if (a->query_level < -1)
		goto fail;
	a->function_level = -1;
	for (li = 0; li < a->nr_levels && a->function_level < 0; li++)
		if (a->levels[li].kind == LEVEL_FUNCTION)
			a->function_level = li;
	for (di = 0; di < a->nr_dicts; di++)
		if (index_dict_files(a, di))
			goto oom;
	for (li = 0; li < a->nr_levels; li++)
		for (di = 0; a->levels[li].kind == LEVEL_DICT && di < a->nr_dicts; di++)
			if (a->levels[li].dict_level[di] > 0 && add_dict_rows(a, li, di))
				goto oom;
	if (fixed_rows(a))
		goto oom;
	return a;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	attr_free(a);
	return NULL;
}

void attr_free(struct attributor *a)
{
	int di;

	if (!a)
		return;
	rows_free(&a->rows);
	lines_free(&a->lines);
	for (di = 0; di < a->nr_dicts; di++)
		str_map_free(&a->dict_files[di]);
	pair_map_free(&a->outcome_of);
	pair_map_free(&a->kernel_outcome_of);
	pair_map_free(&a->kernel_key_of);
	pair_map_free(&a->kernel_named_outcome_of);
	pair_map_free(&a->word_key_of);
	free(a->sites);
	free(a->site_levels);
	free(a->site_of_sym);
	free(a->outcomes);
	free(a->outcome_rows);
	free(a->notes.nodebug);
	free(a->query_selected);
	free(a->module_paths);
	pair_map_free(&a->module_pids);
	free(a);
}

/* ---- what the attributor knows ---- */

size_t attr_nr_rows(const struct attributor *a)
{
	return a->rows.nr;
}

const struct attr_row *attr_row(const struct attributor *a, size_t i)
{
	return &a->rows.rows[i];
}

size_t attr_nr_lines(const struct attributor *a)
{
	return a->lines.nr;
}

const struct attr_line *attr_line(const struct attributor *a, size_t i)
{
	return &a->lines.lines[i];
}

bool attr_row_attributed(const struct attr_row *r)
{
	return r->kind <= ROW_INSTRUCTION;
}

bool attr_level_is_dict(const struct attributor *a)
{
	return a->levels[0].kind == LEVEL_DICT;
}

const char *attr_level_name(const struct attributor *a)
{
	return a->levels[0].name;
}

int attr_nr_stack_levels(const struct attributor *a)
{
	return a->nr_stack;
}

const char *attr_stack_level_name(const struct attributor *a, int i)
{
	return a->levels[a->stack[i]].name;
}

size_t attr_nr_outcomes(const struct attributor *a)
{
	return a->nr_outcomes;
}

const uint32_t *attr_outcome_rows(const struct attributor *a, uint32_t outcome)
{
	return rows_of(a, outcome);
}

int attr_outcome_frames(const struct attributor *a, uint32_t outcome,
			uint32_t *frames, int max)
{
	const uint32_t *rows = rows_of(a, outcome);
	uint32_t bucket = ATTR_NONE;
	bool dict_reached = false;
	int i, n = 0;

	for (i = 0; i < a->nr_stack && n < max; i++) {
		const struct attr_row *r = &a->rows.rows[rows[i]];

		if (!attr_row_attributed(r)) {
			if (bucket == ATTR_NONE)
				bucket = rows[i];
			continue;
		}
		if (a->levels[a->stack[i]].kind == LEVEL_DICT)
			dict_reached = true;
		/* A component named alike on two levels (the engine's runtime parts) once. */
		if (!n || strcmp(a->rows.rows[frames[n - 1]].name, r->name))
			frames[n++] = rows[i];
	}
	/* Code no dictionary level reached sits under its object, [kernel] ... */
	if (!dict_reached && bucket != ATTR_NONE && max > 0) {
		if (n == max)
			n--;
		memmove(frames + 1, frames, n * sizeof(*frames));
		frames[0] = bucket;
		n++;
	}
	return n;
}

uint32_t attr_outcome_row(const struct attributor *a, uint32_t outcome)
{
	return a->outcomes[outcome].row;
}

int attr_code_frame(const struct attributor *a, const uint32_t *frames, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		enum attr_row_kind k = a->rows.rows[frames[i]].kind;

		if (k != ROW_COMPONENT && k != ROW_UNRESOLVED)
			return i;
	}
	return n;
}

const struct kallsyms *attr_kernel_symbols(const struct attributor *a, uint64_t *delta)
{
	*delta = a->kernel_delta;
	return a->kallsyms;
}

/* ---- queries ---- */

bool attr_tag_counts(const struct attributor *a, const struct tev_sample *s)
{
	uint32_t v;
	int i;

	/* attr_sample() asked first: the answer for its process is kept. */
	if (a->nr_module_paths ? !pair_map_get(&a->module_pids, s->pid, 0, &v) || !v :
	    a->tag_pid && s->pid != a->tag_pid)
		return false;
	for (i = 0; i < a->nr_dicts; i++)
		if (a->dicts[i]->nr_tags)
			return true;
	return false;
}

bool attr_has_queries(const struct attributor *a)
{
	return a->query_level >= 0;
}

uint32_t attr_outcome_query(const struct attributor *a, uint32_t outcome)
{
	return outcome < a->nr_outcomes ? a->outcomes[outcome].query : ATTR_NONE;
}

bool attr_outcome_site(const struct attributor *a, uint32_t outcome, struct attr_site *out)
{
	const struct site *st;

	if (outcome >= a->nr_outcomes || a->outcomes[outcome].site == ATTR_NONE)
		return false;
	st = &a->sites[a->outcomes[outcome].site];
	*out = (struct attr_site){ .path = st->path, .address = st->address,
				   .line = a->outcomes[outcome].line };
	return true;
}

uint32_t attr_outcome_entered_from(const struct attributor *a, uint32_t outcome)
{
	return outcome < a->nr_outcomes ? a->outcomes[outcome].entered_from : ATTR_NONE;
}

bool attr_query_selected(const struct attributor *a, uint32_t query)
{
	if (!a->query_selected)
		return true;
	return query < a->nr_query_selected && a->query_selected[query];
}

static bool is_query_row(const struct attributor *a, const struct attr_row *r)
{
	return r->kind == ROW_COMPONENT && r->level == a->query_level;
}

/* The component's own name, without the dictionary's label. */
static const char *bare_name(const struct attributor *a, uint32_t row)
{
	const struct attr_row *r = &a->rows.rows[row];
	const struct attr_level *lv = &a->levels[r->level];

	return lv->first[r->dict][row - lv->row_base[r->dict]].name;
}

static bool query_matches(const struct attributor *a, uint32_t row, const char *sel)
{
	const struct attr_row *r = &a->rows.rows[row];
	char *end;
	unsigned long long id;

	if (!strcmp(r->name, sel) || !strcmp(bare_name(a, row), sel))
		return true;
	if (*sel < '0' || *sel > '9')
		return false;
	errno = 0;
	id = strtoull(sel, &end, 10);
	return !*end && !errno && id == r->id;
}

/* "'q1' (1), 'q2' (2) and 3 more": some queries there are, into @buf. */
static void some_queries(const struct attributor *a, char *buf, size_t len)
{
	size_t i, n = 0, shown = 0, at = 0;

	buf[0] = '\0';
	for (i = 0; i < a->rows.nr; i++) {
		const struct attr_row *r = &a->rows.rows[i];

		if (!is_query_row(a, r))
			continue;
		if (shown < 6 && at < len) {
			at += snprintf(buf + at, len - at, "%s'%s' (%" PRIu64 ")",
				       shown ? ", " : "", r->name, r->id);
			shown++;
		}
		n++;
	}
	if (n > shown && at < len)
		snprintf(buf + at, len - at, " and %zu more", n - shown);
	if (!n)
		snprintf(buf, len, "none");
}

int attr_select_queries(struct attributor *a, const char *const *sel, int n,
			char *err, size_t errlen)
{
	char known[1024];
	size_t i;
	int k;

	if (a->query_level < 0) {
		snprintf(err, errlen, a->nr_dicts ?
			 "no dictionary declares the level '%s', whose components are what is selected" :
			 "selecting by '%s' needs a Tagging Dictionary that declares that level (--dict)",
			 ATTR_QUERY_LEVEL);
		return -EINVAL;
	}
	free(a->query_selected);
	a->nr_query_selected = a->rows.nr;
	a->query_selected = calloc(a->nr_query_selected + 1, sizeof(*a->query_selected));
	if (!a->query_selected) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (k = 0; k < n; k++) {
		bool found = false;

		for (i = 0; i < a->nr_query_selected; i++) {
			if (!is_query_row(a, &a->rows.rows[i]) ||
			    !query_matches(a, (uint32_t)i, sel[k]))
				continue;
			a->query_selected[i] = true;
			found = true;
		}
		if (!found) {
			some_queries(a, known, sizeof(known));
			snprintf(err, errlen, "no %s is named or numbered '%s'; there are %s",
				 ATTR_QUERY_LEVEL, sel[k], known);
			return -EINVAL;
		}
	}
	return 0;
}

bool attr_row_reaches(const struct attributor *a, uint32_t row, uint32_t upper)
{
	const struct attr_row *r, *u;
	int di;

	if (row >= a->rows.nr || upper >= a->rows.nr)
		return false;
	r = &a->rows.rows[row];
	u = &a->rows.rows[upper];
	if (r->kind != ROW_COMPONENT || u->kind != ROW_COMPONENT || r->dict != u->dict)
		return false;
	di = r->dict;
	return dict_reaches(a->dicts[di], a->levels[r->level].dict_level[di], r->id,
			    a->levels[u->level].dict_level[di], u->id);
}

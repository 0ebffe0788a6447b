// SPDX-License-Identifier: GPL-2.0-only
/*
 * Call stacks (perf record -g): each distinct stack of callers, symbolized
 * once and kept in the aggregate, root first.  Samples of a hot loop share
 * a few stacks, so a stack is interned by its raw return addresses (and
 * the process, whose mappings give them meaning) and symbolized when first
 * seen, never per sample.
 *
 * As perf reads the kernel's callchain: entries come leaf first, with
 * PERF_CONTEXT_* markers saying whose code follows; the first entry is the
 * sample's own IP (its frames are the sample's, not a caller's); in each
 * context the first entry is an interrupted IP and the others are return
 * addresses, looked up one byte back so that a call that is its function's
 * last instruction is named by that function (and its line by the call's).
 */
#include <errno.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/aggregate.h"
#include "tailor/symbols.h"
#include "analysis/callchains.h"
#include "util/grow.h"

#define KERNEL_START	0xffff800000000000ull

static uint64_t entry_at(const struct tev_sample *s, uint32_t i)
{
	uint64_t e;

	memcpy(&e, (const uint8_t *)s->callchain + 8ull * i, 8);
	return e;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* The bracketed name of an object, as the table's rows of code without symbols. */
static const char *object_name(struct symbolizer *sym, const char *path)
{
	const char *base = strrchr(path, '/');
	char name[512];

	snprintf(name, sizeof(name), "[%s]", base ? base + 1 : path);
	return sym_keep(sym, name);
}

static int add_frame(struct agg *g, const struct agg_frame *f)
{
	if (array_grow((void **)&g->frames, &g->cap_frames, g->nr_frames + 1, sizeof(*g->frames)))
		return -ENOMEM;
	g->frames[g->nr_frames++] = *f;
	return 0;
}

/* The callers of @s symbolized into g->frames, root first; their number. */
static int symbolize(struct agg *g, struct symbolizer *sym, const struct tev_sample *s,
		     uint32_t *n)
{
	uint64_t context = 0;
	bool leaf_seen = false, first_in_context = true;
	size_t start = g->nr_frames, i, j;
	uint32_t k;

	for (k = 0; k < s->nr_callchain; k++) {
		uint64_t e = entry_at(s, k);
		struct agg_frame f = { 0 };
		bool kernel;

		if (e >= PERF_CONTEXT_MAX) {
			context = e;
			first_in_context = true;
			continue;
		}
		if (!leaf_seen) {
			leaf_seen = true;
			first_in_context = false;
			continue;
		}
		kernel = context == PERF_CONTEXT_KERNEL || (!context && e >= KERNEL_START);
		if (kernel) {
			/* Kernel callers are one frame until kernel symbols are read. */
			if (g->nr_frames > start && g->frames[g->nr_frames - 1].kernel)
				continue;
			f.function = "[kernel]";
			f.kernel = true;
		} else {
			struct sym_result r;

			sym_lookup(sym, s->pid, first_in_context ? e : e - 1, s->time, &r);
			f.object = r.path;
			f.file = r.file;
			f.line = r.line;
			f.function = r.function ? r.function :
				     r.path ? object_name(sym, r.path) : "[unknown]";
			if (!f.function)
				return -ENOMEM;
		}
		first_in_context = false;
		if (add_frame(g, &f))
			return -ENOMEM;
	}
	/* Leaf first as the kernel gave them: root first as stacks are read. */
	for (i = start, j = g->nr_frames; i + 1 < j; i++, j--) {
		struct agg_frame t = g->frames[i];

		g->frames[i] = g->frames[j - 1];
		g->frames[j - 1] = t;
	}
	*n = (uint32_t)(g->nr_frames - start);
	return 0;
}

int chains_intern(struct chain_index *ix, struct agg *g, struct symbolizer *sym,
		  const struct tev_sample *s, uint32_t *chain)
{
	uint64_t h = 0, salt;
	uint32_t k, idx, n;
	int ret;

	*chain = 0;
	if (!s->nr_callchain)
		return 0;
	for (k = 0; k < s->nr_callchain; k++)
		h = mix(h, entry_at(s, k));
	/* A hash met by another stack: the next salt, until one is free or ours. */
	for (salt = 0;; salt++) {
		uint64_t key = h ^ salt * 0xc2b2ae3d27d4eb4full;

		if (!pair_map_get(&ix->by_hash, key, (uint64_t)s->pid << 32 | s->nr_callchain, &idx))
			break;
		if (ix->chains[idx].pid == s->pid && ix->chains[idx].n == s->nr_callchain &&
		    !memcmp(ix->entries + ix->chains[idx].first, s->callchain,
			    8ull * s->nr_callchain)) {
			*chain = idx;
			return 0;
		}
	}
	if (!g->nr_chains) {
		/* Chain 0: no callers recorded. */
		if (array_grow((void **)&g->chains, &g->cap_chains, 1, sizeof(*g->chains)))
			return -ENOMEM;
		g->chains[g->nr_chains++] = (struct agg_chain){ 0, 0 };
		if (array_grow((void **)&ix->chains, &ix->cap_chains, 1, sizeof(*ix->chains)))
			return -ENOMEM;
		ix->chains[0] = (struct raw_chain){ 0, 0, 0 };
	}
	idx = (uint32_t)g->nr_chains;
	if (array_grow((void **)&g->chains, &g->cap_chains, idx + 1, sizeof(*g->chains)) ||
	    array_grow((void **)&ix->chains, &ix->cap_chains, idx + 1, sizeof(*ix->chains)) ||
	    array_grow((void **)&ix->entries, &ix->cap_entries,
		       ix->nr_entries + 8ull * s->nr_callchain, 1))
		return -ENOMEM;
	g->chains[idx].first = (uint32_t)g->nr_frames;
	ret = symbolize(g, sym, s, &n);
	if (ret)
		return ret;
	g->chains[idx].n = n;
	ix->chains[idx] = (struct raw_chain){ ix->nr_entries, s->nr_callchain, s->pid };
	memcpy(ix->entries + ix->nr_entries, s->callchain, 8ull * s->nr_callchain);
	ix->nr_entries += 8ull * s->nr_callchain;
	if (pair_map_put(&ix->by_hash, h ^ salt * 0xc2b2ae3d27d4eb4full,
			 (uint64_t)s->pid << 32 | s->nr_callchain, idx))
		return -ENOMEM;
	g->nr_chains++;
	*chain = idx;
	return 0;
}

void chains_index_free(struct chain_index *ix)
{
	pair_map_free(&ix->by_hash);
	free(ix->chains);
	free(ix->entries);
	memset(ix, 0, sizeof(*ix));
}

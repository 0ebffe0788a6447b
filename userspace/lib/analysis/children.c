// SPDX-License-Identifier: GPL-2.0-only
/*
 * Functions' self and total samples from the call stacks (perf report
 * --children): a sample counts in the total of every function on its
 * stack, once, and in the self of its own.  Functions are matched by
 * name, as perf's table and the folded stacks match them.
 */
#include <stdlib.h>
#include <string.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "util/grow.h"
#include "util/hashmap.h"

struct builder {
	struct str_map index;
	struct agg_children_row *rows;
	size_t nr, cap;
	uint32_t *seen;		/* per row: the last stack that counted it, + 1 */
	size_t cap_seen;
};

static int row_of(struct builder *b, const char *name, uint32_t *idx)
{
	if (str_map_get(&b->index, name, idx))
		return 0;
	if (array_grow((void **)&b->rows, &b->cap, b->nr + 1, sizeof(*b->rows)) ||
	    array_grow((void **)&b->seen, &b->cap_seen, b->nr + 1, sizeof(*b->seen)) ||
	    str_map_put(&b->index, name, (uint32_t)b->nr))
		return -1;
	b->rows[b->nr] = (struct agg_children_row){ name, 0, 0 };
	b->seen[b->nr] = 0;
	*idx = (uint32_t)b->nr++;
	return 0;
}

/* @name is on stack @stack: its total counts the stack's samples once. */
static int on_stack(struct builder *b, const char *name, uint32_t stack, uint64_t samples)
{
	uint32_t idx;

	if (row_of(b, name, &idx))
		return -1;
	if (b->seen[idx] != stack + 1) {
		b->seen[idx] = stack + 1;
		b->rows[idx].total += samples;
	}
	return 0;
}

static int by_total(const void *a, const void *b)
{
	const struct agg_children_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->name, y->name);
}

struct agg_children_row *agg_children(const struct agg *g, size_t *n)
{
	struct builder b = { 0 };
	size_t i;
	uint32_t k, idx;

	for (i = 0; i < g->nr_stacks; i++) {
		const struct agg_stack_count *sc = &g->stacks[i];
		const char *own = attr_row(g->attr, attr_outcome_row(g->attr, sc->outcome))->name;
		const struct agg_chain *ch = sc->chain && sc->chain < g->nr_chains ? &g->chains[sc->chain] : NULL;

		if (!sc->samples)
			continue;
		if (row_of(&b, own, &idx) || on_stack(&b, own, (uint32_t)i, sc->samples))
			goto fail;
		b.rows[idx].self += sc->samples;
		for (k = 0; ch && k < ch->n; k++)
			if (on_stack(&b, g->frames[ch->first + k].function, (uint32_t)i, sc->samples))
				goto fail;
	}
	if (b.nr)
		qsort(b.rows, b.nr, sizeof(*b.rows), by_total);
	str_map_free(&b.index);
	free(b.seen);
	*n = b.nr;
	/* Never NULL for an empty profile: NULL says out of memory. */
	return b.rows ? b.rows : calloc(1, sizeof(*b.rows));
fail:
	str_map_free(&b.index);
	free(b.seen);
	free(b.rows);
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks, the input of flame graph tools (Brendan Gregg's
 * stackcollapse format, seed 004): one line per distinct stack, frames
 * root first joined by ';', then a space and its sample count --
 * "query;pipeline;operator;function;file:line 42".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/export.h"
#include "util/grow.h"

#define MAX_FRAMES	32

struct folded_line {
	char *stack;
	uint64_t samples;
};

/* A frame's name, with what would break the format (';', line ends) replaced. */
static size_t put_frame(char *buf, size_t at, size_t cap, const char *name)
{
	for (; *name && at + 1 < cap; name++)
		buf[at++] = *name == ';' ? ':' : (*name == '\n' || *name == '\r') ? ' ' : *name;
	buf[at] = '\0';
	return at;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack,
		      ((const struct folded_line *)b)->stack);
}

static int write_folded(const struct export_profile *p, FILE *out)
{
	const struct agg *g = p->agg;
	size_t nr = attr_nr_outcomes(p->attr), i, n = 0;
	uint64_t *per_outcome = calloc(nr + 1, sizeof(*per_outcome));
	struct folded_line *lines = NULL;
	size_t cap = 0;
	int ret = -ENOMEM;

	if (!per_outcome)
		return -ENOMEM;
	/* Threads and tags apart in the pass; one stack here. */
	for (i = 0; i < g->nr_stacks; i++)
		per_outcome[g->stacks[i].outcome] += g->stacks[i].samples;
	for (i = 0; i < nr; i++) {
		uint32_t frames[MAX_FRAMES];
		char buf[8192];
		size_t at = 0;
		int f, nf;

		if (!per_outcome[i])
			continue;
		nf = attr_outcome_frames(p->attr, (uint32_t)i, frames, MAX_FRAMES);
		for (f = 0; f < nf; f++) {
			if (f && at + 2 < sizeof(buf))
				buf[at++] = ';';
			at = put_frame(buf, at, sizeof(buf), attr_row(p->attr, frames[f])->name);
		}
		if (array_grow((void **)&lines, &cap, n + 1, sizeof(*lines)))
			goto out;
		lines[n].stack = strdup(buf);
		lines[n].samples = per_outcome[i];
		if (!lines[n++].stack)
			goto out;
	}
	/* Outcomes apart (two addresses of one line) may fold to one stack. */
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_lines);
	for (i = 0; i < n; i++) {
		uint64_t sum = lines[i].samples;

		while (i + 1 < n && !strcmp(lines[i].stack, lines[i + 1].stack))
			sum += lines[++i].samples;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].stack, sum);
	}
	ret = ferror(out) ? -EIO : 0;
out:
	for (i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
	free(per_outcome);
	return ret;
}

const struct exporter export_folded = {
	.name = "folded",
	.help = "folded stacks (query;pipeline;operator;function;file:line COUNT) for flame graphs",
	.needs = EXPORT_NEEDS_STACKS,
	.write_profile = write_folded,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks, the input of flame graph tools (Brendan Gregg's
 * stackcollapse format, seed 004): one line per distinct stack, frames
 * root first joined by ';', then a space and its sample count --
 * "query;pipeline;operator;function;file:line 42"; a profile with call
 * stacks (perf record -g) has the callers between the dictionary's
 * components and the code: "query;...;operator;main;run;function;line".
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

/* A stack's line: its outcome's frames, its callers before the code's. */
static int stack_line(const struct export_profile *p, const struct agg_stack_count *sc,
		      char *buf, size_t cap)
{
	const struct agg *g = p->agg;
	const struct agg_chain *ch = sc->chain ? &g->chains[sc->chain] : NULL;
	uint32_t frames[MAX_FRAMES];
	size_t at = 0;
	int f, nf, code;
	uint32_t k;

	buf[0] = '\0';
	nf = attr_outcome_frames(p->attr, sc->outcome, frames, MAX_FRAMES);
	code = ch ? attr_code_frame(p->attr, frames, nf) : nf;
	for (f = 0; f <= nf; f++) {
		if (f == code) {
			for (k = 0; ch && k < ch->n; k++) {
				if (at && at + 2 < cap)
					buf[at++] = ';';
				at = put_frame(buf, at, cap, g->frames[ch->first + k].function);
			}
		}
		if (f == nf)
			break;
		if (at && at + 2 < cap)
			buf[at++] = ';';
		at = put_frame(buf, at, cap, attr_row(p->attr, frames[f])->name);
	}
	return 0;
}

static int write_folded(const struct export_profile *p, FILE *out)
{
	const struct agg *g = p->agg;
	struct folded_line *lines = NULL;
	size_t cap = 0, i, n = 0;
	static char buf[65536];
	int ret = -ENOMEM;

	/* Threads and tags apart in the pass: one line per stack here. */
	for (i = 0; i < g->nr_stacks; i++) {
		if (!g->stacks[i].samples)
			continue;
		stack_line(p, &g->stacks[i], buf, sizeof(buf));
		if (array_grow((void **)&lines, &cap, n + 1, sizeof(*lines)))
			goto out;
		lines[n].stack = strdup(buf);
		lines[n].samples = g->stacks[i].samples;
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
	return ret;
}

const struct exporter export_folded = {
	.name = "folded",
	.help = "folded stacks (query;pipeline;operator;function;file:line COUNT) for flame graphs",
	.needs = EXPORT_NEEDS_STACKS,
	.write_profile = write_folded,
};

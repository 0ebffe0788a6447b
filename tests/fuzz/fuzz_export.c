// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the aggregation pass and every exporter: a fuzzed
 * profile goes through the session, the attributor (function and line
 * levels, a stack of both), the pass with everything kept, and each
 * format into memory.  The profile's mappings are redirected to this
 * program's own executable, so fuzzed IPs land on real functions and
 * lines, never on whatever files the input names.  No input may crash
 * them, and what they write must add up: every folded line's count sums
 * to the samples counted, slices nest per thread, the lanes' runs hold
 * every sample once; the lanes plot is drawn too.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/export.h"
#include "tailor/session.h"
#include "tailor/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct redirect {
	struct tev_consumer events;
	struct tev_consumer *to;
};

static int redirect_mmap(struct tev_consumer *c, const struct tev_mmap *m)
{
	struct redirect *r = tev_container_of(c, struct redirect, events);
	struct tev_mmap copy = *m;

	copy.path = "/proc/self/exe";
	return r->to->mmap(r->to, &copy);
}

static int redirect_other(struct tev_consumer *c, const struct tev_task *t)
{
	struct redirect *r = tev_container_of(c, struct redirect, events);

	return r->to->fork(r->to, t);
}

/* The folded output's counts, summed. */
static uint64_t folded_total(const char *text, size_t len)
{
	uint64_t sum = 0;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *sp;

		if (!nl)
			abort();	/* every line ends */
		for (sp = nl; sp > p && sp[-1] != ' '; sp--)
			;
		if (sp == p)
			abort();	/* every line has a count */
		sum += strtoull(sp, NULL, 10);
		p = nl + 1;
	}
	return sum;
}

static void check_slices(const struct agg *g, int levels)
{
	size_t i, j;

	for (i = 0; i < g->nr_slices; i++) {
		const struct agg_slice *c = &g->slices[i];

		if (c->end_ns < c->begin_ns || c->level >= levels)
			abort();
		if (!c->level)
			continue;
		/* Its parent: the latest slice of the level above on its thread. */
		for (j = i; j-- > 0;)
			if (g->slices[j].tid == c->tid && g->slices[j].pid == c->pid &&
			    g->slices[j].level == c->level - 1)
				break;
		if (j == (size_t)-1 || g->slices[j].begin_ns > c->begin_ns ||
		    g->slices[j].end_ns < c->end_ns)
			abort();
	}
}

static void check_lanes(const struct agg *g)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < g->nr_lanes; i++) {
		if (g->lanes[i].end_ns < g->lanes[i].begin_ns ||
		    g->lanes[i].thread >= g->nr_threads || !g->lanes[i].samples)
			abort();
		sum += g->lanes[i].samples;
	}
	if (sum != g->total)
		abort();
}

/*
 * The CMetric adds up: the costs share out exactly the threads' CMetric,
 * critical is part of it, and no thread runs longer than the span.
 */
static void check_parallelism(const struct agg *g)
{
	const struct agg_parallelism *p = &g->par;
	double costs = 0, critical = 0, threads = 0, slack;
	uint64_t samples = 0, span = (uint64_t)(p->end_ns - p->begin_ns);
	size_t i;

	if (p->end_ns < p->begin_ns)
		abort();
	for (i = 0; i < p->nr_costs; i++) {
		costs += p->costs[i].cm_ns;
		critical += p->costs[i].critical_cm_ns;
		samples += p->costs[i].samples;
		if (p->costs[i].critical_cm_ns > p->costs[i].cm_ns * (1 + 1e-9) + 1e-6)
			abort();
	}
	for (i = 0; i < p->nr_threads; i++) {
		threads += p->threads[i].cm_ns;
		/* Each interval's ns rounds down on its own; absurd spans saturate. */
		if ((p->end_ns < INT64_MAX / 8 && p->begin_ns > -INT64_MAX / 8 &&
		     p->threads[i].running_ns > span + p->threads[i].switches + 2) ||
		    p->threads[i].cm_ns < 0)
			abort();
	}
	/* The lanes' and the trace's states: a known thread and state, forward in time. */
	for (i = 0; i < p->nr_runs; i++)
		if (p->runs[i].thread >= p->nr_threads || p->runs[i].state > PAR_BLOCKED ||
		    p->runs[i].end_ns < p->runs[i].begin_ns)
			abort();
	slack = 1e-6 * (p->cm_ns > 1 ? p->cm_ns : 1) + 1e-3;
	if (fabs(costs - p->cm_ns) > slack || fabs(threads - p->cm_ns) > slack ||
	    fabs(critical - p->critical_cm_ns) > slack || samples != p->samples ||
	    p->samples_outside > p->samples)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const stack[] = { "function", "line" };
	static const struct exporter *const formats[] = {
		&export_pprof, &export_folded, &export_chrome,
	};
	static int fd = -1;
	static char path[64];
	struct session_options so = { .tag_reg = 23, .tsc_khz = 1000000 };
	struct attr_options ao = { .level = "function", .stack = stack, .nr_stack = 2 };
	struct agg_options go = { .lines = true, .buckets = true, .memory = true,
				  .stacks = true, .slices = true, .lanes = true,
				  .parallelism = true };
	struct redirect r = { .events = { .mmap = redirect_mmap, .fork = redirect_other } };
	struct symbolizer *sym;
	struct attributor *a;
	struct session *s;
	struct agg g;
	char err[512];
	size_t f;

	if (fd < 0) {
		fd = memfd_create("fuzz-export", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	s = session_open(path, &so, err, sizeof(err));
	if (!s)
		return 0;
	sym = sym_new();
	a = attr_new(&ao, err, sizeof(err));
	if (!sym || !a)
		abort();
	r.to = sym_consumer(sym);
	go.mappings = &r.events;
	if (!agg_prepare(&g, session_info(s), a, &go, err, sizeof(err))) {
		struct export_profile p = { "fuzz", session_info(s), &g, a };

		if (agg_run(&g, s, sym))
			abort();
		check_slices(&g, 2);
		check_lanes(&g);
		check_parallelism(&g);
		{
			char *text = NULL;
			size_t len = 0;
			FILE *out = open_memstream(&text, &len);

			if (!out || svg_lanes(&g, out) || fclose(out))
				abort();
			free(text);
		}
		for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
			char *text = NULL;
			size_t len = 0;
			FILE *out = open_memstream(&text, &len);

			if (!out || formats[f]->write_profile(&p, out) || fclose(out))
				abort();
			if (formats[f] == &export_folded && folded_total(text, len) != g.total)
				abort();
			free(text);
		}
		agg_free(&g);
	}
	attr_free(a);
	sym_free(sym);
	session_close(s);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The aggregation pass (tailor/aggregate.h): a consumer of a session's
 * samples, comms and lost counts that keeps, in one pass, everything the
 * views and exporters print.  Each aggregate costs something per sample
 * (a hash lookup, mostly), so only the ones asked for are kept.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tailor/aggregate.h"
#include "analysis/callchains.h"
#include "tailor/attribution.h"
#include "tailor/events.h"
#include "tailor/session.h"
#include "tailor/symbols.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define MAX_BUCKETS	1000000
#define MAX_STACK	16

/* A thread's runs in progress: one per stack level, and its lane's. */
struct thread_state {
	uint32_t open[MAX_STACK];	/* slice index, or UINT32_MAX */
	uint32_t lane;			/* lane index, or UINT32_MAX */
	uint64_t last_ns;
	bool any;
};

struct pass {
	struct tev_consumer events;
	struct agg *g;
	struct symbolizer *sym;
	struct pair_map line_index;	/* (line, row) */
	struct pair_map bucket_index;	/* (bucket, row) */
	struct pair_map stack_index;	/* (outcome, tag flag, tid), tag */
	/* Stacks with callers: (outcome, tag flag, tid), (tag, chain)'s number. */
	struct pair_map chain_stack_index;
	struct pair_map tag_chain_index;	/* (tag, chain) */
	uint32_t nr_tag_chains;
	/*
	 * OpenTelemetry's ids: the trace's two halves -> trace number;
	 * (trace number, span id) -> index into otel_ids; stacks with a
	 * context, (outcome, tag flag, tid), ((tag or chain's number), otel).
	 */
	struct pair_map otel_trace_index;
	struct pair_map otel_index;
	struct pair_map otel_key_index;
	struct pair_map otel_stack_index;
	uint32_t nr_otel_traces, nr_otel_keys;
	struct chain_index chains;
	struct pair_map images;		/* (pid, 0): its execs so far */
	struct pair_map thread_index;	/* (pid, tid) */
	struct pair_map query_index;	/* (query, row) */
	/* With opt.processes: (pid, 0) -> its name now; names; (row, process). */
	struct pair_map process_now;
	struct str_map process_index;
	struct pair_map process_count_index;
	struct par_builder *par;	/* with opt.parallelism */
	struct thread_state *states;	/* per thread, with slices */
	size_t cap_states;
	int nr_stack;
	uint64_t seen;
	bool need_ns;
};

int agg_prepare(struct agg *g, const struct session_info *info,
		struct attributor *attr, const struct agg_options *o,
		char *err, size_t errlen)
{
	uint64_t span;

	memset(g, 0, sizeof(*g));
	g->info = info;
	g->attr = attr;
	g->opt = *o;
	if ((o->windowed || o->buckets || o->slices || o->lanes || o->parallelism) && !info->mult) {
		snprintf(err, errlen, "times are raw TSC ticks and the TSC frequency is unknown; pass --tsc-khz");
		return -EINVAL;
	}
	/* Each sample's time, in ns. */
	if (o->sample_stacks && !info->mult) {
		snprintf(err, errlen, "times are raw TSC ticks and the TSC frequency is unknown; pass --tsc-khz");
		return -EINVAL;
	}
	if (o->by_query && !attr_has_queries(attr)) {
		snprintf(err, errlen, "grouping by query needs a dictionary that declares the level '%s'",
			 ATTR_QUERY_LEVEL);
		return -EINVAL;
	}
	if (o->stacks || o->slices) {
		if (attr_nr_stack_levels(attr) > MAX_STACK) {
			snprintf(err, errlen, "at most %d stack levels", MAX_STACK);
			return -EINVAL;
		}
	}
	if (!o->windowed) {
		g->opt.from_ns = 0;
		g->opt.to_ns = UINT64_MAX;
	}
	if (o->buckets || o->memory || o->slices || o->lanes) {
		span = session_time_to_ns(info, info->last_time - info->first_time) + 1;
		if (g->opt.to_ns > span)
			g->opt.to_ns = span;
		g->span_ns = g->opt.to_ns > g->opt.from_ns ? g->opt.to_ns - g->opt.from_ns : 1;
	}
	if (o->buckets) {
		uint64_t b = 1;

		/* 1, 2 or 5 times a power of ten: about 40 buckets over the window. */
		while (!g->opt.bucket_ns) {
			if (g->span_ns / b <= 40)
				g->opt.bucket_ns = b;
			else if (g->span_ns / (2 * b) <= 40)
				g->opt.bucket_ns = 2 * b;
			else if (g->span_ns / (5 * b) <= 40)
				g->opt.bucket_ns = 5 * b;
			b *= 10;
		}
		g->nr_buckets = (g->span_ns + g->opt.bucket_ns - 1) / g->opt.bucket_ns;
		if (g->nr_buckets > MAX_BUCKETS) {
			snprintf(err, errlen,
				 "--bucket %" PRIu64 "ns makes %" PRIu64 " buckets of a %" PRIu64 "ns window; at most %d",
				 g->opt.bucket_ns, g->nr_buckets, g->span_ns, MAX_BUCKETS);
			return -EINVAL;
		}
	}
	if (info->period_is_ns && info->period)
		g->sample_ns = info->period;
	else if (info->nr_samples > 1)
		g->sample_ns = session_time_to_ns(info, info->last_time - info->first_time) /
			       (info->nr_samples - 1);
	if (!g->sample_ns)
		g->sample_ns = 1;
	return 0;
}

static bool in_list(const uint32_t *l, int n, uint32_t v)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

static int count_line(struct pass *p, uint32_t line, uint32_t row)
{
	struct agg *g = p->g;
	uint32_t idx;

	if (pair_map_get(&p->line_index, line, row, &idx)) {
		g->lines[idx].samples++;
		return 0;
	}
	if (array_grow((void **)&g->lines, &g->cap_lines, g->nr_lines + 1, sizeof(*g->lines)) ||
	    pair_map_put(&p->line_index, line, row, (uint32_t)g->nr_lines))
		return -ENOMEM;
	g->lines[g->nr_lines++] = (struct agg_line_count){ line, row, 1 };
	return 0;
}

static int count_bucket(struct pass *p, uint64_t bucket, uint32_t row)
{
	struct agg *g = p->g;
	uint32_t idx;

	if (pair_map_get(&p->bucket_index, bucket, row, &idx)) {
		g->buckets[idx].samples++;
		return 0;
	}
	if (array_grow((void **)&g->buckets, &g->cap_bucket_counts, g->nr_bucket_counts + 1,
		       sizeof(*g->buckets)) ||
	    pair_map_put(&p->bucket_index, bucket, row, (uint32_t)g->nr_bucket_counts))
		return -ENOMEM;
	g->buckets[g->nr_bucket_counts++] = (struct agg_bucket_count){ bucket, row, 1 };
	return 0;
}

/* The index in otel_ids of @s's context, made on first sight; 0 for none. */
static int otel_of(struct pass *p, const struct tev_sample *s, uint32_t *idx)
{
	struct agg *g = p->g;
	uint64_t hi, lo, span;
	uint32_t trace;

	*idx = 0;
	if (!(s->flags & TEV_HAS_OTEL))
		return 0;
	memcpy(&hi, s->otel_trace_id, 8);
	memcpy(&lo, s->otel_trace_id + 8, 8);
	memcpy(&span, s->otel_span_id, 8);
	if (!pair_map_get(&p->otel_trace_index, hi, lo, &trace)) {
		trace = p->nr_otel_traces++;
		if (pair_map_put(&p->otel_trace_index, hi, lo, trace))
			return -ENOMEM;
	}
	if (pair_map_get(&p->otel_index, trace, span, idx))
		return 0;
	if (!g->nr_otel_ids) {
		if (array_grow((void **)&g->otel_ids, &g->cap_otel_ids, 1, sizeof(*g->otel_ids)))
			return -ENOMEM;
		memset(g->otel_ids, 0, sizeof(*g->otel_ids));
		g->nr_otel_ids = 1;
	}
	if (array_grow((void **)&g->otel_ids, &g->cap_otel_ids, g->nr_otel_ids + 1,
		       sizeof(*g->otel_ids)) ||
	    pair_map_put(&p->otel_index, trace, span, (uint32_t)g->nr_otel_ids))
		return -ENOMEM;
	*idx = (uint32_t)g->nr_otel_ids++;
	memcpy(g->otel_ids[*idx].trace_id, s->otel_trace_id, 16);
	memcpy(g->otel_ids[*idx].span_id, s->otel_span_id, 8);
	return 0;
}

static int count_stack(struct pass *p, const struct tev_sample *s, uint64_t ns, uint32_t outcome)
{
	bool has_tag = (s->flags & (TEV_HAS_TAG | TEV_USER_TAG)) == (TEV_HAS_TAG | TEV_USER_TAG) &&
		       attr_tag_counts(p->g->attr, s);
	uint64_t key = (uint64_t)outcome << 33 | (uint64_t)has_tag << 32 | s->tid;
	uint64_t tag = has_tag ? s->tag : 0, second = tag;
	struct pair_map *index = &p->stack_index;
	struct agg *g = p->g;
	uint32_t idx, chain, tc, otel;

	if (outcome >= 1u << 31 || otel_of(p, s, &otel))
		return -ENOMEM;
	if (tev_sample_has_stack(s)) {
		uint32_t image = 0;

		pair_map_get(&p->images, s->pid, 0, &image);
		if (chains_intern(&p->chains, g, p->sym, s, image, &chain))
			return -ENOMEM;
	} else {
		chain = 0;
	}
	/* With callers: the stack is also its chain, (tag, chain) numbered. */
	if (chain) {
		if (!pair_map_get(&p->tag_chain_index, tag, chain, &tc)) {
			tc = p->nr_tag_chains++;
			if (pair_map_put(&p->tag_chain_index, tag, chain, tc))
				return -ENOMEM;
		}
		index = &p->chain_stack_index;
		second = tc;
	}
	/* In a context: the stack is also its context, (second, context) numbered. */
	if (otel) {
		uint64_t with = (uint64_t)otel << 1 | (chain != 0);

		if (!pair_map_get(&p->otel_key_index, second, with, &tc)) {
			tc = p->nr_otel_keys++;
			if (pair_map_put(&p->otel_key_index, second, with, tc))
				return -ENOMEM;
		}
		index = &p->otel_stack_index;
		second = tc;
	}
	if (!pair_map_get(index, key, second, &idx)) {
		if (array_grow((void **)&g->stacks, &g->cap_stacks, g->nr_stacks + 1,
			       sizeof(*g->stacks)) ||
		    pair_map_put(index, key, second, (uint32_t)g->nr_stacks))
			return -ENOMEM;
		idx = (uint32_t)g->nr_stacks++;
		g->stacks[idx] = (struct agg_stack_count){ .outcome = outcome, .chain = chain,
							   .pid = s->pid, .tid = s->tid,
							   .has_tag = has_tag, .tag = tag,
							   .otel = otel };
	}
	g->stacks[idx].samples++;
	g->stacks[idx].period += s->period;
	/* A trace's sampled stacks: this sample's, if it came with one (even of no callers). */
	if (g->opt.sample_stacks && tev_sample_has_stack(s)) {
		if (array_grow((void **)&g->stack_samples, &g->cap_stack_samples,
			       g->nr_stack_samples + 1, sizeof(*g->stack_samples)))
			return -ENOMEM;
		g->stack_samples[g->nr_stack_samples++] = (struct agg_stack_sample){ ns, idx };
	}
	return 0;
}

/* The thread (pid, tid), made on first sight. */
static int thread_of(struct pass *p, uint32_t pid, uint32_t tid, uint32_t *idx)
{
	struct agg *g = p->g;
	size_t i;

	if (pair_map_get(&p->thread_index, pid, tid, idx))
		return 0;
	if (array_grow((void **)&g->threads, &g->cap_threads, g->nr_threads + 1,
		       sizeof(*g->threads)) ||
	    array_grow((void **)&p->states, &p->cap_states, g->nr_threads + 1,
		       sizeof(*p->states)) ||
	    pair_map_put(&p->thread_index, pid, tid, (uint32_t)g->nr_threads))
		return -ENOMEM;
	*idx = (uint32_t)g->nr_threads++;
	g->threads[*idx] = (struct agg_thread){ .pid = pid, .tid = tid };
	for (i = 0; i < MAX_STACK; i++)
		p->states[*idx].open[i] = UINT32_MAX;
	p->states[*idx].lane = UINT32_MAX;
	p->states[*idx].any = false;
	return 0;
}

/* a + b, or UINT64_MAX where that overflows (times near the end of the axis). */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Where a thread's runs end at @at_ns: then, or a sample's time after its last. */
static uint64_t run_end(const struct pass *p, const struct thread_state *ts, uint64_t at_ns)
{
	uint64_t end = add_sat(ts->last_ns, p->g->sample_ns);

	return at_ns < end ? at_ns : end;
}

static void close_slices(struct pass *p, struct thread_state *ts, int from, uint64_t at_ns)
{
	struct agg *g = p->g;
	uint64_t end = run_end(p, ts, at_ns);
	int i;

	for (i = from; i < p->nr_stack; i++) {
		if (ts->open[i] == UINT32_MAX)
			continue;
		g->slices[ts->open[i]].end_ns = end;
		ts->open[i] = UINT32_MAX;
	}
}

static void close_lane(struct pass *p, struct thread_state *ts, uint64_t at_ns)
{
	if (ts->lane == UINT32_MAX)
		return;
	p->g->lanes[ts->lane].end_ns = run_end(p, ts, at_ns);
	ts->lane = UINT32_MAX;
}

/*
 * Runs of consecutive samples of a thread: where a level's row changes,
 * that level's run and those below it end and new ones begin, so runs
 * nest (an operator's inside its pipeline's).  A run ends at the next
 * sample, or a sample's worth of time after its last one when the thread
 * was gone longer than that.
 */
static int track_slices(struct pass *p, struct thread_state *ts, const struct tev_sample *s,
			uint64_t ns, bool near, uint32_t outcome)
{
	const uint32_t *rows = attr_outcome_rows(p->g->attr, outcome);
	struct agg *g = p->g;
	int i, from;

	from = 0;
	if (near)
		while (from < p->nr_stack && ts->open[from] != UINT32_MAX &&
		       g->slices[ts->open[from]].row == rows[from])
			from++;
	close_slices(p, ts, from, ns);
	for (i = 0; i < p->nr_stack; i++) {
		if (i < from) {
			g->slices[ts->open[i]].samples++;
			continue;
		}
		if (array_grow((void **)&g->slices, &g->cap_slices, g->nr_slices + 1,
			       sizeof(*g->slices)))
			return -ENOMEM;
		ts->open[i] = (uint32_t)g->nr_slices;
		g->slices[g->nr_slices++] = (struct agg_slice){
			.pid = s->pid, .tid = s->tid, .level = i, .row = rows[i],
			.begin_ns = ns, .end_ns = ns, .samples = 1,
		};
	}
	return 0;
}

/* The lane's run: the same (query, row) as the thread's open one, or a new one. */
static int track_lane(struct pass *p, struct thread_state *ts, uint32_t thread,
		      uint64_t ns, bool near, const struct attr_result *res)
{
	struct agg *g = p->g;
	struct agg_lane *l = ts->lane != UINT32_MAX ? &g->lanes[ts->lane] : NULL;

	if (near && l && l->row == res->row && l->query == res->query) {
		l->samples++;
		return 0;
	}
	close_lane(p, ts, ns);
	if (array_grow((void **)&g->lanes, &g->cap_lanes, g->nr_lanes + 1, sizeof(*g->lanes)))
		return -ENOMEM;
	ts->lane = (uint32_t)g->nr_lanes;
	g->lanes[g->nr_lanes++] = (struct agg_lane){
		.thread = thread, .query = res->query, .row = res->row,
		.begin_ns = ns, .end_ns = ns, .samples = 1,
	};
	return 0;
}

/* A sample of a thread: its slices and its lane. */
static int track_thread(struct pass *p, const struct tev_sample *s, uint64_t ns,
			const struct attr_result *res)
{
	struct agg *g = p->g;
	struct thread_state *ts;
	uint32_t idx;
	bool near;

	if (thread_of(p, s->pid, s->tid, &idx))
		return -ENOMEM;
	ts = &p->states[idx];
	/* A sample that came late (a broken round) joins its thread's present. */
	if (ts->any && ns < ts->last_ns)
		ns = ts->last_ns;
	near = ts->any && ns <= add_sat(ts->last_ns, add_sat(g->sample_ns, g->sample_ns));
	if (g->opt.slices && track_slices(p, ts, s, ns, near, res->outcome))
		return -ENOMEM;
	if (g->opt.lanes && track_lane(p, ts, idx, ns, near, res))
		return -ENOMEM;
	ts->last_ns = ns;
	ts->any = true;
	g->threads[idx].samples++;
	return 0;
}

/* A sample of another query: the thread's runs end there. */
static void break_thread(struct pass *p, const struct tev_sample *s, uint64_t ns)
{
	struct thread_state *ts;
	uint32_t idx;

	if (!pair_map_get(&p->thread_index, s->pid, s->tid, &idx))
		return;
	ts = &p->states[idx];
	if (!ts->any || ns < ts->last_ns)
		return;
	close_slices(p, ts, 0, ns);
	close_lane(p, ts, ns);
}

static int count_query(struct pass *p, uint32_t query, uint32_t row)
{
	struct agg *g = p->g;
	uint32_t idx;

	if (pair_map_get(&p->query_index, query, row, &idx)) {
		g->query_counts[idx].samples++;
		return 0;
	}
	if (array_grow((void **)&g->query_counts, &g->cap_query_counts, g->nr_query_counts + 1,
		       sizeof(*g->query_counts)) ||
	    pair_map_put(&p->query_index, query, row, (uint32_t)g->nr_query_counts))
		return -ENOMEM;
	g->query_counts[g->nr_query_counts++] = (struct agg_query_count){ query, row, 1 };
	return 0;
}

/* The process called @name, made on first sight. */
static int process_named(struct pass *p, const char *name, uint32_t *idx)
{
	struct agg *g = p->g;

	if (str_map_get(&p->process_index, name, idx))
		return 0;
	if (array_grow((void **)&g->processes, &g->cap_processes, g->nr_processes + 1,
		       sizeof(*g->processes)) ||
	    str_map_put(&p->process_index, name, (uint32_t)g->nr_processes))
		return -ENOMEM;
	*idx = (uint32_t)g->nr_processes++;
	g->processes[*idx] = (struct agg_process){ 0 };
	snprintf(g->processes[*idx].name, sizeof(g->processes[*idx].name), "%s", name);
	return 0;
}

/* A sample of @row in process @pid, under the name the process has now. */
static int count_process(struct pass *p, uint32_t pid, uint32_t row, uint64_t period)
{
	struct agg *g = p->g;
	uint32_t process, idx;
	char unnamed[16];

	if (!pair_map_get(&p->process_now, pid, 0, &process)) {
		/* No comm seen for it (perf's way of naming such a one). */
		snprintf(unnamed, sizeof(unnamed), ":%u", pid);
		if (process_named(p, unnamed, &process) ||
		    pair_map_put(&p->process_now, pid, 0, process))
			return -ENOMEM;
	}
	g->processes[process].samples++;
	if (pair_map_get(&p->process_count_index, row, process, &idx)) {
		g->process_counts[idx].samples++;
		g->process_counts[idx].period += period;
		return 0;
	}
	if (array_grow((void **)&g->process_counts, &g->cap_process_counts,
		       g->nr_process_counts + 1, sizeof(*g->process_counts)) ||
	    pair_map_put(&p->process_count_index, row, process, (uint32_t)g->nr_process_counts))
		return -ENOMEM;
	g->process_counts[g->nr_process_counts++] =
		(struct agg_process_count){ row, process, 1, period };
	return 0;
}

static int on_sample(struct tev_consumer *c, const struct tev_sample *s)
{
	struct pass *p = tev_container_of(c, struct pass, events);
	struct agg *g = p->g;
	struct attr_result res;
	uint64_t ns = 0;

	if (g->opt.progress && !(++p->seen & 0xfffff))
		fprintf(stderr, "\rtailor: %" PRIu64 "M of %" PRIu64 "M samples",
			p->seen >> 20, g->info->nr_samples >> 20);
	if ((g->opt.nr_tids && !in_list(g->opt.tids, g->opt.nr_tids, s->tid)) ||
	    (g->opt.nr_pids && !in_list(g->opt.pids, g->opt.nr_pids, s->pid))) {
		g->filtered_out++;
		/* Its slice's CMetric is still its, not the slice's unsampled. */
		if (p->par && par_sample(p->par, s, PAR_FILTERED, ATTR_NONE))
			return -ENOMEM;
		return 0;
	}
	if (p->need_ns) {
		ns = session_time_to_ns(g->info, s->time - g->info->first_time);
		if (g->opt.windowed && (ns < g->opt.from_ns || ns >= g->opt.to_ns)) {
			g->filtered_out++;
			return 0;
		}
	}
	if (attr_sample(g->attr, p->sym, s, &res))
		return -ENOMEM;
	if (res.excluded) {
		g->filtered_out++;
		if (g->opt.slices || g->opt.lanes)
			break_thread(p, s, ns);
		/* Its slice's CMetric is still its, not the slice's unsampled. */
		if (p->par && par_sample(p->par, s, PAR_FILTERED, ATTR_NONE))
			return -ENOMEM;
		return 0;
	}
	if (res.row >= g->cap_rows) {
		size_t cap = g->cap_rows, want = g->cap_rows;

		/*
		 * The periods' array first, to the length the samples' will
		 * have: cap_rows bounds both, and grows only once both did.
		 */
		if (array_grow((void **)&g->row_period, &want, res.row + 1, sizeof(uint64_t)))
			return -ENOMEM;
		if (array_grow((void **)&g->row_samples, &cap, want, sizeof(uint64_t)))
			return -ENOMEM;
		g->cap_rows = want < cap ? want : cap;
	}
	g->row_samples[res.row]++;
	g->row_period[res.row] += s->period;
	g->total++;
	if (!s->period) {
		g->unweighted++;
	} else {
		g->total_period += s->period;
		if (!g->min_period || s->period < g->min_period)
			g->min_period = s->period;
		if (s->period > g->max_period)
			g->max_period = s->period;
	}
	if (g->opt.lines && res.line != ATTR_NONE && count_line(p, res.line, res.row))
		return -ENOMEM;
	if (g->opt.buckets &&
	    count_bucket(p, (ns - g->opt.from_ns) / g->opt.bucket_ns, res.row))
		return -ENOMEM;
	if (g->opt.memory && (s->flags & TEV_HAS_ADDR)) {
		if (array_grow((void **)&g->mem, &g->cap_mem, g->nr_mem + 1, sizeof(*g->mem)))
			return -ENOMEM;
		g->mem[g->nr_mem++] = (struct agg_mem_point){ ns, s->data_addr, res.row };
	}
	/* Without stacks asked for, sample_stacks counts those of samples that have one. */
	if ((g->opt.stacks || (g->opt.sample_stacks && tev_sample_has_stack(s))) &&
	    count_stack(p, s, ns, res.outcome))
		return -ENOMEM;
	if ((g->opt.slices || g->opt.lanes) && track_thread(p, s, ns, &res))
		return -ENOMEM;
	if (g->opt.by_query && res.query != ATTR_NONE && count_query(p, res.query, res.row))
		return -ENOMEM;
	if (g->opt.processes && count_process(p, s->pid, res.row, s->period))
		return -ENOMEM;
	if (p->par && par_sample(p->par, s, res.outcome, res.row))
		return -ENOMEM;
	return 0;
}

static int on_comm(struct tev_consumer *c, const struct tev_comm *e)
{
	struct pass *p = tev_container_of(c, struct pass, events);
	uint32_t idx, image = 0;

	if (p->par && par_comm(p->par, e))
		return -ENOMEM;
	if (p->g->opt.processes && e->pid == e->tid &&
	    (process_named(p, e->name, &idx) || pair_map_put(&p->process_now, e->pid, 0, idx)))
		return -ENOMEM;
	/* A new image: its stacks' addresses mean other code (callchains.c). */
	if (e->exec) {
		pair_map_get(&p->images, e->pid, 0, &image);
		if (pair_map_put(&p->images, e->pid, 0, image + 1))
			return -ENOMEM;
	}
	if (!p->g->opt.slices && !p->g->opt.lanes)
		return 0;
	if (thread_of(p, e->pid, e->tid, &idx))
		return -ENOMEM;
	snprintf(p->g->threads[idx].name, sizeof(p->g->threads[idx].name), "%s", e->name);
	return 0;
}

static int on_lost(struct tev_consumer *c, const struct tev_lost *e)
{
	struct pass *p = tev_container_of(c, struct pass, events);

	p->g->lost += e->count;
	return 0;
}

static int on_switch(struct tev_consumer *c, const struct tev_switch *e)
{
	struct pass *p = tev_container_of(c, struct pass, events);

	return p->par ? par_switch(p->par, e) : 0;
}

static int on_wakeup(struct tev_consumer *c, const struct tev_wakeup *e)
{
	struct pass *p = tev_container_of(c, struct pass, events);

	return p->par ? par_wakeup(p->par, e) : 0;
}

static int on_fork(struct tev_consumer *c, const struct tev_task *e)
{
	struct pass *p = tev_container_of(c, struct pass, events);
	uint32_t name;

	/* A new process has its parent's name until it sets one or execs. */
	if (p->g->opt.processes && e->pid == e->tid && e->pid != e->ppid &&
	    pair_map_get(&p->process_now, e->ppid, 0, &name) &&
	    pair_map_put(&p->process_now, e->pid, 0, name))
		return -ENOMEM;
	return p->par ? par_fork(p->par, e) : 0;
}

static int on_exit_task(struct tev_consumer *c, const struct tev_task *e)
{
	struct pass *p = tev_container_of(c, struct pass, events);

	return p->par ? par_exit(p->par, e) : 0;
}

static int cmp_mem(const void *a, const void *b)
{
	const struct agg_mem_point *x = a, *y = b;

	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int cmp_stack_samples(const void *a, const void *b)
{
	const struct agg_stack_sample *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int agg_run(struct agg *g, struct session *s, struct symbolizer *sym)
{
	struct pass p = {
		.events = { .sample = on_sample, .comm = on_comm, .lost = on_lost,
			    .context_switch = on_switch, .fork = on_fork, .exit = on_exit_task,
			    .wakeup = on_wakeup },
		.g = g, .sym = sym,
		.nr_stack = attr_nr_stack_levels(g->attr),
		.need_ns = g->opt.windowed || g->opt.buckets || g->opt.memory || g->opt.slices ||
			   g->opt.lanes || g->opt.sample_stacks,
	};
	struct tev_consumer *consumers[] = {
		g->opt.mappings ? g->opt.mappings : sym_consumer(sym), &p.events,
	};
	size_t t;
	int ret;

	if (g->opt.parallelism) {
		p.par = par_new(g->info, g->opt.nr_pids == 1 ? g->opt.pids[0] : g->info->target_pid);
		if (!p.par)
			return -ENOMEM;
	}
	ret = session_run(s, consumers, 2);
	if (p.par) {
		int err = par_finish(p.par, g->opt.critical_threshold, &g->par);

		ret = ret ? ret : err;
	}
	if (g->opt.progress && p.seen >= 0x100000)
		fputs("\r\033[K", stderr);
	for (t = 0; !ret && t < g->nr_threads; t++) {
		if (!p.states[t].any)
			continue;
		close_slices(&p, &p.states[t], 0, UINT64_MAX);
		close_lane(&p, &p.states[t], UINT64_MAX);
	}
	/* Rounds a recorder broke leave samples late: the view needs them in order. */
	if (g->info->out_of_order && g->nr_mem)
		qsort(g->mem, g->nr_mem, sizeof(*g->mem), cmp_mem);
	if (g->info->out_of_order && g->nr_stack_samples)
		qsort(g->stack_samples, g->nr_stack_samples, sizeof(*g->stack_samples),
		      cmp_stack_samples);
	pair_map_free(&p.line_index);
	pair_map_free(&p.bucket_index);
	pair_map_free(&p.stack_index);
	pair_map_free(&p.chain_stack_index);
	pair_map_free(&p.otel_trace_index);
	pair_map_free(&p.otel_index);
	pair_map_free(&p.otel_key_index);
	pair_map_free(&p.otel_stack_index);
	pair_map_free(&p.tag_chain_index);
	chains_index_free(&p.chains);
	pair_map_free(&p.images);
	pair_map_free(&p.thread_index);
	pair_map_free(&p.query_index);
	pair_map_free(&p.process_now);
	str_map_free(&p.process_index);
	pair_map_free(&p.process_count_index);
	free(p.states);
	return ret;
}

void agg_free(struct agg *g)
{
	par_free(&g->par);
	free(g->row_samples);
	free(g->row_period);
	free(g->lines);
	free(g->buckets);
	free(g->mem);
	free(g->stacks);
	free(g->otel_ids);
	free(g->chains);
	free(g->frames);
	free(g->stack_samples);
	free(g->slices);
	free(g->threads);
	free(g->query_counts);
	free(g->lanes);
	free(g->processes);
	free(g->process_counts);
	memset(g, 0, sizeof(*g));
}

uint64_t agg_attributed(const struct agg *g)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < attr_nr_rows(g->attr); i++)
		if (attr_row_attributed(attr_row(g->attr, i)))
			n += agg_row_samples(g, i);
	return n;
}

double agg_share(const struct agg *g, uint64_t samples)
{
	return g->total ? 100.0 * (double)samples / (double)g->total : 0.0;
}

bool agg_weighted(const struct agg *g)
{
	return g->total_period && !g->unweighted && g->min_period != g->max_period;
}

uint64_t agg_row_weight(const struct agg *g, size_t row)
{
	return agg_weighted(g) ? agg_row_period(g, row) : agg_row_samples(g, row);
}

double agg_weight_share(const struct agg *g, uint64_t weight)
{
	uint64_t all = agg_weighted(g) ? g->total_period : g->total;

	return all ? 100.0 * (double)weight / (double)all : 0.0;
}

struct row_order {
	const struct agg *g;
	bool by_weight;		/* agg_row_weight(), else agg_row_samples() */
};

/* Heaviest first; ties by name, so that the order is the same every run. */
static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct row_order *o = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t wx = o->by_weight ? agg_row_weight(o->g, x) : agg_row_samples(o->g, x);
	uint64_t wy = o->by_weight ? agg_row_weight(o->g, y) : agg_row_samples(o->g, y);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	return strcmp(attr_row(o->g->attr, x)->name, attr_row(o->g->attr, y)->name);
}

/* The rows with samples, heaviest first. */
static uint32_t *rows_sorted(const struct agg *g, size_t *n, bool by_weight)
{
	struct row_order o = { g, by_weight };
	size_t i, nr = attr_nr_rows(g->attr);
	uint32_t *rows = malloc((nr ? nr : 1) * sizeof(*rows));

	*n = 0;
	if (!rows)
		return NULL;
	for (i = 0; i < nr; i++)
		if (agg_row_samples(g, i))
			rows[(*n)++] = (uint32_t)i;
	qsort_r(rows, *n, sizeof(*rows), cmp_rows, &o);
	return rows;
}

uint32_t *agg_rows_by_weight(const struct agg *g, size_t *n)
{
	return rows_sorted(g, n, agg_weighted(g));
}

uint32_t *agg_rows_by_samples(const struct agg *g, size_t *n)
{
	return rows_sorted(g, n, false);
}

int *agg_row_ranks(const struct agg *g)
{
	size_t i, n, nr = attr_nr_rows(g->attr);
	uint32_t *rows = agg_rows_by_samples(g, &n);
	int *rank = malloc((nr + 1) * sizeof(*rank));

	if (!rows || !rank) {
		free(rows);
		free(rank);
		return NULL;
	}
	for (i = 0; i < nr; i++)
		rank[i] = INT32_MAX;
	for (i = 0; i < n; i++)
		rank[rows[i]] = (int)i;
	free(rows);
	return rank;
}

static int cmp_bucket(const void *a, const void *b)
{
	const struct agg_bucket_count *x = a, *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->row < y->row ? -1 : x->row > y->row;
}

struct agg_bucket_count *agg_sorted_buckets(const struct agg *g)
{
	struct agg_bucket_count *b = malloc((g->nr_bucket_counts + 1) * sizeof(*b));

	if (!b)
		return NULL;
	if (g->nr_bucket_counts)
		memcpy(b, g->buckets, g->nr_bucket_counts * sizeof(*b));
	qsort(b, g->nr_bucket_counts, sizeof(*b), cmp_bucket);
	return b;
}

uint64_t agg_fullest_bucket(const struct agg_bucket_count *b, size_t n)
{
	uint64_t max = 0, sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i && b[i].bucket != b[i - 1].bucket)
			sum = 0;
		sum += b[i].samples;
		if (sum > max)
			max = sum;
	}
	return max;
}

/* ---- per query ---- */

uint64_t agg_query_samples(const struct agg *g, uint32_t query)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < g->nr_query_counts; i++)
		if (g->query_counts[i].query == query)
			n += g->query_counts[i].samples;
	return n;
}

struct query_total {
	uint32_t query;
	uint64_t samples;
};

static int cmp_query_totals(const void *a, const void *b, void *ctx)
{
	const struct query_total *x = a, *y = b;
	const struct agg *g = ctx;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(attr_row(g->attr, x->query)->name, attr_row(g->attr, y->query)->name);
}

uint32_t *agg_queries_by_samples(const struct agg *g, size_t *n)
{
	size_t nr = attr_nr_rows(g->attr), i;
	uint64_t *per_row = calloc(nr + 1, sizeof(*per_row));
	struct query_total *t = malloc((nr + 1) * sizeof(*t));
	uint32_t *out = malloc((nr + 1) * sizeof(*out));

	*n = 0;
	if (!per_row || !t || !out) {
		free(per_row);
		free(t);
		free(out);
		return NULL;
	}
	for (i = 0; i < g->nr_query_counts; i++)
		if (g->query_counts[i].query < nr)
			per_row[g->query_counts[i].query] += g->query_counts[i].samples;
	for (i = 0; i < nr; i++)
		if (per_row[i])
			t[(*n)++] = (struct query_total){ (uint32_t)i, per_row[i] };
	qsort_r(t, *n, sizeof(*t), cmp_query_totals, (void *)g);
	for (i = 0; i < *n; i++)
		out[i] = t[i].query;
	free(per_row);
	free(t);
	return out;
}

int agg_query_part(const struct agg *g, uint32_t query, struct agg *part)
{
	size_t nr = attr_nr_rows(g->attr), i;

	*part = *g;
	part->cap_rows = nr;
	part->row_samples = calloc(nr + 1, sizeof(*part->row_samples));
	part->total = 0;
	/* A query's part counts samples: its shares are of them. */
	part->row_period = NULL;
	part->total_period = 0;
	part->unweighted = 1;
	if (!part->row_samples)
		return -ENOMEM;
	for (i = 0; i < g->nr_query_counts; i++) {
		const struct agg_query_count *c = &g->query_counts[i];

		if (c->query != query || c->row >= nr)
			continue;
		part->row_samples[c->row] += c->samples;
		part->total += c->samples;
	}
	return 0;
}

void agg_part_free(struct agg *part)
{
	free(part->row_samples);
	part->row_samples = NULL;
}

/* ---- lanes ---- */

static const char *key_query_name(const struct agg *g, const struct agg_lane_key *k)
{
	return k->query == ATTR_NONE ? "" : attr_row(g->attr, k->query)->name;
}

static int cmp_lane_keys(const void *a, const void *b, void *ctx)
{
	const struct agg_lane_key *x = a, *y = b;
	const struct agg *g = ctx;
	int c;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	c = strcmp(key_query_name(g, x), key_query_name(g, y));
	return c ? c : strcmp(attr_row(g->attr, x->row)->name, attr_row(g->attr, y->row)->name);
}

struct agg_lane_key *agg_lane_keys(const struct agg *g, size_t *n)
{
	struct agg_lane_key *k = malloc((g->nr_lanes + 1) * sizeof(*k));
	struct pair_map index = { 0 };
	uint32_t idx;
	size_t i;

	*n = 0;
	if (!k)
		return NULL;
	for (i = 0; i < g->nr_lanes; i++) {
		const struct agg_lane *l = &g->lanes[i];

		if (pair_map_get(&index, l->query, l->row, &idx)) {
			k[idx].samples += l->samples;
			continue;
		}
		if (pair_map_put(&index, l->query, l->row, (uint32_t)*n)) {
			pair_map_free(&index);
			free(k);
			return NULL;
		}
		k[(*n)++] = (struct agg_lane_key){ l->query, l->row, l->samples };
	}
	pair_map_free(&index);
	qsort_r(k, *n, sizeof(*k), cmp_lane_keys, (void *)g);
	return k;
}

int agg_lane_key_index(const struct agg_lane_key *keys, size_t n, uint32_t query, uint32_t row)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (keys[i].query == query && keys[i].row == row)
			return (int)i;
	return -1;
}

/* Where column @c begins: c * @col_ns, UINT64_MAX past the end of the axis. */
static uint64_t col_start(size_t c, uint64_t col_ns)
{
	return c && col_ns > UINT64_MAX / c ? UINT64_MAX : c * col_ns;
}

int *agg_lane_grid(const struct agg *g, const struct agg_lane_key *keys, size_t nkeys,
		   uint64_t col_ns, size_t ncols)
{
	size_t cells = g->nr_threads * ncols, i, c;
	int *grid = malloc((cells + 1) * sizeof(*grid));
	uint64_t *best = calloc(cells + 1, sizeof(*best));
	struct pair_map index = { 0 };
	uint32_t k;

	if (!grid || !best || !col_ns) {
		free(grid);
		free(best);
		return NULL;
	}
	for (i = 0; i < nkeys; i++)
		if (pair_map_put(&index, keys[i].query, keys[i].row, (uint32_t)i))
			goto fail;
	for (i = 0; i < cells; i++)
		grid[i] = -1;
	/*
	 * A thread's runs never overlap, so within a column each run's time
	 * there is its own: the longest wins, ties to the pair with more
	 * samples.
	 */
	for (i = 0; i < g->nr_lanes; i++) {
		const struct agg_lane *l = &g->lanes[i];
		uint64_t b = l->begin_ns > g->opt.from_ns ? l->begin_ns - g->opt.from_ns : 0;
		uint64_t e = l->end_ns > g->opt.from_ns ? l->end_ns - g->opt.from_ns : 0;

		if (!pair_map_get(&index, l->query, l->row, &k) || l->thread >= g->nr_threads)
			continue;
		if (e <= b)
			e = add_sat(b, 1);	/* a run of one instant still shows */
		for (c = b / col_ns; c < ncols && col_start(c, col_ns) < e; c++) {
			uint64_t lo = col_start(c, col_ns) > b ? col_start(c, col_ns) : b;
			uint64_t hi = col_start(c + 1, col_ns) < e ? col_start(c + 1, col_ns) : e;
			size_t cell = (size_t)l->thread * ncols + c;

			if (hi - lo > best[cell] ||
			    (hi - lo == best[cell] && grid[cell] >= 0 && (int)k < grid[cell])) {
				best[cell] = hi - lo;
				grid[cell] = (int)k;
			}
		}
	}
	pair_map_free(&index);
	free(best);
	return grid;
fail:
	pair_map_free(&index);
	free(grid);
	free(best);
	return NULL;
}

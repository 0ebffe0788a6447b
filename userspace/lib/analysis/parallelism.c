// SPDX-License-Identifier: GPL-2.0-only
/*
 * GAPP's CMetric from context switches (tailor/parallelism.h).
 *
 * The pass hands over switches, forks and attributed samples in time
 * order; they are kept (a few words each) and computed at the end in two
 * sweeps: the first finds each thread's state before its first event (a
 * first switch out means it was running since the beginning), the second
 * replays the events, keeping the number of active threads, the global
 * CMetric and each open timeslice's samples.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/attribution.h"
#include "tailor/parallelism.h"
#include "util/grow.h"
#include "util/hashmap.h"

enum ev_kind { EV_IN, EV_OUT, EV_OUT_PREEMPTED, EV_FORK, EV_EXIT, EV_SAMPLE, EV_WAKEUP };

struct par_event {
	uint64_t time;		/* the file's unit */
	uint32_t thread;	/* a wakeup's: the woken, once known (UINT32_MAX before) */
	uint32_t kind;		/* enum ev_kind */
	/* samples: their outcome and row; wakeups: the woken tid and the waker's tid */
	uint32_t outcome, row;
};

struct par_builder {
	const struct session_info *info;
	uint32_t pid;
	struct par_event *ev;
	size_t nr_ev, cap_ev;
	struct par_thread *threads;
	size_t nr_threads, cap_threads;
	struct pair_map index;	/* (pid, tid) -> thread */
	/*
	 * The earliest exec of a counted thread, 0 if none: the process runs
	 * from there, before its first switch or sample.
	 */
	uint64_t first_exec;
	bool wakeups;		/* any EV_WAKEUP to resolve */
	struct tev_wakeup last_wakeup;	/* the one before, to drop its twin */
};

/* A thread's replay state. */
struct replay {
	enum par_state state;
	bool switched;		/* any switch record at all */
	double cm_in;		/* global CMetric at its switch in */
	uint64_t since;		/* time of its last state change */
	size_t first_sample;	/* its open slice's first sample in the pending list */
	size_t nr_samples;
	uint32_t run;		/* its open run, or UINT32_MAX */
	bool woken_running;	/* woken on its way to sleep: not switched out yet */
	bool exited;
};

struct pending {
	uint32_t thread, outcome, row;
	double weight;		/* 1 / active at the sample */
};

struct par_builder *par_new(const struct session_info *info, uint32_t pid)
{
	struct par_builder *b = calloc(1, sizeof(*b));

	if (b) {
		b->info = info;
		b->pid = pid;
	}
	return b;
}

static int thread_of(struct par_builder *b, uint32_t pid, uint32_t tid, uint32_t *idx)
{
	if (pair_map_get(&b->index, pid, tid, idx))
		return 0;
	if (array_grow((void **)&b->threads, &b->cap_threads, b->nr_threads + 1,
		       sizeof(*b->threads)) ||
	    pair_map_put(&b->index, pid, tid, (uint32_t)b->nr_threads))
		return -ENOMEM;
	b->threads[b->nr_threads] = (struct par_thread){ .pid = pid, .tid = tid };
	*idx = (uint32_t)b->nr_threads++;
	return 0;
}

static bool counted(const struct par_builder *b, uint32_t pid, uint32_t tid)
{
	/* pid 0 is the idle task of a CPU-wide record, never an application's. */
	return tid && (!b->pid || pid == b->pid);
}

static int push(struct par_builder *b, uint64_t time, uint32_t pid, uint32_t tid,
		enum ev_kind kind, uint32_t outcome, uint32_t row)
{
	uint32_t t;

	if (!counted(b, pid, tid))
		return 0;
	if (thread_of(b, pid, tid, &t) ||
	    array_grow((void **)&b->ev, &b->cap_ev, b->nr_ev + 1, sizeof(*b->ev)))
		return -ENOMEM;
	b->ev[b->nr_ev++] = (struct par_event){ time, t, kind, outcome, row };
	return 0;
}

int par_switch(struct par_builder *b, const struct tev_switch *e)
{
	return push(b, e->time, e->pid, e->tid,
		    !e->out ? EV_IN : e->preempted ? EV_OUT_PREEMPTED : EV_OUT,
		    ATTR_NONE, ATTR_NONE);
}

int par_fork(struct par_builder *b, const struct tev_task *e)
{
	uint32_t child, parent;

	if (push(b, e->time, e->pid, e->tid, EV_FORK, ATTR_NONE, ATTR_NONE))
		return -ENOMEM;
	/* A new thread has its creator's name until it sets its own. */
	if (counted(b, e->pid, e->tid) && pair_map_get(&b->index, e->ppid, e->ptid, &parent) &&
	    !thread_of(b, e->pid, e->tid, &child) && !b->threads[child].name[0])
		memcpy(b->threads[child].name, b->threads[parent].name, sizeof(b->threads[child].name));
	return 0;
}

/*
 * perf closes an exiting thread's events before its last schedule(): no
 * switch out follows the exit, so the exit is that switch.
 */
int par_exit(struct par_builder *b, const struct tev_task *e)
{
	return push(b, e->time, e->pid, e->tid, EV_EXIT, ATTR_NONE, ATTR_NONE);
}

int par_comm(struct par_builder *b, const struct tev_comm *e)
{
	uint32_t t;

	if (!counted(b, e->pid, e->tid))
		return 0;
	if (thread_of(b, e->pid, e->tid, &t))
		return -ENOMEM;
	snprintf(b->threads[t].name, sizeof(b->threads[t].name), "%s", e->name);
	if (e->exec && (!b->first_exec || e->time < b->first_exec))
		b->first_exec = e->time;
	return 0;
}

/*
 * A wakeup between two recorded threads may come twice: the tracepoint
 * names the woken task, and perf_tp_event() can fire that task's own
 * per-task event as well as the waker's, both on the waker's CPU, alike
 * (not seen with perf record on 6.1 or 6.18, but cheap to be safe from).
 * Two real wakeups of one thread by one waker at the same time cannot
 * be: the twin is dropped.
 */
int par_wakeup(struct par_builder *b, const struct tev_wakeup *e)
{
	const struct tev_wakeup *l = &b->last_wakeup;

	if (e->time == l->time && e->tid == l->tid && e->target_tid == l->target_tid)
		return 0;
	b->last_wakeup = *e;
	if (array_grow((void **)&b->ev, &b->cap_ev, b->nr_ev + 1, sizeof(*b->ev)))
		return -ENOMEM;
	b->ev[b->nr_ev++] = (struct par_event){ e->time, UINT32_MAX, EV_WAKEUP,
						e->target_tid, e->tid };
	b->wakeups = true;
	return 0;
}

/*
 * The woken thread of each wakeup, by its tid among the threads counted
 * (a tid names one thread at a time; the first seen wins), and each
 * thread's most frequent waker.  Wakeups of threads not counted go.
 */
static int resolve_wakeups(struct par_builder *b)
{
	struct pair_map by_tid = { 0 }, pairs = { 0 };
	size_t i, out = 0;
	uint32_t t, n;
	int ret = -ENOMEM;

	for (i = 0; i < b->nr_threads; i++)
		if (!pair_map_get(&by_tid, 0, b->threads[i].tid, &t) &&
		    pair_map_put(&by_tid, 0, b->threads[i].tid, (uint32_t)i))
			goto out;
	for (i = 0; i < b->nr_ev; i++) {
		struct par_event e = b->ev[i];

		if (e.kind == EV_WAKEUP) {
			struct par_thread *th;

			if (!pair_map_get(&by_tid, 0, e.outcome, &t))
				continue;
			e.thread = t;
			th = &b->threads[t];
			th->wakeups++;
			n = 0;
			pair_map_get(&pairs, t, e.row, &n);
			if (pair_map_put(&pairs, t, e.row, ++n))
				goto out;
			if (n > th->top_waker_wakeups) {
				th->top_waker_wakeups = n;
				th->top_waker_tid = e.row;
			}
		}
		b->ev[out++] = e;
	}
	b->nr_ev = out;
	b->wakeups = false;
	ret = 0;
out:
	pair_map_free(&by_tid);
	pair_map_free(&pairs);
	return ret;
}

int par_sample(struct par_builder *b, const struct tev_sample *s, uint32_t outcome,
	       uint32_t row)
{
	return push(b, s->time, s->pid, s->tid, EV_SAMPLE, outcome, row);
}

long par_thread_index(const struct agg_parallelism *p, uint32_t pid, uint32_t tid)
{
	size_t i;

	for (i = 0; i < p->nr_threads; i++)
		if (p->threads[i].pid == pid && p->threads[i].tid == tid)
			return (long)i;
	return -1;
}

const char *par_state_name(enum par_state s)
{
	static const char *const names[] = { "unseen", "running", "runnable", "blocked" };

	return (unsigned int)s < 4 ? names[s] : "?";
}

/* ---- the replay ---- */

struct sweep {
	struct par_builder *b;
	struct agg_parallelism *out;
	struct replay *rs;
	struct pending *pend;
	size_t nr_pend, cap_pend;
	size_t cap_costs, cap_critical, cap_steps, cap_runs;
	uint32_t *cost_of;	/* outcome -> index into costs (+1), 0: none */
	size_t cap_cost_of;
	double *in_slice;	/* per cost: its share of the closing slice */
	size_t cap_in_slice;
	size_t *touched;	/* the costs in_slice holds, to reset */
	size_t cap_touched;
	double global_cm;
	uint32_t active;
	uint64_t now;
};

/*
 * A span in ns, saturating: a damaged file's absurd times stay in order,
 * and the difference of two relative times (rel_ns) cannot overflow.
 */
#define NS_MAX	(INT64_MAX / 4)

static uint64_t ns_of(const struct session_info *info, uint64_t delta)
{
	__uint128_t ns = ((__uint128_t)delta * info->mult) >> info->shift;

	return ns > NS_MAX ? NS_MAX : (uint64_t)ns;
}

/* A time relative to the first sample, in ns. */
static int64_t rel_ns(const struct session_info *info, uint64_t t)
{
	return t >= info->first_time ? (int64_t)ns_of(info, t - info->first_time) :
	       -(int64_t)ns_of(info, info->first_time - t);
}

static double span_ns(const struct session_info *info, uint64_t from, uint64_t to)
{
	return to > from ? (double)ns_of(info, to - from) : 0;
}

static bool is_active(enum par_state s)
{
	return s == PAR_RUNNING || s == PAR_RUNNABLE;
}

static int cost_index(struct sweep *w, uint32_t outcome, uint32_t row, size_t *idx)
{
	struct agg_parallelism *o = w->out;
	size_t key = outcome == ATTR_NONE ? 0 : outcome == PAR_FILTERED ? 1 : (size_t)outcome + 2;

	if (array_grow((void **)&w->cost_of, &w->cap_cost_of, key + 1, sizeof(*w->cost_of)))
		return -ENOMEM;
	if (!w->cost_of[key]) {
		if (array_grow((void **)&o->costs, &w->cap_costs, o->nr_costs + 1,
			       sizeof(*o->costs)))
			return -ENOMEM;
		o->costs[o->nr_costs] = (struct par_cost){ .outcome = outcome, .row = row };
		w->cost_of[key] = (uint32_t)++o->nr_costs;
	}
	*idx = w->cost_of[key] - 1;
	return 0;
}

static int open_run(struct sweep *w, uint32_t t, enum par_state state)
{
	struct agg_parallelism *o = w->out;
	struct replay *r = &w->rs[t];
	int64_t at = rel_ns(w->b->info, w->now);

	if (r->run != UINT32_MAX) {
		if (o->runs[r->run].state == (uint32_t)state)
			return 0;
		o->runs[r->run].end_ns = at;
	}
	if (array_grow((void **)&o->runs, &w->cap_runs, o->nr_runs + 1, sizeof(*o->runs)))
		return -ENOMEM;
	o->runs[o->nr_runs] = (struct par_run){ t, state, at, at };
	r->run = (uint32_t)o->nr_runs++;
	return 0;
}

/* Time passes from w->now to @to at the current parallelism. */
static void advance(struct sweep *w, uint64_t to)
{
	struct agg_parallelism *o = w->out;
	double dt;

	if (to <= w->now)
		return;
	dt = span_ns(w->b->info, w->now, to);
	o->ns_at[w->active] += (uint64_t)llround(dt);
	if (w->active)
		w->global_cm += dt / w->active;
	w->now = to;
}

static int set_state(struct sweep *w, uint32_t t, enum par_state state)
{
	struct replay *r = &w->rs[t];
	struct par_thread *th = &w->out->threads[t];
	uint64_t spent = ns_of(w->b->info, w->now - r->since);
	uint32_t before = w->active;

	if (r->state == PAR_RUNNING)
		th->running_ns += spent;
	else if (r->state == PAR_RUNNABLE)
		th->runnable_ns += spent;
	else if (r->state == PAR_BLOCKED)
		th->blocked_ns += spent;
	if (is_active(r->state) && !is_active(state))
		w->active--;
	else if (!is_active(r->state) && is_active(state))
		w->active++;
	r->state = state;
	r->since = w->now;
	if (w->active != before) {
		struct agg_parallelism *o = w->out;

		if (array_grow((void **)&o->steps, &w->cap_steps, o->nr_steps + 1,
			       sizeof(*o->steps)))
			return -ENOMEM;
		o->steps[o->nr_steps++] = (struct par_step){ rel_ns(w->b->info, w->now), w->active };
		if (w->active > o->max_active)
			o->max_active = w->active;
	}
	return open_run(w, t, state);
}

static void switch_in(struct sweep *w, uint32_t t)
{
	struct replay *r = &w->rs[t];

	r->cm_in = w->global_cm;
	r->nr_samples = 0;
}

/* A slice's samples, possibly interleaved with other threads' in pend[]. */
static bool slice_sample(const struct sweep *w, size_t i, uint32_t t)
{
	return w->pend[i].thread == t;
}

/*
 * Thread @t's timeslice ends now: its CMetric goes to the thread, and to
 * its samples by weight; a critical one is kept.
 */
static int close_slice(struct sweep *w, uint32_t t)
{
	struct agg_parallelism *o = w->out;
	struct replay *r = &w->rs[t];
	double cm = w->global_cm - r->cm_in, sum = 0, dur;
	bool critical;
	size_t i, idx, nr_touched = 0;
	uint32_t top = ATTR_NONE;
	double top_cm = -1;

	o->threads[t].cm_ns += cm;
	o->threads[t].slices++;
	o->cm_ns += cm;
	dur = span_ns(w->b->info, w->rs[t].since, w->now);
	/* Average parallelism dur / cm; a slice of no time is no one's bottleneck. */
	critical = cm > 0 && dur <= o->threshold * cm * (1 + 1e-9);
	for (i = r->first_sample; r->nr_samples && i < w->nr_pend; i++)
		if (slice_sample(w, i, t))
			sum += w->pend[i].weight;
	if (!r->nr_samples) {
		if (cost_index(w, ATTR_NONE, ATTR_NONE, &idx))
			return -ENOMEM;
		o->costs[idx].cm_ns += cm;
		if (critical)
			o->costs[idx].critical_cm_ns += cm;
		o->unsampled_slices++;
	}
	for (i = r->first_sample; r->nr_samples && i < w->nr_pend; i++) {
		const struct pending *p = &w->pend[i];
		double share;

		if (!slice_sample(w, i, t))
			continue;
		share = cm * p->weight / sum;
		if (cost_index(w, p->outcome, p->row, &idx))
			return -ENOMEM;
		o->costs[idx].cm_ns += share;
		if (critical) {
			o->costs[idx].critical_cm_ns += share;
			o->costs[idx].critical_samples++;
			/* The slice's main code: the outcome its samples' shares add up most for. */
			if (array_grow((void **)&w->in_slice, &w->cap_in_slice, idx + 1,
				       sizeof(*w->in_slice)) ||
			    array_grow((void **)&w->touched, &w->cap_touched, nr_touched + 1,
				       sizeof(*w->touched)))
				return -ENOMEM;
			if (!w->in_slice[idx])
				w->touched[nr_touched++] = idx;
			w->in_slice[idx] += share;
			if (w->in_slice[idx] > top_cm) {
				top_cm = w->in_slice[idx];
				top = p->outcome;
			}
		}
		w->pend[i].thread = UINT32_MAX;	/* consumed */
	}
	for (i = 0; i < nr_touched; i++)
		w->in_slice[w->touched[i]] = 0;
	if (critical) {
		o->critical_cm_ns += cm;
		if (array_grow((void **)&o->critical, &w->cap_critical, o->nr_critical + 1,
			       sizeof(*o->critical)))
			return -ENOMEM;
		o->critical[o->nr_critical++] = (struct par_slice){
			.thread = t, .begin_ns = rel_ns(w->b->info, r->since),
			.end_ns = rel_ns(w->b->info, w->now), .cm_ns = cm,
			.samples = r->nr_samples, .top_outcome = top,
		};
	}
	/* Consumed entries at the end are reused; open slices start before them. */
	while (w->nr_pend && w->pend[w->nr_pend - 1].thread == UINT32_MAX)
		w->nr_pend--;
	r->nr_samples = 0;
	return 0;
}

static int on_sample(struct sweep *w, const struct par_event *e)
{
	struct agg_parallelism *o = w->out;
	struct replay *r = &w->rs[e->thread];
	size_t idx;

	o->samples++;
	o->threads[e->thread].samples++;
	if (cost_index(w, e->outcome, e->row, &idx))
		return -ENOMEM;
	o->costs[idx].samples++;
	if (r->state != PAR_RUNNING) {
		o->samples_outside++;
		return 0;
	}
	if (array_grow((void **)&w->pend, &w->cap_pend, w->nr_pend + 1, sizeof(*w->pend)))
		return -ENOMEM;
	if (!r->nr_samples)
		r->first_sample = w->nr_pend;
	w->pend[w->nr_pend++] = (struct pending){ e->thread, e->outcome, e->row,
						  1.0 / (w->active ? w->active : 1) };
	r->nr_samples++;
	return 0;
}

static int replay_event(struct sweep *w, const struct par_event *e)
{
	struct replay *r = &w->rs[e->thread];
	int ret = 0;

	advance(w, e->time);
	switch (e->kind) {
	case EV_IN:
		w->out->threads[e->thread].switches++;
		r->woken_running = false;
		if (r->state == PAR_RUNNING)
			return 0;	/* a lost out: still the same slice */
		ret = set_state(w, e->thread, PAR_RUNNING);
		switch_in(w, e->thread);
		return ret;
	case EV_OUT:
	case EV_OUT_PREEMPTED:
		w->out->threads[e->thread].switches++;
		if (e->kind == EV_OUT_PREEMPTED)
			w->out->threads[e->thread].preempted++;
		if (r->state == PAR_RUNNING) {
			ret = close_slice(w, e->thread);
			if (ret)
				return ret;
		}
		ret = set_state(w, e->thread,
				e->kind == EV_OUT_PREEMPTED || r->woken_running ? PAR_RUNNABLE :
										  PAR_BLOCKED);
		r->woken_running = false;
		return ret;
	case EV_FORK:
		return is_active(r->state) ? 0 : set_state(w, e->thread, PAR_RUNNABLE);
	case EV_EXIT:
		if (r->state == PAR_RUNNING) {
			ret = close_slice(w, e->thread);
			if (ret)
				return ret;
		}
		r->switched = true;	/* samples after it are strays, not a new run */
		r->exited = true;
		return r->state == PAR_UNSEEN ? 0 : set_state(w, e->thread, PAR_BLOCKED);
	case EV_WAKEUP:
		w->out->wakeups++;
		if (r->exited)
			return 0;
		/*
		 * Woken on its way to sleep: the switch out still to come
		 * leaves it runnable.  Otherwise runnable from here, unless
		 * it can run already.
		 */
		if (r->state == PAR_RUNNING)
			r->woken_running = true;
		return r->state == PAR_BLOCKED ? set_state(w, e->thread, PAR_RUNNABLE) : 0;
	case EV_SAMPLE:
		/* A thread that never switched runs whenever it is sampled. */
		if (!r->switched && r->state != PAR_RUNNING) {
			ret = set_state(w, e->thread, PAR_RUNNING);
			switch_in(w, e->thread);
			if (ret)
				return ret;
		}
		return on_sample(w, e);
	}
	return 0;
}

static int cmp_costs(const void *a, const void *b)
{
	const struct par_cost *x = a, *y = b;

	if (x->critical_cm_ns != y->critical_cm_ns)
		return x->critical_cm_ns < y->critical_cm_ns ? 1 : -1;
	if (x->cm_ns != y->cm_ns)
		return x->cm_ns < y->cm_ns ? 1 : -1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->outcome < y->outcome ? -1 : x->outcome > y->outcome;
}

static int cmp_slices(const void *a, const void *b)
{
	const struct par_slice *x = a, *y = b;

	if (x->cm_ns != y->cm_ns)
		return x->cm_ns < y->cm_ns ? 1 : -1;
	return x->begin_ns < y->begin_ns ? -1 : x->begin_ns > y->begin_ns;
}

/*
 * A thread's state before its first event: running if its first switch
 * is one out (or its exit); waiting if it is one in; not there yet if it
 * forks first or never switches (then it runs whenever it is sampled).
 */
static int initial_states(struct sweep *w)
{
	struct par_builder *b = w->b;
	bool *forked = calloc(b->nr_threads ? b->nr_threads : 1, sizeof(*forked));
	size_t i;

	if (!forked)
		return -ENOMEM;
	for (i = 0; i < b->nr_threads; i++)
		w->rs[i] = (struct replay){ .state = PAR_UNSEEN, .run = UINT32_MAX };
	for (i = 0; i < b->nr_ev; i++) {
		const struct par_event *e = &b->ev[i];
		struct replay *r = &w->rs[e->thread];

		if (e->kind == EV_FORK)
			forked[e->thread] = true;
		if (e->kind == EV_FORK || e->kind == EV_SAMPLE || e->kind == EV_WAKEUP ||
		    r->switched)
			continue;
		r->switched = true;
		if (forked[e->thread])
			continue;	/* created here: not there before */
		/* A first out, or an exit: it ran until then; a first in: it waited. */
		r->state = e->kind == EV_IN ? PAR_BLOCKED : PAR_RUNNING;
	}
	free(forked);
	return 0;
}

/* Replay every event into @o with critical slices at <= @threshold. */
static int replay(struct par_builder *b, double threshold, struct agg_parallelism *o)
{
	struct sweep w = { .b = b, .out = o };
	uint64_t first = b->nr_ev ? b->ev[0].time : 0;
	size_t i;
	int ret = -ENOMEM;

	if (b->nr_ev && b->first_exec && b->first_exec < first)
		first = b->first_exec;

	memset(o, 0, sizeof(*o));
	o->pid = b->pid;
	o->threshold = threshold;
	o->threads = calloc(b->nr_threads ? b->nr_threads : 1, sizeof(*o->threads));
	w.rs = calloc(b->nr_threads ? b->nr_threads : 1, sizeof(*w.rs));
	o->ns_at = calloc((size_t)b->nr_threads + 1, sizeof(*o->ns_at));
	if (!o->threads || !w.rs || !o->ns_at)
		goto out;
	o->nr_threads = b->nr_threads;
	for (i = 0; i < b->nr_threads; i++) {
		o->threads[i] = b->threads[i];
		o->threads[i].samples = 0;
	}
	if (initial_states(&w))
		goto out;
	/* Threads running or waiting at the start: each its open slice and run. */
	w.now = first;
	for (i = 0; i < o->nr_threads; i++) {
		enum par_state s = w.rs[i].state;

		w.rs[i].state = PAR_UNSEEN;
		w.rs[i].since = first;
		if (s != PAR_UNSEEN && set_state(&w, (uint32_t)i, s))
			goto out;
		if (s == PAR_RUNNING)
			switch_in(&w, (uint32_t)i);
	}
	for (i = 0; i < b->nr_ev; i++) {
		ret = replay_event(&w, &b->ev[i]);
		if (ret)
			goto out;
		o->switches += b->ev[i].kind <= EV_OUT_PREEMPTED;
	}
	ret = -ENOMEM;
	/* The end: open slices close, and every run ends here. */
	for (i = 0; i < o->nr_threads; i++)
		if (w.rs[i].state == PAR_RUNNING && close_slice(&w, (uint32_t)i))
			goto out;
	for (i = 0; i < o->nr_threads; i++) {
		struct replay *r = &w.rs[i];

		if (r->state == PAR_RUNNING)
			o->threads[i].running_ns += ns_of(b->info, w.now - r->since);
		else if (r->state == PAR_RUNNABLE)
			o->threads[i].runnable_ns += ns_of(b->info, w.now - r->since);
		else if (r->state == PAR_BLOCKED)
			o->threads[i].blocked_ns += ns_of(b->info, w.now - r->since);
		if (r->run != UINT32_MAX)
			o->runs[r->run].end_ns = rel_ns(b->info, w.now);
	}
	o->begin_ns = rel_ns(b->info, first);
	o->end_ns = rel_ns(b->info, w.now);
	if (o->nr_costs)
		qsort(o->costs, o->nr_costs, sizeof(*o->costs), cmp_costs);
	if (o->nr_critical)
		qsort(o->critical, o->nr_critical, sizeof(*o->critical), cmp_slices);
	ret = 0;
out:
	free(w.rs);
	free(w.pend);
	free(w.cost_of);
	free(w.in_slice);
	free(w.touched);
	if (ret)
		par_free(o);
	return ret;
}

/*
 * The application's threads, as GAPP counts them for its threshold
 * (N_min = n / 2): those that switched or were sampled in the run.
 * Not the most ever active at once, which one moment's overlap of a
 * mostly idle thread decides.
 */
static size_t app_threads(const struct par_builder *b)
{
	bool *seen = calloc(b->nr_threads ? b->nr_threads : 1, sizeof(*seen));
	size_t i, n = 0;

	if (!seen)
		return b->nr_threads;
	for (i = 0; i < b->nr_ev; i++) {
		const struct par_event *e = &b->ev[i];

		if (e->kind <= EV_OUT_PREEMPTED || e->kind == EV_SAMPLE)
			seen[e->thread] = true;
	}
	for (i = 0; i < b->nr_threads; i++)
		n += seen[i];
	free(seen);
	return n;
}

int par_finish(struct par_builder *b, double threshold, struct agg_parallelism *o)
{
	int ret = 0;

	if (b->wakeups)
		ret = resolve_wakeups(b);
	if (threshold <= 0)
		threshold = app_threads(b) / 2.0;
	if (!ret)
		ret = replay(b, threshold, o);
	free(b->ev);
	free(b->threads);
	pair_map_free(&b->index);
	free(b);
	return ret;
}

void par_free(struct agg_parallelism *p)
{
	if (!p)
		return;
	free(p->threads);
	free(p->costs);
	free(p->critical);
	free(p->steps);
	free(p->runs);
	free(p->ns_at);
	memset(p, 0, sizeof(*p));
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CMetric (lib/analysis/parallelism.c) on switch sequences whose every
 * figure is worked out by hand in the comments: one tick is a nanosecond.
 */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "tailor/attribution.h"
#include "tailor/parallelism.h"

#define PID 100

static const struct session_info info = {
	.format = "test", .time_unit = SESSION_TIME_NS, .mult = 1, .shift = 0,
	.first_time = 0, .last_time = 500,
};

#define check_ns(a, b) do {						\
	double check_x_ = (a), check_y_ = (b);				\
	if (fabs(check_x_ - check_y_) > 1e-6) {				\
		check_failed(__FILE__, __LINE__, #a " == " #b);		\
		printf("#    left: %.6f\n#   right: %.6f\n", check_x_, check_y_); \
	}								\
} while (0)

static void sw(struct par_builder *b, uint64_t t, uint32_t tid, int what)
{
	/* what: 1 in, 0 out blocked, -1 out preempted */
	struct tev_switch e = { .time = t, .pid = PID, .tid = tid, .out = what <= 0,
				.preempted = what < 0, .other_pid = -1, .other_tid = -1 };

	check_int(par_switch(b, &e), ==, 0);
}

static void sample(struct par_builder *b, uint64_t t, uint32_t tid, uint32_t outcome)
{
	struct tev_sample s = { .time = t, .pid = PID, .tid = tid };

	check_int(par_sample(b, &s, outcome, outcome + 10), ==, 0);
}

static const struct par_cost *cost_of(const struct agg_parallelism *p, uint32_t outcome)
{
	size_t i;

	for (i = 0; i < p->nr_costs; i++)
		if (p->costs[i].outcome == outcome)
			return &p->costs[i];
	return NULL;
}

static const struct par_thread *thread_of(const struct agg_parallelism *p, uint32_t tid)
{
	size_t i;

	for (i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

/*
 * Threads 101 and 102 run from the start (their first switch is one out):
 *   0..100    both run: n = 2          (101 samples at 0, 50: outcome 1)
 *   100       102 blocks
 *   100..300  101 alone: n = 1         (sample at 200, outcome 2)
 *   300       101 blocks, 102 comes in
 *   300..400  102 alone                (sample at 350, outcome 3)
 *   400       102 blocks, 101 comes in
 *   400..500  101 alone                (samples at 450, 500: outcome 1)
 * Slices: 101 [0,300] CMetric 50 + 200 = 250, average parallelism 1.2;
 * 101 [400,500] 100, 1.0; 102 [0,100] 50, 2.0, no samples; 102
 * [300,400] 100, 1.0.  The default threshold is half the threads (2):
 * 1.0, so the two slices of parallelism 1.0 are critical (200).
 * 101's first slice shares 250 by 1/n: outcome 1 gets 250 * 1 / 2.
 */
static void test_two_threads(void)
{
	struct par_builder *b = par_new(&info, PID);
	struct agg_parallelism p;
	const struct par_cost *c;
	const struct par_thread *t;

	check(b != NULL);
	if (!b)
		return;
	sample(b, 0, 101, 1);
	sample(b, 50, 101, 1);
	sw(b, 100, 102, 0);
	sample(b, 200, 101, 2);
	sw(b, 300, 101, 0);
	sw(b, 300, 102, 1);
	sample(b, 350, 102, 3);
	sw(b, 400, 102, 0);
	sw(b, 400, 101, 1);
	sample(b, 450, 101, 1);
	sample(b, 500, 101, 1);
	check_int(par_finish(b, 0, &p), ==, 0);
	check_ns(p.threshold, 1.0);
	check_uint(p.max_active, ==, 2);
	check_ns(p.cm_ns, 500);
	check_ns(p.critical_cm_ns, 200);
	check_uint(p.nr_critical, ==, 2);
	check_uint(p.ns_at[2], ==, 100);
	check_uint(p.ns_at[1], ==, 400);
	check_uint(p.ns_at[0], ==, 0);
	check_uint(p.samples, ==, 6);
	check_uint(p.samples_outside, ==, 0);
	check_uint(p.unsampled_slices, ==, 1);
	t = thread_of(&p, 101);
	check(t != NULL);
	if (t) {
		check_ns(t->cm_ns, 350);
		check_uint(t->running_ns, ==, 400);
		check_uint(t->blocked_ns, ==, 100);
		check_uint(t->slices, ==, 2);
	}
	t = thread_of(&p, 102);
	check(t != NULL);
	if (t) {
		check_ns(t->cm_ns, 150);
		check_uint(t->running_ns, ==, 200);
		check_uint(t->blocked_ns, ==, 300);
	}
	/* Most critical CMetric first: outcome 1 (100, 225), 3 (100, 100), 2, unsampled. */
	check_uint(p.nr_costs, ==, 4);
	if (p.nr_costs == 4) {
		check_uint(p.costs[0].outcome, ==, 1);
		check_uint(p.costs[1].outcome, ==, 3);
		check_uint(p.costs[2].outcome, ==, 2);
		check_uint(p.costs[3].outcome, ==, ATTR_NONE);
	}
	c = cost_of(&p, 1);
	check(c != NULL);
	if (c) {
		check_ns(c->cm_ns, 125 + 100);
		check_ns(c->critical_cm_ns, 100);
		check_uint(c->samples, ==, 4);
		check_uint(c->row, ==, 11);
	}
	c = cost_of(&p, 2);
	check(c != NULL);
	if (c) {
		check_ns(c->cm_ns, 125);
		check_ns(c->critical_cm_ns, 0);
	}
	c = cost_of(&p, ATTR_NONE);
	check(c != NULL);
	if (c)
		check_ns(c->cm_ns, 50);
	/* The critical slices, most CMetric first (a tie: the earlier first). */
	if (p.nr_critical == 2) {
		check_int(p.critical[0].begin_ns, ==, 300);
		check_int(p.critical[0].end_ns, ==, 400);
		check_int(p.critical[1].begin_ns, ==, 400);
		check_uint(p.critical[1].top_outcome, ==, 1);
	}
	par_free(&p);
}

/*
 * Preemption and a fork.  101 runs from the start; 102 is forked at 50
 * (runnable, so active: n = 2), comes in at 80 and blocks at 150; 101 is
 * preempted at 100 (still runnable: n stays 2) and comes back at 200.
 * n: [0,50] 1, [50,150] 2, [150,300] 1.
 * 101: slice [0,100] = 50/1 + 50/2 = 75, slice [200,300] = 100; 102:
 * slice [80,150] = 70/2 = 35.  A sample of 102 at 250, blocked then,
 * is counted outside any slice.  A thread that never switches (103,
 * other process) is not counted.
 */
static void test_preempt_and_fork(void)
{
	struct par_builder *b = par_new(&info, PID);
	struct tev_task fork = { .time = 50, .pid = PID, .tid = 102, .ppid = PID, .ptid = 101 };
	struct tev_sample other = { .time = 60, .pid = PID + 1, .tid = 103 };
	struct agg_parallelism p;
	const struct par_thread *t;
	size_t i, runs = 0;

	check(b != NULL);
	if (!b)
		return;
	sample(b, 0, 101, 1);
	check_int(par_fork(b, &fork), ==, 0);
	check_int(par_sample(b, &other, 9, 9), ==, 0);
	sw(b, 80, 102, 1);
	sw(b, 100, 101, -1);
	sw(b, 150, 102, 0);
	sw(b, 200, 101, 1);
	sample(b, 250, 102, 2);
	sample(b, 300, 101, 1);
	check_int(par_finish(b, 0, &p), ==, 0);
	check_uint(p.nr_threads, ==, 2);
	check_ns(p.cm_ns, 210);
	check_uint(p.ns_at[1], ==, 200);
	check_uint(p.ns_at[2], ==, 100);
	check_uint(p.samples_outside, ==, 1);
	check_uint(p.switches, ==, 4);
	t = thread_of(&p, 101);
	check(t != NULL);
	if (t) {
		check_ns(t->cm_ns, 175);
		check_uint(t->runnable_ns, ==, 100);
		check_uint(t->running_ns, ==, 200);
		check_uint(t->preempted, ==, 1);
	}
	t = thread_of(&p, 102);
	check(t != NULL);
	if (t) {
		check_ns(t->cm_ns, 35);
		check_uint(t->runnable_ns, ==, 30);
		check_uint(t->running_ns, ==, 70);
		check_uint(t->blocked_ns, ==, 150);
	}
	/* 102's lane: runnable 50..80, running 80..150, blocked 150..300. */
	for (i = 0; i < p.nr_runs; i++) {
		const struct par_run *r = &p.runs[i];

		if (p.threads[r->thread].tid != 102)
			continue;
		runs++;
		if (r->state == PAR_RUNNABLE) {
			check_int(r->begin_ns, ==, 50);
			check_int(r->end_ns, ==, 80);
		} else if (r->state == PAR_RUNNING) {
			check_int(r->begin_ns, ==, 80);
			check_int(r->end_ns, ==, 150);
		} else {
			check_uint(r->state, ==, PAR_BLOCKED);
			check_int(r->begin_ns, ==, 150);
			check_int(r->end_ns, ==, 300);
		}
	}
	check_uint(runs, ==, 3);
	par_free(&p);
}

/* A thread without switches runs from its first sample to the end; --critical 2. */
static void test_unswitched_thread_and_threshold(void)
{
	struct par_builder *b = par_new(&info, 0);
	struct agg_parallelism p;

	check(b != NULL);
	if (!b)
		return;
	sample(b, 100, 101, 1);
	sample(b, 200, 101, 1);
	sample(b, 400, 101, 1);
	check_int(par_finish(b, 2, &p), ==, 0);
	check_ns(p.cm_ns, 300);
	check_ns(p.threshold, 2);
	check_uint(p.nr_critical, ==, 1);
	check_uint(p.nr_costs, ==, 1);
	if (p.nr_costs)
		check_ns(p.costs[0].critical_cm_ns, 300);
	par_free(&p);
}

/* A sample a filter left out keeps its slice's CMetric, as [filtered out]. */
static void wake(struct par_builder *b, uint64_t t, uint32_t waker, uint32_t woken)
{
	struct tev_wakeup e = { .time = t, .pid = PID, .tid = waker, .target_tid = woken,
				.target_cpu = -1 };

	check_int(par_wakeup(b, &e), ==, 0);
}

/*
 * Wakeup records (sched:sched_waking): a blocked thread is active from
 * its wakeup, runnable until it is switched in; a thread woken on its way
 * to sleep (still running) is runnable from its switch out.  101 and 102
 * run from the start (a sample of 101 at 0; 102's first switch is one
 * out):
 *   0..100    both run: n = 2
 *   100       102 blocks                      n = 1
 *   150       101 wakes 102: runnable         n = 2
 *   200       555 (not recorded) wakes 101, which still runs
 *   250       102 comes in                    n = 2
 *   300       101 switched out, not preempted, but woken already:
 *             runnable                        n = 2
 *   350       102 wakes 101, runnable already: no change (and the same
 *             wakeup again, as perf writes it twice: dropped)
 *   380       101 comes in; 390: tid 999 (no thread here) woken: dropped
 *   400       102 blocks                      n = 1
 *   500       101 blocks                      n = 0
 * 101: [0,300] 50 + 50 + 150/2 = 175, [380,500] 20/2 + 100 = 110: 285;
 * running 420, runnable 80.  102: [0,100] 50, [250,400] 50/2 + 80/2 +
 * 20/2 = 75: 125; running 250, runnable 100, blocked 150.  n = 2 for
 * 350, 1 for 150.  Without the wakeups 102 would have been blocked from
 * 100 to 250, and 101 from 300 to 380.
 */
static void test_wakeups(void)
{
	struct par_builder *b = par_new(&info, PID);
	struct agg_parallelism p;
	const struct par_thread *t;

	check(b != NULL);
	if (!b)
		return;
	sample(b, 0, 101, 1);
	sw(b, 100, 102, 0);
	wake(b, 150, 101, 102);
	wake(b, 200, 555, 101);
	sw(b, 250, 102, 1);
	sw(b, 300, 101, 0);
	wake(b, 350, 102, 101);
	wake(b, 350, 102, 101);
	sw(b, 380, 101, 1);
	wake(b, 390, 101, 999);
	sw(b, 400, 102, 0);
	sw(b, 500, 101, 0);
	check_int(par_finish(b, 0, &p), ==, 0);
	check_uint(p.wakeups, ==, 3);
	check_uint(p.ns_at[2], ==, 350);
	check_uint(p.ns_at[1], ==, 150);
	check_uint(p.ns_at[0], ==, 0);
	check_ns(p.cm_ns, 410);
	check_uint(p.nr_threads, ==, 2);
	t = thread_of(&p, 101);
	check(t != NULL);
	if (t) {
		check_ns(t->cm_ns, 285);
		check_uint(t->running_ns, ==, 420);
		check_uint(t->runnable_ns, ==, 80);
		check_uint(t->blocked_ns, ==, 0);
		check_uint(t->wakeups, ==, 2);
		/* 555 and 102 once each: the first to get there */
		check_uint(t->top_waker_tid, ==, 555);
		check_uint(t->top_waker_wakeups, ==, 1);
	}
	t = thread_of(&p, 102);
	check(t != NULL);
	if (t) {
		check_ns(t->cm_ns, 125);
		check_uint(t->running_ns, ==, 250);
		check_uint(t->runnable_ns, ==, 100);
		check_uint(t->blocked_ns, ==, 150);
		check_uint(t->wakeups, ==, 1);
		check_uint(t->top_waker_tid, ==, 101);
	}
	par_free(&p);
}

/*
 * The default threshold is GAPP's n / 2 over the threads that ran, not
 * over the most ever active at once: three threads that only ever run
 * one at a time (101 0-100, 102 100-200, 103 200-300; 102 and 103 wait
 * before their first switch in) give 1.5, so each slice (parallelism
 * 1.0) is critical; half the most active (1) would have been 0.5, and
 * none.
 */
static void test_threshold_of_the_threads(void)
{
	struct par_builder *b = par_new(&info, PID);
	struct agg_parallelism p;

	check(b != NULL);
	if (!b)
		return;
	sample(b, 0, 101, 1);	/* the run starts here */
	sw(b, 100, 101, 0);
	sw(b, 100, 102, 1);
	sw(b, 200, 102, 0);
	sw(b, 200, 103, 1);
	sw(b, 300, 103, 0);
	check_int(par_finish(b, 0, &p), ==, 0);
	check_uint(p.max_active, ==, 1);
	check_ns(p.threshold, 1.5);
	check_uint(p.nr_critical, ==, 3);
	check_ns(p.critical_cm_ns, 300);
	par_free(&p);
}

static void test_filtered_sample(void)
{
	struct par_builder *b = par_new(&info, PID);
	struct tev_sample s = { .time = 100, .pid = PID, .tid = 101 };
	struct agg_parallelism p;

	check(b != NULL);
	if (!b)
		return;
	sample(b, 0, 101, 1);
	check_int(par_sample(b, &s, PAR_FILTERED, ATTR_NONE), ==, 0);
	sw(b, 200, 101, 0);
	sw(b, 300, 101, 1);
	check_int(par_sample(b, &(struct tev_sample){ .time = 400, .pid = PID, .tid = 101 },
			     PAR_FILTERED, ATTR_NONE), ==, 0);
	check_int(par_finish(b, 0, &p), ==, 0);
	/* Slice [0,200]: 200 shared by outcome 1 and the filtered; [300,400]: 100 filtered. */
	check_ns(p.cm_ns, 300);
	check_uint(p.unsampled_slices, ==, 0);
	check_ns(cost_of(&p, 1) ? cost_of(&p, 1)->cm_ns : -1, 100);
	check_ns(cost_of(&p, PAR_FILTERED) ? cost_of(&p, PAR_FILTERED)->cm_ns : -1, 200);
	par_free(&p);
}

/* A critical slice is named after the outcome with the most of its CMetric. */
static void test_slice_named_by_its_sum(void)
{
	struct par_builder *b = par_new(&info, PID);
	struct agg_parallelism p;

	check(b != NULL);
	if (!b)
		return;
	sample(b, 0, 101, 1);
	sample(b, 10, 101, 2);
	sample(b, 20, 101, 2);
	sample(b, 30, 101, 2);
	sw(b, 40, 101, 0);
	check_int(par_finish(b, 1, &p), ==, 0);
	check_uint(p.nr_critical, ==, 1);
	if (p.nr_critical)
		check_uint(p.critical[0].top_outcome, ==, 2);
	par_free(&p);
}

int main(void)
{
	TEST(test_two_threads(), "two threads: CMetric, slices, samples' shares, by hand");
	TEST(test_preempt_and_fork(), "a preempted thread stays active; a forked one is active before it runs");
	TEST(test_unswitched_thread_and_threshold(), "a thread without switches runs while sampled; --critical");
	TEST(test_slice_named_by_its_sum(), "a critical slice is named after its most CMetric, not its first sample");
	TEST(test_wakeups(), "a woken thread is runnable from its wakeup, or from its switch out if woken on its way to sleep; twins and strangers' wakeups dropped");
	TEST(test_threshold_of_the_threads(), "the default threshold: half the threads that ran (GAPP's n/2), not of the most active");
	TEST(test_filtered_sample(), "a filtered sample keeps its slice's CMetric apart from the unsampled");
	return test_done();
}

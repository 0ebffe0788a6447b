/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where parallelism is lost: GAPP's criticality metric (CMetric) from the
 * context switches of a process's threads, and the code that ran while
 * few of them could.
 *
 * A thread is active while it can run: from a switch in (or its fork)
 * until it is switched out blocked; a thread preempted stays active,
 * since it is still runnable.  Between two changes of the number n of
 * active threads, an interval dt adds dt / n to the global CMetric, and
 * to the CMetric of every thread running in it; a timeslice's CMetric
 * (switch in to switch out) is shared by the samples taken in it, in
 * proportion to 1 / n at each sample.  The code with the most CMetric in
 * the critical slices -- those whose average parallelism (duration over
 * CMetric) is at most a threshold -- is where the run was serial.
 *
 * With wakeup records (perf record -e sched:sched_waking) a blocked
 * thread is active, runnable, from its wakeup; without them only once it
 * runs, and the time it waited runnable after a wakeup counts as blocked.
 *
 * Built during the aggregation pass (aggregate.h, agg_options.parallelism)
 * from the switches, forks and attributed samples, and computed when the
 * pass ends: switches come in time order, but a thread's state before its
 * first switch is known only from that switch.  The run starts at the
 * first event counted, or at the exec of a counted thread if that is
 * earlier (a recorded command runs from its exec, before any sample).
 */
#ifndef TAILOR_PARALLELISM_H
#define TAILOR_PARALLELISM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tailor/session.h"

enum par_state {
	PAR_UNSEEN,		/* before its first event */
	PAR_RUNNING,
	PAR_RUNNABLE,		/* preempted, or forked and not yet run */
	PAR_BLOCKED,		/* switched out waiting (or gone) */
};

struct par_thread {
	uint32_t pid, tid;
	char name[64];		/* its comm, "" if never seen */
	uint64_t running_ns, runnable_ns, blocked_ns;
	double cm_ns;		/* its CMetric: dt / n summed while it ran */
	uint64_t slices;	/* timeslices: switch in to switch out */
	uint64_t switches;	/* records of it, in and out */
	uint64_t preempted;	/* outs while runnable */
	uint64_t samples;
	uint64_t wakeups;	/* wakeup records naming it */
	/* The thread that woke it most often, and how often; tid 0: none. */
	uint32_t top_waker_tid;
	uint64_t top_waker_wakeups;
};

/* A cost's outcome for the samples a filter (--query) left out. */
#define PAR_FILTERED	(UINT32_MAX - 1)

/* The samples of one attribution outcome and the CMetric they carry. */
struct par_cost {
	/* attr outcome; ATTR_NONE: slices without samples; PAR_FILTERED */
	uint32_t outcome;
	uint32_t row;		/* at the main level */
	uint64_t samples, critical_samples;
	double cm_ns, critical_cm_ns;
};

/* A critical timeslice: one thread's, at low average parallelism. */
struct par_slice {
	uint32_t thread;	/* index into threads */
	int64_t begin_ns, end_ns;	/* since the profile's first sample */
	double cm_ns;
	uint64_t samples;
	uint32_t top_outcome;	/* its samples' main outcome, or ATTR_NONE */
};

/* From @ns on (until the next step), @active threads could run. */
struct par_step {
	int64_t ns;
	uint32_t active;
};

/* A thread in one state from begin to end (for lanes). */
struct par_run {
	uint32_t thread;
	uint32_t state;		/* enum par_state */
	int64_t begin_ns, end_ns;
};

struct agg_parallelism {
	struct par_thread *threads;	/* in order of first appearance */
	size_t nr_threads;
	struct par_cost *costs;		/* most critical CMetric first, then CMetric */
	size_t nr_costs;
	struct par_slice *critical;	/* most CMetric first */
	size_t nr_critical;
	struct par_step *steps;		/* in time order */
	size_t nr_steps;
	struct par_run *runs;		/* per thread, in time order */
	size_t nr_runs;
	uint64_t *ns_at;		/* ns with n active, n = 0..max_active */
	uint32_t max_active;
	int64_t begin_ns, end_ns;	/* the events' span */
	/*
	 * The run's: its threads' summed, which the costs share out; the
	 * time some thread ran, when no thread waited runnable.
	 */
	double cm_ns;
	double critical_cm_ns;		/* of the critical slices */
	double threshold;		/* critical: average parallelism <= this */
	uint64_t switches;		/* of the threads counted */
	uint64_t wakeups;		/* of the threads counted, by anyone recorded */
	uint64_t samples;		/* of the threads counted */
	/*
	 * Samples of a thread that was not running by its switches: the
	 * switch and sample clocks disagree (a converted perf time), or a
	 * switch was lost.  They count in costs, without CMetric.
	 */
	uint64_t samples_outside;
	uint64_t unsampled_slices;
	uint32_t pid;			/* the process, 0: every process's threads */
};

struct par_builder;

/*
 * Collect the switches of the threads of @pid (0: of every process)
 * that the aggregation pass passes on.  NULL without memory.
 */
struct par_builder *par_new(const struct session_info *info, uint32_t pid);
int par_switch(struct par_builder *b, const struct tev_switch *e);
int par_fork(struct par_builder *b, const struct tev_task *e);
int par_exit(struct par_builder *b, const struct tev_task *e);
int par_comm(struct par_builder *b, const struct tev_comm *e);
/*
 * A wakeup of any thread: it counts if it names one of the threads the
 * other events brought in, whoever the waker.
 */
int par_wakeup(struct par_builder *b, const struct tev_wakeup *e);
/*
 * An attributed sample (@outcome PAR_FILTERED: one a filter left out,
 * whose slice's CMetric it still takes); 0 or -ENOMEM.
 */
int par_sample(struct par_builder *b, const struct tev_sample *s, uint32_t outcome,
	       uint32_t row);
/*
 * Compute everything into @out and free @b: critical slices are those of
 * average parallelism <= @threshold (<= 0: half the threads that
 * switched or were sampled, GAPP's N_min = n / 2).  0 or -ENOMEM (@b
 * freed either way).
 */
int par_finish(struct par_builder *b, double threshold, struct agg_parallelism *out);
void par_free(struct agg_parallelism *p);
/* The index of thread @pid/@tid in @p->threads, or -1. */
long par_thread_index(const struct agg_parallelism *p, uint32_t pid, uint32_t tid);
const char *par_state_name(enum par_state s);

#endif /* TAILOR_PARALLELISM_H */

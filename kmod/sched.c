// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scheduler events: the context switches and wakeups of a session's
 * threads, written by probes on the sched_switch and sched_waking
 * tracepoints into the session's own rings, among its samples and
 * stamped with the same TSC (uapi: TAILOR_CFG_SWITCHES, _WAKEUPS).
 *
 * Why here and not through perf's side-band, which tailor record used
 * before ABI 5: perf writes each PERF_RECORD_SWITCH through its side-band
 * output path (an iteration over the task's and the CPU's events, a
 * ring-buffer record with a sample_id trailer) on perf time, which
 * userspace converts back to TSC with an error of microseconds.  In the
 * test box (TCG) that cost 11-15 points of a workload switching 20k
 * times a second, against a goal of 3.  A probe that tests two threads
 * and writes one fixed-size record costs a fraction of that, and its
 * time is the samples' own clock.
 *
 * The tracepoints are not exported by name; they are found with
 * for_each_kernel_tracepoint(), as out-of-tree tracers find them.  Their
 * probes are registered while at least one session with events runs, so
 * the scheduler pays nothing otherwise.  A probe runs with preemption
 * off (sched_switch with interrupts off and the runqueue locked), which
 * is an RCU read-side section: it reads the running sessions from an RCU
 * list, and stopping a session takes it off the list and waits for the
 * probes in flight before its rings can go.  Writing a record is the
 * overflow handler's lock-free path (ring.c); wakeups of readers go
 * through irq_work, never from inside the scheduler.
 */
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/coredump.h>
#include <linux/mm_types.h>
#include <linux/pid.h>
#include <linux/tracepoint.h>
#include <linux/irq_work.h>
#include <linux/cred.h>
#include <asm/msr.h>
#include <trace/events/sched.h>
#include "tailor.h"

/*
 * How many parents up a followed child's ancestry is searched for the
 * target.  Deeper descendants (a shell's pipeline under a build driver
 * under the engine) have their samples but not their switches.
 */
#define TAILOR_SCHED_MAX_DEPTH	8

static DEFINE_MUTEX(sched_lock);	/* the list's writers, registration */
static LIST_HEAD(sched_sessions);	/* running sessions with events */
static unsigned int sched_users;	/* sessions on the list */
static struct tracepoint *tp_switch, *tp_waking;

/*
 * Whether a session without CAP_PERFMON may see @t: as ptrace (and perf's
 * inherited counters, which a setuid exec detaches) would let its caller,
 * the task's real, effective and saved ids all the caller's own, and its
 * memory dumpable (not after a setuid exec or PR_SET_DUMPABLE 0, when
 * ptrace wants CAP_SYS_PTRACE, which the session's caller cannot have
 * had without having CAP_PERFMON's reach anyway).
 *
 * Only a running task changes its mm (exec_mmap(), exit_mm()) and may
 * free the old one at once, so the mm is read only where @t cannot run
 * meanwhile (@mm_stable): the running task or the one about to run
 * (sched_switch, under the runqueue lock), or a wakee that is off every
 * runqueue and CPU, which only this wakeup (its pi_lock is held) can let
 * run.  A wakee that still runs or is queued never blocked: its wakeup
 * ends no wait, and is left out.
 */
static bool may_see(const struct tailor_plan *plan, struct task_struct *t,
		    bool mm_stable)
{
	const struct cred *tcred;
	struct mm_struct *mm;

	if (plan->knows_others)
		return true;
	if (!mm_stable)
		return false;
	tcred = rcu_dereference_sched(t->real_cred);
	if (!uid_eq(plan->cred->uid, tcred->uid) ||
	    !uid_eq(plan->cred->uid, tcred->euid) ||
	    !uid_eq(plan->cred->uid, tcred->suid) ||
	    !gid_eq(plan->cred->gid, tcred->gid) ||
	    !gid_eq(plan->cred->gid, tcred->egid) ||
	    !gid_eq(plan->cred->gid, tcred->sgid))
		return false;
	/*
	 * No mm: a thread past exit_mm(), whose dumpability is gone with
	 * it (an undumpable one's exit switches were let through, seen on
	 * 6.12), or a kernel thread: neither is shown.
	 */
	mm = READ_ONCE(t->mm);
	return mm && get_dumpable(mm) == SUID_DUMP_USER;
}

/*
 * Whether @t is one of the session's threads: the target's, a descendant
 * process's with TAILOR_CFG_CHILDREN (the samples follow children by
 * inherited counters, which a probe cannot see cheaply, so their
 * ancestry is searched instead: up to TAILOR_SCHED_MAX_DEPTH parents, and
 * not past a parent that exited, whose orphans init or a subreaper took),
 * or any but the idle tasks for a session on every CPU.  A plain pointer
 * test for the target's own threads: the plan holds a reference to the
 * target's struct pid.  Called with preemption off, an RCU read-side
 * section, so the parents read stay valid; a task already released
 * (pid_alive() false) may point at a parent long freed, so the walk stops
 * there.
 */
static bool followed(const struct tailor_plan *plan, struct task_struct *t,
		     bool mm_stable)
{
	struct task_struct *task = t;
	unsigned int depth;

	if (!plan->target)
		return !is_idle_task(t);
	if (task_tgid(t) == plan->target)
		return may_see(plan, t, mm_stable);
	if (!(plan->flags & TAILOR_CFG_CHILDREN))
		return false;
	for (depth = 0; depth < TAILOR_SCHED_MAX_DEPTH; depth++) {
		/* init and the idle task end every ancestry. */
		if (t->pid <= 1 || !pid_alive(t))
			return false;
		t = rcu_dereference_sched(t->real_parent);
		if (task_tgid(t) == plan->target)
			return may_see(plan, task, mm_stable);
	}
	return false;
}

/* @other's ids for the event word, where the session may know them. */
static void other_ids(const struct tailor_plan *plan, struct task_struct *other,
		      bool other_followed, u32 *tid, u32 *pid)
{
	*tid = 0;
	*pid = 0;
	if (!other || is_idle_task(other) || !pid_alive(other) ||
	    (!plan->knows_others && !other_followed))
		return;
	tailor_task_ids(plan, other, tid, pid);
	/* Released meanwhile, or not in the reader's namespace: neither. */
	if (!*tid || !*pid)
		*tid = *pid = 0;
}

static void emit_event(struct tailor_session *s, u64 tsc, u32 kind,
		       u32 evflags, struct task_struct *t,
		       struct task_struct *other, bool other_followed)
{
	const struct tailor_plan *plan = &s->plan;
	struct tailor_ring *ring;
	u32 tid, pid, other_tid, other_pid;
	u64 *rec;

	/*
	 * A thread outside the reader's pid namespace has no ids to name it
	 * by, nor has one released meanwhile (pid_alive() is not stable
	 * against release; its ids read 0 after).
	 */
	if (!pid_alive(t))
		return;
	tailor_task_ids(plan, t, &tid, &pid);
	if (!tid || !pid)
		return;
	rec = tailor_ring_begin(&s->rings, &ring);
	if (rec) {
		other_ids(plan, other, other_followed, &other_tid, &other_pid);
		rec[0] = tsc;
		rec[1] = tailor_ev_pack(kind, evflags, other_tid, other_pid);
		rec[2] = tailor_who_pack(tid, pid, smp_processor_id(),
					 TAILOR_SF_EVENT);
		memset(&rec[3], 0, s->rings.record_size - 3 * sizeof(u64));
	}
	if (tailor_ring_end(&s->rings, ring, rec))
		irq_work_queue(&s->wakeup);
}

/*
 * The scheduler is switching from @prev to @next on this CPU.  @prev is
 * still runnable when it was preempted or yielded (prev_state running),
 * or when a signal came as it went to sleep (__schedule() sets it running
 * again but passes the state it had); otherwise it blocks.  The last
 * switch out of an exiting thread (TASK_DEAD) is not recorded: an
 * autoreaped thread has released its pid by then and a group leader has
 * not, so only this rule is the same for both; the reader ends a thread
 * at its TASK exit record, which comes before.
 */
static void probe_switch(void *unused, bool preempt, struct task_struct *prev,
			 struct task_struct *next, unsigned int prev_state)
{
	struct tailor_session *s;
	u64 tsc = 0;	/* one instant for both sides, read once needed */

	list_for_each_entry_rcu(s, &sched_sessions, sched_node) {
		bool out, in;

		if (!(s->plan.flags & TAILOR_CFG_SWITCHES))
			continue;
		out = !(prev_state & TASK_DEAD) && followed(&s->plan, prev, true);
		in = followed(&s->plan, next, true);
		if ((out || in) && !tsc)
			tsc = rdtsc_ordered();
		if (out) {
			u32 evflags = preempt || prev_state == TASK_RUNNING ||
				      READ_ONCE(prev->__state) == TASK_RUNNING ?
				      TAILOR_EVF_PREEMPTED : 0;

			emit_event(s, tsc, TAILOR_EV_SWITCH_OUT, evflags, prev,
				   next, in);
		}
		if (in)
			emit_event(s, tsc, TAILOR_EV_SWITCH_IN, 0, next, prev,
				   out);
	}
}

/*
 * @p is being woken, by the running task or, in interrupt context, by
 * the kernel on behalf of nobody in particular.
 */
static void probe_waking(void *unused, struct task_struct *p)
{
	struct task_struct *waker = in_task() ? current : NULL;
	struct tailor_session *s;
	bool blocked;

	/* Off its runqueue, then off its CPU: as try_to_wake_up() reads them. */
	blocked = !READ_ONCE(p->on_rq);
	/* on_rq before on_cpu, as in try_to_wake_up(). */
	smp_rmb();
	/* Pairs with the release of on_cpu in finish_task_switch(). */
	blocked = blocked && !smp_load_acquire(&p->on_cpu);
	list_for_each_entry_rcu(s, &sched_sessions, sched_node) {
		if (!(s->plan.flags & TAILOR_CFG_WAKEUPS) ||
		    !followed(&s->plan, p, blocked))
			continue;
		emit_event(s, rdtsc_ordered(), TAILOR_EV_WAKEUP, 0, p, waker,
			   waker && followed(&s->plan, waker, true));
	}
}

static void find_tracepoint(struct tracepoint *tp, void *unused)
{
	if (!strcmp(tp->name, "sched_switch"))
		tp_switch = tp;
	else if (!strcmp(tp->name, "sched_waking"))
		tp_waking = tp;
}

/* At load: find the tracepoints, and check the probes' types against them. */
void tailor_sched_probe(void)
{
	check_trace_callback_type_sched_switch(probe_switch);
	check_trace_callback_type_sched_waking(probe_waking);
	for_each_kernel_tracepoint(find_tracepoint, NULL);
	if (!tailor_sched_available())
		pr_info("tailor: no sched_switch or sched_waking tracepoint in this kernel: no scheduler events\n");
}

bool tailor_sched_available(void)
{
	return tp_switch && tp_waking;
}

/* Caller holds sched_lock. */
static int register_probes(void)
{
	int err;

	err = tracepoint_probe_register(tp_switch, probe_switch, NULL);
	if (err)
		return err;
	err = tracepoint_probe_register(tp_waking, probe_waking, NULL);
	if (err) {
		tracepoint_probe_unregister(tp_switch, probe_switch, NULL);
		tracepoint_synchronize_unregister();
	}
	return err;
}

int tailor_sched_start(struct tailor_session *s)
{
	int err = 0;

	if (!(s->plan.flags & (TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS)))
		return 0;
	mutex_lock(&sched_lock);
	if (!sched_users)
		err = register_probes();
	if (!err) {
		sched_users++;
		list_add_rcu(&s->sched_node, &sched_sessions);
	}
	mutex_unlock(&sched_lock);
	return err;
}

/* Process context: waits for the probes in flight. */
void tailor_sched_stop(struct tailor_session *s)
{
	if (list_empty(&s->sched_node))
		return;
	mutex_lock(&sched_lock);
	list_del_rcu(&s->sched_node);
	if (!--sched_users) {
		tracepoint_probe_unregister(tp_waking, probe_waking, NULL);
		tracepoint_probe_unregister(tp_switch, probe_switch, NULL);
	}
	mutex_unlock(&sched_lock);
	/*
	 * A probe may still be writing this session's rings, or (once
	 * unregistered) running this module's code: wait for it.
	 */
	tracepoint_synchronize_unregister();
	INIT_LIST_HEAD(&s->sched_node);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sampling: the perf counters of a session and their overflow handler.
 *
 * Counters come from the kernel's perf API, so PEBS programming, PMU
 * sharing with perf users, throttling and CPU hotplug stay the kernel's
 * business.  The handler runs in NMI context (PEBS) or from a hard hrtimer
 * (software clock): it turns the sample into one fixed-size record in
 * this CPU's ring, without locks, allocation or sleeping, and defers the
 * reader wakeup to irq_work.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/perf_event.h>
#include <linux/irq_work.h>
#include <linux/cpu.h>
#include <linux/processor.h>
#include <asm/ptrace.h>
#include <asm/perf_event.h>
#include <linux/cpufeature.h>
#include <asm/msr.h>
#include <asm/fsgsbase.h>
#include <asm/unwind.h>
#include <linux/uaccess.h>
#include "tailor.h"

/* kernel/events/core.c marks a throttled counter with this (MAX_INTERRUPTS). */
#define PERF_THROTTLED_INTERRUPTS	(~0ULL)

static unsigned int pebs_max_precise;
static unsigned int pebs_format;	/* IA32_PERF_CAPABILITIES[11:8] */
static char pebs_reason[160] = "not probed";

bool tailor_pebs_available(void)
{
	return pebs_max_precise > 0;
}

/* Records carry their TSC (format 3 on) and the kernel hands it over. */
bool tailor_pebs_tsc_available(void)
{
	return TAILOR_HAVE_PEBS_TSC && tailor_pebs_available() && pebs_format >= 3;
}

unsigned int tailor_pebs_max_precise(void)
{
	return pebs_max_precise;
}

const char *tailor_pebs_absent_reason(void)
{
	return pebs_reason;
}

/*
 * Ask the PMU driver for precise counters once, at load: only the driver
 * knows whether PEBS works (the CPU may have it and a hypervisor hide it)
 * and up to which precise level.
 */
void tailor_sampler_probe(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.sample_period = 1000003,
		.disabled = 1,
		.exclude_kernel = 1,
		.wakeup_events = 1,
	};
	struct perf_event *event = ERR_PTR(-EOPNOTSUPP);
	unsigned int precise;

	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL) {
		snprintf(pebs_reason, sizeof(pebs_reason),
			 "not an Intel CPU (PEBS is Intel's)");
		return;
	}
	if (!boot_cpu_has(X86_FEATURE_DS)) {
		snprintf(pebs_reason, sizeof(pebs_reason),
			 "the CPU reports no debug store, so no PEBS (a hypervisor may hide it)");
		return;
	}
	/*
	 * A hybrid part's P- and E-cores have PMUs of their own (cpu_core,
	 * cpu_atom), and a counter of one samples only while its thread runs
	 * on that kind of core: a profile of a part of the time, not said.
	 */
	if (boot_cpu_has(X86_FEATURE_HYBRID_CPU)) {
		snprintf(pebs_reason, sizeof(pebs_reason),
			 "a hybrid CPU: PEBS on one core type's PMU would sample only the time spent on it");
		return;
	}
	if (boot_cpu_has(X86_FEATURE_PDCM)) {
		u64 caps;

		if (!rdmsrl_safe(MSR_IA32_PERF_CAPABILITIES, &caps))
			pebs_format = (caps & PERF_CAP_PEBS_FORMAT) >> 8;
	}
	for (precise = 3; precise > 0; precise--) {
		attr.precise_ip = precise;
		event = perf_event_create_kernel_counter(&attr,
							 raw_smp_processor_id(),
							 NULL, NULL, NULL);
		if (!IS_ERR(event))
			break;
	}
	if (IS_ERR(event)) {
		snprintf(pebs_reason, sizeof(pebs_reason),
			 "the perf PMU driver refuses precise events (error %ld)",
			 PTR_ERR(event));
		return;
	}
	perf_event_release_kernel(event);
	pebs_max_precise = precise;
	snprintf(pebs_reason, sizeof(pebs_reason),
		 "available, precise level up to %u, record format %u", precise,
		 pebs_format);
}

static u64 reg_value(const struct pt_regs *regs, unsigned int idx)
{
	switch (idx) {
	case 0: return regs->ax;
	case 1: return regs->bx;
	case 2: return regs->cx;
	case 3: return regs->dx;
	case 4: return regs->si;
	case 5: return regs->di;
	case 6: return regs->bp;
	case 7: return regs->sp;
	case 8: return regs->ip;
	case 16: return regs->r8;
	case 17: return regs->r9;
	case 18: return regs->r10;
	case 19: return regs->r11;
	case 20: return regs->r12;
	case 21: return regs->r13;
	case 22: return regs->r14;
	case 23: return regs->r15;
	}
	return 0;
}

/*
 * The registers a record carries.  A software-clock tick that lands in
 * the kernel still yields the user registers at kernel entry, which hold
 * the tag the task had set; kernel threads have none.
 */
static const struct pt_regs *sample_regs(const struct tailor_plan *plan,
					 struct pt_regs *regs, u32 *flags)
{
	if (user_mode(regs))
		return regs;
	*flags |= TAILOR_SF_KERNEL;
	if (plan->source == TAILOR_SOURCE_PEBS)
		return regs;
	if (current->mm && !(current->flags & PF_KTHREAD)) {
		*flags |= TAILOR_SF_USER_REGS;
		return task_pt_regs(current);
	}
	*flags |= TAILOR_SF_NO_REGS;
	return NULL;
}

/*
 * The running thread's tag word, at its thread pointer (FS base) plus
 * @offset: what an instrumented system stores per thread with one plain
 * move, so code that keeps no tag register (libc, a JIT) is labelled too.
 *
 * The handler runs on the sampled thread's CPU, in the thread's context
 * whether the tick landed in user or kernel mode, and the kernel never
 * changes FS for itself on x86-64, so the live FS base is the thread's.
 * copy_from_user_nmi() is what perf uses for user stacks from NMI: it
 * refuses while another mm is loaded (mid context switch), disables page
 * faults, and reports an unmapped or not-present word instead of taking
 * it, so the read is safe in NMI and hardirq context and never sleeps.
 * Kernel threads have no user FS base, and a thread between exec and
 * the loader's TLS setup has FS base 0: no word there, which is 0 and
 * not an error.
 */
/*
 * The thread pointer of a thread of the target, or 0: a followed child's
 * TLS belongs to whatever it runs, the offsets are the target's.
 * Comparing struct pid pointers is a plain load; the plan holds a
 * reference to the target's, so no other process has it.
 */
static unsigned long target_fsbase(const struct tailor_plan *plan)
{
	if (!current->mm || (current->flags & PF_KTHREAD))
		return 0;
	if (plan->target && task_tgid(current) != plan->target)
		return 0;
	return x86_fsbase_read_cpu();
}

static bool read_tag_word(const struct tailor_plan *plan, u64 *word)
{
	unsigned long addr = target_fsbase(plan);

	*word = 0;
	if (!addr)
		return true;
	addr += plan->tag_word_offset;
	if (copy_from_user_nmi(word, (const void __user *)addr, sizeof(*word))) {
		*word = 0;
		return false;
	}
	return true;
}

/*
 * OpenTelemetry's thread context into @ids (TAILOR_OTEL_IDS_SIZE bytes):
 * the record otel_thread_ctx_v1 points to, its ids if its valid byte is
 * 1, else zeros.  Only the owning thread writes it, and it is
 * interrupted here, so the record is whole (OTEP 4947's reading rule).
 */
static void read_otel_ids(const struct tailor_plan *plan, u64 *ids)
{
	u8 head[TAILOR_OTEL_VALID_OFFSET + 1];
	unsigned long addr = target_fsbase(plan), ctx;

	memset(ids, 0, TAILOR_OTEL_IDS_SIZE);
	if (!addr)
		return;
	addr += plan->otel_ctx_offset;
	if (copy_from_user_nmi(&ctx, (const void __user *)addr, sizeof(ctx)) || !ctx)
		return;
	if (copy_from_user_nmi(head, (const void __user *)ctx, sizeof(head)) ||
	    head[TAILOR_OTEL_VALID_OFFSET] != 1)
		return;
	memcpy(ids, head, TAILOR_OTEL_IDS_SIZE);
}

/* The PEBS record's own TSC where the kernel passes it on, else now. */
static u64 sample_tsc(const struct perf_sample_data *data, u32 *flags)
{
#if TAILOR_HAVE_PEBS_TSC
	if (data->sample_flags & PERF_SAMPLE_HW_TSC) {
		*flags |= TAILOR_SF_TSC_PEBS;
		return data->hw_tsc;
	}
#endif
	return rdtsc_ordered();
}

/*
 * A sample's call stack, as the record's callchain_nr word and entries
 * (the layout is the uapi header's): @entry has room for the bound's
 * frames and the two context markers.
 */
struct chain_out {
	u64 *entry;
	u32 nr;			/* entries written, markers included */
	u32 frames, max;	/* frames written, and the bound */
	u32 lost;		/* frames past the bound */
};

/* One frame: false once the walk should stop. */
static bool chain_frame(struct chain_out *c, u64 ip)
{
	if (c->frames < c->max) {
		c->entry[c->nr++] = ip;
		c->frames++;
		return true;
	}
	/* Past the bound only counted, and no deeper than perf would walk. */
	return ++c->lost + c->frames < TAILOR_MAX_CALLCHAIN;
}

/*
 * The kernel's frames, as perf_callchain_kernel() takes them: the kernel's
 * own unwinder (ORC on Debian's kernels) from the interrupted registers,
 * which is safe in the hard interrupt the software clock samples from.
 */
static void kernel_frames(struct chain_out *c, struct pt_regs *regs)
{
	struct unwind_state state;
	unsigned long addr;

	c->entry[c->nr++] = PERF_CONTEXT_KERNEL;
	if (!chain_frame(c, regs->ip))
		return;
	for (unwind_start(&state, current, regs, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr || !chain_frame(c, addr))
			return;
	}
}

/*
 * The user's frames by their frame pointers, as perf_callchain_user()
 * walks them: copy_from_user_nmi() reads each (next frame, return
 * address) pair without faulting, and refuses while another mm is
 * loaded.  A frame pointing at itself ends the walk; any other loop of
 * garbage (code built without frame pointers) ends at the bound, as
 * perf's does.  A caller's frame need not lie above its callee's (a
 * signal handler on its own stack, a fiber).  A 32-bit task's stack is
 * not walked.
 */
static void user_frames(struct chain_out *c, const struct pt_regs *regs)
{
	struct {
		unsigned long next;
		unsigned long ret;
	} frame;
	unsigned long fp = regs->bp;

	c->entry[c->nr++] = PERF_CONTEXT_USER;
	if (!chain_frame(c, regs->ip) || !user_64bit_mode((struct pt_regs *)regs))
		return;
	while (fp) {
		if (copy_from_user_nmi(&frame, (const void __user *)fp, sizeof(frame)))
			return;
		if (!frame.ret || !chain_frame(c, frame.ret) || frame.next == fp)
			return;
		fp = frame.next;
	}
}

/*
 * The stack into @rec (its callchain_nr word, then the entries): perf's
 * own where perf took it (PEBS, from the PMI's registers), else walked
 * here.  The session's exclusions hold for its frames as for its IPs.
 */
static void store_callchain(const struct tailor_plan *plan, struct perf_sample_data *data,
			    struct pt_regs *regs, u64 *rec)
{
	struct chain_out c = { .entry = rec + 1, .max = plan->callchain_max };
	u32 slots = plan->callchain_max + 2;

	if (data->sample_flags & PERF_SAMPLE_CALLCHAIN) {
		c.nr = min_t(u64, data->callchain->nr, slots);
		memcpy(c.entry, data->callchain->ip, c.nr * sizeof(u64));
	} else if (plan->source != TAILOR_SOURCE_PEBS) {
		/* Never from PEBS registers: a record's SP and BP may be stale. */
		if (!user_mode(regs) && !(plan->flags & TAILOR_CFG_EXCLUDE_KERNEL))
			kernel_frames(&c, regs);
		if (!(plan->flags & TAILOR_CFG_EXCLUDE_USER) && current->mm &&
		    !(current->flags & PF_KTHREAD))
			user_frames(&c, user_mode(regs) ? regs : task_pt_regs(current));
	}
	/* The ring's slots are reused: nothing of an older record may show. */
	memset(c.entry + c.nr, 0, (slots - c.nr) * sizeof(u64));
	rec[0] = c.nr | (u64)min(c.lost, 0xffffU) << 16;
}

static void tailor_overflow(struct perf_event *event,
			    struct perf_sample_data *data,
			    struct pt_regs *regs)
{
	struct tailor_session *s = event->overflow_handler_context;
	const struct tailor_plan *plan = &s->plan;
	struct tailor_ring *ring;
	const struct pt_regs *rsrc;
	u32 flags = 0;
	u64 tsc = sample_tsc(data, &flags);
	u32 i, tid, pid;
	u64 *rec;

	if (event->hw.interrupts == PERF_THROTTLED_INTERRUPTS)
		this_cpu_inc(s->rings.cpu->throttled);
	/*
	 * A PEBS IP is the next instruction's with precise 1, and perf core
	 * drops the resulting kernel IPs of a user-only counter only on its
	 * sigtrap path: a session that excludes the kernel gets none.
	 */
	if (unlikely((plan->flags & TAILOR_CFG_EXCLUDE_KERNEL) && !user_mode(regs))) {
		this_cpu_inc(s->rings.cpu->kernel_ip_dropped);
		return;
	}
	rec = tailor_ring_begin(&s->rings, &ring);
	if (!rec)
		goto out;

	rsrc = sample_regs(plan, regs, &flags);
	if (plan->source == TAILOR_SOURCE_PEBS && (regs->flags & PERF_EFLAGS_EXACT))
		flags |= TAILOR_SF_EXACT_IP;

	rec[0] = tsc;
	rec[1] = instruction_pointer(regs);
	for (i = 0; i < plan->nr_regs; i++)
		rec[3 + i] = rsrc ? reg_value(rsrc, plan->reg_index[i]) : 0;
	if (plan->flags & TAILOR_CFG_DATA_ADDR) {
		/*
		 * intel/ds.c hands over the record's data address for every
		 * event, 0 where the event has none (cycles, branches): only
		 * loads and stores have one, and none is at 0.
		 */
		rec[3 + i] = 0;
		if ((data->sample_flags & PERF_SAMPLE_ADDR) && data->addr) {
			rec[3 + i] = data->addr;
			flags |= TAILOR_SF_ADDR_VALID;
		}
		i++;
	}
	if (plan->flags & TAILOR_CFG_TAG_WORD) {
		if (!read_tag_word(plan, &rec[3 + i]))
			flags |= TAILOR_SF_TAG_WORD_BAD;
		i++;
	}
	if (plan->flags & TAILOR_CFG_OTEL_CTX) {
		read_otel_ids(plan, &rec[3 + i]);
		i += TAILOR_OTEL_IDS_SIZE / 8;
	}
	if (plan->flags & TAILOR_CFG_CALLCHAIN)
		store_callchain(plan, data, regs, &rec[3 + i]);
	tailor_task_ids(plan, current, &tid, &pid);
	rec[2] = tailor_who_pack(tid, pid, smp_processor_id(), flags);
out:
	if (tailor_ring_end(&s->rings, ring, rec))
		irq_work_queue(&s->wakeup);
}

static int add_event(struct tailor_session *s, struct perf_event *event)
{
	if (s->nr_events == s->max_events) {
		unsigned int max = max(16U, s->max_events * 2);
		struct perf_event **events;

		events = krealloc_array(s->events, max, sizeof(*events),
					GFP_KERNEL);
		if (!events)
			return -ENOMEM;
		s->events = events;
		s->max_events = max;
	}
	s->events[s->nr_events++] = event;
	return 0;
}

/*
 * Remember @t (a reference moves to the session) so it is not seen again.
 * An entry under its tid that is another task is one that exited and
 * whose tid was reused: it goes.
 */
static int add_task(struct tailor_session *s, struct task_struct *t)
{
	struct task_struct *old;

	old = xa_store(&s->tasks, t->pid, t, GFP_KERNEL);
	if (xa_is_err(old))
		return xa_err(old);
	if (old && old != t)
		put_task_struct(old);
	return 0;
}

static bool task_known(struct tailor_session *s, struct task_struct *t)
{
	return xa_load(&s->tasks, t->pid) == t;
}

/*
 * Threads that have exited are let go (their counters went with them),
 * and so are threads known by a tid that is no longer theirs (an exec
 * from a thread gives it the leader's: the next scan finds it by that).
 */
void tailor_sampler_forget_exited(struct tailor_session *s)
{
	struct task_struct *t;
	unsigned long tid;

	xa_for_each(&s->tasks, tid, t) {
		if (!(READ_ONCE(t->flags) & PF_EXITING) && READ_ONCE(t->pid) == tid)
			continue;
		xa_erase(&s->tasks, tid);
		put_task_struct(t);
	}
}

/*
 * A thread created by an already attached thread got a clone of its
 * counter (attr.inherit); all clones hang off the counter we created.
 */
static bool task_has_inherited_counter(struct tailor_session *s,
				       struct task_struct *t)
{
	bool found = false;
	unsigned int i;

	for (i = 0; i < s->nr_events && !found; i++) {
		struct perf_event *parent = s->events[i], *child;

		/*
		 * Its own: a thread that exec'd took the leader's tid
		 * (de_thread()), so the session knows it by another.
		 */
		if (parent->hw.target == t)
			return true;
		mutex_lock(&parent->child_mutex);
		list_for_each_entry(child, &parent->child_list, child_list) {
			if (child->hw.target == t) {
				found = true;
				break;
			}
		}
		mutex_unlock(&parent->child_mutex);
	}
	return found;
}

/* 1 if @t got a counter of its own, 0 if it had one or is exiting, or an error. */
static int attach_task(struct tailor_session *s, struct task_struct *t)
{
	struct perf_event *event;
	int err;

	if (task_has_inherited_counter(s, t))
		return 0;
	event = perf_event_create_kernel_counter(&s->plan.attr, -1, t,
						 tailor_overflow, s);
	if (IS_ERR(event)) {
		/* A thread that is exiting cannot be sampled anyway. */
		return PTR_ERR(event) == -ESRCH ? 0 : PTR_ERR(event);
	}
	err = add_event(s, event);
	if (err) {
		perf_event_release_kernel(event);
		return err;
	}
	return 1;
}

/* Whether the target has a live thread the session has not met (RCU only). */
bool tailor_sampler_has_unknown(struct tailor_session *s)
{
	struct task_struct *leader, *t;
	bool found = false;

	rcu_read_lock();
	leader = pid_task(s->plan.target, PIDTYPE_TGID);
	if (leader) {
		for_each_thread(leader, t) {
			if (!(READ_ONCE(t->flags) & PF_EXITING) && !task_known(s, t)) {
				found = true;
				break;
			}
		}
	}
	rcu_read_unlock();
	return found;
}

/* Threads of the target not yet known, with a reference each. */
static unsigned int collect_new_threads(struct tailor_session *s,
					struct task_struct **batch,
					unsigned int max)
{
	struct task_struct *leader, *t;
	unsigned int n = 0;

	rcu_read_lock();
	leader = pid_task(s->plan.target, PIDTYPE_TGID);
	if (leader) {
		for_each_thread(leader, t) {
			if (n == max)
				break;
			/* An exiting thread cannot be sampled any more. */
			if (task_known(s, t) || (READ_ONCE(t->flags) & PF_EXITING))
				continue;
			get_task_struct(t);
			batch[n++] = t;
		}
	}
	rcu_read_unlock();
	return n;
}

/*
 * One counter per thread that exists now; threads created later inherit
 * one.  Threads may appear while we attach, so scan until a pass finds
 * none that is new.  Returns how many threads got a counter of their
 * own, or an error.
 */
static int attach_process(struct tailor_session *s)
{
	int attached = 0;

	for (;;) {
		struct task_struct *leader, **batch;
		unsigned int n, i, want;
		int err = 0;

		rcu_read_lock();
		leader = pid_task(s->plan.target, PIDTYPE_TGID);
		want = leader ? get_nr_threads(leader) + 1 : 0;
		rcu_read_unlock();
		if (!want)
			break;

		batch = kcalloc(want, sizeof(*batch), GFP_KERNEL);
		if (!batch)
			return -ENOMEM;
		n = collect_new_threads(s, batch, want);
		for (i = 0; i < n; i++) {
			if (!err)
				err = tailor_may_profile_thread(batch[i]);
			if (!err)
				err = add_task(s, batch[i]);
			if (err) {
				put_task_struct(batch[i]);
				continue;
			}
			err = attach_task(s, batch[i]);
			if (err > 0) {
				attached++;
				err = 0;
			}
		}
		kfree(batch);
		if (err)
			return err;
		if (!n)
			break;
	}
	return s->nr_events ? attached : -ESRCH;
}

/*
 * Whether the target may still be profiled (an exec may have made it
 * privileged), and if @scan, threads of it that have no counter yet get
 * one: how many did, or an error.
 */
int tailor_sampler_attach_new(struct tailor_session *s, bool scan)
{
	struct task_struct *leader;
	const struct cred *old;
	int err;

	leader = get_pid_task(s->plan.target, PIDTYPE_TGID);
	if (!leader)
		return -ESRCH;
	err = tailor_profile_lock(leader, s->plan.cred, &old);
	if (!err) {
		if (scan)
			err = attach_process(s);
		tailor_profile_unlock(leader, old);
	}
	put_task_struct(leader);
	return err;
}

/*
 * The CPUs online at start.  CPUs brought online later are not sampled;
 * the hotplug lock keeps the set from changing while counters are made.
 */
static int attach_cpus(struct tailor_session *s)
{
	const struct cred *old;
	int cpu, err = 0;

	/* The PMU driver's checks see whoever configured, as for a process. */
	old = override_creds(s->plan.cred);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct perf_event *event;

		event = perf_event_create_kernel_counter(&s->plan.attr, cpu,
							 NULL, tailor_overflow,
							 s);
		if (IS_ERR(event)) {
			err = PTR_ERR(event);
			break;
		}
		err = add_event(s, event);
		if (err) {
			perf_event_release_kernel(event);
			break;
		}
	}
	cpus_read_unlock();
	revert_creds(old);
	return err;
}

int tailor_sampler_start(struct tailor_session *s)
{
	int err;

	if (s->plan.flags & TAILOR_CFG_ALL_CPUS)
		err = attach_cpus(s);
	else
		err = min(tailor_sampler_attach_new(s, true), 0);
	if (err)
		tailor_sampler_stop(s);
	return err;
}

/* Process context only: releasing a counter sleeps. */
void tailor_sampler_stop(struct tailor_session *s)
{
	struct task_struct *t;
	unsigned long tid;
	unsigned int i;

	for (i = 0; i < s->nr_events; i++)
		perf_event_release_kernel(s->events[i]);
	s->nr_events = 0;
	/* No counter is left to queue it; wait for one already queued. */
	irq_work_sync(&s->wakeup);
	xa_for_each(&s->tasks, tid, t) {
		xa_erase(&s->tasks, tid);
		put_task_struct(t);
	}
}

bool tailor_target_alive(struct tailor_session *s)
{
	struct task_struct *leader;
	bool alive;

	if (!s->plan.target)
		return true;
	leader = get_pid_task(s->plan.target, PIDTYPE_TGID);
	if (!leader)
		return false;
	alive = atomic_read(&leader->signal->live) > 0;
	put_task_struct(leader);
	return alive;
}

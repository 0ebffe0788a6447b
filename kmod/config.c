// SPDX-License-Identifier: GPL-2.0-only
/*
 * From a client's struct tailor_config to the plan a session samples
 * with: validate every field (unknown or inconsistent is -EINVAL), pick
 * the source, check permissions as perf would, and build the perf_event
 * attribute.  Nothing here touches the session, so a refused
 * configuration leaves the previous one in force.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/capability.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/task.h>
#include <linux/perf_event.h>
#include <linux/cred.h>
#include <linux/security.h>
#include <asm/perf_event.h>
#include "tailor.h"

/* The flags each ABI version knew. */
static u32 known_flags(u32 abi_version)
{
	switch (abi_version) {
	case 1:
		return TAILOR_CFG_FLAGS_V1;
	case 2:
		return TAILOR_CFG_FLAGS_V2;
	case 3:
	case 4:
		return TAILOR_CFG_FLAGS_V4;
	case 5:
		return TAILOR_CFG_FLAGS_V5;
	case 6:
	case 7:
	case 8:
		return TAILOR_CFG_FLAGS_V8;
	default:
		return TAILOR_CFG_FLAGS_ALL;
	}
}

static int check_fields(const struct tailor_config *cfg)
{
	u32 f = cfg->flags;

	/* The size was checked as the struct was copied in. */
	if (cfg->abi_version < TAILOR_ABI_MIN_VERSION ||
	    cfg->abi_version > TAILOR_ABI_VERSION)
		return -EINVAL;
	/* Version 1 knew neither the tag word flag nor its field (then reserved). */
	if (f & ~known_flags(cfg->abi_version))
		return -EINVAL;
	if (cfg->reserved)
		return -EINVAL;
	/* Before ABI 6, and without a stack asked for, callchain_max was reserved. */
	if (!(f & TAILOR_CFG_CALLCHAIN) && cfg->callchain_max)
		return -EINVAL;
	if (cfg->callchain_max > TAILOR_MAX_CALLCHAIN)
		return -EINVAL;
	/* Before ABI 4 the ring's out fields were reserved, zero. */
	if (cfg->abi_version < 4 && (cfg->ring_mmap_bytes || cfg->ring_capacity))
		return -EINVAL;
	if (!(f & TAILOR_CFG_TAG_WORD) && cfg->tag_word_offset)
		return -EINVAL;
	/* The word is 8-byte aligned in any TLS block; a page either way. */
	if ((f & TAILOR_CFG_TAG_WORD) &&
	    (cfg->tag_word_offset % 8 || cfg->tag_word_offset < -(1LL << 30) ||
	     cfg->tag_word_offset > (1LL << 30)))
		return -EINVAL;
	if (!(f & TAILOR_CFG_OTEL_CTX) && cfg->otel_ctx_offset)
		return -EINVAL;
	/*
	 * A pointer, 8-byte aligned, in static TLS, which on x86-64 ends at
	 * the thread pointer (at and past it is the TCB: glibc's would pass
	 * for a context).  The target's TLS: no all-CPU session.
	 */
	if ((f & TAILOR_CFG_OTEL_CTX) &&
	    (cfg->otel_ctx_offset % 8 || cfg->otel_ctx_offset < -(1LL << 30) ||
	     cfg->otel_ctx_offset >= 0 || (f & TAILOR_CFG_ALL_CPUS)))
		return -EINVAL;
	if (cfg->source > TAILOR_SOURCE_TIMER)
		return -EINVAL;
	if ((f & TAILOR_CFG_EXCLUDE_USER) && (f & TAILOR_CFG_EXCLUDE_KERNEL))
		return -EINVAL;

	if (cfg->sample_freq && (cfg->sample_period || cfg->timer_period_ns))
		return -EINVAL;
	if (cfg->sample_freq > TAILOR_MAX_FREQ)
		return -EINVAL;
	if (cfg->timer_period_ns && (cfg->timer_period_ns < TAILOR_MIN_TIMER_NS ||
				     cfg->timer_period_ns > TAILOR_MAX_TIMER_NS))
		return -EINVAL;
	if (cfg->sample_period & BIT_ULL(63))
		return -EINVAL;

	if ((f & TAILOR_CFG_NO_REGS) && cfg->regs_mask)
		return -EINVAL;
	if (cfg->regs_mask & ~TAILOR_REGS_CAPTURABLE)
		return -EINVAL;

	if (f & TAILOR_CFG_ALL_CPUS) {
		/* Every task on the CPUs already: there are no children to follow. */
		if (cfg->target_pid || (f & TAILOR_CFG_CHILDREN))
			return -EINVAL;
	} else if (cfg->target_pid <= 0) {
		return -EINVAL;
	}

	if (cfg->event_type != TAILOR_EVENT_HARDWARE &&
	    cfg->event_type != TAILOR_EVENT_RAW)
		return -EINVAL;
	if (cfg->precise > 3)
		return -EINVAL;
	/* PEBS-only settings make no sense for the software clock. */
	if (cfg->source == TAILOR_SOURCE_TIMER &&
	    ((f & TAILOR_CFG_DATA_ADDR) || cfg->event_config ||
	     cfg->event_type || cfg->precise || cfg->sample_period))
		return -EINVAL;
	return 0;
}

static int resolve_source(const struct tailor_config *cfg,
			  enum tailor_source *source)
{
	*source = TAILOR_SOURCE_TIMER;
	if (cfg->source == TAILOR_SOURCE_TIMER ||
	    (cfg->source == TAILOR_SOURCE_AUTO && !tailor_pebs_available()))
		return 0;
	if (!tailor_pebs_available()) {
		pr_info_ratelimited("tailor: PEBS session refused: %s; use the auto or timer source\n",
				    tailor_pebs_absent_reason());
		return -EOPNOTSUPP;
	}
	if (cfg->precise > tailor_pebs_max_precise()) {
		pr_info_ratelimited("tailor: PEBS session refused: precise level %u asked, this CPU has %u\n",
				    cfg->precise, tailor_pebs_max_precise());
		return -EOPNOTSUPP;
	}
	*source = TAILOR_SOURCE_PEBS;
	return 0;
}

/* The process of @nr (a pid or any of its thread ids), if we may profile it. */
static int resolve_target(pid_t nr, struct pid **target)
{
	struct task_struct *task;
	struct pid *pid;
	int err;

	pid = find_get_pid(nr);
	if (!pid)
		return -ESRCH;
	task = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	if (!task)
		return -ESRCH;
	err = tailor_may_profile(task);
	if (!err)
		*target = get_task_pid(task, PIDTYPE_TGID);
	put_task_struct(task);
	return err;
}

static void build_attr(struct tailor_plan *plan, const struct tailor_config *cfg)
{
	struct perf_event_attr *attr = &plan->attr;
	bool pebs = plan->source == TAILOR_SOURCE_PEBS;
	u64 period = pebs ? cfg->sample_period : cfg->timer_period_ns;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->exclude_user = !!(plan->flags & TAILOR_CFG_EXCLUDE_USER);
	attr->exclude_kernel = !!(plan->flags & TAILOR_CFG_EXCLUDE_KERNEL);
	attr->exclude_hv = 1;
	if (plan->target) {
		/* Future threads (and, if asked, processes) get a clone of the counter. */
		attr->inherit = 1;
		attr->inherit_thread = !(plan->flags & TAILOR_CFG_CHILDREN);
	}
	if (cfg->sample_freq || !period) {
		attr->freq = 1;
		attr->sample_freq = cfg->sample_freq ?: TAILOR_DEFAULT_FREQ;
	} else {
		attr->sample_period = period;
	}

	/*
	 * Call stacks: PEBS's come from perf itself, which takes them in
	 * the PMI from the interrupt's registers (intel/ds.c); the software
	 * clock's, from the handler.  Either way the counter asks for them,
	 * so that perf's own limit holds: kernel.perf_event_max_stack
	 * refuses a larger sample_max_stack (-EOVERFLOW) when the counter
	 * is created.
	 */
	if (plan->flags & TAILOR_CFG_CALLCHAIN) {
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr->sample_max_stack = plan->callchain_max;
		/* A PMI in the kernel must not give a user-only session kernel frames. */
		attr->exclude_callchain_kernel = attr->exclude_kernel;
		attr->exclude_callchain_user = attr->exclude_user;
	}
	if (!pebs) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		attr->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID;
		return;
	}
	attr->type = cfg->event_type;
	attr->config = cfg->event_config;
	attr->precise_ip = cfg->precise ?: min(2U, tailor_pebs_max_precise());
	attr->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	/* Without REGS_INTR the PEBS GPRs are not copied into regs. */
	if (plan->regs_mask) {
		attr->sample_type |= PERF_SAMPLE_REGS_INTR;
		attr->sample_regs_intr = plan->regs_mask;
	}
	if (plan->flags & TAILOR_CFG_DATA_ADDR)
		attr->sample_type |= PERF_SAMPLE_ADDR;
	/*
	 * Large PEBS would hand all records of a drain but the last to
	 * perf_event_output(), which drops them for a kernel counter;
	 * wakeup_events = 1 turns off auto-reload and large PEBS, so every
	 * record reaches the overflow handler.
	 */
	attr->wakeup_events = 1;
}

void tailor_plan_release(struct tailor_plan *plan)
{
	if (plan->cred)
		put_cred(plan->cred);
	plan->cred = NULL;
	put_pid(plan->target);
	plan->target = NULL;
	if (plan->pid_ns)
		put_pid_ns(plan->pid_ns);
	plan->pid_ns = NULL;
}

int tailor_plan_build(struct tailor_plan *plan, struct tailor_config *cfg)
{
	unsigned int bit;
	int err;

	memset(plan, 0, sizeof(*plan));
	err = check_fields(cfg);
	if (err)
		return err;
	err = resolve_source(cfg, &plan->source);
	if (err)
		return err;
	if ((cfg->flags & (TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS)) &&
	    !tailor_sched_available())
		return -EOPNOTSUPP;

	plan->flags = cfg->flags;
	if (plan->source == TAILOR_SOURCE_TIMER)
		plan->flags &= ~TAILOR_CFG_DATA_ADDR;
	if (plan->flags & TAILOR_CFG_CALLCHAIN)
		plan->callchain_max = cfg->callchain_max ?: TAILOR_DEFAULT_CALLCHAIN;
	if (!(cfg->flags & TAILOR_CFG_NO_REGS))
		plan->regs_mask = cfg->regs_mask ?: TAILOR_REGS_DEFAULT;
	BUILD_BUG_ON(hweight64(TAILOR_REGS_CAPTURABLE) > TAILOR_MAX_REGS);
	for_each_set_bit(bit, (unsigned long *)&plan->regs_mask, 64)
		plan->reg_index[plan->nr_regs++] = bit;
	plan->tsc_source = tailor_pebs_tsc_available() &&
			   plan->source == TAILOR_SOURCE_PEBS ?
			   TAILOR_TSC_PEBS : TAILOR_TSC_HANDLER;

	/*
	 * What perf_event_open() requires CAP_PERFMON for: every CPU, kernel
	 * code, and a raw event with the AnyThread bit, which counts the
	 * sibling hyperthread's work too (the PMU driver's perf_allow_cpu()).
	 */
	if (!perfmon_capable() &&
	    ((cfg->flags & TAILOR_CFG_ALL_CPUS) ||
	     !(cfg->flags & TAILOR_CFG_EXCLUDE_KERNEL) ||
	     (cfg->event_type == TAILOR_EVENT_RAW &&
	      (cfg->event_config & ARCH_PERFMON_EVENTSEL_ANY))))
		return -EPERM;
	/*
	 * perf_event_open() asks lockdown before it samples registers
	 * (LOCKDOWN_PERF, the confidentiality level); so does tailor, whose
	 * sessions capture them unless TAILOR_CFG_NO_REGS.
	 */
	if (plan->regs_mask) {
		err = security_locked_down(LOCKDOWN_PERF);
		if (err)
			return err;
	}
	if (!(cfg->flags & TAILOR_CFG_ALL_CPUS)) {
		err = resolve_target(cfg->target_pid, &plan->target);
		if (err)
			return err;
	}
	plan->pid_ns = get_pid_ns(task_active_pid_ns(current));
	plan->cred = get_current_cred();
	plan->knows_others = perfmon_capable();
	plan->init_ns = plan->pid_ns == &init_pid_ns;
	build_attr(plan, cfg);

	cfg->source_used = plan->source;
	cfg->tsc_source = plan->tsc_source;
	cfg->flags_used = plan->flags;
	cfg->nr_regs = plan->nr_regs;
	cfg->regs_used = plan->regs_mask;
	plan->tag_word_offset = cfg->tag_word_offset;
	plan->otel_ctx_offset = cfg->otel_ctx_offset;
	cfg->callchain_max = plan->callchain_max;
	cfg->record_size = TAILOR_SAMPLE_BASE_SIZE + 8 * plan->nr_regs +
			   ((plan->flags & TAILOR_CFG_DATA_ADDR) ? 8 : 0) +
			   ((plan->flags & TAILOR_CFG_TAG_WORD) ? 8 : 0) +
			   ((plan->flags & TAILOR_CFG_OTEL_CTX) ? TAILOR_OTEL_IDS_SIZE : 0) +
			   ((plan->flags & TAILOR_CFG_CALLCHAIN) ?
			    8 * (1 + plan->callchain_max + 2) : 0);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tailor.ko internals shared between its parts: device and sessions
 * (session.c), perf counters and the overflow handler (sampler.c),
 * scheduler events (sched.c), per-CPU rings (ring.c), TSC calibration
 * (tsc.c) and access checks (access.c).
 */
#ifndef _TAILOR_H
#define _TAILOR_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/irq_work.h>
#include <linux/workqueue.h>
#include <linux/perf_event.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/pid.h>
#include <linux/xarray.h>
#include <linux/uidgid.h>
#include "uapi/tailor.h"

#define TAILOR_DEFAULT_RING_RECORDS	32768
#define TAILOR_MAX_RING_RECORDS		BIT(22)
#define TAILOR_MAX_RING_BYTES		(64U << 20)	/* per CPU */
#define TAILOR_UNPRIV_RING_BYTES	(2U << 20)	/* per CPU, no CAP_PERFMON */
#define TAILOR_DEFAULT_FREQ		1000

/*
 * The kernel patch in patches/ hands the PEBS record's own TSC to overflow
 * handlers; its flag is the build-time sign that the kernel has it.  The
 * records hold a TSC from PEBS format 3 (Skylake) on, which the CPU says
 * at load (tailor_pebs_tsc_available()).
 */
#ifdef PERF_SAMPLE_HW_TSC
#define TAILOR_HAVE_PEBS_TSC		1
#else
#define TAILOR_HAVE_PEBS_TSC		0
#endif
/* Every capturable register at once: 16 GPRs and the IP. */
#define TAILOR_MAX_REGS			17

/*
 * One CPU's ring.  The overflow handler on that CPU is the only producer
 * (head, produced, lost, throttled); the consumer -- read(), serialised by
 * the session's read_lock, or a reader that mapped the ring -- owns
 * ctl->tail.  ctl and the records are one vmalloc_user() area, the
 * mapping's pages.  ctl->head is a copy of head for mapped readers: the
 * page is theirs to write, so the module reads only tail from it.
 */
struct tailor_ring {
	u64 head;
	u64 produced;
	u64 lost;
	u64 throttled;
	u64 kernel_ip_dropped;	/* not produced: see tailor_stats */
	int nesting;
	struct tailor_ring_control *ctl;
	u8 *buf;		/* records: ctl + TAILOR_RING_DATA_OFFSET */
	struct page **pages;	/* ctl's pages, charged to the memory cgroup */
};

#define TAILOR_RING_DATA_OFFSET	PAGE_SIZE

struct tailor_rings {
	struct tailor_ring __percpu *cpu;
	u32 capacity;		/* records, power of two */
	u32 record_size;	/* bytes */
	u32 wakeup;		/* queued records that wake readers */
	u64 map_bytes;		/* one CPU's area: control page and records */
	kuid_t uid;		/* charged for the pages, as perf's mmap */
	unsigned long charged;	/* pages, in ring.c's count for uid */
	unsigned long allowance; /* pages uid may hold, from its configure */
	bool unlimited;		/* CAP_IPC_LOCK or CAP_PERFMON at configure */
	struct mem_cgroup *memcg; /* charged for the pages, ours to put */
};

enum tailor_state {
	TAILOR_STATE_NEW,
	TAILOR_STATE_CONFIGURED,
	TAILOR_STATE_RUNNING,
	TAILOR_STATE_STOPPED,
};

/* The resolved configuration a session samples with. */
struct tailor_plan {
	struct perf_event_attr attr;
	enum tailor_source source;
	enum tailor_tsc_source tsc_source;
	u32 flags;
	u64 regs_mask;
	u32 nr_regs;
	u8 reg_index[TAILOR_MAX_REGS];	/* TAILOR_REG_* in capture order */
	s64 tag_word_offset;		/* with TAILOR_CFG_TAG_WORD */
	s64 otel_ctx_offset;		/* with TAILOR_CFG_OTEL_CTX */
	u32 callchain_max;		/* frames, with TAILOR_CFG_CALLCHAIN */
	struct pid *target;		/* NULL with TAILOR_CFG_ALL_CPUS */
	struct pid_namespace *pid_ns;	/* of the reader, for pid/tid */
	const struct cred *cred;	/* of the configuring caller */
	bool knows_others;		/* caller had CAP_PERFMON */
	bool init_ns;			/* pid_ns is the initial one */
};

/*
 * @t's tid and pid as the session's reader sees them.  From the initial
 * namespace they are the task's own fields, read without RCU or a lookup:
 * the overflow handler and the scheduler probes run this per record.
 */
static inline void tailor_task_ids(const struct tailor_plan *plan,
				   struct task_struct *t, u32 *tid, u32 *pid)
{
	if (plan->init_ns) {
		*tid = t->pid;
		*pid = t->tgid;
		return;
	}
	*tid = task_pid_nr_ns(t, plan->pid_ns);
	*pid = task_tgid_nr_ns(t, plan->pid_ns);
}

struct tailor_session {
	struct mutex lock;		/* state, plan, counters */
	struct mutex read_lock;		/* consumer side of the rings */
	enum tailor_state state;
	bool target_exited;
	struct tailor_plan plan;
	struct tailor_rings rings;

	struct perf_event **events;
	unsigned int nr_events;
	unsigned int max_events;
	/*
	 * The target's live threads seen so far, by tid, each with a
	 * reference: a scan attaches only threads not in it.  Exited ones
	 * are dropped at each tick.
	 */
	struct xarray tasks;

	/*
	 * Mappings of the rings (vm_ops open/close).  map_lock orders mmap()
	 * against CONFIGURE's swap of the rings.  mmap() runs under
	 * mmap_lock, and lock and read_lock are held across copy_to_user(),
	 * which may take mmap_lock: so map_lock is the innermost lock, and
	 * nothing is taken or faulted in while it is held.
	 */
	struct mutex map_lock;
	atomic_t mappings;

	/*
	 * A CPU that comes up gets a ring (tailor_session_cpu_online(), in
	 * the hotplug thread): rings_lock keeps CONFIGURE from swapping the
	 * rings meanwhile.  Taken with the CPUs' hotplug lock held, it is
	 * taken after lock and read_lock, before map_lock.
	 */
	struct mutex rings_lock;
	struct hlist_node cpuhp_node;

	/* On sched.c's list while running with switches or wakeups. */
	struct list_head sched_node;

	wait_queue_head_t readers;
	struct irq_work wakeup;		/* from NMI/hardirq to readers */
	struct delayed_work tick;	/* target liveness, slow wakeups */
};

/* ring.c */
int tailor_rings_alloc(struct tailor_rings *rings, u32 capacity,
		       u32 record_size, u32 wakeup, bool all_possible);
void tailor_rings_free(struct tailor_rings *rings);
void tailor_rings_add_cpu(struct tailor_rings *rings, int cpu);
bool tailor_rings_empty(struct tailor_rings *rings);
u64 *tailor_ring_begin(struct tailor_rings *rings, struct tailor_ring **ringp);
bool tailor_ring_end(struct tailor_rings *rings, struct tailor_ring *ring,
		     u64 *rec);
ssize_t tailor_rings_read(struct tailor_rings *rings, char __user *buf,
			  size_t count);
int tailor_rings_mmap(struct tailor_rings *rings, struct vm_area_struct *vma);
u64 tailor_rings_stats(struct tailor_rings *rings, int cpu,
		       struct tailor_cpu_stats *st);

/* sampler.c */
bool tailor_pebs_available(void);
bool tailor_pebs_tsc_available(void);
unsigned int tailor_pebs_max_precise(void);
const char *tailor_pebs_absent_reason(void);
void tailor_sampler_probe(void);
int tailor_sampler_start(struct tailor_session *s);
int tailor_sampler_attach_new(struct tailor_session *s, bool scan);
void tailor_sampler_forget_exited(struct tailor_session *s);
bool tailor_sampler_has_unknown(struct tailor_session *s);
void tailor_sampler_stop(struct tailor_session *s);
bool tailor_target_alive(struct tailor_session *s);

/* sched.c */
void tailor_sched_probe(void);
bool tailor_sched_available(void);
int tailor_sched_start(struct tailor_session *s);
void tailor_sched_stop(struct tailor_session *s);

/* tsc.c */
struct tailor_tsc_calibration {
	u32 khz_kernel;
	u32 khz_measured;
	u32 mult;
	u32 shift;
	bool stable;
};

extern struct tailor_tsc_calibration tailor_tsc;
void tailor_tsc_calibrate(void);

/* config.c */
int tailor_plan_build(struct tailor_plan *plan, struct tailor_config *cfg);
void tailor_plan_release(struct tailor_plan *plan);

/* access.c */
int tailor_may_profile(struct task_struct *task);
int tailor_profile_lock(struct task_struct *task, const struct cred *cred,
			const struct cred **old);
int tailor_may_profile_thread(struct task_struct *t);
void tailor_profile_unlock(struct task_struct *task, const struct cred *old);

/* session.c */
extern const struct file_operations tailor_fops;
extern int tailor_cpuhp_state;
int tailor_session_cpu_online(unsigned int cpu, struct hlist_node *node);
void tailor_fill_info(struct tailor_info *info);

/* main.c */
bool tailor_open_allowed(void);

#endif /* _TAILOR_H */

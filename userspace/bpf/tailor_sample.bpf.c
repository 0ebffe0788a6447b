// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF collector's program: on each sample of a perf event (the
 * software clock, cpu-clock, one event per CPU), what tailor.ko's overflow
 * handler captures, in its record layout (uapi/tailor.h): IP, the
 * registers asked for (the user registers at kernel entry when the tick
 * hit the kernel), the thread's tag word read from its TLS without
 * faulting, pid, tid and CPU; the time is CLOCK_MONOTONIC.  Records go to
 * the CPU's BPF ring buffer; a full one counts the sample lost.  Compiled
 * once (CO-RE) against the BTF of the kernel it was built on.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/*
 * The uapi header's types are vmlinux.h's here, and its ioctl numbers go
 * unused: only its <linux/const.h>, which is macros, is wanted.
 */
#define _LINUX_TYPES_H
#define _LINUX_IOCTL_H
#include "uapi/tailor.h"
#include "tailor_bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PF_KTHREAD	0x00200000	/* include/linux/sched.h, since 2.6 */

/* Set by tailor record before load. */
const volatile __u32 cfg_flags;		/* TAILOR_CFG_* in force */
const volatile __u32 cfg_record_size;	/* bytes */
const volatile __u32 cfg_nr_regs;
const volatile __u8 cfg_reg_index[TAILOR_MAX_REGS_BPF];	/* TAILOR_REG_*, ascending */
const volatile __s64 cfg_tag_word_offset;
const volatile __s64 cfg_otel_ctx_offset;	/* with TAILOR_CFG_OTEL_CTX */
const volatile __u32 cfg_target_tgid;	/* 0: every CPU */
/*
 * The pid namespace of tailor record, by its inode, where that is not
 * the initial one (a container): records, the target and the processes
 * followed are in its ids, as perf's side-band and /proc there give
 * them; 0: the initial namespace's, which bpf_get_current_pid_tgid()
 * gives at no cost.
 */
const volatile __u32 cfg_pidns_ino;
const volatile __u64 cfg_wakeup_bytes;	/* wake the reader past this much */
const volatile __u32 cfg_callchain_max;	/* frames, with TAILOR_CFG_CALLCHAIN */

/* The processes sampled: the target and, with TAILOR_CFG_CHILDREN, its descendants. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* a template: tailor record sizes each */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, TAILOR_BPF_MAX_CPUS);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tailor_bpf_counts);
} counts SEC(".maps");

/*
 * Exec and the FS base.  The kernel keeps the old image's base in
 * thread.fsbase until the new image's loader sets its own (arch_prctl):
 * in between there is no tag word, only the old image's TLS address in
 * the new mm.  The exec tracepoint comes at the end of exec, so a tick
 * inside it (the old mm's teardown) is told by the base itself: the
 * launched command's is tailor's own until its exec (cfg_launch_fsbase),
 * and after an exec the base it ended with (exec_fsbase, by tid, gone
 * once the base moved).  tailor.ko reads the live register instead.
 */
const volatile __u64 cfg_launch_fsbase;	/* 0: the target was not launched */
__u32 target_exec_seen;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} exec_fsbase SEC(".maps");

/*
 * The record being built and the registers it copies, per CPU: too big
 * for the 512-byte stack.  perf runs a CPU's overflow programs one at a
 * time (bpf_prog_active), so one per CPU is enough.
 */
/*
 * The record's room in words: a power of two past the largest record, so
 * that an index masked to it is in bounds whatever the compiler makes of
 * the index's range.
 */
#define REC_WORDS	256
_Static_assert(TAILOR_BPF_MAX_RECORD <= REC_WORDS * 8, "the scratch record is too small");
#define STACK_SLOTS	128	/* the same, past TAILOR_MAX_CALLCHAIN */

struct scratch {
	__u64 rec[REC_WORDS];
	__u64 kernel_stack[STACK_SLOTS];	/* bpf_get_stack()'s, one part each */
	__u64 user_stack[STACK_SLOTS];
	struct pt_regs regs;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

#define MAX_PID_NS_LEVEL	32	/* include/linux/pid_namespace.h: levels 0 to 32 */

/* @pid's number in cfg_pidns_ino's namespace; 0 where it has none there. */
static __noinline __u32 ns_nr(struct pid *pid)
{
	unsigned int level = BPF_CORE_READ(pid, level), i;
	__u32 numbers = bpf_core_field_offset(struct pid, numbers);

	for (i = 0; i <= MAX_PID_NS_LEVEL && i <= level; i++) {
		struct upid up;

		if (bpf_probe_read_kernel(&up, sizeof(up),
					  (const char *)pid + numbers + i * sizeof(struct upid)))
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == cfg_pidns_ino)
			return (__u32)up.nr;
	}
	return 0;
}

/* @task's thread and process ids as tailor record's namespace sees them. */
static __always_inline void task_ids(struct task_struct *task, __u32 *tid, __u32 *tgid)
{
	if (!cfg_pidns_ino) {
		*tid = BPF_CORE_READ(task, pid);
		*tgid = BPF_CORE_READ(task, tgid);
		return;
	}
	*tid = ns_nr(BPF_CORE_READ(task, thread_pid));
	*tgid = ns_nr(BPF_CORE_READ(task, group_leader, thread_pid));
}

/* rec[@at] = @v, within the record (the verifier's bound). */
static __always_inline void put(__u64 *rec, __u32 at, __u64 v)
{
	rec[at & (REC_WORDS - 1)] = v;
}

/* Register @idx (TAILOR_REG_*, perf's x86 numbering) of @r. */
static __always_inline __u64 reg_value(const struct pt_regs *r, __u32 idx)
{
	switch (idx) {
	case TAILOR_REG_AX: return r->ax;
	case TAILOR_REG_BX: return r->bx;
	case TAILOR_REG_CX: return r->cx;
	case TAILOR_REG_DX: return r->dx;
	case TAILOR_REG_SI: return r->si;
	case TAILOR_REG_DI: return r->di;
	case TAILOR_REG_BP: return r->bp;
	case TAILOR_REG_SP: return r->sp;
	case TAILOR_REG_IP: return r->ip;
	case TAILOR_REG_R8: return r->r8;
	case TAILOR_REG_R8 + 1: return r->r9;
	case TAILOR_REG_R8 + 2: return r->r10;
	case TAILOR_REG_R8 + 3: return r->r11;
	case TAILOR_REG_R8 + 4: return r->r12;
	case TAILOR_REG_R8 + 5: return r->r13;
	case TAILOR_REG_R8 + 6: return r->r14;
	case TAILOR_REG_R15: return r->r15;
	}
	return 0;
}

/*
 * The context's registers are read 8 bytes at a time (the verifier's
 * rule for perf_event programs), cs too.
 */
static __always_inline bool user_mode(const struct pt_regs *regs)
{
	__u64 cs = *(volatile const __u64 *)((const char *)regs +
					     __builtin_offsetof(struct pt_regs, cs));

	return (cs & 3) == 3;
}

/*
 * The running thread's thread pointer, if it is one of the target's and
 * its TLS is its own image's; else 0.
 */
static __always_inline unsigned long target_fsbase(struct task_struct *task, __u32 tgid,
						   __u32 tid)
{
	unsigned long fsbase;
	__u64 *stale;

	if (!BPF_CORE_READ(task, mm) || (BPF_CORE_READ(task, flags) & PF_KTHREAD))
		return 0;
	/* A followed child's TLS belongs to whatever it runs. */
	if (cfg_target_tgid && tgid != cfg_target_tgid)
		return 0;
	/*
	 * What the kernel last set (arch_prctl) or saved at the last switch;
	 * the module reads the live register, equal unless the thread wrote
	 * it itself with WRFSBASE since.
	 */
	fsbase = BPF_CORE_READ(task, thread.fsbase);
	if (!fsbase)
		return 0;
	if (cfg_launch_fsbase && !target_exec_seen && fsbase == cfg_launch_fsbase)
		return 0;
	stale = bpf_map_lookup_elem(&exec_fsbase, &tid);
	if (stale) {
		if (*stale == fsbase)
			return 0;
		bpf_map_delete_elem(&exec_fsbase, &tid);
	}
	return fsbase;
}

/* The running thread's tag word (the module's read_tag_word()). */
static __always_inline bool read_tag_word(unsigned long fsbase, __u64 *word)
{
	*word = 0;
	if (!fsbase)
		return true;
	if (bpf_probe_read_user(word, sizeof(*word), (const void *)(fsbase + cfg_tag_word_offset))) {
		*word = 0;
		return false;
	}
	return true;
}

/*
 * OpenTelemetry's thread context (the module's read_otel_ids()): the ids
 * of the record otel_thread_ctx_v1 points to, if its valid byte is 1.
 */
static __always_inline void read_otel_ids(unsigned long fsbase, __u64 *rec, __u32 at)
{
	struct {
		__u64 ids[TAILOR_OTEL_IDS_SIZE / 8];
		__u8 valid;
	} head = {};
	__u64 ctx = 0;

	if (fsbase &&
	    !bpf_probe_read_user(&ctx, sizeof(ctx), (const void *)(fsbase + cfg_otel_ctx_offset)) &&
	    ctx && !bpf_probe_read_user(&head, TAILOR_OTEL_VALID_OFFSET + 1, (const void *)ctx) &&
	    head.valid == 1) {
		put(rec, at, head.ids[0]);
		put(rec, at + 1, head.ids[1]);
		put(rec, at + 2, head.ids[2]);
		return;
	}
	put(rec, at, 0);
	put(rec, at + 1, 0);
	put(rec, at + 2, 0);
}

/*
 * bpf_loop()'s callbacks, which the verifier walks once however many
 * frames they copy: frame @i of @from (after @skip) to rec[@to + @i], or
 * a zero there.
 */
struct frame_copy {
	__u64 *rec;
	const __u64 *from;
	__u32 to, skip;
};

static long copy_frame(__u32 i, void *arg)
{
	struct frame_copy *c = arg;

	c->rec[(c->to + i) & (REC_WORDS - 1)] = c->from[(c->skip + i) & (STACK_SLOTS - 1)];
	return 0;
}

static long zero_frame(__u32 i, void *arg)
{
	struct frame_copy *c = arg;

	c->rec[(c->to + i) & (REC_WORDS - 1)] = 0;
	return 0;
}

/*
 * The sample's call stack at rec[@at] (its callchain_nr word, then the
 * entries), in the module's layout (uapi/tailor.h): the kernel's frames
 * from the kernel's own unwinder, the user's by frame pointers, both by
 * bpf_get_stack() as perf_callchain() takes them (a PEBS event's is
 * perf's own, taken from the interrupt's registers).  Each part is taken
 * to perf's bound so that the frames past cfg_callchain_max are counted.
 */
static __always_inline void store_callchain(struct bpf_perf_event_data *ctx, struct scratch *sc,
					    __u32 at, bool kernel, bool user)
{
	__u32 max = cfg_callchain_max, nr = 0, kept_kernel = 0, kept_user = 0;
	__u32 nr_kernel = 0, nr_user = 0, lost, first;
	struct frame_copy c = { .rec = sc->rec };
	long got;

	if (max > TAILOR_MAX_CALLCHAIN)
		max = TAILOR_MAX_CALLCHAIN;
	/*
	 * A precise event's parts are slices of perf's own callchain, which
	 * holds its markers: each slice's leading one is skipped, the
	 * record's own written in its place.
	 */
	if (kernel) {
		got = bpf_get_stack(ctx, sc->kernel_stack, TAILOR_MAX_CALLCHAIN * 8, 0);
		nr_kernel = got > 0 ? (__u64)got / 8 : 0;
		first = nr_kernel && sc->kernel_stack[0] == PERF_CONTEXT_KERNEL;
		nr_kernel -= first;
		kept_kernel = nr_kernel < max ? nr_kernel : max;
		put(sc->rec, at + 1 + nr++, PERF_CONTEXT_KERNEL);
		c.from = sc->kernel_stack;
		c.to = at + 1 + nr;
		c.skip = first;
		bpf_loop(kept_kernel, copy_frame, &c, 0);
		nr += kept_kernel;
	}
	if (user) {
		got = bpf_get_stack(ctx, sc->user_stack, TAILOR_MAX_CALLCHAIN * 8, BPF_F_USER_STACK);
		nr_user = got > 0 ? (__u64)got / 8 : 0;
		first = nr_user && sc->user_stack[0] == PERF_CONTEXT_USER;
		nr_user -= first;
		kept_user = nr_user < max - kept_kernel ? nr_user : max - kept_kernel;
		put(sc->rec, at + 1 + nr++, PERF_CONTEXT_USER);
		c.from = sc->user_stack;
		c.to = at + 1 + nr;
		c.skip = first;
		bpf_loop(kept_user, copy_frame, &c, 0);
		nr += kept_user;
	}
	/* The ring's space is reused: nothing of an older record may show. */
	c.to = at + 1 + nr;
	if (max + 2 > nr)
		bpf_loop(max + 2 - nr, zero_frame, &c, 0);
	lost = nr_kernel + nr_user - kept_kernel - kept_user;
	if (lost + kept_kernel + kept_user > TAILOR_MAX_CALLCHAIN)
		lost = TAILOR_MAX_CALLCHAIN - kept_kernel - kept_user;
	put(sc->rec, at, nr | (__u64)lost << 16);
}

SEC("perf_event")
int tailor_sample(struct bpf_perf_event_data *ctx)
{
	struct tailor_bpf_counts *cnt;
	struct scratch *sc;
	__u64 *rec;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, cpu, zero = 0, flags = 0, i, n, at;
	__u32 host_tid = tid;
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)&ctx->regs;
	__u64 size = cfg_record_size, wakeup, avail;
	unsigned long fsbase = 0;
	const void *from = NULL;
	void *ring;

	if (cfg_pidns_ino)
		task_ids(task, &tid, &tgid);
	if (cfg_target_tgid && !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	cnt = bpf_map_lookup_elem(&counts, &zero);
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!cnt || !sc)
		return 0;
	rec = sc->rec;
	if ((cfg_flags & TAILOR_CFG_EXCLUDE_KERNEL) && !user_mode(regs)) {
		cnt->kernel_ip_dropped++;
		return 0;
	}
	cnt->produced++;
	cpu = bpf_get_smp_processor_id();

	/*
	 * The registers, copied out of the context or (a tick in the kernel)
	 * the user state at kernel entry: one copy, so that every read below
	 * is of the copy.
	 */
	if (user_mode(regs)) {
		/*
		 * Field by field: the verifier turns each read of the
		 * context into one of the interrupt's registers, so the
		 * context's address is no pt_regs to copy from.
		 */
		sc->regs.ax = ctx->regs.ax;
		sc->regs.bx = ctx->regs.bx;
		sc->regs.cx = ctx->regs.cx;
		sc->regs.dx = ctx->regs.dx;
		sc->regs.si = ctx->regs.si;
		sc->regs.di = ctx->regs.di;
		sc->regs.bp = ctx->regs.bp;
		sc->regs.sp = ctx->regs.sp;
		sc->regs.ip = ctx->regs.ip;
		sc->regs.r8 = ctx->regs.r8;
		sc->regs.r9 = ctx->regs.r9;
		sc->regs.r10 = ctx->regs.r10;
		sc->regs.r11 = ctx->regs.r11;
		sc->regs.r12 = ctx->regs.r12;
		sc->regs.r13 = ctx->regs.r13;
		sc->regs.r14 = ctx->regs.r14;
		sc->regs.r15 = ctx->regs.r15;
	} else {
		flags |= TAILOR_SF_KERNEL;
		if (BPF_CORE_READ(task, mm) && !(BPF_CORE_READ(task, flags) & PF_KTHREAD)) {
			flags |= TAILOR_SF_USER_REGS;
			from = (const void *)bpf_task_pt_regs(task);
		} else {
			flags |= TAILOR_SF_NO_REGS;
		}
	}
	if (!user_mode(regs) &&
	    (!from || bpf_probe_read_kernel(&sc->regs, sizeof(sc->regs), from)))
		__builtin_memset(&sc->regs, 0, sizeof(sc->regs));
	rec[0] = bpf_ktime_get_ns();
	rec[1] = ctx->regs.ip;
	/* A PEBS event's precise IP (perf's PERF_EFLAGS_EXACT in regs->flags). */
	if (ctx->regs.flags & (1 << 3))
		flags |= TAILOR_SF_EXACT_IP;
	n = cfg_nr_regs;
	if (n > TAILOR_MAX_REGS_BPF)
		return 0;
	for (i = 0; i < TAILOR_MAX_REGS_BPF && i < n; i++)
		rec[3 + i] = reg_value(&sc->regs, cfg_reg_index[i]);
	at = 3 + n;
	/* Where the event gives one (PEBS's data linear address). */
	if (cfg_flags & TAILOR_CFG_DATA_ADDR) {
		__u64 addr = ctx->addr;

		if (addr)
			flags |= TAILOR_SF_ADDR_VALID;
		put(rec, at++, addr);
	}
	if (cfg_flags & (TAILOR_CFG_TAG_WORD | TAILOR_CFG_OTEL_CTX))
		fsbase = target_fsbase(task, tgid, host_tid);
	if (cfg_flags & TAILOR_CFG_TAG_WORD) {
		__u64 word;

		if (!read_tag_word(fsbase, &word)) {
			flags |= TAILOR_SF_TAG_WORD_BAD;
			cnt->tag_word_bad++;
		}
		put(rec, at++, word);
	}
	if (cfg_flags & TAILOR_CFG_OTEL_CTX) {
		read_otel_ids(fsbase, rec, at);
		at += TAILOR_OTEL_IDS_SIZE / 8;
	}
	if (cfg_flags & TAILOR_CFG_CALLCHAIN)
		store_callchain(ctx, sc, at,
				!user_mode(regs) && !(cfg_flags & TAILOR_CFG_EXCLUDE_KERNEL),
				!(cfg_flags & TAILOR_CFG_EXCLUDE_USER) && BPF_CORE_READ(task, mm) &&
				!(BPF_CORE_READ(task, flags) & PF_KTHREAD));
	rec[2] = tailor_who_pack(tid, tgid, cpu, flags);

	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring || size > sizeof(sc->rec) || size < TAILOR_SAMPLE_BASE_SIZE) {
		cnt->lost++;
		return 0;
	}
	/*
	 * Wake the reader once, as the ring fills past the mark, as the
	 * module's rings do: not at every sample after it (each wakeup is
	 * an irq_work), while the reader, woken, is on its way.  Its own
	 * timer takes what a missed mark leaves.
	 */
	avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	wakeup = avail < cfg_wakeup_bytes && avail + size + 8 >= cfg_wakeup_bytes ?
		 BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(ring, rec, size, wakeup))
		cnt->lost++;
	return 0;
}

/* A process the target (or a descendant) forks is followed. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(tailor_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, tid;
	__u8 one = 1;

	if (!(cfg_flags & TAILOR_CFG_CHILDREN) || ptgid == ctgid)
		return 0;
	if (cfg_pidns_ino) {
		task_ids(parent, &tid, &ptgid);
		task_ids(child, &tid, &ctgid);
	}
	if (!ctgid || !bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	return 0;
}

/*
 * The target's exec (the command tailor record launched, or a later one):
 * from here until the new image's loader sets its own FS base, the base
 * is the old image's.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(tailor_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = task->tgid, tid = task->pid, ns_tid;
	__u64 fsbase = task->thread.fsbase;

	if (!(cfg_flags & (TAILOR_CFG_TAG_WORD | TAILOR_CFG_OTEL_CTX)))
		return 0;
	if (cfg_pidns_ino)
		task_ids(task, &ns_tid, &tgid);
	if (tgid != cfg_target_tgid)
		return 0;
	target_exec_seen = 1;
	if (fsbase)
		bpf_map_update_elem(&exec_fsbase, &tid, &fsbase, BPF_ANY);
	return 0;
}

/*
 * A followed process gone, its last thread out (do_exit() counts down
 * signal->live before this tracepoint; a leader that leaves first, by
 * pthread_exit(), leaves its process running): its pid may name
 * another one next.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tailor_exit, struct task_struct *task)
{
	__u32 tgid = task->tgid, tid = task->pid, ns_tid;
	bool group_dead = BPF_CORE_READ(task, signal, live.counter) == 0;

	bpf_map_delete_elem(&exec_fsbase, &tid);
	if (!group_dead)
		return 0;
	if (cfg_pidns_ino)
		task_ids(task, &ns_tid, &tgid);
	if (tgid && tgid != cfg_target_tgid)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

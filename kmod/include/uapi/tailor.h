/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * tailor: the ABI between tailor.ko (/dev/tailor) and its clients.
 *
 * This is the only header userspace includes from the module.  Every
 * struct starts with its own size, and the configuration with the ABI
 * version its client speaks.  Since ABI 7 the structs grow at their end,
 * as the kernel's own extensible structs do (copy_struct_from_user()):
 * a client passes the size it was built with; the module reads a smaller
 * struct of an earlier version (never below its *_SIZE_VER0, the size
 * of ABI 1 to 6) as if the rest were zero, and a larger one of a later
 * version if every byte the module does not know is zero (else E2BIG);
 * it writes back only what both know, and sets size to that.  The ioctl
 * numbers carry the VER0 sizes for good, so growing changes none.
 *
 * Process and thread ids (target_pid, and those in records) are in the
 * pid namespace of the caller that configured the session.
 *
 * Session protocol, one session per open file:
 *   open("/dev/tailor")            mode 0600 root unless open_gid= is set
 *   ioctl(TAILOR_IOC_CONFIGURE)    validate, resolve the source, size rings
 *   ioctl(TAILOR_IOC_START)        create the perf counters
 *   read()/poll()                  whole struct tailor_sample records,
 *   or mmap()/poll()               or each CPU's ring in place (ABI 4)
 *                                  (with event records among the samples
 *                                  where asked for, ABI 5)
 *   ioctl(TAILOR_IOC_STOP)         release the counters; read() drains
 *   ioctl(TAILOR_IOC_STATS)        produced/delivered/lost/throttled
 *   close()                        releases everything
 */
#ifndef _UAPI_TAILOR_H
#define _UAPI_TAILOR_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/const.h>

/*
 * 2 added the per-thread tag word (TAILOR_CFG_TAG_WORD); 3 following child
 * processes (TAILOR_CFG_CHILDREN); 4 rings read in place through mmap()
 * (struct tailor_ring_control, tailor_config.ring_mmap_bytes); 5 context
 * switches and wakeups as event records in the rings (TAILOR_CFG_SWITCHES,
 * TAILOR_CFG_WAKEUPS); 6 call stacks (TAILOR_CFG_CALLCHAIN,
 * tailor_config.callchain_max, was reserved32); 7 structs that grow by
 * size (above), and tailor_stats.kernel_ip_dropped; 8 rings for the
 * CPUs online, and those that come up (mmap() of another fails with
 * ENODEV; before, every possible CPU had a ring); 9 OpenTelemetry's
 * thread context (TAILOR_CFG_OTEL_CTX, tailor_config.otel_ctx_offset).
 * The module still
 * takes configurations of every earlier version, which cannot ask for
 * what came later.
 */
#define TAILOR_ABI_VERSION	9
#define TAILOR_ABI_MIN_VERSION	1
#define TAILOR_DEVICE		"/dev/tailor"

/* Sampling source: tailor_config.source and .source_used. */
enum tailor_source {
	TAILOR_SOURCE_AUTO  = 0,	/* PEBS where present, else timer */
	TAILOR_SOURCE_PEBS  = 1,	/* Intel PEBS, precise events */
	TAILOR_SOURCE_TIMER = 2,	/* kernel software clock (cpu-clock) */
};

/* Where a sample's TSC came from: tailor_config.tsc_source. */
enum tailor_tsc_source {
	TAILOR_TSC_HANDLER = 1,	/* rdtsc_ordered() in the overflow handler */
	/* The PEBS record's TSC (patched kernel); TAILOR_SF_TSC_PEBS per sample */
	TAILOR_TSC_PEBS    = 2,
};

/* tailor_config.flags */
#define TAILOR_CFG_ALL_CPUS		_BITUL(0) /* else target_pid */
#define TAILOR_CFG_DATA_ADDR		_BITUL(1) /* PEBS only */
#define TAILOR_CFG_EXCLUDE_USER		_BITUL(2)
#define TAILOR_CFG_EXCLUDE_KERNEL	_BITUL(3)
#define TAILOR_CFG_NO_REGS		_BITUL(4) /* capture no register */
#define TAILOR_CFG_FLAGS_V1		(_BITUL(5) - 1)
/*
 * ABI 2: read each sample's thread's tag word, the __u64 at the thread's
 * FS base (its thread pointer) plus tag_word_offset, and store it after
 * data_addr.  A word that cannot be read then (the address is unmapped,
 * the page is not present, a kernel thread ran) is stored as 0 with
 * TAILOR_SF_TAG_WORD_BAD; the read never faults or sleeps.
 */
#define TAILOR_CFG_TAG_WORD		_BITUL(5)
#define TAILOR_CFG_FLAGS_V2		(_BITUL(6) - 1)
/*
 * ABI 3: with target_pid, processes the target forks after start are
 * sampled too, as perf record does by default (their own pid and tgid in
 * each sample); without it only the target's threads are.  The tag word
 * is read in the target's own threads only: a child's TLS is laid out by
 * whatever it executes, so in a child the word is 0 and not bad.
 */
#define TAILOR_CFG_CHILDREN		_BITUL(6)
#define TAILOR_CFG_FLAGS_V4		(_BITUL(7) - 1)
/*
 * ABI 5: event records (TAILOR_SF_EVENT, below) in the same rings as the
 * samples, stamped with the same TSC.  SWITCHES: every switch out and in
 * of the session's threads (the target's, and with TAILOR_CFG_CHILDREN
 * its descendants'; with ALL_CPUS every thread but the idle ones).
 * WAKEUPS: every wakeup of one of those threads, whoever wakes it.
 */
#define TAILOR_CFG_SWITCHES		_BITUL(7)
#define TAILOR_CFG_WAKEUPS		_BITUL(8)
#define TAILOR_CFG_FLAGS_V5		(_BITUL(9) - 1)
/*
 * ABI 6: each sample's call stack, as perf record -g takes it: the
 * kernel's own unwinder for kernel code, the user stack's frame pointers
 * for user code (a program built without them yields its leaf and what
 * its frame pointer register happens to hold).  Up to callchain_max
 * frames (0: TAILOR_DEFAULT_CALLCHAIN; at most perf's
 * kernel.perf_event_max_stack, which refuses more with -EOVERFLOW); the
 * layout is under struct tailor_sample.
 */
#define TAILOR_CFG_CALLCHAIN		_BITUL(9)
#define TAILOR_CFG_FLAGS_V8		(_BITUL(10) - 1)
/*
 * ABI 9: OpenTelemetry's thread context (OTEP 4947), where the target
 * publishes one: its thread-local pointer otel_thread_ctx_v1, at
 * otel_ctx_offset from the thread pointer (static TLS: negative, 8-byte
 * aligned; not with TAILOR_CFG_ALL_CPUS), names the
 * thread's context record, whose trace id and span id each sample
 * carries while the record's valid byte is 1.  Read as the tag word is,
 * never faulting, for the target's threads only; a NULL or unreadable
 * pointer, or a record not valid, gives zeros (no context).
 */
#define TAILOR_CFG_OTEL_CTX		_BITUL(10)
#define TAILOR_CFG_FLAGS_ALL		(_BITUL(11) - 1)
/* The context record (OTEP 4947): trace id, span id, valid byte. */
#define TAILOR_OTEL_IDS_SIZE		24
#define TAILOR_OTEL_VALID_OFFSET	24
#define TAILOR_DEFAULT_CALLCHAIN	32
#define TAILOR_MAX_CALLCHAIN		127	/* PERF_MAX_STACK_DEPTH */

/*
 * Register numbers are those of perf on x86-64 (<asm/perf_regs.h>), so
 * regs_mask bit PERF_REG_X86_R15 (23) selects r15.  General-purpose
 * registers may be captured, and the instruction pointer where the module
 * offers TAILOR_CAP_ENTRY_IP.  Captured values are stored in ascending bit
 * order.
 *
 * TAILOR_REG_IP is of use in a TAILOR_SF_USER_REGS sample: the user IP at
 * which the thread entered the kernel, so that kernel work can be charged
 * to the code that caused it -- the faulting or interrupted instruction,
 * or the one after a syscall.  In a user sample it repeats the sample's
 * ip; with TAILOR_SF_NO_REGS it is 0 like every register.
 */
#define TAILOR_REG_AX	0
#define TAILOR_REG_BX	1
#define TAILOR_REG_CX	2
#define TAILOR_REG_DX	3
#define TAILOR_REG_SI	4
#define TAILOR_REG_DI	5
#define TAILOR_REG_BP	6
#define TAILOR_REG_SP	7
#define TAILOR_REG_IP	8
#define TAILOR_REG_R8	16
#define TAILOR_REG_R15	23
#define TAILOR_REGS_GPR		(0xffULL | (0xffULL << TAILOR_REG_R8))
#define TAILOR_REGS_DEFAULT	_BITULL(TAILOR_REG_R15) /* the tag register */
#define TAILOR_REGS_CAPTURABLE	(TAILOR_REGS_GPR | _BITULL(TAILOR_REG_IP))

/* PEBS event types: tailor_config.event_type (perf's PERF_TYPE_*). */
#define TAILOR_EVENT_HARDWARE	0	/* event_config: PERF_COUNT_HW_* */
#define TAILOR_EVENT_RAW	4	/* event_config: raw encoding */

#define TAILOR_MAX_FREQ		100000	/* Hz, perf's default limit */
#define TAILOR_MIN_TIMER_NS	10000	/* perf's hrtimer floor */
/*
 * A minute: a longer period is no profile, and the hrtimer's expiry (a
 * signed 64-bit time) must not wrap, which re-armed it at once.
 */
#define TAILOR_MAX_TIMER_NS	_AC(60000000000, ULL)

/*
 * TAILOR_IOC_CONFIGURE.  Zero-initialise, set size and abi_version, fill
 * what you need; zero means the default.  The kernel writes the "out"
 * fields back.
 *
 * Rate: sample_freq (Hz, any source), or sample_period (events, PEBS)
 * and/or timer_period_ns (timer); freq and a period together are
 * -EINVAL.  With none of them set the session samples at 1000 Hz.
 */
struct tailor_config {
	__u32 size;		/* sizeof(struct tailor_config) */
	__u32 abi_version;	/* TAILOR_ABI_VERSION */
	__u32 source;		/* enum tailor_source */
	__u32 flags;		/* TAILOR_CFG_* */
	__u32 event_type;	/* TAILOR_EVENT_*, PEBS only */
	__u32 precise;		/* PEBS precise_ip, 1..3; 0 means 2 */
	__u64 event_config;	/* PEBS event; default HW cycles */
	__u64 sample_period;	/* PEBS: events between samples */
	__u64 timer_period_ns;	/* timer: ns between samples */
	__u64 sample_freq;	/* Hz, either source */
	__u64 regs_mask;	/* TAILOR_REG_* bits; 0 means r15 */
	__s32 target_pid;	/* process (all threads), unless ALL_CPUS */
	__u32 ring_records;	/* per-CPU ring capacity; 0: 32768, at most 2 MiB */
	__u32 wakeup_records;	/* wake readers at this fill; 0: 1/4 */
	/* out: what the session got */
	__u32 source_used;	/* TAILOR_SOURCE_PEBS or _TIMER */
	__u32 tsc_source;	/* enum tailor_tsc_source */
	__u32 record_size;	/* bytes of one struct tailor_sample */
	__u32 flags_used;	/* flags in force (DATA_ADDR may drop) */
	__u32 nr_regs;		/* registers captured per sample */
	__u64 regs_used;	/* the mask in force */
	/* ABI 2, with TAILOR_CFG_TAG_WORD; was reserved (zero) in ABI 1 */
	__s64 tag_word_offset;	/* from the thread pointer, bytes */
	/*
	 * ABI 4, out (reserved, zero, before): one CPU's mapping, and the
	 * records its ring holds.  Clients of earlier versions get zeros.
	 */
	__u64 ring_mmap_bytes;
	__u32 ring_capacity;	/* records, a power of two */
	/*
	 * ABI 6, with TAILOR_CFG_CALLCHAIN (reserved, zero, before): frames
	 * per stack, in; the bound in force, out.
	 */
	__u32 callchain_max;
	__u64 reserved;		/* must be zero */
	/* ABI 9, with TAILOR_CFG_OTEL_CTX: from the thread pointer, bytes */
	__s64 otel_ctx_offset;
	/* Fields of later versions go here. */
};

#define TAILOR_CONFIG_SIZE_VER0	136	/* ABI 1 to 6 */

/*
 * A sample: fixed size for a session (tailor_config.record_size), 8-byte
 * aligned, native endian:
 *
 *   __u64 tsc;             raw TSC
 *   __u64 ip;              instruction pointer
 *   __u64 who;             TAILOR_WHO_* fields below
 *   __u64 regs[nr_regs];   captured registers, ascending register number
 *   __u64 data_addr;       only with TAILOR_CFG_DATA_ADDR in flags_used
 *   __u64 tag_word;        only with TAILOR_CFG_TAG_WORD in flags_used
 *   __u8 otel_ids[24];     only with TAILOR_CFG_OTEL_CTX: the context
 *                          record's trace id (16 bytes) and span id (8),
 *                          as the record holds them (W3C byte order);
 *                          zero where the thread has no valid context
 *   __u64 callchain_nr;    only with TAILOR_CFG_CALLCHAIN: the entries
 *                          below that hold the stack (bits 0-15), the
 *                          frames past callchain_max left out (bits
 *                          16-31; the software clock counts them up to
 *                          TAILOR_MAX_CALLCHAIN in all, PEBS, whose stack
 *                          perf takes, cannot: 0)
 *   __u64 callchain[callchain_max + 2]
 *                          as perf's PERF_SAMPLE_CALLCHAIN: leaf first,
 *                          PERF_CONTEXT_KERNEL and the kernel's frames
 *                          (the sampled IP first), then PERF_CONTEXT_USER
 *                          and the user's (the IP at kernel entry, or the
 *                          sampled one, first); unused entries are zero
 *
 * IP + TSC + r15 take 32 bytes.  who packs, from bit 0: tid (22 bits),
 * pid (22 bits; both in the reader's pid namespace, PID_MAX_LIMIT is
 * 2^22), cpu (13 bits; NR_CPUS <= 8192) and TAILOR_SF_* flags (7 bits).
 */
struct tailor_sample {
	__u64 tsc;
	__u64 ip;
	__u64 who;
	__u64 regs[];
};

#define TAILOR_SAMPLE_BASE_SIZE	24

#define TAILOR_CALLCHAIN_NR(word)	((__u32)(word) & 0xffff)
#define TAILOR_CALLCHAIN_LOST(word)	((__u32)((word) >> 16) & 0xffff)

#define TAILOR_WHO_TID_SHIFT	0
#define TAILOR_WHO_PID_SHIFT	22
#define TAILOR_WHO_CPU_SHIFT	44
#define TAILOR_WHO_FLAGS_SHIFT	57
#define TAILOR_WHO_PID_MASK	((1ULL << 22) - 1)
#define TAILOR_WHO_CPU_MASK	((1ULL << 13) - 1)
#define TAILOR_WHO_FLAGS_MASK	((1ULL << 7) - 1)

/* TAILOR_SF_*: sample flags, in who. */
#define TAILOR_SF_KERNEL	_BITUL(0) /* ip is a kernel address */
#define TAILOR_SF_USER_REGS	_BITUL(1) /* regs: user state at kernel entry */
#define TAILOR_SF_NO_REGS	_BITUL(2) /* regs unavailable (kernel thread) */
#define TAILOR_SF_ADDR_VALID	_BITUL(3) /* data_addr came from the record */
#define TAILOR_SF_TSC_PEBS	_BITUL(4) /* tsc from the PEBS record */
#define TAILOR_SF_EXACT_IP	_BITUL(5) /* PEBS exact (precise) IP */
#define TAILOR_SF_TAG_WORD_BAD	_BITUL(6) /* tag_word unreadable, stored 0 */
/*
 * ABI 5: not a sample but an event.  The pair of flags no sample has (a
 * sample's registers are either the user state at kernel entry or
 * unavailable), so the seven flag bits stay as they were.  Only sessions
 * configured with TAILOR_CFG_SWITCHES or _WAKEUPS get event records.
 *
 * An event record has the session's record_size.  tsc is when it happened
 * (rdtsc_ordered(), as for samples); who names the session's thread it is
 * about and the CPU it happened on; the ip slot holds the event word
 * below; every other byte is zero.
 */
#define TAILOR_SF_EVENT		(TAILOR_SF_USER_REGS | TAILOR_SF_NO_REGS)

static __inline__ int tailor_who_is_event(__u64 who)
{
	return ((who >> TAILOR_WHO_FLAGS_SHIFT) & TAILOR_SF_EVENT) == TAILOR_SF_EVENT;
}

/*
 * The event word: kind (bits 0-7), TAILOR_EVF_* flags (bits 8-15), and
 * the other thread's tid (bits 16-37) and pid (bits 38-59).
 *   TAILOR_EV_SWITCH_OUT  who stopped running; other: the thread run next
 *   TAILOR_EV_SWITCH_IN   who starts running; other: the thread it follows
 *   TAILOR_EV_WAKEUP      who was woken on this CPU; other: the waker
 * The other thread is 0 where it is an idle task, where a wakeup came
 * from interrupt context, where it has exited or is outside the reader's
 * pid namespace, and where the session may not know it: its configuring
 * caller lacked CAP_PERFMON and the thread is not the session's own (as
 * perf reveals the other thread of a switch only in CPU-wide records).
 *
 * Not recorded: a thread's last switch out as it exits (its TASK exit
 * comes before), threads outside the reader's pid namespace, and, for a
 * caller without CAP_PERFMON, threads whose real, effective or saved
 * user or group ids are not the caller's, whose memory is not dumpable,
 * or that have let go of their memory on their way out.  TAILOR_CFG_CHILDREN follows
 * descendants by their ancestry: up to 8 generations, and not past an
 * exited parent (an orphan adopted by init or a subreaper is left out).
 */
#define TAILOR_EV_SWITCH_OUT	1
#define TAILOR_EV_SWITCH_IN	2
#define TAILOR_EV_WAKEUP	3
/* A switch out of a thread still runnable (preempted, or yielding). */
#define TAILOR_EVF_PREEMPTED	_BITUL(0)

#define TAILOR_EV_OTHER_TID_SHIFT	16
#define TAILOR_EV_OTHER_PID_SHIFT	38

static __inline__ __u64 tailor_ev_pack(__u32 kind, __u32 evflags,
				       __u32 other_tid, __u32 other_pid)
{
	return (__u64)(kind & 0xff) | ((__u64)(evflags & 0xff) << 8) |
	       ((__u64)(other_tid & TAILOR_WHO_PID_MASK) << TAILOR_EV_OTHER_TID_SHIFT) |
	       ((__u64)(other_pid & TAILOR_WHO_PID_MASK) << TAILOR_EV_OTHER_PID_SHIFT);
}

static __inline__ __u32 tailor_ev_kind(__u64 word)
{
	return word & 0xff;
}

static __inline__ __u32 tailor_ev_flags(__u64 word)
{
	return (word >> 8) & 0xff;
}

static __inline__ __u32 tailor_ev_other_tid(__u64 word)
{
	return (word >> TAILOR_EV_OTHER_TID_SHIFT) & TAILOR_WHO_PID_MASK;
}

static __inline__ __u32 tailor_ev_other_pid(__u64 word)
{
	return (word >> TAILOR_EV_OTHER_PID_SHIFT) & TAILOR_WHO_PID_MASK;
}

static __inline__ __u64 tailor_who_pack(__u32 tid, __u32 pid, __u32 cpu,
					__u32 flags)
{
	return ((__u64)(tid & TAILOR_WHO_PID_MASK) << TAILOR_WHO_TID_SHIFT) |
	       ((__u64)(pid & TAILOR_WHO_PID_MASK) << TAILOR_WHO_PID_SHIFT) |
	       ((__u64)(cpu & TAILOR_WHO_CPU_MASK) << TAILOR_WHO_CPU_SHIFT) |
	       ((__u64)(flags & TAILOR_WHO_FLAGS_MASK) << TAILOR_WHO_FLAGS_SHIFT);
}

static __inline__ __u32 tailor_who_tid(__u64 who)
{
	return (who >> TAILOR_WHO_TID_SHIFT) & TAILOR_WHO_PID_MASK;
}

static __inline__ __u32 tailor_who_pid(__u64 who)
{
	return (who >> TAILOR_WHO_PID_SHIFT) & TAILOR_WHO_PID_MASK;
}

static __inline__ __u32 tailor_who_cpu(__u64 who)
{
	return (who >> TAILOR_WHO_CPU_SHIFT) & TAILOR_WHO_CPU_MASK;
}

static __inline__ __u32 tailor_who_flags(__u64 who)
{
	return (who >> TAILOR_WHO_FLAGS_SHIFT) & TAILOR_WHO_FLAGS_MASK;
}

/* tailor_info.caps */
#define TAILOR_CAP_PEBS		_BITUL(0) /* precise sampling works here */
#define TAILOR_CAP_PEBS_TSC	_BITUL(1) /* kernel hands over the PEBS TSC */
#define TAILOR_CAP_TSC_STABLE	_BITUL(2) /* constant, nonstop, not unstable */
/*
 * regs_mask may hold TAILOR_REG_IP.  A capability rather than a new ABI
 * version: clients that never ask for it see no change.
 */
#define TAILOR_CAP_ENTRY_IP	_BITUL(3)
/*
 * ABI 5: TAILOR_CFG_SWITCHES and _WAKEUPS work here (the kernel has the
 * sched_switch and sched_waking tracepoints); without it they are
 * -EOPNOTSUPP.
 */
#define TAILOR_CAP_SCHED_EVENTS	_BITUL(4)

/*
 * TAILOR_IOC_INFO (also /sys/class/misc/tailor/).  TSC to nanoseconds:
 *
 *   ns = (tsc_delta * tsc_mult) >> tsc_shift     (128-bit product)
 *
 * with tsc_mult/tsc_shift from clocks_calc_mult_shift(tsc_khz_measured,
 * NSEC_PER_MSEC), the kernel's own cyc2ns scheme; tailor_tsc_to_ns() is
 * the one implementation userspace uses.
 */
struct tailor_info {
	__u32 size;		/* in: sizeof(struct tailor_info) */
	__u32 abi_version;	/* out */
	__u32 tsc_khz;		/* the kernel's tsc_khz */
	__u32 tsc_khz_measured;	/* tailor.ko's own measurement at load */
	__u32 tsc_mult;
	__u32 tsc_shift;
	__u32 caps;		/* TAILOR_CAP_* */
	__u32 nr_cpu_ids;	/* size of per-CPU arrays */
	__u64 reserved[4];
};

#define TAILOR_INFO_SIZE_VER0	64	/* ABI 1 to 6 */

#ifndef __KERNEL__	/* the kernel uses mul_u64_u32_shr() */
static __inline__ __u64 tailor_tsc_to_ns(__u64 tsc_delta, __u32 mult, __u32 shift)
{
#ifdef __SIZEOF_INT128__
	return (__u64)(((__uint128_t)tsc_delta * mult) >> shift);
#else
	/* As mul_u64_u32_shr(); clocks_calc_mult_shift() keeps shift <= 32. */
	__u64 ret = ((tsc_delta & 0xffffffffULL) * mult) >> shift;

	if (tsc_delta >> 32)
		ret += ((tsc_delta >> 32) * mult) << (32 - shift);
	return ret;
#endif
}
#endif

/*
 * ABI 4: reading the rings in place.  After TAILOR_IOC_CONFIGURE, CPU
 * cpu's ring (cpu < tailor_info.nr_cpu_ids, a possible CPU) is mapped by
 *
 *   mmap(NULL, cfg.ring_mmap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
 *        fd, cpu * cfg.ring_mmap_bytes)
 *
 * Since ABI 8 (the configuration's abi_version), rings exist for the
 * CPUs online at configure, and a CPU that comes up later gets its ring
 * then; mmap() of a CPU without one fails with ENODEV: try again later.
 * What a session samples on a CPU without a ring is counted lost.  Before
 * ABI 8 every possible CPU has a ring.
 *
 * The mapping starts with this control page; record n (counting from
 * configure) is at data_offset + (n & (capacity - 1)) * record_size.
 *
 * The module on that CPU is the only producer (the overflow handler, and
 * with ABI 5's events the scheduler probes, one at a time): it writes the
 * record at head, then publishes head + 1 with a release store; it drops
 * (and counts as lost) a record while head - tail == capacity.  The
 * reader is the only consumer: it loads head with acquire, reads the records from
 * tail up to head, and then stores the new tail with release, which
 * hands their slots back:
 *
 *   head = __atomic_load_n(&ctl->head, __ATOMIC_ACQUIRE);
 *   for (n = ctl->tail; n != head; n++)
 *           use(map + ctl->data_offset + (n & (cap - 1)) * rs);
 *   __atomic_store_n(&ctl->tail, head, __ATOMIC_RELEASE);
 *
 * (tailor_ring_head(), tailor_ring_at() and tailor_ring_release() below,
 * for userspace.)
 *
 * poll() works as with read(): EPOLLIN when a ring has records, EPOLLHUP
 * once stopped and every ring is empty.  While a ring of the session is
 * mapped, read() and TAILOR_IOC_CONFIGURE fail with EBUSY: there is one
 * consumer, and the rings stay until unmapped.  A mapping must be shared
 * and cover one CPU's ring exactly.  Only tail is the reader's to write,
 * and the module reads nothing else from the page.  A tail outside
 * [head - capacity, head] makes the handler drop every sample as if the
 * ring were full, until the reader mends it (or, unmapped, read() goes on
 * from head): it costs the reader its own samples, nothing more.
 */
struct tailor_ring_control {
	__u64 head;		/* kernel: records produced into the ring */
	__u64 data_offset;	/* bytes from the mapping's start to record 0 */
	__u32 record_size;	/* tailor_config.record_size */
	__u32 capacity;		/* tailor_config.ring_capacity */
	__u64 reserved[5];	/* zero; head and tail on their own lines */
	__u64 tail;		/* reader: records consumed, at byte 64 */
};

#ifndef __KERNEL__
/*
 * The consumer's side of the protocol above, for a mapped ring @ctl:
 *
 *   head = tailor_ring_head(ctl);
 *   for (n = ctl->tail; n != head; n++)
 *           use(tailor_ring_at(ctl, n));
 *   tailor_ring_release(ctl, head);
 *
 * head - ctl->tail is at most ctl->capacity unless the reader wrote a bad
 * tail.
 */
static __inline__ __u64 tailor_ring_head(const struct tailor_ring_control *ctl)
{
	/* The records up to head are written before head is. */
	return __atomic_load_n(&ctl->head, __ATOMIC_ACQUIRE);
}

static __inline__ const void *tailor_ring_at(const struct tailor_ring_control *ctl, __u64 n)
{
	return (const char *)ctl + ctl->data_offset +
	       (n & (ctl->capacity - 1)) * ctl->record_size;
}

/* The records before @head are read: their slots go back to the module. */
static __inline__ void tailor_ring_release(struct tailor_ring_control *ctl, __u64 head)
{
	__atomic_store_n(&ctl->tail, head, __ATOMIC_RELEASE);
}
#endif

/* Records: samples, and since ABI 5 event records too. */
struct tailor_cpu_stats {
	__u64 produced;		/* samples the handler saw, events the probes */
	__u64 delivered;	/* copied out by read(), or consumed in place */
	__u64 lost;		/* dropped: ring full (or nested handler) */
	__u64 queued;		/* in the ring now */
	__u64 throttled;	/* times perf throttled a counter */
};

/*
 * TAILOR_IOC_STATS.  produced == delivered + lost + queued once the
 * session is stopped.  cpus, if non-zero, points to nr_cpus entries that
 * receive per-CPU figures (index = cpu, zero for a CPU that cannot
 * exist); nr_cpus comes back as the number written.
 */
struct tailor_stats {
	__u32 size;		/* sizeof(struct tailor_stats) */
	__u32 nr_cpus;		/* in: capacity of cpus[]; out: written */
	__u64 cpus;		/* user pointer to struct tailor_cpu_stats[] */
	struct tailor_cpu_stats total;
	__u32 running;		/* counters are live */
	__u32 target_exited;	/* the target process has exited */
	__u32 nr_counters;	/* perf counters created at start */
	__u32 reserved;
	/*
	 * ABI 7: samples of a session that excludes the kernel whose IP the
	 * PMU gave in the kernel all the same, dropped, not delivered (PEBS
	 * with precise 1 reports the next instruction's IP: after a SYSCALL,
	 * the kernel's entry).  Counted apart from produced.  Sessions of
	 * clients of ABI 1 to 6 drop them too, without this count.
	 */
	__u64 kernel_ip_dropped;
	/* Fields of later versions go here. */
};

#define TAILOR_STATS_SIZE_VER0	72	/* ABI 1 to 6 */

#define TAILOR_IOC_MAGIC	0xE6
/* With the VER0 sizes, whatever size the structs grow to. */
#define TAILOR_IOC_INFO		_IOC(_IOC_READ | _IOC_WRITE, TAILOR_IOC_MAGIC, 0, \
				     TAILOR_INFO_SIZE_VER0)
#define TAILOR_IOC_CONFIGURE	_IOC(_IOC_READ | _IOC_WRITE, TAILOR_IOC_MAGIC, 1, \
				     TAILOR_CONFIG_SIZE_VER0)
#define TAILOR_IOC_START	_IO(TAILOR_IOC_MAGIC, 2)
#define TAILOR_IOC_STOP		_IO(TAILOR_IOC_MAGIC, 3)
#define TAILOR_IOC_STATS	_IOC(_IOC_READ | _IOC_WRITE, TAILOR_IOC_MAGIC, 4, \
				     TAILOR_STATS_SIZE_VER0)

#endif /* _UAPI_TAILOR_H */

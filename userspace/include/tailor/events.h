/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The events of a profile, whatever file held them (a tailor recording,
 * a perf.data): typed, with times on one axis, delivered in time order
 * across CPUs (session.h) to consumers -- the symbolizer, the
 * aggregation pass, an exporter -- each of which implements only the
 * callbacks it cares about.
 *
 * Times are raw TSC ticks, or ns for a perf.data on perf's own clock
 * (session_info.time_unit); strings point into the file or the reader
 * and are valid during the callback only.
 */
#ifndef TAILOR_EVENTS_H
#define TAILOR_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#define TEV_HAS_TAG	1u	/* tag holds the captured tag register */
#define TEV_HAS_ADDR	2u	/* data_addr holds the sample's data address */
#define TEV_KERNEL	4u	/* ip is in the kernel */
/*
 * The tag is the user's: a user-mode sample's, or a kernel sample whose
 * registers are the user state at kernel entry (the software clock).
 */
#define TEV_USER_TAG	8u
/* A kernel sample's entry_ip: the user IP where the thread entered. */
#define TEV_HAS_ENTRY_IP 16u
/*
 * tag_word holds the thread's tag word (tailor record --tag-word), read
 * by tailor.ko at the sample; 0 there means the thread had set none.
 */
#define TEV_HAS_TAG_WORD 32u
/* The word was asked for but could not be read (unmapped, not present). */
#define TEV_TAG_WORD_BAD 64u
/*
 * otel_trace_id and otel_span_id hold the thread's OpenTelemetry context
 * at the sample (OTEP 4947's thread context, tailor record reads it
 * where the target publishes one); without the flag the thread had none.
 */
#define TEV_HAS_OTEL	128u

struct tev_sample {
	uint64_t time;
	uint64_t ip;
	uint64_t tag;
	uint64_t data_addr;
	uint64_t entry_ip;
	uint64_t tag_word;
	/* The events this sample stands for (its period); 0: unknown. */
	uint64_t period;
	uint32_t pid, tid, cpu;
	uint32_t flags;		/* TEV_* */
	/* With TEV_HAS_OTEL: W3C byte order, as the context record holds them. */
	uint8_t otel_trace_id[16];
	uint8_t otel_span_id[8];
	/*
	 * The call stack (perf record -g): @nr_callchain u64 entries as the
	 * kernel wrote them, leaf first, with its PERF_CONTEXT_* markers;
	 * NULL: none.  Maybe unaligned (read with memcpy); valid until the
	 * session is closed.
	 */
	const void *callchain;
	uint32_t nr_callchain;
	/*
	 * The user-mode state perf record --call-graph dwarf copies for
	 * unwinding after the fact (lib/symbols/unwind_dwarf.c): the user
	 * registers @user_regs_mask selects, a u64 each in the mask's bit
	 * order (perf's x86-64 numbering: AX BX CX DX SI DI BP SP IP FLAGS
	 * CS SS DS ES FS GS R8..R15), and @user_stack_size bytes of the
	 * stack from the sampled SP up.  The callchain then holds only the
	 * kernel's part.  NULL: none (a kernel thread's sample, or not
	 * recorded).  Like callchain: maybe unaligned, valid until the
	 * session is closed.
	 */
	const void *user_regs;
	uint64_t user_regs_mask;
	const void *user_stack;
	uint32_t user_stack_size;
	/*
	 * The user's call stack from the LBR (perf record --call-graph lbr,
	 * PERF_SAMPLE_BRANCH_CALL_STACK): @nr_lbr_calls entries of perf's
	 * struct perf_branch_entry (from, to, flags: 24 bytes), the latest
	 * call first, each @from a call instruction.  They stand for the
	 * callchain's user frames after its first (the interrupted IP).
	 * NULL: none.  Like callchain: maybe unaligned, valid until the
	 * session is closed.
	 */
	const void *lbr_calls;
	uint32_t nr_lbr_calls;
};

/* Whether @s carries callers: a callchain, a user stack to unwind, the LBR's calls. */
static inline bool tev_sample_has_stack(const struct tev_sample *s)
{
	return s->nr_callchain || s->user_stack_size || s->nr_lbr_calls;
}

/* An executable mapping, in force from @time on (until replaced). */
struct tev_mmap {
	uint64_t time;		/* 0 with at_start */
	uint64_t start, len, pgoff;
	const char *path;
	uint32_t pid, tid;
	uint32_t prot;		/* PROT_*, 0 if unknown */
	bool at_start;		/* existed when recording started */
};

/* A thread's name: set by prctl, or by exec (@exec) with a new image. */
struct tev_comm {
	uint64_t time;
	const char *name;
	uint32_t pid, tid;
	bool exec;
};

/* A thread or process created (fork) or ended (exit). */
struct tev_task {
	uint64_t time;
	uint32_t pid, tid;
	uint32_t ppid, ptid;
};

/* Samples or records the kernel dropped; time 0 and cpu -1 if unknown. */
struct tev_lost {
	uint64_t time;
	uint64_t count;
	int32_t cpu;
};

/* A context switch of a sampled thread (perf record --switch-events). */
struct tev_switch {
	uint64_t time;
	uint32_t pid, tid, cpu;
	bool out;		/* switched out; else in */
	bool preempted;		/* out while still runnable */
	/* The thread on the other side, where known; else -1. */
	int32_t other_pid, other_tid;
};

/*
 * A thread made runnable (perf record -e sched:sched_waking): by the
 * thread that woke it, where that was a recorded thread.  The kernel
 * names the woken thread by its tid alone.
 */
struct tev_wakeup {
	uint64_t time;
	uint32_t pid, tid, cpu;	/* the waker */
	uint32_t target_tid;	/* the thread woken */
	int32_t target_cpu;	/* where it will run, -1 if unknown */
};

/* An application marker or label (room for instrumented systems). */
struct tev_label {
	uint64_t time;
	uint32_t pid, tid;
	const char *key;
	const char *value;
};

/* Code a JIT loaded into anonymous memory (room for jitdump). */
struct tev_jit {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t code_addr, code_size;
	const char *name;
};

/*
 * A consumer of events.  Embed it and recover the outer struct with
 * container_of-style arithmetic; a NULL callback ignores that kind
 * (tev_consumer_defaults() fills them in).  A non-zero return stops the
 * delivery, and session_run() returns it.
 */
struct tev_consumer {
	int (*sample)(struct tev_consumer *c, const struct tev_sample *s);
	int (*mmap)(struct tev_consumer *c, const struct tev_mmap *m);
	int (*comm)(struct tev_consumer *c, const struct tev_comm *e);
	int (*fork)(struct tev_consumer *c, const struct tev_task *e);
	int (*exit)(struct tev_consumer *c, const struct tev_task *e);
	int (*lost)(struct tev_consumer *c, const struct tev_lost *e);
	int (*context_switch)(struct tev_consumer *c, const struct tev_switch *e);
	int (*label)(struct tev_consumer *c, const struct tev_label *e);
	int (*jit)(struct tev_consumer *c, const struct tev_jit *e);
	int (*wakeup)(struct tev_consumer *c, const struct tev_wakeup *e);
};

/* Every NULL callback of @c becomes one that ignores its event. */
void tev_consumer_defaults(struct tev_consumer *c);

#define tev_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

#endif /* TAILOR_EVENTS_H */

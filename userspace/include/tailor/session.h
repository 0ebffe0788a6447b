/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A profile opened for analysis: a tailor recording or a perf.data (perf
 * record --intr-regs=r15, optionally on the raw-TSC clock of
 * patches/0002), told apart by their magic.  Opening checks the file and
 * counts what it holds; session_run() then delivers its events
 * (events.h) to consumers in time order across CPUs, reading the file in
 * place, never copying it.
 *
 * Order, as perf's session does it: each CPU's data is already in time
 * order, so the file is a sequence of sorted runs, merged as it is read.
 * What may be delivered is bounded by rounds: a recorder marks a round
 * after draining every source, so once round N is read no event older
 * than the newest of round N-1 can still come.  A file without round
 * marks (recordings of older tailors, synthetic profiles) is merged as a
 * whole: memory then grows with its number of runs.
 */
#ifndef TAILOR_SESSION_H
#define TAILOR_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tailor/events.h"

enum session_time_unit { SESSION_TIME_TSC, SESSION_TIME_NS };

struct session_info {
	const char *format;	/* "tailor recording" or "perf.data" */
	enum session_time_unit time_unit;
	/* time delta -> ns: (delta * mult) >> shift; mult 0: unknown */
	uint32_t mult;
	uint32_t shift;
	/* NS times are CLOCK_MONOTONIC's (perf record -k mono), not perf's clock. */
	bool clock_monotonic;
	/* A TSC and a CLOCK_MONOTONIC reading taken together; 0: none. */
	uint64_t ref_tsc, ref_mono_ns;
	uint64_t nr_samples;	/* counted at open */
	/* Of which in the kernel, where counted at open (perf.data). */
	uint64_t nr_kernel_samples;
	bool kernel_samples_counted;
	uint64_t first_time, last_time;	/* of the samples */
	uint64_t nr_mappings;
	uint64_t nr_switches;	/* context switch records */
	uint64_t nr_wakeups;	/* wakeup records (perf: sched:sched_waking) */
	uint64_t rounds;	/* round marks in the file */
	bool has_tag;		/* some sample carries the tag register */
	bool has_addr;		/* some sample carries a data address */
	bool has_tag_word;	/* samples carry the thread's tag word */
	uint64_t nr_tag_word_bad;	/* of which the word was unreadable */
	bool has_otel;		/* samples carry OpenTelemetry's thread context */
	bool complete;		/* false: cut short, see problem */
	char problem[512];	/* why it is not complete, or "" */
	char event[128];	/* the sampled event */
	/*
	 * The file's other sampling events, each a profile of its own never
	 * mixed into this one: "page-faults (912 samples), ..."; "" if none.
	 */
	char other_events[256];
	/*
	 * Where it was recorded (perf.data's HOSTNAME and OSRELEASE), "" if
	 * unknown; and the kernel's _text there (its map's), 0 if unknown:
	 * kernel addresses move with KASLR from boot to boot.
	 */
	char hostname[65];
	char os_release[65];
	uint64_t kernel_text;
	/*
	 * The kernel symbols a recording stores (its KALLSYMS record, text
	 * in /proc/kallsyms's form), valid until the session is closed;
	 * NULL if none.
	 */
	const char *kallsyms;
	size_t kallsyms_len;
	/*
	 * The build-ids of the files the samples fell in, as the recording
	 * host saw them (perf.data's BUILD_ID feature), "PATH\tHEX\n" a file,
	 * valid until the session is closed; NULL if none.
	 */
	const char *build_ids;
	size_t build_ids_len;
	/* The sampling period, in ns when period_is_ns; 0 if it varies. */
	uint64_t period;
	bool period_is_ns;
	uint64_t freq_hz;	/* perf -F: samples a second on each CPU; 0: a period */
	uint64_t lost;		/* samples the kernel dropped, if known */
	uint64_t start_wall_ns;	/* CLOCK_REALTIME at start; 0: unknown */
	/*
	 * The process recorded (a command, -p), whose children may be in the
	 * profile too; 0: every CPU's, or unknown (perf.data).
	 */
	uint32_t target_pid;
	/* Known after session_run(): */
	uint64_t out_of_order;	/* events that came after a later one */
	uint64_t max_queued;	/* most events held back for ordering */
};

struct session_options {
	int tag_reg;		/* perf register number of the tag (r15 = 23) */
	uint32_t tsc_khz;	/* converts a perf.data on the raw-TSC clock; 0: unknown */
	/* The sampling event to read, by its name (perf's); NULL: the first. */
	const char *event;
};

struct session;

/* NULL and a message naming the problem in @err when unreadable. */
struct session *session_open(const char *path, const struct session_options *o,
			     char *err, size_t errlen);
const struct session_info *session_info(const struct session *s);
/*
 * Deliver every event to @consumers, each event to each consumer in the
 * order given, events in time order.  Returns 0, or the first non-zero
 * value a callback returned (delivery stops there), or -ENOMEM.  Once
 * per session.
 */
int session_run(struct session *s, struct tev_consumer *const *consumers, int n);
void session_close(struct session *s);
/*
 * A file the profile carries (a recording's copy of a JIT's jitdump or
 * perf map), by the path it had: 0 with its bytes, valid until
 * session_close(); -ENOENT if it carries none (a perf.data never does).
 */
int session_file(struct session *s, const char *path, const void **data, size_t *len);

/* mult/shift for ns = (ticks * mult) >> shift at @khz. */
void session_khz_to_mult_shift(uint32_t khz, uint32_t *mult, uint32_t *shift);
/* A time delta in ns. */
uint64_t session_time_to_ns(const struct session_info *info, uint64_t delta);

#endif /* TAILOR_SESSION_H */

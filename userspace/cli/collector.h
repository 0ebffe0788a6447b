/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where tailor record's samples come from: a collector.  Two exist, one
 * file each: tailor.ko through /dev/tailor (collector_kmod.c) and a BPF
 * program on a perf event (collector_bpf.c, userspace/bpf/).  Both hand
 * over records in tailor.ko's layout (uapi/tailor.h: struct tailor_sample
 * and what follows it, the event records of ABI 5), so that record.c has
 * one path for them: options, launch, the poll loop, packing, rounds, JIT
 * files and the END record.  They differ in the clock of their records
 * (the TSC, or CLOCK_MONOTONIC) and in what they offer (info.caps).
 */
#ifndef TAILOR_COLLECTOR_H
#define TAILOR_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "uapi/tailor.h"

enum collector_kind { COLLECTOR_AUTO, COLLECTOR_KMOD, COLLECTOR_BPF };

struct collector;

/*
 * Called for each record a collector takes, CPU by CPU: a CPU's records
 * in order, in runs of at most the drain's @batch, each ended by a call
 * with @rec NULL.  @rec is valid during the call only (the callee copies
 * what it keeps: tailor.ko's slots go back before the run is written).
 * Nonzero stops the drain and is returned.
 */
typedef int (*collector_record_fn)(void *arg, uint32_t cpu, const uint8_t *rec);

struct collector_ops {
	/* @cfg in, its out fields filled; prints why on failure. */
	int (*configure)(struct collector *c, struct tailor_config *cfg,
			 const char *event);
	int (*start)(struct collector *c);
	void (*stop)(struct collector *c);
	/* The fd to poll for records (POLLIN). */
	int (*poll_fd)(struct collector *c);
	/*
	 * Every record there is now, through @fn; *ended once the session
	 * has stopped (or its target is gone) and nothing is left.  Returns
	 * the records taken, or <0 (@fn's error, or -EIO said).
	 */
	long (*drain)(struct collector *c, collector_record_fn fn, void *arg,
		      uint32_t batch, bool *ended);
	/* Now and again while recording: CPUs come up, and so on.  0 or -1. */
	int (*refresh)(struct collector *c);
	int (*stats)(struct collector *c, struct tailor_stats *st);
	void (*close)(struct collector *c);
};

struct collector {
	const struct collector_ops *ops;
	const char *name;		/* "tailor.ko" or "bpf", in the META */
	/*
	 * What it offers, as tailor.ko's TAILOR_IOC_INFO says it; the BPF
	 * collector fills it in for its clock (1 GHz: a tick is a ns).
	 */
	struct tailor_info info;
	bool clock_monotonic;		/* records' time is CLOCK_MONOTONIC */
	bool launched;			/* the target is a command record runs */
	void *priv;
};

/*
 * Opens the collector @kind (AUTO: tailor.ko where /dev/tailor exists,
 * else BPF, else an error that says why each is not there).  0, or -1
 * with the reason said.
 */
int collector_open(struct collector *c, enum collector_kind kind, bool quiet);
int collector_kmod_open(struct collector *c);
int collector_bpf_open(struct collector *c, char *why, size_t len);
/* The collector's clock now: rdtsc, or CLOCK_MONOTONIC ns. */
uint64_t collector_now(const struct collector *c);
const char *source_name(uint32_t source);
/*
 * The CPUs of a sysfs list (/sys/devices/system/cpu/possible, online:
 * "0-3,8") into @set, which has @nr entries; 0, or -1 for a file that
 * cannot be read or parsed.
 */
int cpu_list(const char *path, bool *set, uint32_t nr);

#endif

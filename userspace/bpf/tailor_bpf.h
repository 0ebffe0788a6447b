/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the BPF collector's program (tailor_sample.bpf.c) and tailor
 * record's side of it (cli/collector_bpf.c) share.  The records the
 * program writes are tailor.ko's (kmod/include/uapi/tailor.h: struct
 * tailor_sample and what follows it), so that one path in tailor record
 * takes both; their time is CLOCK_MONOTONIC in ns, not the TSC.
 */
#ifndef TAILOR_BPF_H
#define TAILOR_BPF_H

/* Rings: one BPF ring buffer per CPU, in an array of maps. */
#define TAILOR_BPF_MAX_CPUS	1024

/* The registers it can capture (TAILOR_REGS_CAPTURABLE: 16 GPRs, IP). */
#define TAILOR_MAX_REGS_BPF	17

/*
 * The largest record: base, every register, data address, tag word,
 * OpenTelemetry's ids, and a call stack of TAILOR_MAX_CALLCHAIN frames
 * (its word, two markers).
 */
#define TAILOR_BPF_MAX_RECORD	(24 + TAILOR_MAX_REGS_BPF * 8 + 8 + 8 + TAILOR_OTEL_IDS_SIZE + \
				 8 * (1 + TAILOR_MAX_CALLCHAIN + 2))

/* Per CPU, in the counts map; produced = written + lost. */
struct tailor_bpf_counts {
	__u64 produced;		/* samples of the session's threads */
	__u64 lost;		/* the CPU's ring was full */
	__u64 tag_word_bad;	/* tag word unreadable (also flagged) */
	__u64 kernel_ip_dropped;	/* a kernel IP in a user-only session */
};

#endif

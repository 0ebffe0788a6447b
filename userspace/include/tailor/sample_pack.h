/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Samples packed for the file (recording formats 2 and 3, TLR_SAMPLES_PACKED;
 * docs/recording-format.md has the byte layout).  A batch of struct
 * tailor_sample records of one size becomes a stream in which each
 * sample costs a control byte and what changed: the TSC as the change of
 * its step from the previous sample's, the IP against the previous IP of
 * the same thread in the same mode, and each register as "as before",
 * "the IP", "zero" or a change.  On the engine's samples (IP, TSC, r15 and
 * the entry IP) that is about 6 bytes against 40.  Every batch starts from
 * zero state, so it decodes alone.
 */
#ifndef TAILOR_SAMPLE_PACK_H
#define TAILOR_SAMPLE_PACK_H

#include <stddef.h>
#include <stdint.h>
#include "tailor/recording.h"	/* struct tlr_samples_summary */

/* Threads whose last IP a batch remembers; more evict the oldest. */
#define TLR_PACK_THREADS	8
/* Register words after the base: 2 control bits each, 2 more in 64. */
#define TLR_PACK_MAX_WORDS	31

struct tlr_pack_thread {
	uint32_t key;		/* tid, and bit 31 for kernel IPs */
	uint64_t ip;
};

/* What the coder remembers between samples of a batch. */
struct tlr_pack_state {
	uint32_t words;		/* register words after the 24-byte base */
	uint32_t flags;		/* the previous sample's TAILOR_SF_* */
	uint64_t who;		/* its tid, pid and cpu bits */
	uint64_t tsc, step;
	uint64_t word[TLR_PACK_MAX_WORDS];
	struct tlr_pack_thread thread[TLR_PACK_THREADS];
	uint32_t next_victim;
	uint32_t last;		/* the slot found last: a cache, not state */
	struct tlr_samples_summary sum;	/* of the samples packed so far */
};

/* Most bytes packing @count samples of @record_size can take. */
size_t tlr_pack_bound(uint32_t count, uint32_t record_size);

/*
 * Start a batch of @record_size-byte samples (a multiple of 8, 24 to
 * 24 + 8 * TLR_PACK_MAX_WORDS): 0, or -1 for a size it cannot hold.
 */
int tlr_pack_begin(struct tlr_pack_state *st, uint32_t record_size);

/*
 * Pack one sample of the batch into @out; returns the bytes written.
 * @st->sum then summarizes the batch so far, as format 3 states it.
 */
size_t tlr_pack_one(struct tlr_pack_state *st, const void *sample, uint8_t *out);


/*
 * Unpack @count samples of @record_size from the @len bytes at @in into
 * @out (count * record_size bytes, 8-byte aligned), and summarize them in
 * @sum.  Either may be NULL: without @out the stream is only checked --
 * as strictly, and faster, since no IP or register is computed.  0, or
 * -1 with where and what in @err when the stream is not one
 * tlr_pack_one() wrote to exactly @len bytes.
 */
int tlr_unpack(const uint8_t *in, size_t len, uint32_t count, uint32_t record_size, void *out,
	       struct tlr_samples_summary *sum, char *err, size_t errlen);

#endif /* TAILOR_SAMPLE_PACK_H */

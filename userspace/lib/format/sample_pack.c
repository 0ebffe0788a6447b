// SPDX-License-Identifier: GPL-2.0-only
/*
 * The packed sample stream (tailor/sample_pack.h).  One sample:
 *
 *   control   varint: bit 0 the flags changed, bit 1 tid/pid/cpu changed,
 *             then 2 bits per register word: WORD_SAME, WORD_IP,
 *             WORD_ZERO or WORD_DELTA
 *   [flags]   1 byte, the TAILOR_SF_* bits, if bit 0
 *   [who]     varint, the new tid/pid/cpu bits XOR the previous, if bit 1
 *   tsc       varint, zigzag of (tsc - previous tsc) - previous step
 *   ip        varint, zigzag of ip - the thread's previous ip in its mode
 *   [word]    varint, zigzag of word - previous word, per WORD_DELTA
 *
 * A timer's steps are nearly equal, so their change is small; a thread in
 * a loop moves its IP little; the tag register rarely changes and the
 * entry IP of a user sample is its IP.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "tailor/sample_pack.h"
#include "uapi/tailor.h"

enum word_mode {
	WORD_SAME = 0,		/* as in the previous sample */
	WORD_IP = 1,		/* this sample's ip */
	WORD_ZERO = 2,
	WORD_DELTA = 3,		/* a zigzag varint follows */
};

#define CTL_FLAGS	1u
#define CTL_WHO		2u
#define CTL_WORDS	2	/* the first word's mode starts at this bit */
#define WHO_LOW_MASK	((1ull << TAILOR_WHO_FLAGS_SHIFT) - 1)
#define VARINT_MAX	10

static inline uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

static inline size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t tlr_pack_bound(uint32_t count, uint32_t record_size)
{
	uint32_t words = record_size > TAILOR_SAMPLE_BASE_SIZE ?
			 (record_size - TAILOR_SAMPLE_BASE_SIZE) / 8 : 0;

	/* control, flags, who, tsc, ip and every word at their longest */
	return (size_t)count * (VARINT_MAX + 1 + VARINT_MAX * (3 + (size_t)words));
}

int tlr_pack_begin(struct tlr_pack_state *st, uint32_t record_size)
{
	if (record_size < TAILOR_SAMPLE_BASE_SIZE || record_size % 8 ||
	    (record_size - TAILOR_SAMPLE_BASE_SIZE) / 8 > TLR_PACK_MAX_WORDS)
		return -1;
	memset(st, 0, sizeof(*st));
	st->words = (record_size - TAILOR_SAMPLE_BASE_SIZE) / 8;
	st->sum.min_tsc = UINT64_MAX;
	return 0;
}

/*
 * The slot of the thread (and mode) @key, made if new: both sides call
 * this in the same order, so they evict the same slot.
 */
static inline struct tlr_pack_thread *thread_slot(struct tlr_pack_state *st, uint32_t key)
{
	struct tlr_pack_thread *t = &st->thread[st->last];
	int i;

	/* Mostly the thread of the sample before. */
	if (t->key == key)
		return t;
	for (i = 0; i < TLR_PACK_THREADS; i++)
		if (st->thread[i].key == key) {
			st->last = i;
			return &st->thread[i];
		}
	st->last = st->next_victim;
	t = &st->thread[st->next_victim];
	st->next_victim = (st->next_victim + 1) % TLR_PACK_THREADS;
	t->key = key;
	t->ip = 0;
	return t;
}

/* Key 0 is a free slot's, so keys start at 1. */
static uint32_t thread_key(uint64_t who, uint32_t flags)
{
	return (((uint32_t)who & TAILOR_WHO_PID_MASK) + 1) |
	       ((flags & TAILOR_SF_KERNEL) ? 1u << 31 : 0);
}

static inline void summarize_one(struct tlr_samples_summary *sum, uint64_t tsc, uint32_t flags)
{
	sum->min_tsc = tsc < sum->min_tsc ? tsc : sum->min_tsc;
	sum->max_tsc = tsc > sum->max_tsc ? tsc : sum->max_tsc;
	sum->flags_any |= flags;
	sum->tag_word_bad += !!(flags & TAILOR_SF_TAG_WORD_BAD);
}

size_t tlr_pack_one(struct tlr_pack_state *st, const void *sample, uint8_t *out)
{
	const struct tailor_sample *s = sample;
	uint32_t flags = tailor_who_flags(s->who);
	uint64_t who = s->who & WHO_LOW_MASK, ctl = 0, step = s->tsc - st->tsc;
	uint8_t body[VARINT_MAX * (3 + TLR_PACK_MAX_WORDS) + 1];
	struct tlr_pack_thread *t;
	size_t n = 0, b = 0;
	uint32_t i;

	if (flags != st->flags) {
		ctl |= CTL_FLAGS;
		body[b++] = (uint8_t)flags;
		st->flags = flags;
	}
	if (who != st->who) {
		ctl |= CTL_WHO;
		b += put_varint(body + b, who ^ st->who);
		st->who = who;
	}
	b += put_varint(body + b, zigzag(step - st->step));
	st->tsc = s->tsc;
	st->step = step;
	summarize_one(&st->sum, st->tsc, flags);
	t = thread_slot(st, thread_key(who, flags));
	b += put_varint(body + b, zigzag(s->ip - t->ip));
	t->ip = s->ip;
	for (i = 0; i < st->words; i++) {
		uint64_t w = s->regs[i];
		enum word_mode mode;

		if (w == st->word[i]) {
			mode = WORD_SAME;
		} else if (w == s->ip) {
			mode = WORD_IP;
		} else if (!w) {
			mode = WORD_ZERO;
		} else {
			mode = WORD_DELTA;
			b += put_varint(body + b, zigzag(w - st->word[i]));
		}
		st->word[i] = w;
		ctl |= (uint64_t)mode << (CTL_WORDS + 2 * i);
	}
	n = put_varint(out, ctl);
	memcpy(out + n, body, b);
	return n + b;
}

struct unpacker {
	const uint8_t *in;
	size_t len, pos;
	char *err;
	size_t errlen;
};

static int unpack_fail(struct unpacker *u, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(u->err, u->errlen, "packed byte %zu: ", u->pos);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < u->errlen)
		vsnprintf(u->err + n, u->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int get_varint_slow(struct unpacker *u, uint64_t *v, const char *what)
{
	uint64_t x = 0;
	unsigned int shift;

	for (shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (u->pos >= u->len)
			return unpack_fail(u, "the stream ends inside a sample's %s", what);
		byte = u->in[u->pos++];
		/* The tenth byte holds bit 63 alone. */
		if (shift == 63 && byte > 1)
			return unpack_fail(u, "a %s of more than 64 bits", what);
		x |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return unpack_fail(u, "a %s of more than 64 bits", what);
}

/* Most varints are one byte: that without a call. */
static inline int get_varint(struct unpacker *u, uint64_t *v, const char *what)
{
	if (u->pos < u->len && u->in[u->pos] < 0x80) {
		*v = u->in[u->pos++];
		return 0;
	}
	return get_varint_slow(u, v, what);
}

/* Past @n varints of a sample; most are one byte. */
static inline int skip_varints(struct unpacker *u, unsigned int n, const char *what)
{
	uint64_t v;

	for (; n; n--) {
		if (u->pos < u->len && u->in[u->pos] < 0x80)
			u->pos++;
		else if (get_varint_slow(u, &v, what))
			return -1;
	}
	return 0;
}

/* The WORD_DELTA modes in a control word: both bits of a word's mode set. */
static inline unsigned int delta_words(uint64_t ctl)
{
	return (unsigned int)__builtin_popcountll(ctl & ctl >> 1 &
						  (0x5555555555555555ull << CTL_WORDS));
}

/*
 * The control word, flags and thread of sample @k, checked as
 * tlr_unpack() wants them, into @st.
 */
static inline __attribute__((always_inline)) int get_head(struct unpacker *u, struct tlr_pack_state *st, uint32_t k,
			   uint64_t *ctl)
{
	uint64_t v;

	if (get_varint(u, ctl, "control word"))
		return -1;
	if (st->words < TLR_PACK_MAX_WORDS && *ctl >> (CTL_WORDS + 2 * st->words))
		return unpack_fail(u, "sample %u's control word 0x%llx has modes for more than its %u registers",
				   k, (unsigned long long)*ctl, st->words);
	if (*ctl & CTL_FLAGS) {
		if (u->pos >= u->len)
			return unpack_fail(u, "the stream ends inside sample %u's flags", k);
		if (u->in[u->pos] > TAILOR_WHO_FLAGS_MASK)
			return unpack_fail(u, "sample %u's flags 0x%x have more than 7 bits",
					   k, u->in[u->pos]);
		st->flags = u->in[u->pos++];
	}
	if (*ctl & CTL_WHO) {
		if (get_varint(u, &v, "thread"))
			return -1;
		if (v & ~WHO_LOW_MASK)
			return unpack_fail(u, "sample %u's tid/pid/cpu change 0x%llx has flag bits",
					   k, (unsigned long long)v);
		st->who ^= v;
	}
	if (get_varint(u, &v, "time"))
		return -1;
	st->step += unzigzag(v);
	st->tsc += st->step;
	return 0;
}

/*
 * Only checked and summarized: the IP and the registers' changes are
 * read past, never computed, and no thread is looked up.
 */
static int summarize(struct unpacker *u, struct tlr_pack_state *st, uint32_t count,
		     struct tlr_samples_summary *sum)
{
	struct tlr_samples_summary seen = { .min_tsc = UINT64_MAX };
	uint32_t k;

	for (k = 0; k < count; k++) {
		uint64_t ctl;

		if (get_head(u, st, k, &ctl))
			return -1;
		summarize_one(&seen, st->tsc, st->flags);
		/* The IP first, then the registers that changed. */
		if (skip_varints(u, 1, "ip") || skip_varints(u, delta_words(ctl), "register"))
			return -1;
	}
	if (sum)
		*sum = seen;
	return 0;
}

int tlr_unpack(const uint8_t *in, size_t len, uint32_t count, uint32_t record_size, void *out,
	       struct tlr_samples_summary *sum, char *err, size_t errlen)
{
	struct unpacker u = { .in = in, .len = len, .err = err, .errlen = errlen };
	struct tlr_samples_summary seen = { .min_tsc = UINT64_MAX };
	struct tlr_pack_state st;
	uint32_t k, i;

	if (tlr_pack_begin(&st, record_size)) {
		snprintf(err, errlen, "record_size %u cannot be packed", record_size);
		return -1;
	}
	if (!out) {
		if (summarize(&u, &st, count, sum))
			return -1;
		goto end;
	}
	for (k = 0; k < count; k++) {
		struct tailor_sample *s = (struct tailor_sample *)((uint8_t *)out +
								   (size_t)k * record_size);
		struct tlr_pack_thread *t;
		uint64_t ctl, v;

		if (get_head(&u, &st, k, &ctl))
			return -1;
		summarize_one(&seen, st.tsc, st.flags);
		if (get_varint(&u, &v, "ip"))
			return -1;
		s->tsc = st.tsc;
		s->who = st.who | (uint64_t)st.flags << TAILOR_WHO_FLAGS_SHIFT;
		t = thread_slot(&st, thread_key(st.who, st.flags));
		t->ip += unzigzag(v);
		s->ip = t->ip;
		for (i = 0; i < st.words; i++) {
			unsigned int mode = (ctl >> (CTL_WORDS + 2 * i)) & 3;

			if (mode == WORD_IP) {
				st.word[i] = s->ip;
			} else if (mode == WORD_ZERO) {
				st.word[i] = 0;
			} else if (mode == WORD_DELTA) {
				if (get_varint(&u, &v, "register"))
					return -1;
				st.word[i] += unzigzag(v);
			}
			s->regs[i] = st.word[i];
		}
	}
	if (sum)
		*sum = seen;
end:
	if (u.pos != len)
		return unpack_fail(&u, "%zu bytes left after the last of %u samples", len - u.pos,
				   count);
	return 0;
}

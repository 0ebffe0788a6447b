// SPDX-License-Identifier: GPL-2.0-only
/*
 * Events from perf.data (tools/perf/Documentation/perf.data-file-format.txt):
 * perf record --intr-regs=r15 gives the tag register, --user-regs=ip,r15
 * a kernel sample's tag and the IP that entered the kernel, -k 12 on a
 * kernel with patches/0002 raw TSC times, --switch-events context
 * switches, -g call stacks, and --call-graph dwarf the user registers
 * and stack bytes the consumer unwinds (tev_sample).  The file is
 * mapped, never copied, every field is bounds-checked, and offsets are
 * never trusted to be aligned: fields are copied out, never cast.
 *
 * perf record writes each CPU's buffer in turn, so consecutive records
 * are mostly in time order; runs are cut where time steps back, and
 * FINISHED_ROUND records are the rounds.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "perf_abi.h"
#include "reader.h"

#define MAX_ATTRS	64
#define MISC_COMM_EXEC	(1u << 13)	/* PERF_RECORD_MISC_COMM_EXEC */
#define MISC_SWITCH_OUT	(1u << 13)	/* PERF_RECORD_MISC_SWITCH_OUT */
#define MISC_SWITCH_OUT_PREEMPT (1u << 14)

struct perf_attr_info {
	struct perf_event_attr attr;
	const uint8_t *ids;	/* nr_ids u64s, possibly unaligned */
	size_t nr_ids;
	int tag_index;		/* of the tag in regs_intr, -1: not captured */
	/*
	 * In regs_user (perf record --user-regs=ip,r15), -1: not captured.
	 * A kernel sample's user registers are the thread's at kernel entry:
	 * its tag, and the IP that entered the kernel.
	 */
	int user_tag_index, user_ip_index;
	unsigned int time_at;	/* offset of TIME in its samples, 0: none */
	/*
	 * What its samples are: the profile's (the sampling event chosen), a
	 * thread's wakeup (sched:sched_waking, named by the file's
	 * EVENT_DESC), another tracepoint's, which is no CPU sample, or
	 * another sampling event's (perf record -e cpu-clock,page-faults):
	 * a profile of its own, never mixed into this one.
	 */
	enum { ATTR_SAMPLES, ATTR_WAKEUPS, ATTR_OTHER, ATTR_UNCHOSEN } role;
	char name[64];		/* as perf names it (EVENT_DESC), or "" */
	uint64_t nr_samples;	/* counted at open */
};

struct perf_data {
	struct format_reader fr;
	const uint8_t *map;
	size_t map_len;
	const uint8_t *data, *data_end;
	const uint8_t *at;	/* next record of the delivering pass */
	struct perf_attr_info attrs[MAX_ATTRS];
	int nr_attrs;
	bool by_identifier;	/* samples name their attribute */
	bool exec_seen;		/* the first exec, the command's, was counted */
	uint64_t malformed;
	uint64_t other_events;	/* samples of tracepoints that are not wakeups */
	char *build_ids;	/* session_info.build_ids */
};

#define PDATA(r) tev_container_of(r, struct perf_data, fr)

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t take_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void skip(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return;
	}
	c->p += n;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static const struct perf_attr_info *attr_of_id(const struct perf_data *p,
					       uint64_t id)
{
	int i;
	size_t j;

	for (i = 0; i < p->nr_attrs; i++)
		for (j = 0; j < p->attrs[i].nr_ids; j++)
			if (u64_at(p->attrs[i].ids + 8 * j) == id)
				return &p->attrs[i];
	return NULL;
}

static void skip_read(struct cursor *c, const struct perf_event_attr *a)
{
	uint64_t per = 1 + !!(a->read_format & PERF_FORMAT_ID) +
		       !!(a->read_format & PERF_FORMAT_LOST);

	if (a->read_format & PERF_FORMAT_GROUP) {
		uint64_t nr = take_u64(c);

		skip(c, 8 * (!!(a->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			     !!(a->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)));
		if (nr > 1u << 16)
			c->bad = true;
		else
			skip(c, nr * per * 8);
	} else {
		skip(c, 8 * (per + !!(a->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			     !!(a->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)));
	}
}

/*
 * The index of perf register @reg among the registers @mask selects (a
 * sample's REGS_USER or REGS_INTR, when @sampled), or -1.
 */
static int regs_index(bool sampled, uint64_t mask, int reg)
{
	if (!sampled || reg < 0 || reg > 63 || !(mask >> reg & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ull << reg) - 1));
}

/* The attribute a sample record belongs to, or NULL. */
static const struct perf_attr_info *sample_attr(const struct perf_data *p,
						const uint8_t *rec,
						const struct perf_event_header *h)
{
	const struct perf_event_attr *a = &p->attrs[0].attr;
	size_t at;

	if (p->by_identifier) {
		if (h->size < sizeof(*h) + 8)
			return NULL;
		return attr_of_id(p, u64_at(rec + sizeof(*h)));
	}
	/*
	 * Events of one layout (perf record -R): perf gives them ID, after
	 * IP, TID, TIME and ADDR, rather than IDENTIFIER.
	 */
	if (p->nr_attrs == 1 || !(a->sample_type & PERF_SAMPLE_ID))
		return &p->attrs[0];
	at = sizeof(*h) + 8 * (!!(a->sample_type & PERF_SAMPLE_IP) +
			       !!(a->sample_type & PERF_SAMPLE_TID) +
			       !!(a->sample_type & PERF_SAMPLE_TIME) +
			       !!(a->sample_type & PERF_SAMPLE_ADDR));
	if (h->size < at + 8)
		return NULL;
	return attr_of_id(p, u64_at(rec + at));
}

/* A PERF_RECORD_SAMPLE, in the field order of perf_event.h. */
struct raw_data {
	const uint8_t *p;
	uint32_t len;
};

static int parse_sample(const struct perf_data *p, const uint8_t *rec,
			const struct perf_event_header *h, struct tev_sample *out,
			const struct perf_attr_info **attr, struct raw_data *raw)
{
	struct cursor c = { rec + sizeof(*h), rec + h->size, false };
	const struct perf_attr_info *ai = sample_attr(p, rec, h);
	const uint8_t *user_regs = NULL, *user_stack = NULL;
	uint32_t user_stack_size = 0;
	uint64_t t, n;

	*raw = (struct raw_data){ NULL, 0 };
	*attr = ai;
	if (!ai)
		return -1;
	t = ai->attr.sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER)
		take_u64(&c);
	memset(out, 0, sizeof(*out));
	if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		out->flags |= TEV_KERNEL;
	if (!ai->attr.freq)
		out->period = ai->attr.sample_period;
	if (t & PERF_SAMPLE_IP)
		out->ip = take_u64(&c);
	if (t & PERF_SAMPLE_TID) {
		n = take_u64(&c);
		out->pid = (uint32_t)n;
		out->tid = (uint32_t)(n >> 32);
	}
	if (t & PERF_SAMPLE_TIME)
		out->time = take_u64(&c);
	if (t & PERF_SAMPLE_ADDR) {
		out->data_addr = take_u64(&c);
		if (out->data_addr)	/* 0: the event had none */
			out->flags |= TEV_HAS_ADDR;
	}
	if (t & PERF_SAMPLE_ID)
		take_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (t & PERF_SAMPLE_CPU)
		out->cpu = (uint32_t)take_u64(&c);
	if (t & PERF_SAMPLE_PERIOD)
		out->period = take_u64(&c);
	if (t & PERF_SAMPLE_READ)
		skip_read(&c, &ai->attr);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		n = take_u64(&c);
		if (!c.bad && n && n <= PERF_MAX_CALLCHAIN && (uint64_t)(c.end - c.p) >= n * 8) {
			out->callchain = c.p;
			out->nr_callchain = (uint32_t)n;
		}
		skip(&c, n > PERF_MAX_CALLCHAIN ? UINT64_MAX : n * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t sz;

		if (c.end - c.p < 4)
			return -1;
		memcpy(&sz, c.p, 4);
		*raw = (struct raw_data){ c.p + 4, sz };
		skip(&c, 4ull + sz);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		n = take_u64(&c);
		if (ai->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take_u64(&c);
		/* A call stack's (--call-graph lbr), not any branches'. */
		if ((ai->attr.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) && !c.bad &&
		    n && n <= PERF_MAX_CALLCHAIN && (uint64_t)(c.end - c.p) >= n * 24) {
			out->lbr_calls = c.p;
			out->nr_lbr_calls = (uint32_t)n;
		}
		skip(&c, n > (1u << 16) ? UINT64_MAX : n * 24);
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		/*
		 * abi 0: no user registers (a kernel thread).  A 32-bit task's
		 * (ABI_32) are skipped: its stack is unwound by other rules
		 * (i386 DWARF numbering, 4-byte words) than tailor knows.
		 */
		uint64_t abi = take_u64(&c);

		if (abi) {
			if (abi == PERF_SAMPLE_REGS_ABI_64)
				user_regs = c.p;
			skip(&c, 8ull * __builtin_popcountll(ai->attr.sample_regs_user));
		}
	}
	/*
	 * The user stack's copy: its size, the bytes, and how many of them
	 * the kernel could read (dyn_size); a copy claiming more than it
	 * holds is a damaged sample, as perf rejects it.
	 */
	if (t & PERF_SAMPLE_STACK_USER) {
		n = take_u64(&c);
		user_stack = c.p;
		skip(&c, n);
		if (n) {
			uint64_t dyn_size = take_u64(&c);

			if (dyn_size > n)
				c.bad = true;
			else
				user_stack_size = (uint32_t)dyn_size;
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		take_u64(&c);
	if (t & PERF_SAMPLE_DATA_SRC)
		take_u64(&c);
	if (t & PERF_SAMPLE_TRANSACTION)
		take_u64(&c);
	if (t & PERF_SAMPLE_REGS_INTR) {
		const uint8_t *regs;

		if (take_u64(&c)) {	/* abi: 0 means no registers */
			regs = c.p;
			skip(&c, 8ull * __builtin_popcountll(ai->attr.sample_regs_intr));
			if (!c.bad && ai->tag_index >= 0) {
				memcpy(&out->tag, regs + 8 * ai->tag_index, 8);
				out->flags |= TEV_HAS_TAG;
				/* Interrupted kernel code's r15 is no tag. */
				if (!(out->flags & TEV_KERNEL))
					out->flags |= TEV_USER_TAG;
			}
		}
	}
	if (user_regs && !c.bad) {
		out->user_regs = user_regs;
		out->user_regs_mask = ai->attr.sample_regs_user;
		/* Its stack is only worth unwinding with the registers that begin it. */
		if (user_stack_size) {
			out->user_stack = user_stack;
			out->user_stack_size = user_stack_size;
		}
		if (ai->user_tag_index >= 0) {
			memcpy(&out->tag, user_regs + 8 * ai->user_tag_index, 8);
			out->flags |= TEV_HAS_TAG | TEV_USER_TAG;
		}
		if (ai->user_ip_index >= 0 && (out->flags & TEV_KERNEL)) {
			memcpy(&out->entry_ip, user_regs + 8 * ai->user_ip_index, 8);
			out->flags |= TEV_HAS_ENTRY_IP;
		}
	}
	return c.bad ? -1 : 0;
}

/* The sample_id trailer of a non-sample record. */
struct sample_id {
	uint32_t pid, tid, cpu;
	uint64_t time;
	bool has_time, has_cpu;
};

static void parse_trailer(const struct perf_data *p, const uint8_t *rec,
			  const struct perf_event_header *h, struct sample_id *id)
{
	const struct perf_event_attr *a = &p->attrs[0].attr;
	uint64_t t;
	struct cursor c;
	size_t n;

	/* Events of other layouts: the identifier, last, names the record's. */
	if (p->by_identifier && h->size >= sizeof(*h) + 8) {
		const struct perf_attr_info *ai = attr_of_id(p, u64_at(rec + h->size - 8));

		if (ai)
			a = &ai->attr;
	}
	t = a->sample_type & PERF_SAMPLE_ID_ALL_FIELDS;
	n = __builtin_popcountll(t) * 8;
	memset(id, 0, sizeof(*id));
	if (!a->sample_id_all || h->size < sizeof(*h) + n)
		return;
	c = (struct cursor){ rec + h->size - n, rec + h->size, false };
	if (t & PERF_SAMPLE_TID) {
		uint64_t v = take_u64(&c);

		id->pid = (uint32_t)v;
		id->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME) {
		id->time = take_u64(&c);
		id->has_time = true;
	}
	if (t & PERF_SAMPLE_ID)
		take_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (t & PERF_SAMPLE_CPU) {
		id->cpu = (uint32_t)take_u64(&c);
		id->has_cpu = true;
	}
}

/* Records that are events: they have a time and something to deliver. */
static bool is_event(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return true;
	}
	return false;
}

/*
 * The record at @rec, its header copied to @h; NULL at the end or at a
 * record whose size is impossible.
 */
static const uint8_t *record_at(const uint8_t *rec, const uint8_t *end,
				struct perf_event_header *h)
{
	if (end - rec < (ptrdiff_t)sizeof(*h))
		return NULL;
	memcpy(h, rec, sizeof(*h));
	if (h->size < sizeof(*h) || h->size > end - rec)
		return NULL;
	return rec;
}

/* An event's time; 0 if it has none (no sample_id_all: in force from the start). */
static uint64_t event_time(const struct perf_data *p, const uint8_t *rec,
			   const struct perf_event_header *h)
{
	struct sample_id id;

	if (h->type == PERF_RECORD_SAMPLE) {
		const struct perf_attr_info *ai = sample_attr(p, rec, h);

		if (!ai || !ai->time_at || h->size < ai->time_at + 8)
			return 0;
		return u64_at(rec + ai->time_at);
	}
	parse_trailer(p, rec, h, &id);
	return id.time;
}

static enum rd_next perf_next(struct format_reader *fr, struct rd_run *run)
{
	struct perf_data *p = PDATA(fr);
	struct perf_event_header h;
	const uint8_t *rec;

	memset(run, 0, sizeof(*run));
	while ((rec = record_at(p->at, p->data_end, &h))) {
		uint64_t t;

		if (!is_event(h.type)) {
			if (run->count)
				return RD_RUN;	/* the mark ends the run; seen again next call */
			p->at += h.size;
			if (h.type == PERF_RECORD_FINISHED_ROUND)
				return RD_ROUND;
			continue;
		}
		t = event_time(p, rec, &h);
		if (run->count && t < run->last_time)
			return RD_RUN;
		if (!run->count) {
			run->first = rec;
			run->first_time = t;
		}
		run->last_time = t;
		run->count++;
		p->at += h.size;
	}
	return run->count ? RD_RUN : RD_EOF;
}

static const uint8_t *perf_advance(const struct format_reader *fr, uint8_t kind,
				   const uint8_t *ev)
{
	uint16_t size;

	(void)fr;
	(void)kind;
	memcpy(&size, ev + 6, sizeof(size));	/* perf_event_header.size */
	return ev + size;
}

static uint64_t perf_time(const struct format_reader *fr, uint8_t kind,
			  const uint8_t *ev)
{
	struct perf_event_header h;

	(void)kind;
	memcpy(&h, ev, sizeof(h));
	return event_time(PDATA(fr), ev, &h);
}

static int deliver_mmap(const struct perf_data *p, const uint8_t *rec,
			const struct perf_event_header *h, const struct tev_dispatch *d)
{
	const uint8_t *b = rec + sizeof(*h), *end = rec + h->size;
	size_t fixed = h->type == PERF_RECORD_MMAP ? 32 : 32 + 24 + 8;
	struct sample_id id;
	struct tev_mmap m = { 0 };
	const char *name;

	if ((size_t)(end - b) <= fixed)
		return 0;
	memcpy(&m.pid, b, 4);
	memcpy(&m.tid, b + 4, 4);
	memcpy(&m.start, b + 8, 8);
	memcpy(&m.len, b + 16, 8);
	memcpy(&m.pgoff, b + 24, 8);
	if (h->type == PERF_RECORD_MMAP2) {
		memcpy(&m.prot, b + 56, 4);
		if (!(m.prot & PROT_EXEC))
			return 0;
	}
	name = (const char *)b + fixed;
	if (!memchr(name, 0, end - (const uint8_t *)name))
		return 0;
	if (m.pid == (uint32_t)-1 || !m.len)
		return 0;	/* the kernel's own maps */
	parse_trailer(p, rec, h, &id);
	m.time = id.time;
	m.path = name;
	return TEV_DISPATCH(d, mmap, &m);
}

static int deliver_other(const struct perf_data *p, const uint8_t *rec,
			 const struct perf_event_header *h, const struct tev_dispatch *d)
{
	const uint8_t *b = rec + sizeof(*h);
	size_t len = h->size - sizeof(*h);
	struct sample_id id;
	uint32_t u[4];

	parse_trailer(p, rec, h, &id);
	switch (h->type) {
	case PERF_RECORD_COMM: {
		struct tev_comm e = { .time = id.time, .exec = h->misc & MISC_COMM_EXEC };

		if (len <= 8 || !memchr(b + 8, 0, len - 8))
			return 0;
		memcpy(u, b, 8);
		e.pid = u[0];
		e.tid = u[1];
		e.name = (const char *)b + 8;
		return TEV_DISPATCH(d, comm, &e);
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct tev_task e;

		if (len < 24)
			return 0;
		memcpy(u, b, 16);
		e = (struct tev_task){ .pid = u[0], .ppid = u[1], .tid = u[2], .ptid = u[3],
				       .time = u64_at(b + 16) };
		return h->type == PERF_RECORD_FORK ? TEV_DISPATCH(d, fork, &e) :
		       TEV_DISPATCH(d, exit, &e);
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		size_t at = h->type == PERF_RECORD_LOST ? 8 : 0;
		struct tev_lost e = { .time = id.time, .cpu = id.has_cpu ? (int32_t)id.cpu : -1 };

		if (len < at + 8)
			return 0;
		e.count = u64_at(b + at);
		return TEV_DISPATCH(d, lost, &e);
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		struct tev_switch e = {
			.time = id.time, .pid = id.pid, .tid = id.tid, .cpu = id.cpu,
			.out = h->misc & MISC_SWITCH_OUT,
			.preempted = h->misc & MISC_SWITCH_OUT_PREEMPT,
			.other_pid = -1, .other_tid = -1,
		};

		if (h->type == PERF_RECORD_SWITCH_CPU_WIDE && len >= 8) {
			memcpy(u, b, 8);
			e.other_pid = (int32_t)u[0];
			e.other_tid = (int32_t)u[1];
		}
		return TEV_DISPATCH(d, context_switch, &e);
	}
	}
	return 0;
}

/*
 * A sched_waking sample: the waker is the sample's thread, the woken thread's tid and target CPU are in the raw data.
 * The layout (include/trace/events/sched.h, sched_wakeup_template) has
 * been the same since Linux 4.3: the 8 bytes of common fields, comm[16],
 * pid, prio, target_cpu.  1 if the record is too short for it.
 */
static int wakeup_of(const struct tev_sample *s, const struct raw_data *raw,
		     struct tev_wakeup *w)
{
	int32_t tid, cpu;

	if (!raw->p || raw->len < 36)
		return 1;
	memcpy(&tid, raw->p + 24, 4);
	memcpy(&cpu, raw->p + 32, 4);
	if (tid <= 0)
		return 1;
	*w = (struct tev_wakeup){ .time = s->time, .pid = s->pid, .tid = s->tid, .cpu = s->cpu,
				  .target_tid = (uint32_t)tid, .target_cpu = cpu };
	return 0;
}

static int perf_deliver(struct format_reader *fr, uint8_t kind, const uint8_t *ev,
			const struct tev_dispatch *d)
{
	struct perf_data *p = PDATA(fr);
	const struct perf_attr_info *ai;
	struct perf_event_header h;
	struct tev_wakeup w;
	struct raw_data raw;
	struct tev_sample s;

	(void)kind;
	memcpy(&h, ev, sizeof(h));
	switch (h.type) {
	case PERF_RECORD_SAMPLE:
		/* Counted as malformed at open; nothing to deliver. */
		if (parse_sample(p, ev, &h, &s, &ai, &raw))
			return 0;
		if (ai->role == ATTR_WAKEUPS)
			return wakeup_of(&s, &raw, &w) ? 0 : TEV_DISPATCH(d, wakeup, &w);
		if (ai->role != ATTR_SAMPLES)
			return 0;
		return TEV_DISPATCH(d, sample, &s);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return deliver_mmap(p, ev, &h, d);
	}
	return deliver_other(p, ev, &h, d);
}

static void perf_close(struct format_reader *fr)
{
	struct perf_data *p = PDATA(fr);

	if (p->map)
		munmap((void *)p->map, p->map_len);
	free(p->build_ids);
	free(p);
}

static const struct format_ops perf_ops = {
	.next = perf_next,
	.advance = perf_advance,
	.time = perf_time,
	.deliver = perf_deliver,
	.close = perf_close,
};

/* Where TIME sits in samples of @t: after IDENTIFIER, IP and TID, all u64. */
static unsigned int time_offset(uint64_t t)
{
	if (!(t & PERF_SAMPLE_TIME))
		return 0;
	return sizeof(struct perf_event_header) +
	       8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
		    !!(t & PERF_SAMPLE_TID));
}

static int load_attrs(struct perf_data *p, const struct perf_file_header *fh,
		      char *err, size_t errlen)
{
	uint64_t i, n;

	if (fh->attr_size < sizeof(struct perf_file_attr_ids) + PERF_ATTR_SIZE_VER0 ||
	    fh->attrs.offset > p->map_len ||
	    fh->attrs.size > p->map_len - fh->attrs.offset) {
		snprintf(err, errlen, "attribute section out of bounds");
		return -1;
	}
	n = fh->attrs.size / fh->attr_size;
	if (!n || n > MAX_ATTRS) {
		snprintf(err, errlen, "%llu event attributes (1..%d supported)",
			 (unsigned long long)n, MAX_ATTRS);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const uint8_t *a = p->map + fh->attrs.offset + i * fh->attr_size;
		struct perf_attr_info *ai = &p->attrs[i];
		size_t asz = fh->attr_size - sizeof(struct perf_file_attr_ids);
		struct perf_file_section ids;
		int tag_reg = p->fr.tag_reg;
		bool intr, user;

		memcpy(&ai->attr, a, asz < sizeof(ai->attr) ? asz : sizeof(ai->attr));
		memcpy(&ids, a + asz, sizeof(ids));
		if (ids.offset <= p->map_len && ids.size <= p->map_len - ids.offset) {
			ai->ids = p->map + ids.offset;
			ai->nr_ids = ids.size / 8;
		}
		intr = ai->attr.sample_type & PERF_SAMPLE_REGS_INTR;
		user = ai->attr.sample_type & PERF_SAMPLE_REGS_USER;
		ai->tag_index = regs_index(intr, ai->attr.sample_regs_intr, tag_reg);
		ai->user_tag_index = regs_index(user, ai->attr.sample_regs_user, tag_reg);
		ai->user_ip_index = regs_index(user, ai->attr.sample_regs_user,
					       PERF_REG_X86_IP_NUMBER);
		if (ai->tag_index >= 0 || ai->user_tag_index >= 0)
			p->fr.info.has_tag = true;
		ai->time_at = time_offset(ai->attr.sample_type);
	}
	p->nr_attrs = (int)n;
	p->by_identifier = n > 1 && (p->attrs[0].attr.sample_type & PERF_SAMPLE_IDENTIFIER);
	for (i = 1; i < n && !p->by_identifier; i++)
		if (p->attrs[i].attr.sample_type != p->attrs[0].attr.sample_type) {
			snprintf(err, errlen, "events with different sample layouts and no sample identifier");
			return -1;
		}
	return 0;
}

/*
 * The roles of the events (perf_attr_info.role): a tracepoint's samples
 * are no CPU samples; the wakeup tracepoints are known by the names in
 * the EVENT_DESC feature section (perf's header.c write_event_desc():
 * u32 count, u32 attr size, then per event its attr, u32 nr_ids, a
 * string -- u32 length, NUL-padded -- and its ids).  Feature sections
 * follow the data, one perf_file_section per feature bit, in bit order.
 */
/* Feature @bit's section, within the file; -1 if absent or out of it. */
static int feature_section(const struct perf_data *p, const struct perf_file_header *fh,
			   int bit, struct perf_file_section *sec)
{
	uint64_t at = fh->data.offset + fh->data.size;

	if (!(fh->features[0] >> bit & 1) || at < fh->data.offset || at > p->map_len)
		return -1;
	at += 16ull * __builtin_popcountll(fh->features[0] & ((1ull << bit) - 1));
	if (at > p->map_len || p->map_len - at < sizeof(*sec))
		return -1;
	memcpy(sec, p->map + at, sizeof(*sec));
	if (sec->offset > p->map_len || sec->size > p->map_len - sec->offset)
		return -1;
	return 0;
}

/* A perf_header_string feature (u32 length, then the NUL-padded string). */
static void feature_string(const struct perf_data *p, const struct perf_file_header *fh,
			   int bit, char *out, size_t outlen)
{
	struct perf_file_section sec;
	uint32_t len;

	out[0] = '\0';
	if (feature_section(p, fh, bit, &sec) || sec.size < 4)
		return;
	memcpy(&len, p->map + sec.offset, 4);
	if (len > sec.size - 4)
		return;
	snprintf(out, outlen, "%.*s", (int)strnlen((const char *)p->map + sec.offset + 4, len),
		 (const char *)p->map + sec.offset + 4);
}

/*
 * The BUILD_ID feature: the build-ids of the files the samples fell in, as
 * perf record found them when it ended (header.c's build_id events: a
 * perf_event_header, a pid, 24 bytes of id -- the size in byte 20 where
 * misc says so, else 20 -- and the NUL-padded path), as the
 * "PATH\tHEX\n" lines of session_info.build_ids.
 */
#define MISC_BUILD_ID_SIZE	(1u << 15)

static void read_build_ids(struct perf_data *p, const struct perf_file_header *fh)
{
	struct perf_file_section sec;
	size_t at, end, n = 0, cap;
	char *text;

	if (feature_section(p, fh, PERF_HEADER_BUILD_ID, &sec) || !sec.size ||
	    sec.size > (64u << 20))
		return;
	cap = 2 * sec.size + 1;
	text = malloc(cap);
	if (!text)
		return;
	for (at = sec.offset, end = sec.offset + sec.size; end - at >= 8 + 4 + 24;) {
		struct perf_event_header h;
		const uint8_t *id = p->map + at + 8 + 4;
		const char *path = (const char *)id + 24;
		size_t id_len = 20, path_max, i;

		memcpy(&h, p->map + at, sizeof(h));
		if (h.size < 8 + 4 + 24 || h.size > end - at)
			break;
		if ((h.misc & MISC_BUILD_ID_SIZE) && id[20] && id[20] <= 20)
			id_len = id[20];
		path_max = h.size - (8 + 4 + 24);
		if (!memchr(path, 0, path_max))
			break;
		/* A path with a tab or a newline cannot be a line of this text. */
		if (!strpbrk(path, "\t\n") && strlen(path) + 2 * id_len + 2 < cap - n) {
			n += (size_t)snprintf(text + n, cap - n, "%s\t", path);
			for (i = 0; i < id_len; i++)
				n += (size_t)snprintf(text + n, cap - n, "%02x", id[i]);
			text[n++] = '\n';
			text[n] = '\0';
		}
		at += h.size;
	}
	if (!n) {
		free(text);
		return;
	}
	p->build_ids = text;
	p->fr.info.build_ids = text;
	p->fr.info.build_ids_len = n;
}

static void assign_roles(struct perf_data *p, const struct perf_file_header *fh)
{
	uint64_t end, nre, attr_size, i;
	struct perf_file_section sec;
	struct cursor c;
	int k;

	/* perf's dummy event (perf record -a adds one) carries side-band, no samples. */
	for (k = 0; k < p->nr_attrs; k++)
		p->attrs[k].role = p->attrs[k].attr.type == PERF_TYPE_TRACEPOINT ||
				   (p->attrs[k].attr.type == PERF_TYPE_SOFTWARE &&
				    p->attrs[k].attr.config == PERF_COUNT_SW_DUMMY) ?
				   ATTR_OTHER : ATTR_SAMPLES;
	if (feature_section(p, fh, PERF_HEADER_EVENT_DESC, &sec) || sec.size < 8)
		return;
	end = sec.offset + sec.size;
	c = (struct cursor){ p->map + sec.offset, p->map + end, false };
	nre = take_u64(&c);
	attr_size = nre >> 32;
	nre &= 0xffffffffu;
	for (i = 0; i < nre && !c.bad; i++) {
		struct perf_attr_info *ai;
		uint32_t nr_ids, len;
		const char *name;

		skip(&c, attr_size);
		if (c.bad || c.end - c.p < 8)
			return;
		memcpy(&nr_ids, c.p, 4);
		memcpy(&len, c.p + 4, 4);
		skip(&c, 8);
		name = (const char *)c.p;
		skip(&c, len);
		if (c.bad || !len || !memchr(name, 0, len) ||
		    (uint64_t)(c.end - c.p) < 8ull * nr_ids)
			return;
		/* By its first id; an event without ids by its place (the attrs' order). */
		ai = (struct perf_attr_info *)(nr_ids ? attr_of_id(p, u64_at(c.p)) :
					       i < (uint64_t)p->nr_attrs ? &p->attrs[i] : NULL);
		skip(&c, 8ull * nr_ids);
		if (ai)
			snprintf(ai->name, sizeof(ai->name), "%s", name);
		/*
		 * sched_waking only: sched_wakeup may run on the woken
		 * thread's CPU, in whatever thread runs there, not the waker.
		 */
		if (ai && ai->attr.type == PERF_TYPE_TRACEPOINT &&
		    !strcmp(name, "sched:sched_waking") && (ai->attr.sample_type & PERF_SAMPLE_RAW))
			ai->role = ATTR_WAKEUPS;
	}
}

/* The attribute whose samples the profile is: the first sampling one. */
static const struct perf_attr_info *main_attr(const struct perf_data *p)
{
	int i;

	for (i = 0; i < p->nr_attrs; i++)
		if (p->attrs[i].role == ATTR_SAMPLES)
			return &p->attrs[i];
	return &p->attrs[0];
}

/*
 * The sampling event whose profile this is: @event (perf's name for it),
 * or the first.  Every other sampling event is a profile of its own,
 * named in the session's info for the report to say so.
 */
static int choose_event(struct perf_data *p, const char *event, char *err, size_t errlen)
{
	struct perf_attr_info *chosen = NULL;
	size_t n = 0;
	int i;

	for (i = 0; i < p->nr_attrs && event; i++)
		if (p->attrs[i].role == ATTR_SAMPLES && format_event_named(p->attrs[i].name, event) &&
		    !chosen)
			chosen = &p->attrs[i];
	if (event && !chosen) {
		n = snprintf(err, errlen, "no sampling event '%s' in this perf.data; it has:", event);
		for (i = 0; i < p->nr_attrs && n < errlen; i++)
			if (p->attrs[i].role == ATTR_SAMPLES)
				n += snprintf(err + n, errlen - n, " %s",
					      p->attrs[i].name[0] ? p->attrs[i].name : "(unnamed)");
		return -1;
	}
	if (!chosen)
		chosen = (struct perf_attr_info *)main_attr(p);
	for (i = 0; i < p->nr_attrs; i++)
		if (p->attrs[i].role == ATTR_SAMPLES && &p->attrs[i] != chosen)
			p->attrs[i].role = ATTR_UNCHOSEN;
	return 0;
}

/* The other sampling events and their samples, for the report's note. */
static void describe_others(struct perf_data *p)
{
	struct session_info *info = &p->fr.info;
	size_t n = 0;
	int i;

	for (i = 0; i < p->nr_attrs && n < sizeof(info->other_events); i++) {
		const struct perf_attr_info *ai = &p->attrs[i];

		if (ai->role != ATTR_UNCHOSEN)
			continue;
		n += snprintf(info->other_events + n, sizeof(info->other_events) - n,
			      "%s%s (%" PRIu64 " sample%s)", n ? ", " : "",
			      ai->name[0] ? ai->name : "(unnamed)", ai->nr_samples,
			      ai->nr_samples == 1 ? "" : "s");
	}
}

static void describe_event(struct perf_data *p)
{
	const struct perf_attr_info *ai = main_attr(p);
	const struct perf_event_attr *a = &ai->attr;
	struct session_info *info = &p->fr.info;
	bool clock = a->type == PERF_TYPE_SOFTWARE &&
		     (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);

	if (ai->name[0])
		snprintf(info->event, sizeof(info->event), "%s", ai->name);
	else if (clock)
		snprintf(info->event, sizeof(info->event), "%s",
			 a->config == PERF_COUNT_SW_CPU_CLOCK ? "cpu-clock" : "task-clock");
	else
		snprintf(info->event, sizeof(info->event), "perf type %u config 0x%llx",
			 a->type, (unsigned long long)a->config);
	info->period_is_ns = clock;
	info->period = a->freq ? 0 : a->sample_period;
	info->freq_hz = a->freq ? a->sample_freq : 0;
}

/*
 * perf's map of the kernel (pid -1, "[kernel.kallsyms]_text"): its pgoff is
 * _text's address where the profile was taken, which KASLR moves.
 */
static void kernel_map(const uint8_t *rec, const struct perf_event_header *h,
		       struct session_info *info)
{
	size_t fixed = h->type == PERF_RECORD_MMAP ? 32 : 32 + 24 + 8;
	const uint8_t *b = rec + sizeof(*h);
	static const char text[] = "[kernel.kallsyms]_text";
	uint32_t pid;

	if (h->size < sizeof(*h) + fixed + sizeof(text))
		return;
	memcpy(&pid, b, 4);
	if (pid == (uint32_t)-1 && !memcmp(b + fixed, text, sizeof(text)))
		memcpy(&info->kernel_text, b + 24, 8);
}

/* The counting pass: samples, their time span, lost counts, rounds, damage. */
static int count_events(struct perf_data *p, char *err, size_t errlen)
{
	struct session_info *info = &p->fr.info;
	uint64_t first_exec = 0;
	uint32_t exec_pid = 0, first_sample_pid = 0;
	const uint8_t *at = p->data, *rec;
	const struct perf_attr_info *ai;
	struct perf_event_header h;
	struct tev_wakeup w;
	struct raw_data raw;
	struct tev_sample s;

	while ((rec = record_at(at, p->data_end, &h))) {
		at += h.size;
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			if (parse_sample(p, rec, &h, &s, &ai, &raw) ||
			    (ai->role == ATTR_WAKEUPS && wakeup_of(&s, &raw, &w))) {
				p->malformed++;
				break;
			}
			if (ai->role == ATTR_WAKEUPS) {
				info->nr_wakeups++;
				break;
			}
			if (ai->role == ATTR_OTHER) {
				p->other_events++;
				break;
			}
			if (ai->role == ATTR_UNCHOSEN) {
				((struct perf_attr_info *)ai)->nr_samples++;
				break;
			}
			if (!info->nr_samples || s.time < info->first_time) {
				info->first_time = s.time;
				first_sample_pid = s.pid;
			}
			if (s.time > info->last_time)
				info->last_time = s.time;
			if (s.flags & TEV_HAS_ADDR)
				info->has_addr = true;
			if (s.flags & TEV_KERNEL)
				info->nr_kernel_samples++;
			info->nr_samples++;
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			info->nr_mappings++;
			kernel_map(rec, &h, info);
			break;
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE:
			info->nr_switches++;
			break;
		case PERF_RECORD_COMM:
			/*
			 * perf record -- COMMAND: the command's exec is the first,
			 * in time (the file holds each CPU's buffer in turn);
			 * processes it forks exec later.
			 */
			if ((h.misc & MISC_COMM_EXEC) && h.size >= sizeof(h) + 8) {
				uint64_t t = event_time(p, rec, &h);

				if (!p->exec_seen || t < first_exec) {
					first_exec = t;
					exec_pid = (uint32_t)u64_at(rec + sizeof(h));
					p->exec_seen = true;
				}
			}
			break;
		case PERF_RECORD_LOST:
			if (h.size >= sizeof(h) + 16)
				info->lost += u64_at(rec + sizeof(h) + 8);
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (h.size >= sizeof(h) + 8)
				info->lost += u64_at(rec + sizeof(h));
			break;
		case PERF_RECORD_FINISHED_ROUND:
			info->rounds++;
			break;
		case PERF_RECORD_COMPRESSED:
			snprintf(err, errlen, "compressed perf.data (perf record -z); record without -z");
			return -1;
		}
	}
	if (p->data_end - at >= (ptrdiff_t)sizeof(h)) {
		info->complete = false;
		snprintf(info->problem, sizeof(info->problem),
			 "cut short: bad event at offset %llu",
			 (unsigned long long)(at - p->map));
		p->data_end = at;
	}
	if (p->malformed && info->complete) {
		info->complete = false;
		snprintf(info->problem, sizeof(info->problem),
			 "%llu malformed events skipped", (unsigned long long)p->malformed);
	}
	/*
	 * An exec after the first sample is a child's (perf record -p, -a),
	 * unless that sample is the exec'ing process's own: the kernel
	 * enables the command's events (perf_event_exec()) before it emits
	 * the exec's COMM (__set_task_comm() in begin_new_exec()), so a
	 * sample may come between the two (within microseconds: a
	 * millisecond is allowed).
	 */
	if (p->exec_seen && (!info->nr_samples || first_exec <= info->first_time ||
			     (first_sample_pid == exec_pid &&
			      first_exec - info->first_time < 1000000)))
		info->target_pid = exec_pid;
	return 0;
}

struct format_reader *perf_data_open(const char *path, int tag_reg,
				     uint32_t tsc_khz, const char *event, char *err,
				     size_t errlen)
{
	struct perf_data *p = calloc(1, sizeof(*p));
	const struct perf_attr_info *first;
	struct session_info *info;
	struct perf_file_header fh;
	struct stat st;
	void *map;
	int fd;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->fr.ops = &perf_ops;
	p->fr.tag_reg = tag_reg;
	info = &p->fr.info;
	info->format = "perf.data";
	info->kernel_samples_counted = true;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "cannot open: %m");
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	map = st.st_size >= (off_t)sizeof(fh) ?
	      mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "perf.data header cut short or unmappable (%lld bytes)",
			 (long long)st.st_size);
		goto fail;
	}
	p->map = map;
	p->map_len = st.st_size;
	memcpy(&fh, map, sizeof(fh));
	if (fh.size != sizeof(fh)) {
		snprintf(err, errlen, fh.size == PERF_PIPE_HEADER_SIZE ?
			 "perf.data in pipe mode; record to a file (perf record -o FILE)" :
			 "unknown perf.data header size %llu", (unsigned long long)fh.size);
		goto fail;
	}
	if (load_attrs(p, &fh, err, errlen))
		goto fail;
	assign_roles(p, &fh);
	feature_string(p, &fh, PERF_HEADER_HOSTNAME, info->hostname, sizeof(info->hostname));
	feature_string(p, &fh, PERF_HEADER_OSRELEASE, info->os_release, sizeof(info->os_release));
	read_build_ids(p, &fh);
	if (choose_event(p, event, err, errlen))
		goto fail;
	first = main_attr(p);
	describe_event(p);
	if (!(first->attr.sample_type & PERF_SAMPLE_IP) ||
	    !(first->attr.sample_type & PERF_SAMPLE_TID) ||
	    !(first->attr.sample_type & PERF_SAMPLE_TIME)) {
		snprintf(err, errlen, "samples lack IP, TID or TIME (record with perf record -T)");
		goto fail;
	}
	if (first->attr.use_clockid && first->attr.clockid == PERF_CLOCK_HW_TSC) {
		info->time_unit = SESSION_TIME_TSC;
		if (tsc_khz)
			session_khz_to_mult_shift(tsc_khz, &info->mult, &info->shift);
	} else {
		info->time_unit = SESSION_TIME_NS;
		info->mult = 1;
		info->clock_monotonic = first->attr.use_clockid &&
					first->attr.clockid == CLOCK_MONOTONIC;
	}
	info->complete = true;
	if (fh.data.offset > p->map_len) {
		p->data = p->data_end = p->map + p->map_len;
		info->complete = false;
	} else {
		uint64_t avail = p->map_len - fh.data.offset;

		p->data = p->map + fh.data.offset;
		p->data_end = p->data + (fh.data.size < avail ? fh.data.size : avail);
		if (fh.data.size > avail || !fh.data.size)
			info->complete = false;
	}
	if (!info->complete)
		snprintf(info->problem, sizeof(info->problem),
			 "cut short: the data section is incomplete (perf record did not finish writing)");
	if (count_events(p, err, errlen))
		goto fail;
	describe_others(p);
	p->at = p->data;
	return &p->fr;
fail:
	if (p->map)
		munmap((void *)p->map, p->map_len);
	free(p->build_ids);
	free(p);
	return NULL;
}

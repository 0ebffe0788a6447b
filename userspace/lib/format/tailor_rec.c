// SPDX-License-Identifier: GPL-2.0-only
/*
 * Events from tailor recordings (docs/recording-format.md).
 *
 * A SAMPLES record holds one read() of /dev/tailor: each CPU's samples
 * in order, one CPU after another; its runs are cut where time steps
 * back.  Side-band records (MMAP, COMM, TASK) are runs of one.  ROUND
 * records mark rounds; recordings of older tailors have none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reader.h"
#include "tailor/recording.h"
#include "tailor/sample_pack.h"
#include "uapi/tailor.h"
#include "util/grow.h"

enum { KIND_SAMPLE, KIND_RECORD };

/* A file the recording carries (FILE records), put back together at open. */
struct carried_file {
	char *path;
	uint8_t *data;
	uint64_t size, filled;	/* whole when filled == size */
};

/* What a recording may carry of one file; larger ones are left out. */
#define MAX_CARRIED_FILE	(1ull << 30)

struct tailor_rec {
	struct format_reader fr;
	char *path;
	struct tlr_reader *events;	/* the second pass, which delivers */
	uint64_t regs_mask;
	uint32_t flags_used;
	int tag_index;		/* of the tag register in regs[], -1: none */
	int ip_index;		/* of TAILOR_REG_IP in regs[], -1: none */
	uint32_t nr_regs;	/* registers in regs_mask */
	/* The SAMPLES record being cut into runs. */
	const uint8_t *batch;
	uint32_t batch_count, batch_next, record_size;
	/*
	 * Packed batches, unpacked: the session holds runs until two round
	 * marks later (session.c), so each buffer lives until then.
	 */
	struct unpacked_batch *unpacked;
	size_t nr_unpacked, cap_unpacked;
	uint64_t rounds;		/* ROUND marks handed out */
	uint64_t handed;	/* samples in the batches handed out */
	uint64_t end_time;	/* stop_tsc, for the lost count */
	struct carried_file *files;
	size_t nr_files;
	char *kallsyms;		/* the KALLSYMS record's text, or NULL */
	char *build_ids;	/* the BUILD_IDS record's text, or NULL */
	/* STACK records, by id - 1: their entries, one after another. */
	struct stack_span {
		uint64_t first;	/* in stack_entries */
		uint32_t nr;
	} *stacks;
	size_t nr_stacks, cap_stacks;
	uint64_t *stack_entries;
	size_t nr_entries, cap_entries;
};

struct unpacked_batch {
	uint8_t *data;
	uint64_t round;		/* ROUND marks handed out before it */
};

#define TREC(r) tev_container_of(r, struct tailor_rec, fr)

/*
 * Free the batches no run can still point into: at this call the session
 * has flushed, at mark R, every event read before mark R - 1.
 */
static void release_unpacked(struct tailor_rec *t)
{
	size_t i, kept = 0;

	for (i = 0; i < t->nr_unpacked; i++) {
		if (t->unpacked[i].round + 1 < t->rounds)
			free(t->unpacked[i].data);
		else
			t->unpacked[kept++] = t->unpacked[i];
	}
	t->nr_unpacked = kept;
}

/* Stop delivering: the report says how far it got, and why. */
static void cut_short(struct tailor_rec *t, const struct tlr_record *rec, const char *why)
{
	struct session_info *info = &t->fr.info;

	info->complete = false;
	info->nr_samples = t->handed;
	snprintf(info->problem, sizeof(info->problem),
		 "cut short: offset %llu: SAMPLES_PACKED %s", (unsigned long long)rec->offset,
		 why);
}

/*
 * A packed batch, unpacked straight into a buffer that lives as long as
 * its runs; NULL when it cannot be, the recording then cut short there:
 * no memory, or a batch that does not unpack to what it says.  Only
 * here is a format 3 batch's stream read: the first pass took its
 * summary.
 */
static const uint8_t *unpack_batch(struct tailor_rec *t, const struct tlr_record *rec)
{
	const struct tlr_samples_packed *h = rec->payload;
	size_t bytes = (size_t)h->count * h->record_size;
	char why[320];
	uint8_t *data;

	if (t->nr_unpacked == t->cap_unpacked) {
		size_t cap = t->cap_unpacked ? 2 * t->cap_unpacked : 16;
		struct unpacked_batch *grown = realloc(t->unpacked, cap * sizeof(*grown));

		if (!grown) {
			cut_short(t, rec, "no memory to unpack it");
			return NULL;
		}
		t->unpacked = grown;
		t->cap_unpacked = cap;
	}
	data = malloc(bytes ? bytes : 1);
	if (!data) {
		cut_short(t, rec, "no memory to unpack it");
		return NULL;
	}
	if (tlr_unpack_record(t->events, rec, data, why, sizeof(why))) {
		cut_short(t, rec, why);
		free(data);
		return NULL;
	}
	t->unpacked[t->nr_unpacked++] = (struct unpacked_batch){ .data = data, .round = t->rounds };
	return data;
}

/* Where register @reg sits in a sample's regs[] under @mask; -1: absent. */
static int reg_index(uint64_t mask, int reg)
{
	if (reg < 0 || reg >= 64 || !(mask >> reg & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ull << reg) - 1));
}

static uint64_t sample_time(const uint8_t *p)
{
	uint64_t t;

	memcpy(&t, p, sizeof(t));
	return t;
}

static uint64_t record_time(const uint8_t *rec)
{
	const struct tlr_record_header *h = (const void *)rec;
	const struct tlr_mmap *m = (const void *)(h + 1);

	if (h->type == TLR_MMAP && m->time_kind == TLR_TIME_START)
		return 0;	/* in force from the start */
	return sample_time(rec + sizeof(*h));	/* every side-band record starts with tsc */
}

static enum rd_next tailor_next(struct format_reader *fr, struct rd_run *run)
{
	struct tailor_rec *t = TREC(fr);
	struct tlr_record rec;

	for (;;) {
		if (t->batch_next < t->batch_count) {
			const uint8_t *at = t->batch + (size_t)t->batch_next * t->record_size;
			uint64_t prev = sample_time(at), now;
			uint32_t n = 1;

			while (t->batch_next + n < t->batch_count) {
				now = sample_time(at + (size_t)n * t->record_size);
				if (now < prev)
					break;
				prev = now;
				n++;
			}
			*run = (struct rd_run){ .first = at, .count = n, .stride = t->record_size,
						.kind = KIND_SAMPLE, .first_time = sample_time(at),
						.last_time = prev };
			t->batch_next += n;
			return RD_RUN;
		}
		release_unpacked(t);
		if (tlr_next(t->events, &rec) <= 0)
			return RD_EOF;
		switch (rec.type) {
		case TLR_SAMPLES: {
			const struct tlr_samples *h = rec.payload;

			t->batch = (const uint8_t *)(h + 1);
			t->batch_count = h->count;
			t->batch_next = 0;
			t->record_size = h->record_size;
			t->handed += h->count;
			break;
		}
		case TLR_SAMPLES_PACKED: {
			const struct tlr_samples_packed *h = rec.payload;

			t->batch = unpack_batch(t, &rec);
			if (!t->batch)
				return RD_EOF;	/* cut short: the rest is not delivered */
			t->batch_count = h->count;
			t->batch_next = 0;
			t->record_size = h->record_size;
			t->handed += h->count;
			break;
		}
		case TLR_MMAP:
		case TLR_COMM:
		case TLR_TASK:
		case TLR_SWITCH:
		case TLR_WAKEUP: {
			const uint8_t *hdr = (const uint8_t *)rec.payload -
					     sizeof(struct tlr_record_header);

			*run = (struct rd_run){ .first = hdr, .count = 1, .kind = KIND_RECORD,
						.first_time = record_time(hdr),
						.last_time = record_time(hdr) };
			return RD_RUN;
		}
		case TLR_ROUND:
			t->rounds++;
			return RD_ROUND;
		}
	}
}

static const uint8_t *tailor_advance(const struct format_reader *fr, uint8_t kind,
				     const uint8_t *ev)
{
	(void)fr;
	(void)kind;
	return ev;	/* runs of records have one event; samples have a stride */
}

static uint64_t tailor_time(const struct format_reader *fr, uint8_t kind,
			    const uint8_t *ev)
{
	(void)fr;
	return kind == KIND_SAMPLE ? sample_time(ev) : record_time(ev);
}

static int deliver_sample(struct tailor_rec *t, const uint8_t *at,
			  const struct tev_dispatch *d)
{
	const struct tailor_sample *s = (const void *)at;
	uint32_t room = (t->record_size - TAILOR_SAMPLE_BASE_SIZE) / 8;
	uint32_t nr_regs = t->nr_regs;
	uint32_t sf = tailor_who_flags(s->who);
	struct tev_sample out = {
		.time = s->tsc, .ip = s->ip,
		.pid = tailor_who_pid(s->who),
		.tid = tailor_who_tid(s->who),
		.cpu = tailor_who_cpu(s->who),
		.period = t->fr.info.period,
	};

	if (sf & TAILOR_SF_KERNEL)
		out.flags |= TEV_KERNEL;
	if (t->tag_index >= 0 && (uint32_t)t->tag_index < room &&
	    !(sf & TAILOR_SF_NO_REGS)) {
		out.tag = s->regs[t->tag_index];
		out.flags |= TEV_HAS_TAG;
		if (!(sf & TAILOR_SF_KERNEL) || (sf & TAILOR_SF_USER_REGS))
			out.flags |= TEV_USER_TAG;
	}
	if (t->ip_index >= 0 && (uint32_t)t->ip_index < room &&
	    (sf & TAILOR_SF_KERNEL) && (sf & TAILOR_SF_USER_REGS)) {
		out.entry_ip = s->regs[t->ip_index];
		out.flags |= TEV_HAS_ENTRY_IP;
	}
	if (t->flags_used & TAILOR_CFG_DATA_ADDR) {
		if (nr_regs < room && (sf & TAILOR_SF_ADDR_VALID)) {
			out.data_addr = s->regs[nr_regs];
			out.flags |= TEV_HAS_ADDR;
		}
		nr_regs++;
	}
	if (t->flags_used & TAILOR_CFG_TAG_WORD) {
		if (nr_regs < room && (sf & TAILOR_SF_TAG_WORD_BAD)) {
			out.flags |= TEV_TAG_WORD_BAD;
		} else if (nr_regs < room) {
			out.tag_word = s->regs[nr_regs];
			out.flags |= TEV_HAS_TAG_WORD;
		}
		nr_regs++;
	}
	if (t->flags_used & TAILOR_CFG_OTEL_CTX) {
		uint64_t ids[TAILOR_OTEL_IDS_SIZE / 8];

		if (nr_regs + TAILOR_OTEL_IDS_SIZE / 8 <= room) {
			memcpy(ids, &s->regs[nr_regs], sizeof(ids));
			if (ids[0] | ids[1] | ids[2]) {
				memcpy(out.otel_trace_id, ids, 16);
				memcpy(out.otel_span_id, ids + 2, 8);
				out.flags |= TEV_HAS_OTEL;
			}
		}
		nr_regs += TAILOR_OTEL_IDS_SIZE / 8;
	}
	/* Its stack by id; an id no STACK record gave is no stack. */
	if ((t->flags_used & TAILOR_CFG_CALLCHAIN) && nr_regs < room) {
		uint64_t id = s->regs[nr_regs];

		if (id && id <= t->nr_stacks) {
			const struct stack_span *st = &t->stacks[id - 1];

			out.callchain = t->stack_entries + st->first;
			out.nr_callchain = st->nr;
		}
	}
	return TEV_DISPATCH(d, sample, &out);
}

static int deliver_record(const uint8_t *rec, const struct tev_dispatch *d)
{
	const struct tlr_record_header *h = (const void *)rec;
	const void *payload = h + 1;

	switch (h->type) {
	case TLR_MMAP: {
		const struct tlr_mmap *m = payload;
		struct tev_mmap e = {
			.time = record_time(rec), .start = m->start, .len = m->len,
			.pgoff = m->pgoff, .path = (const char *)(m + 1),
			.pid = m->pid, .tid = m->tid, .prot = m->prot,
			.at_start = m->time_kind == TLR_TIME_START,
		};

		return TEV_DISPATCH(d, mmap, &e);
	}
	case TLR_COMM: {
		const struct tlr_comm *c = payload;
		struct tev_comm e = {
			.time = c->tsc, .name = (const char *)(c + 1), .pid = c->pid,
			.tid = c->tid, .exec = c->flags & TLR_COMM_EXEC,
		};

		return TEV_DISPATCH(d, comm, &e);
	}
	case TLR_TASK: {
		const struct tlr_task *tk = payload;
		struct tev_task e = {
			.time = tk->tsc, .pid = tk->pid, .tid = tk->tid,
			.ppid = tk->ppid, .ptid = tk->ptid,
		};

		return tk->event == TLR_TASK_FORK ? TEV_DISPATCH(d, fork, &e) :
		       TEV_DISPATCH(d, exit, &e);
	}
	case TLR_SWITCH: {
		const struct tlr_switch *sw = payload;
		struct tev_switch e = {
			.time = sw->tsc, .pid = sw->pid, .tid = sw->tid, .cpu = sw->cpu,
			.out = sw->flags & TLR_SWITCH_OUT,
			.preempted = sw->flags & TLR_SWITCH_PREEMPTED,
			.other_pid = sw->other_pid, .other_tid = sw->other_tid,
		};

		return TEV_DISPATCH(d, context_switch, &e);
	}
	case TLR_WAKEUP: {
		const struct tlr_wakeup *wk = payload;
		struct tev_wakeup e = {
			.time = wk->tsc, .pid = wk->pid, .tid = wk->tid, .cpu = wk->cpu,
			.target_tid = wk->target_tid, .target_cpu = wk->target_cpu,
		};

		return TEV_DISPATCH(d, wakeup, &e);
	}
	}
	return 0;
}

static int tailor_deliver(struct format_reader *fr, uint8_t kind, const uint8_t *ev,
			  const struct tev_dispatch *d)
{
	return kind == KIND_SAMPLE ? deliver_sample(TREC(fr), ev, d) :
	       deliver_record(ev, d);
}

/* The module counts lost samples only in total: one event at the end. */
static int tailor_finish(struct format_reader *fr, const struct tev_dispatch *d)
{
	struct tailor_rec *t = TREC(fr);
	struct tev_lost e = { .time = t->end_time, .count = fr->info.lost, .cpu = -1 };

	return fr->info.lost ? TEV_DISPATCH(d, lost, &e) : 0;
}

static int tailor_file(struct format_reader *fr, const char *path, const void **data,
		       size_t *len)
{
	struct tailor_rec *t = TREC(fr);
	size_t i;

	for (i = 0; i < t->nr_files; i++) {
		const struct carried_file *f = &t->files[i];

		if (f->filled == f->size && !strcmp(f->path, path)) {
			*data = f->data;
			*len = (size_t)f->size;
			return 0;
		}
	}
	return -ENOENT;
}

static void tailor_close(struct format_reader *fr)
{
	struct tailor_rec *t = TREC(fr);
	size_t i;

	for (i = 0; i < t->nr_files; i++) {
		free(t->files[i].path);
		free(t->files[i].data);
	}
	free(t->files);
	free(t->kallsyms);
	free(t->build_ids);
	free(t->stacks);
	free(t->stack_entries);
	for (i = 0; i < t->nr_unpacked; i++)
		free(t->unpacked[i].data);
	free(t->unpacked);
	tlr_reader_close(t->events);
	free(t->path);
	free(t);
}

static const struct format_ops tailor_ops = {
	.next = tailor_next,
	.advance = tailor_advance,
	.time = tailor_time,
	.deliver = tailor_deliver,
	.finish = tailor_finish,
	.file = tailor_file,
	.close = tailor_close,
};

/*
 * A text record (KALLSYMS, BUILD_IDS) kept in *@copy for the session's
 * info: one is written, a second (never written) replaces it.  The
 * text's length leaves out the padding that ends the record.
 */
static int take_text(const struct tlr_record *rec, char **copy, const char **text,
		     size_t *len)
{
	free(*copy);
	*copy = malloc(rec->size ? rec->size : 1);
	if (!*copy)
		return -ENOMEM;
	memcpy(*copy, rec->payload, rec->size);
	*text = *copy;
	*len = strnlen(*copy, rec->size);
	return 0;
}

/* A STACK record, kept (the reader checked its size and its id). */
static int take_stack(struct tailor_rec *t, const struct tlr_record *rec)
{
	struct tlr_stack h;

	memcpy(&h, rec->payload, sizeof(h));
	if (array_grow((void **)&t->stacks, &t->cap_stacks, t->nr_stacks + 1,
		       sizeof(*t->stacks)) ||
	    array_grow((void **)&t->stack_entries, &t->cap_entries, t->nr_entries + h.nr,
		       sizeof(*t->stack_entries)))
		return -ENOMEM;
	memcpy(t->stack_entries + t->nr_entries, (const uint8_t *)rec->payload + sizeof(h),
	       8ull * h.nr);
	t->stacks[t->nr_stacks++] = (struct stack_span){ t->nr_entries, h.nr };
	t->nr_entries += h.nr;
	return 0;
}

static void take_meta(struct tailor_rec *t, const struct tlr_record *rec)
{
	struct session_info *info = &t->fr.info;
	char source[32] = "";
	uint64_t v;

	tlr_kv_get_u64(rec->payload, rec->size, "regs_mask", &t->regs_mask);
	if (!tlr_kv_get_u64(rec->payload, rec->size, "flags_used", &v))
		t->flags_used = (uint32_t)v;
	if (!tlr_kv_get_u64(rec->payload, rec->size, "tsc_mult", &v))
		info->mult = (uint32_t)v;
	if (!tlr_kv_get_u64(rec->payload, rec->size, "tsc_shift", &v))
		info->shift = (uint32_t)v;
	/*
	 * The BPF collector's samples are on CLOCK_MONOTONIC (clock=monotonic,
	 * since tailor 0.7): ns, which JIT files on that clock share.
	 */
	source[0] = 0;
	tlr_kv_get(rec->payload, rec->size, "clock", source, sizeof(source));
	if (!strcmp(source, "monotonic")) {
		info->time_unit = SESSION_TIME_NS;
		info->clock_monotonic = true;
	}
	tlr_kv_get_u64(rec->payload, rec->size, "start_wall_ns", &info->start_wall_ns);
	if (!tlr_kv_get_u64(rec->payload, rec->size, "start_mono_ns", &info->ref_mono_ns))
		tlr_kv_get_u64(rec->payload, rec->size, "start_tsc", &info->ref_tsc);
	tlr_kv_get(rec->payload, rec->size, "event", info->event, sizeof(info->event));
	tlr_kv_get(rec->payload, rec->size, "target", source, sizeof(source));
	if (strcmp(source, "all-cpus") &&
	    !tlr_kv_get_u64(rec->payload, rec->size, "pid", &v) && v <= UINT32_MAX)
		info->target_pid = (uint32_t)v;
	source[0] = 0;
	tlr_kv_get(rec->payload, rec->size, "source_used", source, sizeof(source));
	if (!strcmp(source, "timer")) {
		/* The software clock: a sample every period, in ns. */
		info->period_is_ns = true;
		if (!tlr_kv_get_u64(rec->payload, rec->size, "timer_period_ns", &v) && v)
			info->period = v;
		else if (!tlr_kv_get_u64(rec->payload, rec->size, "sample_freq", &v) && v)
			info->period = 1000000000ull / v;
	} else if (!tlr_kv_get_u64(rec->payload, rec->size, "sample_period", &v)) {
		info->period = v;	/* events; 0 in frequency mode */
	}
	/* The kernel's cyc2ns keeps shift <= 32; anything else is damage. */
	if (info->shift > 32)
		info->mult = info->shift = 0;
	t->nr_regs = (uint32_t)__builtin_popcountll(t->regs_mask);
	t->ip_index = reg_index(t->regs_mask, TAILOR_REG_IP);
	t->tag_index = reg_index(t->regs_mask, t->fr.tag_reg);
}

/*
 * A piece of a carried file, in order; pieces out of order, or of a
 * file too large to hold, leave it incomplete (not offered).  -ENOMEM.
 */
static int carry_piece(struct tailor_rec *t, const struct tlr_record *rec)
{
	const uint8_t *p = rec->payload;
	struct carried_file *f = NULL, *files;
	struct tlr_file h;
	const char *path;
	size_t i;

	memcpy(&h, p, sizeof(h));
	path = (const char *)p + sizeof(h);
	for (i = 0; i < t->nr_files && !f; i++)
		if (!strcmp(t->files[i].path, path))
			f = &t->files[i];
	if (!f) {
		if (h.offset || h.file_size > MAX_CARRIED_FILE)
			return 0;
		files = realloc(t->files, (t->nr_files + 1) * sizeof(*files));
		if (!files)
			return -ENOMEM;
		t->files = files;
		f = &t->files[t->nr_files];
		*f = (struct carried_file){ .path = strdup(path), .size = h.file_size };
		f->data = malloc(h.file_size ? h.file_size : 1);
		if (!f->path || !f->data) {
			free(f->path);
			free(f->data);
			return -ENOMEM;
		}
		t->nr_files++;
	}
	if (h.offset != f->filled || h.file_size != f->size)
		return 0;
	memcpy(f->data + h.offset, p + sizeof(h) + h.path_len, h.piece_size);
	f->filled += h.piece_size;
	return 0;
}

static void count_samples(struct tailor_rec *t, const uint8_t *at, uint32_t count,
			  uint32_t record_size)
{
	struct session_info *info = &t->fr.info;
	uint32_t i;

	for (i = 0; i < count; i++, at += record_size) {
		const struct tailor_sample *s = (const void *)at;

		if (!info->nr_samples || s->tsc < info->first_time)
			info->first_time = s->tsc;
		if (s->tsc > info->last_time)
			info->last_time = s->tsc;
		if (tailor_who_flags(s->who) & TAILOR_SF_ADDR_VALID)
			info->has_addr = true;
		if (tailor_who_flags(s->who) & TAILOR_SF_TAG_WORD_BAD)
			info->nr_tag_word_bad++;
		info->nr_samples++;
	}
	if (count && t->tag_index >= 0)
		info->has_tag = true;
	if (count && (t->flags_used & TAILOR_CFG_TAG_WORD))
		info->has_tag_word = true;
	if (count && (t->flags_used & TAILOR_CFG_OTEL_CTX))
		info->has_otel = true;
}

/* count_samples() from a packed batch's summary: the same figures. */
static void count_summary(struct tailor_rec *t, const struct tlr_samples_packed *h,
			  const struct tlr_samples_summary *sum)
{
	struct session_info *info = &t->fr.info;

	if (!h->count)
		return;
	if (!info->nr_samples || sum->min_tsc < info->first_time)
		info->first_time = sum->min_tsc;
	if (sum->max_tsc > info->last_time)
		info->last_time = sum->max_tsc;
	if (sum->flags_any & TAILOR_SF_ADDR_VALID)
		info->has_addr = true;
	info->nr_tag_word_bad += sum->tag_word_bad;
	info->nr_samples += h->count;
	if (t->tag_index >= 0)
		info->has_tag = true;
	if (t->flags_used & TAILOR_CFG_TAG_WORD)
		info->has_tag_word = true;
	if (t->flags_used & TAILOR_CFG_OTEL_CTX)
		info->has_otel = true;
}



struct format_reader *tailor_rec_open(const char *path, int tag_reg,
				      char *err, size_t errlen)
{
	struct tailor_rec *t = calloc(1, sizeof(*t));
	struct session_info *info;
	struct tlr_record rec;
	struct tlr_reader *r;
	bool have_end = false, have_meta = false;
	int ret;

	if (!t || !(t->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		free(t);
		return NULL;
	}
	t->fr.ops = &tailor_ops;
	t->fr.tag_reg = tag_reg;
	info = &t->fr.info;
	info->format = "tailor recording";
	info->time_unit = SESSION_TIME_TSC;
	t->tag_index = -1;
	t->ip_index = -1;
	r = tlr_reader_open(path, err, errlen);
	if (!r)
		goto fail;
	/* This pass needs the batches' counts and times, not their samples. */
	tlr_reader_summarize(r);
	while ((ret = tlr_next(r, &rec)) > 0) {
		switch (rec.type) {
		case TLR_META:
			have_meta = true;
			take_meta(t, &rec);
			break;
		case TLR_MMAP:
			info->nr_mappings++;
			break;
		case TLR_SWITCH:
			info->nr_switches++;
			break;
		case TLR_WAKEUP:
			info->nr_wakeups++;
			break;
		case TLR_FILE:
			if (carry_piece(t, &rec)) {
				snprintf(err, errlen, "out of memory");
				tlr_reader_close(r);
				goto fail;
			}
			break;
		case TLR_SAMPLES: {
			const struct tlr_samples *h = rec.payload;

			count_samples(t, rec.samples, h->count, h->record_size);
			break;
		}
		case TLR_SAMPLES_PACKED:
			count_summary(t, rec.payload, rec.summary);
			break;
		case TLR_ROUND:
			info->rounds++;
			break;
		case TLR_BUILD_IDS:
			if (take_text(&rec, &t->build_ids, &info->build_ids, &info->build_ids_len)) {
				snprintf(err, errlen, "out of memory");
				tlr_reader_close(r);
				goto fail;
			}
			break;
		case TLR_STACK:
			if (take_stack(t, &rec)) {
				snprintf(err, errlen, "out of memory");
				tlr_reader_close(r);
				goto fail;
			}
			break;
		case TLR_KALLSYMS:
			if (take_text(&rec, &t->kallsyms, &info->kallsyms, &info->kallsyms_len)) {
				snprintf(err, errlen, "out of memory");
				tlr_reader_close(r);
				goto fail;
			}
			break;
		case TLR_END:
			have_end = true;
			tlr_kv_get_u64(rec.payload, rec.size, "lost", &info->lost);
			tlr_kv_get_u64(rec.payload, rec.size, "stop_tsc", &t->end_time);
			break;
		}
	}
	info->complete = ret == 0 && have_end;
	if (ret < 0)
		snprintf(info->problem, sizeof(info->problem), "cut short: %s",
			 tlr_reader_error(r));
	else if (!have_end)
		snprintf(info->problem, sizeof(info->problem),
			 "cut short: no END record (recording was interrupted)");
	tlr_reader_close(r);
	if (!have_meta) {
		snprintf(err, errlen, "no META record: not a recording tailor wrote");
		goto fail;
	}
	if (!t->end_time)
		t->end_time = info->last_time;
	t->events = tlr_reader_open(path, err, errlen);
	if (!t->events)
		goto fail;
	/*
	 * The pass above checked each packed batch's header (and, before
	 * format 3, its stream); this one unpacks each where its runs live,
	 * and checks it then.
	 */
	tlr_reader_leave_packed(t->events);
	return &t->fr;
fail:
	for (ret = 0; ret < (int)t->nr_files; ret++) {
		free(t->files[ret].path);
		free(t->files[ret].data);
	}
	free(t->files);
	free(t->kallsyms);
	free(t->build_ids);
	free(t->stacks);
	free(t->stack_entries);
	free(t->path);
	free(t);
	return NULL;
}

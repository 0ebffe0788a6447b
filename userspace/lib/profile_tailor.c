// SPDX-License-Identifier: GPL-2.0-only
/* Profiles from tailor recordings (docs/recording-format.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uapi/tailor.h"
#include "tailor/profile.h"
#include "tailor/recording.h"
#include "tailor/symbols.h"

struct tailor_priv {
	char *path;
	uint64_t regs_mask;
	uint32_t flags_used;
	int tag_index;		/* of the tag register in regs[], -1: none */
	int ip_index;		/* of TAILOR_REG_IP in regs[], -1: none */
	bool meta_seen;
};

/* The samples of one SAMPLES record, each normalized and passed to @fn. */
static int visit_batch(struct prof_input *in, const struct tlr_record *rec,
		       int (*fn)(void *ctx, const struct prof_sample *s),
		       void *ctx)
{
	const struct tailor_priv *p = in->priv;
	const struct tlr_samples *h = rec->payload;
	const uint8_t *at = (const uint8_t *)(h + 1);
	uint32_t room = (h->record_size - TAILOR_SAMPLE_BASE_SIZE) / 8;
	uint32_t nr_regs = __builtin_popcountll(p->regs_mask);
	bool tag = p->tag_index >= 0 && (uint32_t)p->tag_index < room;
	bool entry_ip = p->ip_index >= 0 && (uint32_t)p->ip_index < room;
	bool addr = (p->flags_used & TAILOR_CFG_DATA_ADDR) && nr_regs < room;
	uint32_t i;
	int ret;

	for (i = 0; i < h->count; i++, at += h->record_size) {
		const struct tailor_sample *s = (const void *)at;
		uint32_t sf = tailor_who_flags(s->who);
		struct prof_sample out = {
			.time = s->tsc, .ip = s->ip,
			.pid = tailor_who_pid(s->who),
			.tid = tailor_who_tid(s->who),
			.cpu = tailor_who_cpu(s->who),
		};

		if (sf & TAILOR_SF_KERNEL)
			out.flags |= PROF_KERNEL;
		if (tag && !(sf & TAILOR_SF_NO_REGS)) {
			out.tag = s->regs[p->tag_index];
			out.flags |= PROF_HAS_TAG;
			if (!(sf & TAILOR_SF_KERNEL) || (sf & TAILOR_SF_USER_REGS))
				out.flags |= PROF_USER_TAG;
		}
		if (entry_ip && (sf & TAILOR_SF_KERNEL) && (sf & TAILOR_SF_USER_REGS)) {
			out.entry_ip = s->regs[p->ip_index];
			out.flags |= PROF_HAS_ENTRY_IP;
		}
		if (addr && (sf & TAILOR_SF_ADDR_VALID)) {
			out.data_addr = s->regs[nr_regs];
			out.flags |= PROF_HAS_ADDR;
		}
		ret = fn(ctx, &out);
		if (ret)
			return ret;
	}
	return 0;
}

static int tailor_foreach(struct prof_input *in,
			  int (*fn)(void *ctx, const struct prof_sample *s),
			  void *ctx)
{
	struct tailor_priv *p = in->priv;
	struct tlr_record rec;
	struct tlr_reader *r;
	char err[256];
	int ret = 0;

	r = tlr_reader_open(p->path, err, sizeof(err));
	if (!r)
		return -1;
	while (!ret && tlr_next(r, &rec) > 0)
		if (rec.type == TLR_SAMPLES)
			ret = visit_batch(in, &rec, fn, ctx);
	tlr_reader_close(r);
	return ret;
}

static void tailor_close(struct prof_input *in)
{
	struct tailor_priv *p = in->priv;

	free(p->path);
	free(p);
	free(in);
}

static const struct prof_ops tailor_ops = {
	.foreach = tailor_foreach,
	.close = tailor_close,
};

/* Where register @reg sits in a sample's regs[] under @mask; -1: absent. */
static int reg_index(uint64_t mask, int reg)
{
	if (reg < 0 || reg >= 64 || !(mask >> reg & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ull << reg) - 1));
}

static void take_meta(struct prof_input *in, const struct tlr_record *rec)
{
	struct tailor_priv *p = in->priv;
	uint64_t v;

	p->meta_seen = true;
	tlr_kv_get_u64(rec->payload, rec->size, "regs_mask", &p->regs_mask);
	if (!tlr_kv_get_u64(rec->payload, rec->size, "flags_used", &v))
		p->flags_used = (uint32_t)v;
	if (!tlr_kv_get_u64(rec->payload, rec->size, "tsc_mult", &v))
		in->info.mult = (uint32_t)v;
	if (!tlr_kv_get_u64(rec->payload, rec->size, "tsc_shift", &v))
		in->info.shift = (uint32_t)v;
	tlr_kv_get(rec->payload, rec->size, "event", in->info.event,
		   sizeof(in->info.event));
	p->ip_index = reg_index(p->regs_mask, TAILOR_REG_IP);
	p->tag_index = reg_index(p->regs_mask, in->tag_reg);
}

static int take_mmap(struct prof_input *in, struct symbolizer *sym,
		     const struct tlr_record *rec)
{
	const struct tlr_mmap *m = rec->payload;
	uint64_t tsc = m->time_kind == TLR_TIME_START ? 0 : m->tsc;

	in->info.nr_mappings++;
	return sym_add_mapping(sym, m->pid, tsc, m->start, m->len, m->pgoff,
			       (const char *)(m + 1));
}

static void take_samples(struct prof_input *in, const struct tlr_record *rec)
{
	struct tailor_priv *p = in->priv;
	const struct tlr_samples *h = rec->payload;
	const uint8_t *at = (const uint8_t *)(h + 1);
	uint32_t i;

	for (i = 0; i < h->count; i++, at += h->record_size) {
		const struct tailor_sample *s = (const void *)at;

		if (!in->info.nr_samples || s->tsc < in->info.first_time)
			in->info.first_time = s->tsc;
		if (s->tsc > in->info.last_time)
			in->info.last_time = s->tsc;
		if (tailor_who_flags(s->who) & TAILOR_SF_ADDR_VALID)
			in->info.has_addr = true;
		in->info.nr_samples++;
	}
	if (h->count && p->tag_index >= 0)
		in->info.has_tag = true;
}

struct prof_input *prof_open_tailor(const char *path, struct symbolizer *sym,
				    int tag_reg, char *err, size_t errlen)
{
	struct prof_input *in = calloc(1, sizeof(*in));
	struct tailor_priv *p = calloc(1, sizeof(*p));
	struct tlr_record rec;
	struct tlr_reader *r;
	bool have_end = false;
	int ret;

	if (!in || !p || !(p->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	in->ops = &tailor_ops;
	in->priv = p;
	in->tag_reg = tag_reg;
	in->info.format = "tailor recording";
	in->info.time_unit = PROF_TIME_TSC;
	p->tag_index = -1;
	p->ip_index = -1;
	r = tlr_reader_open(path, err, errlen);
	if (!r)
		goto fail;
	while ((ret = tlr_next(r, &rec)) > 0) {
		switch (rec.type) {
		case TLR_META:
			take_meta(in, &rec);
			break;
		case TLR_MMAP:
			if (take_mmap(in, sym, &rec)) {
				tlr_reader_close(r);
				snprintf(err, errlen, "offset %llu: unusable mapping",
					 (unsigned long long)rec.offset);
				goto fail;
			}
			break;
		case TLR_SAMPLES:
			take_samples(in, &rec);
			break;
		case TLR_END:
			have_end = true;
			tlr_kv_get_u64(rec.payload, rec.size, "lost", &in->info.lost);
			break;
		}
	}
	in->info.complete = ret == 0 && have_end;
	if (ret < 0)
		snprintf(in->info.problem, sizeof(in->info.problem),
			 "cut short: %s", tlr_reader_error(r));
	else if (!have_end)
		snprintf(in->info.problem, sizeof(in->info.problem),
			 "cut short: no END record (recording was interrupted)");
	tlr_reader_close(r);
	if (!p->meta_seen) {
		snprintf(err, errlen, "no META record: not a recording tailor wrote");
		goto fail;
	}
	return in;
fail:
	if (p)
		free(p->path);
	free(p);
	free(in);
	return NULL;
}

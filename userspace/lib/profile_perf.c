// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profiles from perf.data (tools/perf/Documentation/perf.data-file-format.txt):
 * perf record --intr-regs=r15 gives the tag register, -k 12 on a kernel
 * with patches/0002 gives raw TSC times.  Only what a report needs is
 * read: attributes, samples and executable mappings; the file is mapped,
 * never copied, and every field is bounds-checked.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tailor/profile.h"
#include "tailor/symbols.h"

#define PERF_CLOCK_HW_TSC	12	/* CLOCK_PERF_HW_CLOCK, patches/0002 */
#define PERF_RECORD_COMPRESSED_TYPE	81
#define MAX_ATTRS	64

struct perf_section {
	uint64_t offset, size;
};

struct perf_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct perf_section attrs, data, event_types;
	uint64_t features[4];
};

struct perf_attr_info {
	struct perf_event_attr attr;
	const uint64_t *ids;
	size_t nr_ids;
	int tag_index;		/* of the tag in regs_intr, -1: not captured */
};

struct perf_priv {
	const uint8_t *map;
	size_t map_len;
	const uint8_t *data, *data_end;
	struct perf_attr_info attrs[MAX_ATTRS];
	int nr_attrs;
	bool by_identifier;	/* samples name their attribute */
	uint64_t malformed;
};

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

static const struct perf_attr_info *attr_of_id(const struct perf_priv *p,
					       uint64_t id)
{
	int i;
	size_t j;

	for (i = 0; i < p->nr_attrs; i++)
		for (j = 0; j < p->attrs[i].nr_ids; j++)
			if (p->attrs[i].ids[j] == id)
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

/* A PERF_RECORD_SAMPLE, in the field order of perf_event.h. */
static int parse_sample(const struct perf_priv *p, const uint8_t *rec,
			const struct perf_event_header *h, struct prof_sample *out)
{
	struct cursor c = { rec + sizeof(*h), rec + h->size, false };
	const struct perf_attr_info *ai = &p->attrs[0];
	uint64_t t, n;

	if (p->by_identifier) {
		ai = attr_of_id(p, take_u64(&c));
		if (!ai)
			return -1;
	}
	t = ai->attr.sample_type;
	if (!p->by_identifier && (t & PERF_SAMPLE_IDENTIFIER))
		take_u64(&c);
	memset(out, 0, sizeof(*out));
	if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		out->flags |= PROF_KERNEL;
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
			out->flags |= PROF_HAS_ADDR;
	}
	if (t & PERF_SAMPLE_ID)
		take_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (t & PERF_SAMPLE_CPU)
		out->cpu = (uint32_t)take_u64(&c);
	if (t & PERF_SAMPLE_PERIOD)
		take_u64(&c);
	if (t & PERF_SAMPLE_READ)
		skip_read(&c, &ai->attr);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		n = take_u64(&c);
		skip(&c, n > (1u << 20) ? UINT64_MAX : n * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t sz;

		if (c.end - c.p < 4)
			return -1;
		memcpy(&sz, c.p, 4);
		skip(&c, 4ull + sz);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		n = take_u64(&c);
		if (ai->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take_u64(&c);
		skip(&c, n > (1u << 16) ? UINT64_MAX : n * 24);
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		if (take_u64(&c))
			skip(&c, 8ull * __builtin_popcountll(ai->attr.sample_regs_user));
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		n = take_u64(&c);
		skip(&c, n);
		if (n)
			take_u64(&c);
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
				out->flags |= PROF_HAS_TAG;
				/* Interrupted kernel code's r15 is no tag. */
				if (!(out->flags & PROF_KERNEL))
					out->flags |= PROF_USER_TAG;
			}
		}
	}
	return c.bad ? -1 : 0;
}

/* The TIME of a non-sample record, from its sample_id trailer. */
static uint64_t record_time(const struct perf_priv *p, const uint8_t *rec,
			    const struct perf_event_header *h)
{
	const struct perf_event_attr *a = &p->attrs[0].attr;
	uint64_t t = a->sample_type, v = 0;
	unsigned int after = 0;

	if (!a->sample_id_all || !(t & PERF_SAMPLE_TIME))
		return 0;
	/* Fields after TIME in the trailer: ID, STREAM_ID, CPU, IDENTIFIER. */
	after += !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
		 !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER);
	if (h->size < sizeof(*h) + 8 * (after + 1))
		return 0;
	memcpy(&v, rec + h->size - 8 * (after + 1), 8);
	return v;
}

static int take_mapping(struct prof_input *in, struct symbolizer *sym,
			const uint8_t *rec, const struct perf_event_header *h)
{
	struct perf_priv *p = in->priv;
	const uint8_t *b = rec + sizeof(*h), *end = rec + h->size;
	uint32_t pid;
	uint64_t start, len, pgoff;
	size_t fixed = h->type == PERF_RECORD_MMAP ? 32 : 32 + 24 + 8;
	const char *name;

	if ((size_t)(end - b) <= fixed)
		return -1;
	memcpy(&pid, b, 4);
	memcpy(&start, b + 8, 8);
	memcpy(&len, b + 16, 8);
	memcpy(&pgoff, b + 24, 8);
	if (h->type == PERF_RECORD_MMAP2) {
		uint32_t prot;

		memcpy(&prot, b + 56, 4);
		if (!(prot & PROT_EXEC))
			return 0;
	}
	name = (const char *)b + fixed;
	if (!memchr(name, 0, end - (const uint8_t *)name))
		return -1;
	if (pid == (uint32_t)-1 || !len)
		return 0;	/* the kernel's own maps */
	in->info.nr_mappings++;
	return sym_add_mapping(sym, pid, record_time(p, rec, h), start, len, pgoff,
			       name) ? -1 : 0;
}

/*
 * The event at *@at, its header copied to @h (the file's offsets need not
 * be aligned: copy, never cast), and *@at moved past it; NULL at the end
 * or at an event whose size is impossible.
 */
static const uint8_t *next_event(const uint8_t **at, const uint8_t *end,
				 struct perf_event_header *h)
{
	const uint8_t *rec = *at;

	if (end - rec < (ptrdiff_t)sizeof(*h))
		return NULL;
	memcpy(h, rec, sizeof(*h));
	if (h->size < sizeof(*h) || h->size > end - rec)
		return NULL;
	*at = rec + h->size;
	return rec;
}

static int perf_foreach(struct prof_input *in,
			int (*fn)(void *ctx, const struct prof_sample *s),
			void *ctx)
{
	struct perf_priv *p = in->priv;
	const uint8_t *at = p->data, *rec;
	struct perf_event_header h;
	struct prof_sample s;
	int ret;

	while ((rec = next_event(&at, p->data_end, &h))) {
		if (h.type != PERF_RECORD_SAMPLE || parse_sample(p, rec, &h, &s))
			continue;
		ret = fn(ctx, &s);
		if (ret)
			return ret;
	}
	return 0;
}

static void perf_close(struct prof_input *in)
{
	struct perf_priv *p = in->priv;

	if (p->map)
		munmap((void *)p->map, p->map_len);
	free(p);
	free(in);
}

static const struct prof_ops perf_ops = {
	.foreach = perf_foreach,
	.close = perf_close,
};

static int load_attrs(struct prof_input *in, const struct perf_header *fh,
		      char *err, size_t errlen)
{
	struct perf_priv *p = in->priv;
	uint64_t i, n;

	if (fh->attr_size < 16 + PERF_ATTR_SIZE_VER0 ||
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
		size_t asz = fh->attr_size - 16;
		struct perf_section ids;

		memcpy(&ai->attr, a, asz < sizeof(ai->attr) ? asz : sizeof(ai->attr));
		memcpy(&ids, a + asz, sizeof(ids));
		if (ids.offset <= p->map_len && ids.size <= p->map_len - ids.offset &&
		    !(ids.offset % 8)) {
			ai->ids = (const uint64_t *)(p->map + ids.offset);
			ai->nr_ids = ids.size / 8;
		}
		ai->tag_index = -1;
		if ((ai->attr.sample_type & PERF_SAMPLE_REGS_INTR) &&
		    in->tag_reg >= 0 && (ai->attr.sample_regs_intr >> in->tag_reg & 1))
			ai->tag_index = __builtin_popcountll(ai->attr.sample_regs_intr &
							    ((1ull << in->tag_reg) - 1));
		if (ai->tag_index >= 0)
			in->info.has_tag = true;
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

struct prof_input *prof_open_perf(const char *path, struct symbolizer *sym,
				  int tag_reg, uint32_t tsc_khz, char *err,
				  size_t errlen)
{
	struct prof_input *in = calloc(1, sizeof(*in));
	struct perf_priv *p = calloc(1, sizeof(*p));
	const struct perf_attr_info *first;
	struct perf_header fh;
	const uint8_t *at, *rec;
	struct perf_event_header hdr, *h = &hdr;
	struct stat st;
	struct prof_sample s;
	void *map;
	int fd;

	if (!in || !p) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	in->ops = &perf_ops;
	in->priv = p;
	in->tag_reg = tag_reg;
	in->info.format = "perf.data";
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
		snprintf(err, errlen, fh.size == 16 ?
			 "perf.data in pipe mode; record to a file (perf record -o FILE)" :
			 "unknown perf.data header size %llu", (unsigned long long)fh.size);
		goto fail;
	}
	if (load_attrs(in, &fh, err, errlen))
		goto fail;
	first = &p->attrs[0];
	snprintf(in->info.event, sizeof(in->info.event), "perf type %u config 0x%llx",
		 first->attr.type, (unsigned long long)first->attr.config);
	if (!(first->attr.sample_type & PERF_SAMPLE_IP) ||
	    !(first->attr.sample_type & PERF_SAMPLE_TID) ||
	    !(first->attr.sample_type & PERF_SAMPLE_TIME)) {
		snprintf(err, errlen, "samples lack IP, TID or TIME (record with perf record -T)");
		goto fail;
	}
	if (first->attr.use_clockid && first->attr.clockid == PERF_CLOCK_HW_TSC) {
		in->info.time_unit = PROF_TIME_TSC;
		if (tsc_khz)
			prof_khz_to_mult_shift(tsc_khz, &in->info.mult, &in->info.shift);
	} else {
		in->info.time_unit = PROF_TIME_NS;
		in->info.mult = 1;
	}
	in->info.complete = true;
	if (fh.data.offset > p->map_len) {
		p->data = p->data_end = p->map + p->map_len;
		in->info.complete = false;
	} else {
		p->data = p->map + fh.data.offset;
		uint64_t avail = p->map_len - fh.data.offset;

		p->data_end = p->data + (fh.data.size < avail ? fh.data.size : avail);
		if (fh.data.size > avail || !fh.data.size)
			in->info.complete = false;
	}
	if (!in->info.complete)
		snprintf(in->info.problem, sizeof(in->info.problem),
			 "cut short: the data section is incomplete (perf record did not finish writing)");
	for (at = p->data; (rec = next_event(&at, p->data_end, &hdr));) {
		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			if (parse_sample(p, rec, h, &s)) {
				p->malformed++;
				break;
			}
			if (!in->info.nr_samples || s.time < in->info.first_time)
				in->info.first_time = s.time;
			if (s.time > in->info.last_time)
				in->info.last_time = s.time;
			if (s.flags & PROF_HAS_ADDR && s.data_addr)
				in->info.has_addr = true;
			in->info.nr_samples++;
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			if (take_mapping(in, sym, rec, h))
				p->malformed++;
			break;
		case PERF_RECORD_LOST:
			if (h->size >= sizeof(*h) + 16) {
				uint64_t lost;

				memcpy(&lost, rec + sizeof(*h) + 8, 8);
				in->info.lost += lost;
			}
			break;
		case PERF_RECORD_COMPRESSED_TYPE:
			snprintf(err, errlen, "compressed perf.data (perf record -z); record without -z");
			goto fail;
		}
	}
	if (p->data_end - at >= (ptrdiff_t)sizeof(hdr)) {
		in->info.complete = false;
		snprintf(in->info.problem, sizeof(in->info.problem),
			 "cut short: bad event at offset %llu",
			 (unsigned long long)(at - p->map));
		p->data_end = at;
	}
	if (p->malformed && in->info.complete) {
		in->info.complete = false;
		snprintf(in->info.problem, sizeof(in->info.problem),
			 "%llu malformed events skipped", (unsigned long long)p->malformed);
	}
	return in;
fail:
	if (p && p->map)
		munmap((void *)p->map, p->map_len);
	free(p);
	free(in);
	return NULL;
}

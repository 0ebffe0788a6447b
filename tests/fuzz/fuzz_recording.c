// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the recording reader: every tailor command trusts
 * it with files that may be cut short or damaged, so no input may make it
 * read out of bounds, crash or hang.  Each record it accepts is walked
 * byte by byte (ASan catches a payload that runs past the input) and,
 * for the types it validated, read the way the commands read them.
 *
 *   make -C userspace fuzz FUZZ_SECONDS=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tailor/kallsyms.h"
#include "tailor/recording.h"
#include "tailor/sample_pack.h"
#include "uapi/tailor.h"

static const char *const text_keys[] = {
	"format", "tool", "record_size", "regs_mask", "event_config",
	"reason", "samples", "a", "",
};

static volatile uint64_t sink;

static void touch(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < len; i++)
		sum += p[i];
	sink += sum;
}

/*
 * @checked: the reader validated this text, so it has no NUL before its
 * padding and every value's length is what strlen() sees.
 */
static void read_text(const void *text, size_t len, int checked)
{
	char buf[32];
	uint64_t v;
	size_t i;
	int n;

	for (i = 0; i < sizeof(text_keys) / sizeof(text_keys[0]); i++) {
		n = tlr_kv_get(text, len, text_keys[i], buf, sizeof(buf));
		if (n >= (int)sizeof(buf) || (checked && n >= 0 &&
					       (size_t)n != strlen(buf)))
			__builtin_trap();
		if (tlr_kv_get_u64(text, len, text_keys[i], &v) == 0)
			sink += v;
	}
}

/* Walk the samples as a report would: the reader vouched for the sizes. */
static void read_samples(const struct tlr_record *rec)
{
	const unsigned char *p = rec->payload;
	struct tlr_samples hdr;
	uint32_t i;

	memcpy(&hdr, p, sizeof(hdr));
	for (i = 0; i < hdr.count; i++) {
		const struct tailor_sample *s =
			(const void *)(p + sizeof(hdr) +
				       (size_t)i * hdr.record_size);

		sink += s->tsc + s->ip + tailor_who_pid(s->who);
		touch(s->regs, hdr.record_size - sizeof(*s));
	}
}

/*
 * A packed batch the reader accepted must unpack, be accepted too when
 * only checked, with the same summary -- in format 3 the one it states
 * -- and by tlr_unpack_record(); packing what came out must give the
 * same samples back.
 */
static void read_packed(const struct tlr_reader *r, const struct tlr_record *rec)
{
	const unsigned char *p = rec->payload;
	struct tlr_samples_packed hdr;
	struct tlr_samples_summary sum, quick;
	struct tlr_pack_state st;
	uint8_t *out, *again, *repacked;
	size_t len = 0;
	char err[320];

	memcpy(&hdr, p, sizeof(hdr));
	if (tlr_reader_version(r) >= 3) {
		if (!rec->summary)
			__builtin_trap();
		p += sizeof(struct tlr_samples_summary);
	}
	out = malloc((size_t)hdr.count * hdr.record_size + 1);
	again = malloc((size_t)hdr.count * hdr.record_size + 1);
	repacked = malloc(tlr_pack_bound(hdr.count, hdr.record_size) + 1);
	if (!out || !again || !repacked)
		__builtin_trap();
	if (tlr_unpack(p + sizeof(hdr), hdr.packed_size, hdr.count, hdr.record_size, out, &sum,
		       err, sizeof(err)) ||
	    tlr_unpack(p + sizeof(hdr), hdr.packed_size, hdr.count, hdr.record_size, NULL, &quick,
		       err, sizeof(err)) ||
	    (hdr.count && memcmp(&sum, &quick, sizeof(sum))) ||
	    (rec->summary && memcmp(&sum, rec->summary, sizeof(sum))) ||
	    memcmp(out, rec->samples, (size_t)hdr.count * hdr.record_size))
		__builtin_trap();
	if (tlr_unpack_record(r, rec, again, err, sizeof(err)) ||
	    memcmp(out, again, (size_t)hdr.count * hdr.record_size))
		__builtin_trap();
	if (tlr_pack_begin(&st, hdr.record_size))
		__builtin_trap();
	for (uint32_t i = 0; i < hdr.count; i++)
		len += tlr_pack_one(&st, out + (size_t)i * hdr.record_size, repacked + len);
	if (tlr_unpack(repacked, len, hdr.count, hdr.record_size, again, NULL, err, sizeof(err)) ||
	    memcmp(out, again, (size_t)hdr.count * hdr.record_size))
		__builtin_trap();
	for (uint32_t i = 0; i < hdr.count; i++)
		sink += ((const struct tailor_sample *)(out + (size_t)i * hdr.record_size))->ip;
	free(out);
	free(again);
	free(repacked);
}

static void read_record(const struct tlr_reader *r, const struct tlr_record *rec)
{
	const char *p = rec->payload;

	touch(p, rec->size);
	switch (rec->type) {
	case TLR_META:
	case TLR_END:
		read_text(p, rec->size, 1);
		break;
	case TLR_SAMPLES:
		read_samples(rec);
		break;
	case TLR_SAMPLES_PACKED:
		read_packed(r, rec);
		break;
	case TLR_MMAP:
		sink += strlen(p + sizeof(struct tlr_mmap));
		break;
	case TLR_COMM:
		sink += strlen(p + sizeof(struct tlr_comm));
		break;
	case TLR_KALLSYMS: {
		/* As a report reads it: the text up to the padding. */
		char err[256];
		struct kallsyms *k = kallsyms_parse(p, strnlen(p, rec->size), "KALLSYMS", err,
						    sizeof(err));
		uint32_t idx;

		if (k) {
			const char *name = kallsyms_name(k, kallsyms_text(k) + 0x1000, &idx);

			sink += kallsyms_count(k) + (name ? strlen(name) : 0);
			kallsyms_free(k);
		}
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t expect_offset = sizeof(struct tlr_file_header);
	struct tlr_reader *r;
	struct tlr_record rec;
	char err[256];
	int ret;

	/* The lookups must also survive text the reader never checked. */
	read_text(data, size, 0);
	r = tlr_reader_open_mem(data, size, err, sizeof(err));
	if (!r)
		return 0;
	while ((ret = tlr_next(r, &rec)) == 1) {
		/* Records tile the input and lie inside it. */
		if (rec.offset != expect_offset || rec.size % 8 ||
		    rec.size > size - rec.offset - 8 ||
		    rec.payload != data + rec.offset + 8)
			__builtin_trap();
		expect_offset += 8 + (uint64_t)rec.size;
		read_record(r, &rec);
	}
	/* The end, clean or not, stays where it is. */
	if ((ret == 0 && expect_offset != size) ||
	    (ret < 0 && strncmp(tlr_reader_error(r), "offset ", 7)) ||
	    tlr_next(r, &rec) != ret)
		__builtin_trap();
	tlr_reader_close(r);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads tailor recordings (docs/recording-format.md).
 *
 * Every tailor command reads recordings through here, and a recording may
 * be cut short (the collector was killed, the disk filled up) or damaged,
 * so nothing in the file is trusted: each record is checked against what
 * is left of the file and against its type's layout before a caller sees
 * it, and every failure says at which byte offset what went wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tailor/recording.h"
#include "tailor/sample_pack.h"
#include "uapi/tailor.h"

#define HDR_SIZE	sizeof(struct tlr_file_header)
#define REC_HDR_SIZE	sizeof(struct tlr_record_header)

struct tlr_reader {
	const unsigned char *data;
	size_t len;
	size_t pos;		/* of the next record header */
	uint32_t version;	/* the file header's */
	bool failed;		/* sticky: err says why */
	void *map;		/* the file, mmap()ed */
	size_t map_len;
	void *copy;		/* the file, read() when it cannot be mapped */
	uint8_t *unpacked;	/* the last packed batch, unpacked */
	size_t unpacked_size;
	enum { UNPACK, SUMMARIZE, LEAVE_PACKED } packed;	/* what a packed batch gets */
	struct tlr_samples_summary summary;
	uint32_t sample_size;	/* of the first batch's samples; 0 before it */
	uint32_t stacks;	/* STACK records read: the last id */
	char err[512];		/* a summary's mismatch names eight numbers */
};

static const char *type_name(uint32_t type)
{
	switch (type) {
	case TLR_META:		return "META";
	case TLR_SAMPLES:	return "SAMPLES";
	case TLR_SAMPLES_PACKED: return "SAMPLES_PACKED";
	case TLR_MMAP:		return "MMAP";
	case TLR_COMM:		return "COMM";
	case TLR_TASK:		return "TASK";
	case TLR_END:		return "END";
	case TLR_ROUND:		return "ROUND";
	case TLR_SWITCH:	return "SWITCH";
	case TLR_WAKEUP:	return "WAKEUP";
	case TLR_FILE:		return "FILE";
	case TLR_KALLSYMS:	return "KALLSYMS";
	case TLR_STACK:		return "STACK";
	case TLR_BUILD_IDS:	return "BUILD_IDS";
	}
	return "unknown";
}

static void set_msg(char *buf, size_t buflen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_msg(char *buf, size_t buflen, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !buflen)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, buflen, fmt, ap);
	va_end(ap);
}

/* ---- the file header ---- */

/* A file too short for its header: cut short, unless it is something else. */
static int check_short_header(const unsigned char *data, size_t len,
			      char *msg, size_t msglen)
{
	size_t magic_len = len < 8 ? len : 8;

	if (!len) {
		set_msg(msg, msglen,
			"offset 0: empty file, no tailor file header (cut short, or not a recording)");
		return -1;
	}
	if (memcmp(data, TLR_MAGIC, magic_len)) {
		set_msg(msg, msglen, "offset 0: not a tailor recording (bad magic)");
		return -1;
	}
	set_msg(msg, msglen,
		"offset 0: only %zu bytes, less than the %zu-byte file header (file cut short)",
		len, HDR_SIZE);
	return -1;
}

static int check_header(const unsigned char *data, size_t len,
			char *msg, size_t msglen)
{
	struct tlr_file_header h;

	if (len < HDR_SIZE)
		return check_short_header(data, len, msg, msglen);
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, TLR_MAGIC, sizeof(h.magic))) {
		set_msg(msg, msglen, "offset 0: not a tailor recording (bad magic)");
		return -1;
	}
	if (h.version > TLR_VERSION) {
		set_msg(msg, msglen,
			"offset 8: recording format version %" PRIu32 " is newer than this tailor (%d)",
			h.version, TLR_VERSION);
		return -1;
	}
	if (h.version == 0) {
		set_msg(msg, msglen, "offset 8: recording format version 0 does not exist");
		return -1;
	}
	if (h.header_size != HDR_SIZE) {
		set_msg(msg, msglen,
			"offset 12: file header_size %" PRIu32 " is not the %zu this tailor knows",
			h.header_size, HDR_SIZE);
		return -1;
	}
	if (h.flags) {
		set_msg(msg, msglen,
			"offset 16: file header flags 0x%" PRIx64 " are unknown (must be 0)",
			h.flags);
		return -1;
	}
	if (h.reserved) {
		set_msg(msg, msglen,
			"offset 24: file header reserved field is 0x%" PRIx64 ", not 0",
			h.reserved);
		return -1;
	}
	return 0;
}

/* ---- opening ---- */

static struct tlr_reader *reader_new(const void *data, size_t len,
				     char *msg, size_t msglen)
{
	struct tlr_reader *r;

	if (check_header(data, len, msg, msglen))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		set_msg(msg, msglen, "out of memory");
		return NULL;
	}
	r->data = data;
	r->len = len;
	r->pos = HDR_SIZE;
	memcpy(&r->version, (const unsigned char *)data + offsetof(struct tlr_file_header, version),
	       sizeof(r->version));
	return r;
}

struct tlr_reader *tlr_reader_open_mem(const void *data, size_t len,
				       char *err, size_t errlen)
{
	if (!data && len) {
		set_msg(err, errlen, "no buffer");
		return NULL;
	}
	return reader_new(data, len, err, errlen);
}

/*
 * What mmap() cannot take (a pipe, a filesystem without mmap): read to the
 * end.  The buffer grows with what actually arrives, never with a size the
 * file claims.
 */
static int read_all(int fd, size_t hint, unsigned char **out, size_t *outlen)
{
	size_t cap = hint ? hint : 65536, len = 0;
	unsigned char *buf = malloc(cap), *bigger;
	ssize_t got;
	int ret;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			ret = cap > SIZE_MAX / 2 ? -EFBIG : -ENOMEM;
			bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
			if (!bigger)
				goto fail;
			buf = bigger;
			cap *= 2;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			goto fail;
		}
		if (got == 0)
			break;
		len += got;
	}
	*out = buf;
	*outlen = len;
	return 0;
fail:
	free(buf);
	return ret;
}

/* Map or read the whole file; the mapping (or copy) lives with the reader. */
static int load_file(int fd, const struct stat *st, void **map,
		     void **copy, size_t *len, char *why, size_t whylen)
{
	unsigned char *buf = NULL;
	int ret;

	if (S_ISDIR(st->st_mode)) {
		set_msg(why, whylen, "is a directory");
		return -1;
	}
	if (S_ISREG(st->st_mode) && (uint64_t)st->st_size > SIZE_MAX) {
		set_msg(why, whylen, "too large for this machine's address space");
		return -1;
	}
	if (S_ISREG(st->st_mode) && st->st_size > 0) {
		*map = mmap(NULL, st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (*map != MAP_FAILED) {
			*len = st->st_size;
			madvise(*map, *len, MADV_SEQUENTIAL);
			return 0;
		}
		*map = NULL;
	}
	ret = read_all(fd, S_ISREG(st->st_mode) ? st->st_size : 0, &buf, len);
	if (ret) {
		set_msg(why, whylen, "cannot read: %s", strerror(-ret));
		return -1;
	}
	*copy = buf;
	return 0;
}

struct tlr_reader *tlr_reader_open(const char *path, char *err, size_t errlen)
{
	void *map = NULL, *copy = NULL;
	struct tlr_reader *r;
	struct stat st;
	size_t len = 0;
	int fd, failed;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		set_msg(err, errlen, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		set_msg(err, errlen, "cannot stat: %s", strerror(errno));
		failed = -1;
	} else {
		failed = load_file(fd, &st, &map, &copy, &len, err, errlen);
	}
	close(fd);
	if (failed)
		return NULL;
	r = reader_new(map ? map : copy, len, err, errlen);
	if (!r) {
		if (map)
			munmap(map, len);
		free(copy);
		return NULL;
	}
	r->map = map;
	r->map_len = map ? len : 0;
	r->copy = copy;
	return r;
}

void tlr_reader_summarize(struct tlr_reader *r)
{
	r->packed = SUMMARIZE;
}

uint32_t tlr_reader_version(const struct tlr_reader *r)
{
	return r->version;
}

void tlr_reader_leave_packed(struct tlr_reader *r)
{
	r->packed = LEAVE_PACKED;
}

void tlr_reader_close(struct tlr_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_len);
	free(r->copy);
	free(r->unpacked);
	free(r);
}

const char *tlr_reader_error(const struct tlr_reader *r)
{
	return r->err;
}

/* ---- records ---- */

static int reader_fail(struct tlr_reader *r, uint64_t offset,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record "offset N: what" and stop reading: every later call fails too. */
static int reader_fail(struct tlr_reader *r, uint64_t offset,
		       const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof(r->err), "offset %" PRIu64 ": ", offset);
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
	r->failed = true;
	return -1;
}

static int payload_fail(struct tlr_reader *r, const struct tlr_record *rec,
			size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A bad field @at bytes into @rec's payload: "offset N: TYPE what (record
 * at offset R)", N the field's offset in the file.
 */
static int payload_fail(struct tlr_reader *r, const struct tlr_record *rec,
			size_t at, const char *fmt, ...)
{
	char what[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return reader_fail(r, rec->offset + REC_HDR_SIZE + at,
			   "%s %s (record at offset %" PRIu64 ")",
			   type_name(rec->type), what, rec->offset);
}

/* The record's size against the rules and against what the file has left. */
static int check_record_size(struct tlr_reader *r,
			     const struct tlr_record_header *h, size_t left)
{
	if (h->size < REC_HDR_SIZE)
		return reader_fail(r, r->pos,
				   "record of type %u has size %u, less than its 8-byte header",
				   h->type, h->size);
	if (h->size % 8)
		return reader_fail(r, r->pos,
				   "record of type %u has size %u, not a multiple of 8",
				   h->type, h->size);
	if (h->size > TLR_MAX_RECORD_SIZE)
		return reader_fail(r, r->pos,
				   "record of type %u claims %u bytes, more than the %u-byte limit",
				   h->type, h->size, TLR_MAX_RECORD_SIZE);
	if (h->size > left)
		return reader_fail(r, r->pos,
				   "record of type %u claims %u bytes but only %zu remain (file cut short)",
				   h->type, h->size, left);
	return 0;
}

/*
 * A recording's samples are all one size, the session's: a reader that
 * holds one batch's samples while it reads the next may then take their
 * size from either.  A batch of no samples holds none to mistake.
 */
static int check_sample_size(struct tlr_reader *r, const struct tlr_record *rec,
			     size_t at, uint32_t record_size, uint32_t count)
{
	if (!count)
		return 0;
	if (r->sample_size && record_size != r->sample_size)
		return payload_fail(r, rec, at,
				    "record_size %u differs from the earlier samples' %u: a recording's samples are all one size",
				    record_size, r->sample_size);
	r->sample_size = record_size;
	return 0;
}

static int check_samples(struct tlr_reader *r, const struct tlr_record *rec)
{
	const size_t count_at = offsetof(struct tlr_samples, count);
	struct tlr_samples s;
	uint64_t need;

	if (rec->size < sizeof(s))
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is too short for its 8-byte header",
				    rec->size);
	memcpy(&s, rec->payload, sizeof(s));
	if (s.record_size < TAILOR_SAMPLE_BASE_SIZE || s.record_size % 8)
		return payload_fail(r, rec, 0,
				    "record_size %u is not a multiple of 8 >= %d",
				    s.record_size, TAILOR_SAMPLE_BASE_SIZE);
	if (check_sample_size(r, rec, offsetof(struct tlr_samples, record_size), s.record_size,
			      s.count))
		return -1;
	/* Two u32 factors: the product fits in 64 bits. */
	need = sizeof(s) + (uint64_t)s.count * s.record_size;
	if (need > rec->size)
		return payload_fail(r, rec, count_at,
				    "count %u of %u-byte samples needs %" PRIu64 " bytes but the payload has %u",
				    s.count, s.record_size, need, rec->size);
	if (rec->size - need >= 8)
		return payload_fail(r, rec, count_at,
				    "payload has %" PRIu64 " bytes beyond its %u samples of %u bytes",
				    rec->size - need, s.count, s.record_size);
	return 0;
}

/* Where a packed batch's stream starts: after a summary since format 3. */
static size_t packed_header_size(const struct tlr_reader *r)
{
	return sizeof(struct tlr_samples_packed) +
	       (r->version >= 3 ? sizeof(struct tlr_samples_summary) : 0);
}

/* The summary a format 3 batch states, checked for what it can say alone. */
static int take_stated_summary(struct tlr_reader *r, const struct tlr_record *rec,
			       uint32_t count)
{
	const size_t at = sizeof(struct tlr_samples_packed);
	struct tlr_samples_summary s;

	memcpy(&s, (const uint8_t *)rec->payload + at, sizeof(s));
	/* One sample has one time; none has the empty range. */
	if (count ? s.min_tsc > s.max_tsc || (count == 1 && s.min_tsc != s.max_tsc) :
		    s.min_tsc != UINT64_MAX || s.max_tsc)
		return payload_fail(r, rec, at,
				    "summary's min_tsc %" PRIu64 " and max_tsc %" PRIu64 " cannot be of %u sample%s",
				    s.min_tsc, s.max_tsc, count, count == 1 ? "" : "s");
	if (s.flags_any > TAILOR_WHO_FLAGS_MASK)
		return payload_fail(r, rec, at + offsetof(struct tlr_samples_summary, flags_any),
				    "summary's flags 0x%x have more than 7 bits", s.flags_any);
	if (!count && s.flags_any)
		return payload_fail(r, rec, at + offsetof(struct tlr_samples_summary, flags_any),
				    "summary's flags 0x%x cannot be of 0 samples", s.flags_any);
	/* The flag ORed says some sample lacks its tag word, the count how many. */
	if (s.tag_word_bad > count ||
	    !s.tag_word_bad != !(s.flags_any & TAILOR_SF_TAG_WORD_BAD))
		return payload_fail(r, rec, at + offsetof(struct tlr_samples_summary, tag_word_bad),
				    "summary's %u samples without a tag word do not fit its %u samples and flags 0x%x",
				    s.tag_word_bad, count, s.flags_any);
	r->summary = s;
	return 0;
}

int tlr_unpack_record(const struct tlr_reader *r, const struct tlr_record *rec, void *out,
		      char *err, size_t errlen)
{
	const size_t hdr_size = packed_header_size(r);
	struct tlr_samples_packed h;
	struct tlr_samples_summary stated;
	struct tlr_samples_summary seen;

	memcpy(&h, rec->payload, sizeof(h));
	if (tlr_unpack((const uint8_t *)rec->payload + hdr_size, h.packed_size, h.count,
		       h.record_size, out, &seen, err, errlen))
		return -1;
	if (r->version < 3)
		return 0;
	memcpy(&stated, (const uint8_t *)rec->payload + sizeof(h), sizeof(stated));
	if (memcmp(&stated, &seen, sizeof(seen))) {
		snprintf(err, errlen,
			 "the summary is not the samples': tsc %" PRIu64 "-%" PRIu64 ", flags 0x%x, %u without a tag word stated; %" PRIu64 "-%" PRIu64 ", 0x%x, %u unpacked",
			 stated.min_tsc, stated.max_tsc, stated.flags_any, stated.tag_word_bad,
			 seen.min_tsc, seen.max_tsc, seen.flags_any, seen.tag_word_bad);
		return -2;
	}
	return 0;
}

/*
 * The header checked; then the stream checked by unpacking it, into the
 * reader's buffer (rec->samples), or by summarizing it (before format 3;
 * after, the summary is the header's), or left to the caller.
 */
static int check_packed(struct tlr_reader *r, struct tlr_record *rec)
{
	const size_t hdr_size = packed_header_size(r);
	struct tlr_samples_packed s;
	size_t bytes;
	char why[320];
	int ret;

	if (rec->size < hdr_size)
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is too short for its %zu-byte header",
				    rec->size, hdr_size);
	memcpy(&s, rec->payload, sizeof(s));
	if (s.record_size < TAILOR_SAMPLE_BASE_SIZE || s.record_size % 8 ||
	    (s.record_size - TAILOR_SAMPLE_BASE_SIZE) / 8 > TLR_PACK_MAX_WORDS)
		return payload_fail(r, rec, 0,
				    "record_size %u is not a multiple of 8 from %d to %d",
				    s.record_size, TAILOR_SAMPLE_BASE_SIZE,
				    TAILOR_SAMPLE_BASE_SIZE + 8 * TLR_PACK_MAX_WORDS);
	if (check_sample_size(r, rec, offsetof(struct tlr_samples_packed, record_size),
			      s.record_size, s.count))
		return -1;
	if ((uint64_t)s.count * s.record_size > TLR_MAX_RECORD_SIZE)
		return payload_fail(r, rec, offsetof(struct tlr_samples_packed, count),
				    "%u samples of %u bytes unpack to more than %u bytes",
				    s.count, s.record_size, TLR_MAX_RECORD_SIZE);
	if (s.packed_size > rec->size - hdr_size || rec->size - hdr_size - s.packed_size >= 8)
		return payload_fail(r, rec, offsetof(struct tlr_samples_packed, packed_size),
				    "packed_size %u does not fill the %zu bytes after the header",
				    s.packed_size, rec->size - hdr_size);
	if (s.reserved)
		return payload_fail(r, rec, offsetof(struct tlr_samples_packed, reserved),
				    "reserved field is 0x%x, not 0", s.reserved);
	if (r->version >= 3) {
		if (take_stated_summary(r, rec, s.count))
			return -1;
		rec->summary = &r->summary;
	}
	if (r->packed == LEAVE_PACKED)
		return 0;
	if (r->packed == SUMMARIZE) {
		if (r->version >= 3)
			return 0;
		if (tlr_unpack((const uint8_t *)rec->payload + hdr_size, s.packed_size, s.count,
			       s.record_size, NULL, &r->summary, why, sizeof(why)))
			return payload_fail(r, rec, hdr_size, "%s", why);
		rec->summary = &r->summary;
		return 0;
	}
	/* Never NULL, even for no samples: callers may hand it to memcpy(). */
	bytes = (size_t)s.count * s.record_size;
	if (bytes > r->unpacked_size || !r->unpacked) {
		uint8_t *grown = realloc(r->unpacked, bytes ? bytes : 8);

		if (!grown)
			return payload_fail(r, rec, 0, "no memory to unpack %u samples", s.count);
		r->unpacked = grown;
		r->unpacked_size = bytes ? bytes : 8;
	}
	ret = tlr_unpack_record(r, rec, r->unpacked, why, sizeof(why));
	if (ret)	/* at the summary that lies, or in the stream */
		return payload_fail(r, rec, ret == -2 ? sizeof(s) : hdr_size, "%s", why);
	rec->samples = r->unpacked;
	return 0;
}

static int check_named(struct tlr_reader *r, const struct tlr_record *rec,
		       size_t fixed, const char *what)
{
	const unsigned char *p = rec->payload;

	if (rec->size < fixed)
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is shorter than its %zu-byte fixed part",
				    rec->size, fixed);
	if (!memchr(p + fixed, 0, rec->size - fixed))
		return payload_fail(r, rec, fixed,
				    "%s is not NUL-terminated within its record",
				    what);
	return 0;
}

static int check_task(struct tlr_reader *r, const struct tlr_record *rec)
{
	struct tlr_task t;

	if (rec->size < sizeof(t))
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is shorter than its %zu-byte struct",
				    rec->size, sizeof(t));
	memcpy(&t, rec->payload, sizeof(t));
	if (t.event != TLR_TASK_FORK && t.event != TLR_TASK_EXIT)
		return payload_fail(r, rec, offsetof(struct tlr_task, event),
				    "event %u is neither 1 (fork) nor 2 (exit)",
				    t.event);
	return 0;
}

static int check_switch(struct tlr_reader *r, const struct tlr_record *rec)
{
	struct tlr_switch sw;

	if (rec->size < sizeof(sw))
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is shorter than its %zu-byte struct",
				    rec->size, sizeof(sw));
	memcpy(&sw, rec->payload, sizeof(sw));
	if (sw.flags & ~TLR_SWITCH_FLAGS)
		return payload_fail(r, rec, offsetof(struct tlr_switch, flags),
				    "flags 0x%x has bits no version defines", sw.flags);
	if ((sw.flags & TLR_SWITCH_PREEMPTED) && !(sw.flags & TLR_SWITCH_OUT))
		return payload_fail(r, rec, offsetof(struct tlr_switch, flags),
				    "a switch in cannot be preempted (flags 0x%x)", sw.flags);
	return 0;
}

static int check_wakeup(struct tlr_reader *r, const struct tlr_record *rec)
{
	struct tlr_wakeup w;

	if (rec->size < sizeof(w))
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is shorter than its %zu-byte struct",
				    rec->size, sizeof(w));
	memcpy(&w, rec->payload, sizeof(w));
	if (!w.target_tid)
		return payload_fail(r, rec, offsetof(struct tlr_wakeup, target_tid),
				    "the woken thread's tid is 0");
	return 0;
}

/* A piece of a file: the path ends inside, the piece lies inside the file. */
static int check_file(struct tlr_reader *r, const struct tlr_record *rec)
{
	const unsigned char *p = rec->payload;
	struct tlr_file f;
	size_t rest;

	if (rec->size < sizeof(f))
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is shorter than its %zu-byte struct",
				    rec->size, sizeof(f));
	memcpy(&f, p, sizeof(f));
	rest = rec->size - sizeof(f);
	if (f.kind != TLR_FILE_JITDUMP && f.kind != TLR_FILE_PERF_MAP)
		return payload_fail(r, rec, offsetof(struct tlr_file, kind),
				    "kind %u is neither 1 (jitdump) nor 2 (perf map)", f.kind);
	if (!f.path_len || f.path_len > rest || p[sizeof(f) + f.path_len - 1])
		return payload_fail(r, rec, offsetof(struct tlr_file, path_len),
				    "path of %u bytes does not end within the record", f.path_len);
	if (f.piece_size > rest - f.path_len)
		return payload_fail(r, rec, offsetof(struct tlr_file, piece_size),
				    "piece of %u bytes runs past the record", f.piece_size);
	if (f.offset > f.file_size || f.piece_size > f.file_size - f.offset)
		return payload_fail(r, rec, offsetof(struct tlr_file, offset),
				    "piece of %u bytes at %" PRIu64 " outside a file of %" PRIu64 " bytes",
				    f.piece_size, f.offset, f.file_size);
	return 0;
}

/* A call stack: its entries fill the record (but for its padding), its id the next. */
static int check_stack(struct tlr_reader *r, const struct tlr_record *rec)
{
	struct tlr_stack st;

	if (rec->size < sizeof(st))
		return payload_fail(r, rec, 0,
				    "payload of %u bytes is shorter than its %zu-byte struct",
				    rec->size, sizeof(st));
	memcpy(&st, rec->payload, sizeof(st));
	if ((uint64_t)st.nr * 8 != rec->size - sizeof(st))
		return payload_fail(r, rec, offsetof(struct tlr_stack, nr),
				    "%u entries, but %zu bytes follow", st.nr,
				    rec->size - sizeof(st));
	/* A stack has its leaf, and no more entries than tailor.ko's bound gives. */
	if (!st.nr || st.nr > TAILOR_MAX_CALLCHAIN + 2)
		return payload_fail(r, rec, offsetof(struct tlr_stack, nr),
				    "%u entries, where a stack has 1 to %u", st.nr,
				    TAILOR_MAX_CALLCHAIN + 2);
	if (st.id != r->stacks + 1)
		return payload_fail(r, rec, offsetof(struct tlr_stack, id),
				    "stack id %u, where the next is %u", st.id, r->stacks + 1);
	r->stacks++;
	return 0;
}

/* META and END: text; a NUL may only start the padding at its end. */
static int check_text(struct tlr_reader *r, const struct tlr_record *rec)
{
	const unsigned char *p = rec->payload;
	const unsigned char *nul = memchr(p, 0, rec->size);
	size_t i;

	if (!nul)
		return 0;
	for (i = nul - p; i < rec->size; i++)
		if (p[i])
			return payload_fail(r, rec, nul - p,
					    "text has a NUL byte followed by more text");
	return 0;
}

static int check_payload(struct tlr_reader *r, struct tlr_record *rec)
{
	switch (rec->type) {
	case TLR_META:
	case TLR_END:
	case TLR_BUILD_IDS:
		return check_text(r, rec);
	case TLR_SAMPLES:
		rec->samples = (const struct tlr_samples *)rec->payload + 1;
		return check_samples(r, rec);
	case TLR_SAMPLES_PACKED:
		return check_packed(r, rec);
	case TLR_MMAP:
		return check_named(r, rec, sizeof(struct tlr_mmap), "path");
	case TLR_COMM:
		return check_named(r, rec, sizeof(struct tlr_comm), "name");
	case TLR_TASK:
		return check_task(r, rec);
	case TLR_SWITCH:
		return check_switch(r, rec);
	case TLR_WAKEUP:
		return check_wakeup(r, rec);
	case TLR_FILE:
		return check_file(r, rec);
	case TLR_STACK:
		return check_stack(r, rec);
	}
	return 0;	/* a newer kind of record: the caller skips it */
}

int tlr_next(struct tlr_reader *r, struct tlr_record *rec)
{
	struct tlr_record_header h;
	struct tlr_record next;
	size_t left;

	if (r->failed)
		return -1;
	left = r->len - r->pos;
	if (!left)
		return 0;
	if (left < sizeof(h))
		return reader_fail(r, r->pos,
				   "partial record header, %zu of 8 bytes (file cut short)",
				   left);
	memcpy(&h, r->data + r->pos, sizeof(h));
	if (check_record_size(r, &h, left))
		return -1;
	next.type = h.type;
	next.size = h.size - REC_HDR_SIZE;
	next.offset = r->pos;
	next.payload = r->data + r->pos + REC_HDR_SIZE;
	next.samples = NULL;
	next.summary = NULL;
	if (check_payload(r, &next))
		return -1;
	r->pos += h.size;
	*rec = next;
	return 1;
}

/* ---- META/END text ---- */

/* Find "@key=" at a line start; the value runs to '\n' or the text's end. */
static bool kv_find(const char *text, size_t len, const char *key,
		    const char **value, size_t *value_len)
{
	size_t key_len = strlen(key), pos = 0;

	if (!key_len || memchr(key, '=', key_len) || memchr(key, '\n', key_len))
		return false;
	while (len && !text[len - 1])
		len--;		/* the record's NUL padding */
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - line) : len - pos;

		if (line_len > key_len && !memcmp(line, key, key_len) &&
		    line[key_len] == '=') {
			*value = line + key_len + 1;
			*value_len = line_len - key_len - 1;
			return true;
		}
		pos += line_len + 1;
	}
	return false;
}

int tlr_kv_get(const void *text, size_t len, const char *key, char *buf,
	       size_t buflen)
{
	const char *value;
	size_t value_len;

	if (!kv_find(text, len, key, &value, &value_len))
		return -1;
	if (value_len >= buflen || value_len > INT_MAX)
		return -1;
	memcpy(buf, value, value_len);
	buf[value_len] = '\0';
	return (int)value_len;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/* All of @s in @base, at least one digit, no sign or space; -1 on overflow. */
static int parse_u64(const char *s, size_t len, unsigned int base,
		     uint64_t *val)
{
	uint64_t v = 0;
	size_t i;

	if (!len)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned int d = digit_value(s[i]);

		if (d >= base || v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*val = v;
	return 0;
}

int tlr_kv_get_u64(const void *text, size_t len, const char *key,
		   uint64_t *val)
{
	const char *value;
	size_t value_len;

	if (!kv_find(text, len, key, &value, &value_len))
		return -1;
	if (value_len > 2 && value[0] == '0' &&
	    (value[1] == 'x' || value[1] == 'X'))
		return parse_u64(value + 2, value_len - 2, 16, val);
	return parse_u64(value, value_len, 10, val);
}

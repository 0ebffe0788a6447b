// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recording library (userspace/lib/recording_*.c) against the spec in
 * docs/recording-format.md: a recording written and read back field by
 * field, every prefix of it (a file cut short anywhere must read up to
 * its last complete record), damaged files (refused with the offset of
 * the damage), META/END lookups, and the writer's promise that a failed
 * write (disk full, file size limit) leaves only complete records.
 * Built with ASan and UBSan; prints TAP.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "tailor/recording.h"
#include "tailor/sample_pack.h"
#include "tailor/session.h"
#include "uapi/tailor.h"

static char tmpdir[256];	/* short: file names are appended */

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void tmp_path(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
}

static size_t slurp(const char *path, unsigned char **out)
{
	struct stat st;
	size_t len = 0;
	FILE *f;

	*out = NULL;
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) < 0)
		goto out;
	*out = malloc(st.st_size ? st.st_size : 1);
	if (*out)
		len = fread(*out, 1, st.st_size, f);
out:
	if (f)
		fclose(f);
	return len;
}

static void spill(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	check(f);
	if (!f)
		return;
	check(fwrite(data, 1, len, f) == len);
	check(fclose(f) == 0);
}

static int write2(struct tlr_writer *w, uint32_t type, const void *a,
		  size_t alen, const void *b, size_t blen)
{
	const void *parts[] = { a, b };
	size_t lens[] = { alen, blen };

	return tlr_write(w, type, parts, lens, b ? 2 : 1);
}

/* ---- the reference recording ---- */

static const char meta_text[] =
	"format=tailor-recording 1\n"
	"tool=tailor 0.1\n"
	"event_type=0\n"
	"event=cycles\n"
	"regs_mask=0x800000\n"
	"record_size=32\n"
	"nr_cpus=8\n"
	"command=env A=1 ./prog\n";
static const char end_text[] =
	"reason=target-exited\n"
	"samples=5\n"
	"exit_status=0\n";
static const char mmap_path[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
static const char comm_name[] = "worker-3";

#define NR_REFERENCE	8
struct expect {
	uint32_t type;
	uint32_t size;		/* payload, padded */
	uint64_t offset;
};
static struct expect reference[NR_REFERENCE];
static char reference_path[PATH_MAX];
static size_t reference_len;

/* Sample @i of a batch: tsc, ip, who, r15, as /dev/tailor lays them out. */
static void make_sample(uint64_t *words, unsigned int batch, unsigned int i)
{
	words[0] = 1000000 + batch * 100000 + i * 1000;
	words[1] = 0x401000 + i * 16;
	words[2] = tailor_who_pack(4242 + i, 4242, batch * 2 + i,
				   TAILOR_SF_EXACT_IP);
	words[3] = 0x7a110000 + batch * 16 + i;
}

static const unsigned int batch_count[2] = { 3, 2 };

static int write_samples(struct tlr_writer *w, unsigned int batch)
{
	struct tlr_samples hdr = { .record_size = 32,
				   .count = batch_count[batch] };
	uint64_t words[4 * 3];
	unsigned int i;

	for (i = 0; i < hdr.count; i++)
		make_sample(&words[4 * i], batch, i);
	return write2(w, TLR_SAMPLES, &hdr, sizeof(hdr), words,
		      hdr.count * 32);
}

static const struct tlr_mmap ref_mmap = {
	.tsc = 999, .pid = 4242, .tid = 4243, .start = 0x7f0000001000,
	.len = 0x195000, .pgoff = 0x28000, .inode = 1234567,
	.dev_major = 254, .dev_minor = 1, .prot = 5, .time_kind = TLR_TIME_START,
};
static const struct tlr_comm ref_comm = {
	.tsc = 1001, .pid = 4242, .tid = 4244, .flags = TLR_COMM_EXEC,
	.time_kind = TLR_TIME_PERF,
};
static const struct tlr_task ref_task = {
	.tsc = 1002, .event = TLR_TASK_FORK, .time_kind = TLR_TIME_SEEN,
	.pid = 4242, .tid = 4245, .ppid = 4242, .ptid = 4243,
};

static void expect_record(int i, uint32_t type, size_t payload)
{
	reference[i].type = type;
	reference[i].size = pad8(payload);
	reference[i].offset = i ? reference[i - 1].offset + 8 +
				  reference[i - 1].size : 32;
}

static void write_reference(void)
{
	struct tlr_writer *w;

	tmp_path(reference_path, "reference.tlr");
	w = tlr_writer_create(reference_path);
	check(w);
	if (!w)
		return;
	check(tlr_writer_size(w) == 32);
	check(write2(w, TLR_META, meta_text, strlen(meta_text), NULL, 0) == 0);
	check(write_samples(w, 0) == 0);
	check(write_samples(w, 1) == 0);
	check(write2(w, TLR_MMAP, &ref_mmap, sizeof(ref_mmap), mmap_path,
		     sizeof(mmap_path)) == 0);
	check(write2(w, TLR_COMM, &ref_comm, sizeof(ref_comm), comm_name,
		     sizeof(comm_name)) == 0);
	check(write2(w, TLR_TASK, &ref_task, sizeof(ref_task), NULL, 0) == 0);
	check(write2(w, 77, "hello", 5, NULL, 0) == 0);
	check(write2(w, TLR_END, end_text, strlen(end_text), NULL, 0) == 0);

	expect_record(0, TLR_META, strlen(meta_text));
	expect_record(1, TLR_SAMPLES, 8 + 3 * 32);
	expect_record(2, TLR_SAMPLES, 8 + 2 * 32);
	expect_record(3, TLR_MMAP, sizeof(ref_mmap) + sizeof(mmap_path));
	expect_record(4, TLR_COMM, sizeof(ref_comm) + sizeof(comm_name));
	expect_record(5, TLR_TASK, sizeof(ref_task));
	expect_record(6, 77, 5);
	expect_record(7, TLR_END, strlen(end_text));
	reference_len = reference[7].offset + 8 + reference[7].size;

	check(tlr_writer_size(w) == reference_len);
	check(tlr_writer_error(w) == 0);
	check(tlr_writer_close(w) == 0);
}

static void check_samples(const struct tlr_record *rec, unsigned int batch)
{
	const unsigned char *p = rec->payload;
	struct tlr_samples hdr;
	uint64_t words[4];
	unsigned int i;

	memcpy(&hdr, p, sizeof(hdr));
	check(hdr.record_size == 32);
	check(hdr.count == batch_count[batch]);
	for (i = 0; i < hdr.count && i < 3; i++) {
		const struct tailor_sample *s = (const void *)(p + 8 + 32 * i);

		make_sample(words, batch, i);
		check(s->tsc == words[0]);
		check(s->ip == words[1]);
		check(tailor_who_tid(s->who) == 4242 + i);
		check(tailor_who_pid(s->who) == 4242);
		check(tailor_who_cpu(s->who) == batch * 2 + i);
		check(tailor_who_flags(s->who) == TAILOR_SF_EXACT_IP);
		check(s->regs[0] == words[3]);
	}
}

static void check_text(const struct tlr_record *rec, const char *text)
{
	const unsigned char *p = rec->payload;
	size_t len = strlen(text), i;

	check(memcmp(p, text, len) == 0);
	for (i = len; i < rec->size; i++)
		check(p[i] == 0);
}

static void check_reference_payload(int i, const struct tlr_record *rec)
{
	const char *p = rec->payload;
	char buf[64];
	uint64_t v;

	switch (i) {
	case 0:
		check_text(rec, meta_text);
		check(tlr_kv_get(p, rec->size, "format", buf, sizeof(buf)) == 18);
		check(strcmp(buf, "tailor-recording 1") == 0);
		check(tlr_kv_get_u64(p, rec->size, "record_size", &v) == 0 &&
		      v == 32);
		check(tlr_kv_get_u64(p, rec->size, "regs_mask", &v) == 0 &&
		      v == 1ull << TAILOR_REG_R15);
		break;
	case 1:
	case 2:
		check_samples(rec, i - 1);
		break;
	case 3:
		check(memcmp(p, &ref_mmap, sizeof(ref_mmap)) == 0);
		check(strcmp(p + sizeof(ref_mmap), mmap_path) == 0);
		break;
	case 4:
		check(memcmp(p, &ref_comm, sizeof(ref_comm)) == 0);
		check(strcmp(p + sizeof(ref_comm), comm_name) == 0);
		break;
	case 5:
		check(memcmp(p, &ref_task, sizeof(ref_task)) == 0);
		break;
	case 6:
		check(memcmp(p, "hello\0\0\0", 8) == 0);
		break;
	case 7:
		check_text(rec, end_text);
		check(tlr_kv_get(p, rec->size, "reason", buf, sizeof(buf)) == 13);
		check(strcmp(buf, "target-exited") == 0);
		check(tlr_kv_get_u64(p, rec->size, "samples", &v) == 0 && v == 5);
		break;
	}
}

/* Every record of the reference recording, in order, then a clean end. */
static void check_reference(struct tlr_reader *r)
{
	struct tlr_record rec;
	int i, ret;

	for (i = 0; i < NR_REFERENCE; i++) {
		ret = tlr_next(r, &rec);
		check(ret == 1);
		if (ret != 1) {
			printf("# record %d: %s\n", i, tlr_reader_error(r));
			return;
		}
		check(rec.type == reference[i].type);
		check(rec.size == reference[i].size);
		check(rec.offset == reference[i].offset);
		check((uintptr_t)rec.payload % 8 == 0);
		check_reference_payload(i, &rec);
	}
	check(tlr_next(r, &rec) == 0);
	check(tlr_next(r, &rec) == 0);
	check(strcmp(tlr_reader_error(r), "") == 0);
}

static void test_roundtrip_file(void)
{
	struct tlr_reader *r;
	char err[256];

	write_reference();
	r = tlr_reader_open(reference_path, err, sizeof(err));
	check(r);
	if (!r) {
		printf("# %s\n", err);
		return;
	}
	check_reference(r);
	tlr_reader_close(r);
}

static void test_roundtrip_mem(void)
{
	unsigned char *data;
	size_t len = slurp(reference_path, &data);
	struct tlr_reader *r;
	char err[256];

	check(len == reference_len);
	/* The file starts with the header the spec describes. */
	check(memcmp(data, "TAILORRC\4\0\0\0\x20\0\0\0", 16) == 0);
	r = tlr_reader_open_mem(data, len, err, sizeof(err));
	check(r);
	if (r)
		check_reference(r);
	tlr_reader_close(r);
	free(data);
}

/* A pipe cannot be mapped: the reader reads it instead. */
static void test_roundtrip_fifo(void)
{
	char path[PATH_MAX], err[256];
	unsigned char *data;
	size_t len = slurp(reference_path, &data);
	struct tlr_reader *r;
	int status;
	pid_t pid;

	tmp_path(path, "fifo");
	check(mkfifo(path, 0600) == 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_WRONLY);

		_exit(fd < 0 || write(fd, data, len) != (ssize_t)len);
	}
	check(pid > 0);
	r = tlr_reader_open(path, err, sizeof(err));
	check(r);
	if (r)
		check_reference(r);
	else
		printf("# %s\n", err);
	tlr_reader_close(r);
	check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	free(data);
}

/* ---- cut short anywhere ---- */

static void check_prefix(const unsigned char *full, size_t cut)
{
	unsigned char *data = malloc(cut ? cut : 1);
	struct tlr_record rec;
	struct tlr_reader *r;
	char err[256] = "", want[64];
	bool boundary = cut == 32;
	int n = 0, ret;

	memcpy(data, full, cut);	/* exactly @cut bytes: ASan sees overreads */
	r = tlr_reader_open_mem(data, cut, err, sizeof(err));
	if (cut < 32) {
		check(!r);
		check_contains(err, "cut short");
		check_contains(err, "offset 0:");
		tlr_reader_close(r);
		free(data);
		return;
	}
	check(r);
	if (!r) {
		free(data);
		return;
	}
	while ((ret = tlr_next(r, &rec)) == 1) {
		check(n < NR_REFERENCE && rec.offset == reference[n].offset &&
		      rec.type == reference[n].type &&
		      rec.size == reference[n].size);
		check(rec.offset + 8 + rec.size <= cut);
		if (rec.offset + 8 + rec.size == cut)
			boundary = true;
		n++;
	}
	check(n == NR_REFERENCE ||
	      reference[n].offset + 8 + reference[n].size > cut);
	if (boundary) {
		check(ret == 0);
	} else {
		check(ret == -1);
		check_contains(tlr_reader_error(r), "cut short");
		snprintf(want, sizeof(want), "offset %" PRIu64 ":",
			 n ? reference[n - 1].offset + 8 + reference[n - 1].size
			   : 32);
		check_contains(tlr_reader_error(r), want);
	}
	check(tlr_next(r, &rec) == ret);
	tlr_reader_close(r);
	free(data);
}

static void test_every_prefix(void)
{
	unsigned char *full;
	size_t len = slurp(reference_path, &full), cut;
	int before = check_failures_now;

	check(len == reference_len);
	for (cut = 0; cut <= len && check_failures_now - before < 10; cut++)
		check_prefix(full, cut);
	free(full);
}

/* The same through files: an empty one and one shorter than the header. */
static void test_short_files(void)
{
	char path[PATH_MAX], err[512];
	struct tlr_reader *r;

	tmp_path(path, "empty.tlr");
	spill(path, "", 0);
	r = tlr_reader_open(path, err, sizeof(err));
	check(!r);
	check_contains(err, "offset 0: empty file");
	check_contains(err, "cut short");

	tmp_path(path, "short.tlr");
	spill(path, "TAILORRC\1\0", 10);
	r = tlr_reader_open(path, err, sizeof(err));
	check(!r);
	check_contains(err, "only 10 bytes, less than the 32-byte file header (file cut short)");

	tmp_path(path, "hello.txt");
	spill(path, "hello world\n", 12);
	r = tlr_reader_open(path, err, sizeof(err));
	check(!r);
	check_contains(err, "not a tailor recording (bad magic)");

	tmp_path(path, "missing.tlr");
	r = tlr_reader_open(path, err, sizeof(err));
	check(!r);
	check_contains(err, "cannot open: ");
	check_contains(err, strerror(ENOENT));

	r = tlr_reader_open(tmpdir, err, sizeof(err));
	check(!r);
	check_contains(err, "is a directory");

	/* No room for a message is not a crash. */
	check(!tlr_reader_open(path, NULL, 0));
	check(!tlr_reader_open_mem("TAILORRC", 8, NULL, 0));
	check(!tlr_reader_open_mem(NULL, 0, err, sizeof(err)));
	check_contains(err, "empty file");
}

/* ---- damaged files ---- */

/*
 * Patch @len bytes at @at of the reference recording and read it: @good
 * records come through (-1: the open itself fails), then -1 with an
 * error naming @offset and containing @what (an empty @what: the change
 * is harmless, the file reads to its end).
 */
static void expect_damage(size_t at, const void *patch, size_t len, int good,
			  uint64_t offset, const char *what)
{
	unsigned char *data;
	size_t total = slurp(reference_path, &data);
	struct tlr_record rec;
	struct tlr_reader *r;
	char err[256], want[64];
	int n = 0, ret;

	check(at + len <= total);
	memcpy(data + at, patch, len);
	snprintf(want, sizeof(want), "offset %" PRIu64 ":", offset);
	r = tlr_reader_open_mem(data, total, err, sizeof(err));
	if (good < 0) {
		check(!r);
		check_contains(err, want);
		check_contains(err, what);
		tlr_reader_close(r);
		free(data);
		return;
	}
	check(r);
	if (!r) {
		free(data);
		return;
	}
	while ((ret = tlr_next(r, &rec)) == 1)
		n++;
	check(n == good);
	if (!*what) {		/* not damage after all: reads to the end */
		check(ret == 0);
		check_contains(tlr_reader_error(r), "");
	} else {
		check(ret == -1);
		check_contains(tlr_reader_error(r), want);
		check_contains(tlr_reader_error(r), what);
		check(tlr_next(r, &rec) == -1);
	}
	tlr_reader_close(r);
	free(data);
}

static void damage_u32(size_t at, uint32_t v, int good, uint64_t offset,
		       const char *what)
{
	expect_damage(at, &v, sizeof(v), good, offset, what);
}

static void test_bad_file_header(void)
{
	uint64_t one = 1;

	expect_damage(0, "TAILORRD", 8, -1, 0, "not a tailor recording (bad magic)");
	damage_u32(8, 5, -1, 8, "recording format version 5 is newer than this tailor (4)");
	/* Formats 1 and 2, before packed samples and their summaries, still read. */
	damage_u32(8, 1, NR_REFERENCE, 0, "");
	damage_u32(8, 2, NR_REFERENCE, 0, "");
	damage_u32(8, 0, -1, 8, "version 0");
	damage_u32(12, 40, -1, 12, "header_size 40");
	expect_damage(16, &one, 8, -1, 16, "flags 0x1");
	expect_damage(24, &one, 8, -1, 24, "reserved");
}

static void test_bad_record_size(void)
{
	uint64_t at = reference[1].offset;

	damage_u32(at + 4, 8 + 104 + 4, 1, at,
		   "record of type 2 has size 116, not a multiple of 8");
	damage_u32(at + 4, 4, 1, at, "size 4, less than its 8-byte header");
	damage_u32(at + 4, 0, 1, at, "less than its 8-byte header");
	damage_u32(at + 4, 0x80000000u, 1, at, "limit");
	damage_u32(at + 4, TLR_MAX_RECORD_SIZE, 1, at, "(file cut short)");
	damage_u32(at + 4, 8 + 104 + 4096, 1, at, "record of type 2 claims 4208 bytes but only");
}

static void test_bad_samples(void)
{
	uint64_t at = reference[1].offset;
	uint32_t huge[2] = { 0xfffffff8u, 0xffffffffu };
	uint32_t one_of_96[2] = { 96, 1 };

	damage_u32(at + 8, 20, 1, at + 8, "SAMPLES record_size 20 is not a multiple of 8 >= 24");
	damage_u32(at + 8, 28, 1, at + 8, "not a multiple of 8 >= 24");
	damage_u32(at + 8, 0, 1, at + 8, "record_size 0");
	/* The whole message, once: where, what, and which record. */
	check(at == 176);
	damage_u32(at + 12, 4, 1, at + 12,
		   "offset 188: SAMPLES count 4 of 32-byte samples needs 136 bytes but the payload has 104 (record at offset 176)");
	/* count * record_size near 2^64: must not wrap. */
	expect_damage(at + 8, huge, 8, 1, at + 12, "count 4294967295");
	damage_u32(at + 12, 2, 1, at + 12, "32 bytes beyond its 2 samples");
	/*
	 * One sample of 96 bytes fills the payload exactly: fine.  But the
	 * next batch's are 32 bytes, and a recording's samples are one size
	 * (a reader that holds the first batch while it reads the second
	 * would take their size from either).
	 */
	expect_damage(at + 8, one_of_96, 8, 2, reference[2].offset + 8,
		      "SAMPLES record_size 32 differs from the earlier samples' 96");
}

static void expect_lone_record(uint32_t type, const void *payload, uint32_t len, int good,
			       uint64_t offset, const char *what);
/* The format of expect_lone_record()'s file: before format 3 by default. */
static uint32_t lone_version = 1;
static unsigned char *lone_file(uint32_t type, const void *payload, uint32_t len,
				size_t *total);

/*
 * A lone SAMPLES_PACKED of @n samples like a timer's, into @buf, as
 * format @version lays it out; its length.
 */
static uint32_t packed_record_v(unsigned char *buf, uint32_t n, uint32_t version)
{
	struct tlr_samples_packed h = { .record_size = 32, .count = n };
	size_t hdr = sizeof(h) + (version >= 3 ? sizeof(struct tlr_samples_summary) : 0);
	struct tlr_pack_state st;
	uint64_t s[4];
	uint32_t len = 0, i;

	tlr_pack_begin(&st, 32);
	for (i = 0; i < n; i++) {
		s[0] = 1000000 + 250000ull * i;
		s[1] = 0x401000 + 16 * (i % 5);
		s[2] = tailor_who_pack(1000, 1000, 1, i % 7 ? 0 : TAILOR_SF_TAG_WORD_BAD);
		s[3] = 7;
		len += (uint32_t)tlr_pack_one(&st, s, buf + hdr + len);
	}
	h.packed_size = len;
	memcpy(buf, &h, sizeof(h));
	if (version >= 3)
		memcpy(buf + sizeof(h), &st.sum, sizeof(st.sum));
	len += (uint32_t)hdr;
	while (len % 8)
		buf[len++] = 0;
	return len;
}

static uint32_t packed_record(unsigned char *buf, uint32_t n)
{
	return packed_record_v(buf, n, 1);
}

/*
 * SAMPLES_PACKED payload @buf of @len bytes with the u32 at @at set to @v:
 * refused, naming file offset @offset and @what.
 */
static void expect_packed_u32(const unsigned char *buf, uint32_t len, size_t at, uint32_t v,
			      uint64_t offset, const char *what)
{
	unsigned char bad[4096];

	memcpy(bad, buf, len);
	memcpy(bad + at, &v, sizeof(v));
	expect_lone_record(TLR_SAMPLES_PACKED, bad, len, 0, offset, what);
}

static void test_bad_packed(void)
{
	unsigned char buf[4096];
	uint32_t len = packed_record(buf, 50);

	/* The payload starts at file offset 40; its stream at 56. */
	expect_lone_record(TLR_SAMPLES_PACKED, buf, len, 1, 0, "");
	expect_lone_record(TLR_SAMPLES_PACKED, buf, 8, 0, 40, "too short for its 16-byte header");
	expect_packed_u32(buf, len, 0, 36, 40, "record_size 36 is not a multiple of 8 from 24 to 272");
	expect_packed_u32(buf, len, 4, 1u << 30, 44, "unpack to more than");
	expect_packed_u32(buf, len, 8, len, 48, "does not fill");
	expect_packed_u32(buf, len, 12, 1, 52, "reserved field is 0x1");
	/* One sample fewer than the stream holds: bytes left over. */
	expect_packed_u32(buf, len, 4, 49, 56, "left after the last of 49 samples");
	/* One more: the stream ends inside it. */
	expect_packed_u32(buf, len, 4, 51, 56, "ends inside");
}

/*
 * Format 3: the summary after the header, checked alone when read, and
 * against the samples when unpacked.  The payload starts at file offset
 * 40, its summary at 56, its stream at 80.
 */
static void test_packed_summary(void)
{
	unsigned char buf[4096], bad[4096], *data;
	uint64_t out[4 * 50], t;
	struct tlr_samples_summary sum;
	struct tlr_record rec;
	struct tlr_reader *r;
	uint32_t len;
	size_t total;
	char err[320];

	lone_version = 3;
	len = packed_record_v(buf, 50, 3);
	expect_lone_record(TLR_SAMPLES_PACKED, buf, len, 1, 0, "");
	expect_lone_record(TLR_SAMPLES_PACKED, buf, 16, 0, 40, "too short for its 40-byte header");
	memcpy(&sum, buf + 16, sizeof(sum));
	check_uint(sum.min_tsc, ==, 1000000);
	check_uint(sum.max_tsc, ==, 1000000 + 250000ull * 49);
	check_uint(sum.flags_any, ==, TAILOR_SF_TAG_WORD_BAD);
	check_uint(sum.tag_word_bad, ==, 8);	/* samples 0, 7, ..., 49 */

	memcpy(bad, buf, len);
	t = sum.max_tsc + 1;
	memcpy(bad + 16, &t, 8);
	expect_lone_record(TLR_SAMPLES_PACKED, bad, len, 0, 56, "cannot be of 50 samples");
	expect_packed_u32(buf, len, 32, 0x80, 72, "more than 7 bits");
	expect_packed_u32(buf, len, 36, 51, 76, "do not fit its 50 samples");
	/* The flag without the count, and the count without the flag. */
	expect_packed_u32(buf, len, 36, 0, 76, "do not fit its 50 samples");
	expect_packed_u32(buf, len, 32, TAILOR_SF_ADDR_VALID, 76, "do not fit its 50 samples");
	/* Plausible, but not the samples': found where they are unpacked, at the summary. */
	memcpy(bad, buf, len);
	t = sum.min_tsc - 1;
	memcpy(bad + 16, &t, 8);
	expect_lone_record(TLR_SAMPLES_PACKED, bad, len, 0, 56, "the summary is not the samples'");
	/* The whole message: both summaries, all eight numbers. */
	expect_lone_record(TLR_SAMPLES_PACKED, bad, len, 0, 56, "0x40, 8 unpacked");

	/* A first pass takes the summary as stated, and never unpacks. */
	data = lone_file(TLR_SAMPLES_PACKED, bad, len, &total);
	r = tlr_reader_open_mem(data, total, err, sizeof(err));
	check(r);
	if (r) {
		tlr_reader_summarize(r);
		check_int(tlr_next(r, &rec), ==, 1);
		check(!rec.samples && rec.summary && rec.summary->min_tsc == t);
		/* ... and the pass that unpacks refuses it. */
		check_int(tlr_unpack_record(r, &rec, out, err, sizeof(err)), ==, -2);
		check_contains(err, "the summary is not the samples'");
		tlr_reader_close(r);
	}
	free(data);
	/* Left packed: the caller unpacks, the summary stated. */
	data = lone_file(TLR_SAMPLES_PACKED, buf, len, &total);
	r = tlr_reader_open_mem(data, total, err, sizeof(err));
	check(r);
	if (r) {
		tlr_reader_leave_packed(r);
		check_int(tlr_next(r, &rec), ==, 1);
		check(!rec.samples && rec.summary && !memcmp(rec.summary, &sum, sizeof(sum)));
		check_int(tlr_unpack_record(r, &rec, out, err, sizeof(err)), ==, 0);
		check_uint(out[4 * 49], ==, sum.max_tsc);
		check_uint(out[4 * 49 + 1], ==, 0x401000 + 16 * (49 % 5));
		tlr_reader_close(r);
	}
	free(data);

	/* The stream damaged where it starts, behind a good summary: offset 80. */
	memcpy(bad, buf, len);
	memset(bad + 40, 0xff, 12);
	expect_lone_record(TLR_SAMPLES_PACKED, bad, len, 0, 80, "");
	/* A format 2 batch (no summary) in a format 3 file does not fill its record. */
	len = packed_record_v(bad, 50, 2);
	expect_lone_record(TLR_SAMPLES_PACKED, bad, len, 0, 48, "does not fill");

	/* No samples: the summary of none. */
	len = packed_record_v(buf, 0, 3);
	expect_lone_record(TLR_SAMPLES_PACKED, buf, len, 1, 0, "");
	expect_packed_u32(buf, len, 32, TAILOR_SF_ADDR_VALID, 72, "cannot be of 0 samples");
	t = 0;
	memcpy(buf + 16, &t, 8);
	expect_lone_record(TLR_SAMPLES_PACKED, buf, len, 0, 56, "cannot be of 0 samples");
	/* One sample has one time. */
	len = packed_record_v(buf, 1, 3);
	expect_lone_record(TLR_SAMPLES_PACKED, buf, len, 1, 0, "");
	memcpy(&t, buf + 16, 8);
	t--;
	memcpy(buf + 16, &t, 8);
	expect_lone_record(TLR_SAMPLES_PACKED, buf, len, 0, 56, "cannot be of 1 sample");
	lone_version = 1;
}

static void test_bad_sideband(void)
{
	uint64_t mmap_at = reference[3].offset, comm_at = reference[4].offset;
	uint64_t task_at = reference[5].offset;
	char fill[64];

	memset(fill, 'A', sizeof(fill));
	expect_damage(mmap_at + 8 + 64, fill, reference[3].size - 64, 3,
		      mmap_at + 8 + 64, "MMAP path is not NUL-terminated");
	expect_damage(comm_at + 8 + 24, fill, reference[4].size - 24, 4,
		      comm_at + 8 + 24, "COMM name is not NUL-terminated");
	damage_u32(task_at + 16, 9, 5, task_at + 16,
		   "TASK event 9 is neither 1 (fork) nor 2 (exit)");
	damage_u32(task_at + 16, 0, 5, task_at + 16, "TASK event 0");
	damage_u32(task_at + 16, TLR_TASK_EXIT, NR_REFERENCE, 0, "");
	expect_damage(reference[0].offset + 8 + 5, "", 1, 0,
		      reference[0].offset + 8 + 5,
		      "META text has a NUL byte followed by more text");
	expect_damage(reference[7].offset + 8 + 3, "", 1, 7,
		      reference[7].offset + 8 + 3, "END text has a NUL");
	/* An unknown type's payload is not looked at. */
	damage_u32(task_at, 99, NR_REFERENCE, 0, "");
}

/* A recording of the file header and one record of @type, malloc()ed. */
static unsigned char *lone_file(uint32_t type, const void *payload, uint32_t len,
				size_t *total)
{
	struct tlr_file_header fh = { .version = lone_version, .header_size = 32 };
	struct tlr_record_header rh = { .type = type, .size = 8 + len };
	unsigned char *data;

	*total = sizeof(fh) + sizeof(rh) + len;
	data = malloc(*total);
	if (!data)
		abort();
	memcpy(fh.magic, TLR_MAGIC, 8);
	memcpy(data, &fh, sizeof(fh));
	memcpy(data + sizeof(fh), &rh, sizeof(rh));
	if (len)
		memcpy(data + sizeof(fh) + sizeof(rh), payload, len);
	return data;
}

/* A recording of the file header and one record of @type. */
static void expect_lone_record(uint32_t type, const void *payload,
			       uint32_t len, int good, uint64_t offset,
			       const char *what)
{
	size_t total;
	unsigned char *data = lone_file(type, payload, len, &total);
	struct tlr_record rec;
	struct tlr_reader *r;
	char err[256], want[64];

	r = tlr_reader_open_mem(data, total, err, sizeof(err));
	check(r);
	if (r) {
		check(tlr_next(r, &rec) == (good ? 1 : -1));
		if (good) {
			check(rec.type == type && rec.size == len);
			check(tlr_next(r, &rec) == 0);
		} else {
			snprintf(want, sizeof(want), "offset %" PRIu64 ":", offset);
			check_contains(tlr_reader_error(r), want);
			check_contains(tlr_reader_error(r), what);
		}
	}
	tlr_reader_close(r);
	free(data);
}

static void test_short_payloads(void)
{
	unsigned char buf[128];
	struct tlr_samples empty = { .record_size = 24, .count = 0 };

	memset(buf, 0, sizeof(buf));
	expect_lone_record(TLR_SAMPLES, NULL, 0, 0, 40, "too short for its 8-byte header");
	expect_lone_record(TLR_SAMPLES, &empty, 8, 1, 0, "");
	expect_lone_record(TLR_MMAP, buf, 56, 0, 40, "shorter than its 64-byte fixed part");
	expect_lone_record(TLR_MMAP, buf, 64, 0, 104, "MMAP path is not NUL-terminated");
	expect_lone_record(TLR_MMAP, buf, 72, 1, 0, "");
	expect_lone_record(TLR_COMM, buf, 16, 0, 40, "COMM payload of 16 bytes");
	expect_lone_record(TLR_TASK, buf, 24, 0, 40, "TASK payload of 24 bytes");
	expect_lone_record(TLR_META, NULL, 0, 1, 0, "");
	expect_lone_record(TLR_END, buf, 8, 1, 0, "");
	expect_lone_record(1000, NULL, 0, 1, 0, "");
}

/* ---- META/END lookups ---- */

static const char kv_text[] =
	"event_type=4\n"
	"event=cycles\n"
	"event_config=0x1c0\n"
	"command=env A=1 ./prog\n"
	"empty=\n"
	"max=18446744073709551615\n"
	"over=18446744073709551616\n"
	"hexmax=0xffffffffffffffff\n"
	"hexover=0x10000000000000000\n"
	"upper=0XAbC\n"
	"zeros=000000000000000000000000042\n"
	"neg=-1\n"
	"plus=+1\n"
	"lead= 1\n"
	"trail=1 \n"
	"hexonly=0x\n"
	"hexbad=0x1g\n"
	"decbad=12a\n"
	"dup=first\n"
	"dup=second\n"
	"last=no-newline\0\0\0\0";	/* NUL padding, as in a record */

static int kv(const char *key, char *buf, size_t buflen)
{
	return tlr_kv_get(kv_text, sizeof(kv_text), key, buf, buflen);
}

static bool kv_is(const char *key, const char *want)
{
	char buf[64];

	return kv(key, buf, sizeof(buf)) == (int)strlen(want) &&
	       !strcmp(buf, want);
}

static void test_kv_get(void)
{
	char buf[64];

	check(kv_is("event", "cycles"));
	check(kv_is("event_type", "4"));
	check(kv_is("command", "env A=1 ./prog"));
	check(kv_is("empty", ""));
	check(kv_is("dup", "first"));
	check(kv_is("last", "no-newline"));
	/* Whole keys at a line start only. */
	check(kv("even", buf, sizeof(buf)) == -1);
	check(kv("event_", buf, sizeof(buf)) == -1);
	check(kv("vent", buf, sizeof(buf)) == -1);
	check(kv("type", buf, sizeof(buf)) == -1);
	check(kv("A", buf, sizeof(buf)) == -1);
	check(kv("missing", buf, sizeof(buf)) == -1);
	check(kv("", buf, sizeof(buf)) == -1);
	check(kv("event=cycles", buf, sizeof(buf)) == -1);
	/* The value and its NUL must fit. */
	check(kv("event", buf, 7) == 6);
	check(kv("event", buf, 6) == -1);
	check(kv("empty", buf, 1) == 0);
	check(kv("empty", NULL, 0) == -1);
	/* Text cut mid-line: the value runs to the end. */
	check(tlr_kv_get(kv_text, 22, "event", buf, sizeof(buf)) == 3);
	check(strcmp(buf, "cyc") == 0);
	check(tlr_kv_get(kv_text, 0, "event", buf, sizeof(buf)) == -1);
	check(tlr_kv_get("", 0, "event", buf, sizeof(buf)) == -1);
}

static int kv_u64(const char *key, uint64_t *v)
{
	*v = 777;
	return tlr_kv_get_u64(kv_text, sizeof(kv_text), key, v);
}

static void test_kv_get_u64(void)
{
	static const char *const bad[] = {
		"over", "hexover", "neg", "plus", "lead", "trail", "hexonly",
		"hexbad", "decbad", "empty", "event", "command", "missing",
		"even",
	};
	unsigned int i;
	uint64_t v;

	check(kv_u64("event_type", &v) == 0 && v == 4);
	check(kv_u64("event_config", &v) == 0 && v == 0x1c0);
	check(kv_u64("max", &v) == 0 && v == UINT64_MAX);
	check(kv_u64("hexmax", &v) == 0 && v == UINT64_MAX);
	check(kv_u64("upper", &v) == 0 && v == 0xabc);
	check(kv_u64("zeros", &v) == 0 && v == 42);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		check(kv_u64(bad[i], &v) == -1);
		check(v == 777);	/* untouched on failure */
		if (v != 777)
			printf("# key %s\n", bad[i]);
	}
}

/* ---- the writer ---- */

static void test_writer_layout(void)
{
	static const unsigned char want[] = {
		9, 0, 0, 0, 24, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h',
		'i', 0, 0, 0, 0, 0, 0, 0,
		10, 0, 0, 0, 8, 0, 0, 0,
		11, 0, 0, 0, 16, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
	};
	static const char zeros[16];
	const void *parts[] = { "abc", "defgh", "", "i" };
	size_t lens[] = { 3, 5, 0, 1 };
	char path[PATH_MAX];
	struct tlr_writer *w;
	unsigned char *data;
	size_t len;

	tmp_path(path, "layout.tlr");
	w = tlr_writer_create(path);
	check(w);
	if (!w)
		return;
	check(tlr_write(w, 9, parts, lens, 4) == 0);
	check(tlr_writer_size(w) == 32 + 24);
	check(tlr_write(w, 10, NULL, NULL, 0) == 0);
	check(write2(w, 11, "\1\2\3\4\5\6\7\10", 8, NULL, 0) == 0);
	check(tlr_writer_size(w) == 32 + sizeof(want));
	check(tlr_write_flush(w) == 0);
	check(tlr_writer_size(w) == 32 + sizeof(want));
	check(tlr_writer_close(w) == 0);

	len = slurp(path, &data);
	check(len == 32 + sizeof(want));
	check(len >= 32 && memcmp(data, "TAILORRC\4\0\0\0\x20\0\0\0", 16) == 0);
	check(len >= 32 && memcmp(data + 16, zeros, 16) == 0);
	check(len == 32 + sizeof(want) && !memcmp(data + 32, want, sizeof(want)));
	free(data);
}

static void test_writer_refuses(void)
{
	const void *parts[] = { "x", "y" };
	size_t lens[2];
	char path[PATH_MAX];
	struct tlr_writer *w;

	tmp_path(path, "refuse.tlr");
	w = tlr_writer_create(path);
	check(w);
	if (!w)
		return;
	/* Too big: refused before the (too short) data is touched. */
	lens[0] = TLR_MAX_RECORD_SIZE - 7;
	check(tlr_write(w, 2, parts, lens, 1) == -EINVAL);
	lens[0] = TLR_MAX_RECORD_SIZE - 16;
	lens[1] = 9;
	check(tlr_write(w, 2, parts, lens, 2) == -EINVAL);
	lens[0] = SIZE_MAX / 2 + 1;
	lens[1] = SIZE_MAX / 2 + 1;
	check(tlr_write(w, 2, parts, lens, 2) == -EINVAL);
	lens[0] = SIZE_MAX;
	lens[1] = 2;
	check(tlr_write(w, 2, parts, lens, 2) == -EINVAL);
	lens[0] = 1;
	check(tlr_write(w, 2, parts, lens, -1) == -EINVAL);
	check(tlr_write(w, 2, NULL, lens, 1) == -EINVAL);
	parts[1] = NULL;
	check(tlr_write(w, 2, parts, lens, 2) == -EINVAL);
	/* Nothing was written and the writer still works. */
	check(tlr_writer_size(w) == 32);
	check(tlr_writer_error(w) == 0);
	check(tlr_write(w, 2, parts, lens, 1) == 0);
	check(tlr_writer_size(w) == 48);
	check(tlr_writer_close(w) == 0);
	check(tlr_writer_create("/nonexistent-dir/x.tlr") == NULL &&
	      errno == ENOENT);
}

/*
 * Records bigger than the writer's buffer, up to the 64 MiB limit, go
 * straight to the file, in order with the buffered ones around them.
 */
static void test_writer_big_records(void)
{
	static const size_t sizes[] = {
		16, (3u << 20) + 3, 5, (1u << 20) - 8, 1,
		TLR_MAX_RECORD_SIZE - 13,	/* padded to the limit */
	};
	const unsigned int nr = sizeof(sizes) / sizeof(sizes[0]);
	unsigned char *big = malloc(TLR_MAX_RECORD_SIZE);
	char path[PATH_MAX], err[256];
	struct tlr_writer *w;
	struct tlr_reader *r;
	struct tlr_record rec;
	unsigned int i;
	size_t j;

	check(big);
	if (!big)
		return;
	for (j = 0; j < TLR_MAX_RECORD_SIZE; j++)
		big[j] = (unsigned char)(j * 7 + (j >> 13));
	tmp_path(path, "big.tlr");
	w = tlr_writer_create(path);
	check(w);
	for (i = 0; w && i < nr; i++)
		check(write2(w, 100 + i, big + i, sizes[i], NULL, 0) == 0);
	check(w && tlr_writer_close(w) == 0);

	r = tlr_reader_open(path, err, sizeof(err));
	check(r);
	for (i = 0; r && i < nr; i++) {
		check(tlr_next(r, &rec) == 1);
		check(rec.type == 100 + i && rec.size == pad8(sizes[i]));
		check(rec.size == pad8(sizes[i]) &&
		      !memcmp(rec.payload, big + i, sizes[i]) &&
		      !memcmp((const char *)rec.payload + sizes[i],
			      "\0\0\0\0\0\0\0", rec.size - sizes[i]));
	}
	check(r && tlr_next(r, &rec) == 0);
	tlr_reader_close(r);
	unlink(path);
	free(big);
}

/* /dev/full: every write fails with ENOSPC, and keeps failing. */
static void test_writer_disk_full(void)
{
	static char payload[64 << 10];
	struct tlr_writer *w = tlr_writer_create("/dev/full");
	int i, ret = 0;

	check(w);
	if (!w)
		return;
	for (i = 0; i < 100 && !ret; i++)
		ret = write2(w, 100, payload, sizeof(payload), NULL, 0);
	check(ret == -ENOSPC);
	check(i > 1);		/* the first ones only filled the buffer */
	check(write2(w, 100, "x", 1, NULL, 0) == -ENOSPC);
	check(tlr_write(w, 100, NULL, NULL, 0) == -ENOSPC);
	check(tlr_write_flush(w) == -ENOSPC);
	check(tlr_writer_error(w) == -ENOSPC);
	check(tlr_writer_size(w) == 0);
	check(tlr_writer_close(w) == -ENOSPC);

	/* An explicit flush reports it too. */
	w = tlr_writer_create("/dev/full");
	check(w);
	if (!w)
		return;
	check(write2(w, TLR_META, "a=b\n", 4, NULL, 0) == 0);
	check(tlr_write_flush(w) == -ENOSPC);
	check(write2(w, TLR_META, "a=b\n", 4, NULL, 0) == -ENOSPC);
	check(tlr_writer_close(w) == -ENOSPC);
}

/*
 * In a child limited to @limit bytes per file (RLIMIT_FSIZE, SIGXFSZ
 * ignored: writes past it fail with EFBIG), write numbered records of
 * @payload bytes until the writer gives up.  Exit status 0 if the writer
 * behaved, else the number of the check that failed.
 */
static void fsize_child(const char *path, rlim_t limit, size_t payload)
{
	struct rlimit rl = { .rlim_cur = limit, .rlim_max = limit };
	unsigned char *buf = malloc(payload);
	struct tlr_writer *w;
	struct stat st;
	uint64_t i;
	size_t j;
	int ret = 0;

	signal(SIGXFSZ, SIG_IGN);
	if (!buf || setrlimit(RLIMIT_FSIZE, &rl) < 0)
		_exit(10);
	w = tlr_writer_create(path);
	if (!w)
		_exit(11);
	for (i = 0; i < 100000 && !ret; i++) {
		for (j = 0; j < payload; j++)
			buf[j] = (unsigned char)(i + j);
		memcpy(buf, &i, sizeof(i));
		ret = write2(w, 100, buf, payload, NULL, 0);
	}
	if (ret != -EFBIG)
		_exit(12);
	if (write2(w, 100, buf, 8, NULL, 0) != -EFBIG ||
	    tlr_write_flush(w) != -EFBIG || tlr_writer_error(w) != -EFBIG)
		_exit(13);
	if (stat(path, &st) < 0 || (uint64_t)st.st_size != tlr_writer_size(w))
		_exit(14);
	if (tlr_writer_close(w) != -EFBIG)
		_exit(15);
	_exit(0);
}

/* The file the child left holds whole, numbered records and ends cleanly. */
static void check_fsize_file(const char *path, rlim_t limit, size_t payload)
{
	struct tlr_reader *r;
	struct tlr_record rec;
	char err[256];
	uint64_t i = 0, num;
	struct stat st;
	int ret;

	check(stat(path, &st) == 0);
	check((uint64_t)st.st_size < limit);
	r = tlr_reader_open(path, err, sizeof(err));
	check(r);
	if (!r) {
		printf("# %s\n", err);
		return;
	}
	while ((ret = tlr_next(r, &rec)) == 1) {
		const unsigned char *p = rec.payload;

		memcpy(&num, p, sizeof(num));
		check(rec.type == 100 && rec.size == pad8(payload) && num == i);
		check(p[payload - 1] == (unsigned char)(i + payload - 1));
		i++;
	}
	check(ret == 0);	/* no partial record at the end */
	if (ret)
		printf("# %s\n", tlr_reader_error(r));
	check(i > 0);
	check((uint64_t)st.st_size == 32 + i * (8 + pad8(payload)));
	tlr_reader_close(r);
}

static void fsize_case(const char *name, rlim_t limit, size_t payload)
{
	char path[PATH_MAX];
	int status;
	pid_t pid;

	tmp_path(path, name);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		fsize_child(path, limit, payload);
	check(pid > 0);
	check(waitpid(pid, &status, 0) == pid);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("# child status 0x%x\n", status);
	check_fsize_file(path, limit, payload);
	unlink(path);
}

static void test_writer_fsize_buffered(void)
{
	/* Buffer flushes of ~1 MiB: the fourth crosses the limit. */
	fsize_case("fsize-small.tlr", (3u << 20) + 12345, 4000);
}

static void test_writer_fsize_direct(void)
{
	/* Records bigger than the buffer: the third crosses the limit. */
	fsize_case("fsize-big.tlr", (4u << 20) + 100, (3u << 19) + 5);
}

/* ---- main ---- */

struct test {
	const char *name;
	void (*fn)(void);
};

/* A FILE piece of @path: @n bytes of @bytes at @off of a @size-byte file. */
static int write_piece(struct tlr_writer *w, const char *path, const void *bytes,
		       uint32_t n, uint64_t off, uint64_t size)
{
	struct tlr_file h = { .kind = TLR_FILE_JITDUMP, .pid = 42, .offset = off,
			      .file_size = size, .path_len = (uint32_t)strlen(path) + 1,
			      .piece_size = n };
	const void *parts[3] = { &h, path, bytes };
	size_t lens[3] = { sizeof(h), h.path_len, n };

	return tlr_write(w, TLR_FILE, parts, lens, 3);
}

/*
 * A file carried in two pieces comes back whole through the session; one
 * whose pieces do not follow each other is not offered at all.
 */
static void test_carried_files(void)
{
	static const char dump[] = "0123456789abcdefghij";
	char path[PATH_MAX], err[256];
	struct session_options so = { .tag_reg = 23 };
	struct tlr_writer *w;
	struct session *s;
	const void *data;
	size_t len;

	tmp_path(path, "carried.rec");
	w = tlr_writer_create(path);
	check(w);
	if (!w)
		return;
	check_int(write2(w, TLR_META, meta_text, sizeof(meta_text) - 1, NULL, 0), ==, 0);
	check_int(write_piece(w, "/tmp/jit-42.dump", dump, 7, 0, 20), ==, 0);
	check_int(write_piece(w, "/tmp/jit-42.dump", dump + 7, 13, 7, 20), ==, 0);
	check_int(write_piece(w, "/tmp/perf-42.map", dump, 5, 0, 10), ==, 0);
	check_int(write_piece(w, "/tmp/perf-42.map", dump, 4, 6, 10), ==, 0);	/* a gap */
	check_int(write2(w, TLR_END, end_text, sizeof(end_text) - 1, NULL, 0), ==, 0);
	check_int(tlr_writer_close(w), ==, 0);
	s = session_open(path, &so, err, sizeof(err));
	check(s);
	if (!s) {
		printf("# %s\n", err);
		return;
	}
	check_int(session_file(s, "/tmp/jit-42.dump", &data, &len), ==, 0);
	check_uint(len, ==, 20);
	check(len == 20 && !memcmp(data, dump, 20));
	check_int(session_file(s, "/tmp/perf-42.map", &data, &len), ==, -ENOENT);
	check_int(session_file(s, "/tmp/jit-43.dump", &data, &len), ==, -ENOENT);
	session_close(s);
}

static void test_bad_file_pieces(void)
{
	struct {
		struct tlr_file h;
		char rest[24];
	} f = { .h = { .kind = TLR_FILE_JITDUMP, .pid = 1, .file_size = 8, .path_len = 4,
		       .piece_size = 8 }, .rest = "/a\0\0" };

	memcpy(f.rest, "/ab", 4);
	expect_lone_record(TLR_FILE, &f, sizeof(f.h) + 16, 1, 0, "");
	f.h.kind = 3;
	expect_lone_record(TLR_FILE, &f, sizeof(f.h) + 16, 0, 40, "kind 3 is neither");
	f.h.kind = TLR_FILE_PERF_MAP;
	f.h.path_len = 40;
	expect_lone_record(TLR_FILE, &f, sizeof(f.h) + 16, 0, 64, "does not end within");
	f.h.path_len = 4;
	f.h.piece_size = 13;
	expect_lone_record(TLR_FILE, &f, sizeof(f.h) + 16, 0, 68, "runs past the record");
	f.h.piece_size = 8;
	f.h.offset = 4;
	expect_lone_record(TLR_FILE, &f, sizeof(f.h) + 16, 0, 48, "outside a file of 8 bytes");
}

static const struct test tests[] = {
	{ "write and read back a recording (mmap)", test_roundtrip_file },
	{ "read back from memory", test_roundtrip_mem },
	{ "read back from a pipe (read fallback)", test_roundtrip_fifo },
	{ "every prefix reads up to its last complete record", test_every_prefix },
	{ "empty, short, foreign and missing files", test_short_files },
	{ "bad file header", test_bad_file_header },
	{ "bad record sizes", test_bad_record_size },
	{ "bad SAMPLES", test_bad_samples },
	{ "SAMPLES_PACKED read, and every bad field named", test_bad_packed },
	{ "format 3: a packed batch's summary checked alone, then against its samples",
	  test_packed_summary },
	{ "bad MMAP, COMM, TASK, META, END", test_bad_sideband },
	{ "payloads too short for their type", test_short_payloads },
	{ "FILE records: a carried file comes back whole, a broken one not at all",
	  test_carried_files },
	{ "bad FILE pieces are named with their field", test_bad_file_pieces },
	{ "tlr_kv_get", test_kv_get },
	{ "tlr_kv_get_u64", test_kv_get_u64 },
	{ "writer record layout and padding", test_writer_layout },
	{ "writer refuses bad records, stays usable", test_writer_refuses },
	{ "writer: records bigger than its buffer, up to 64 MiB", test_writer_big_records },
	{ "writer: disk full (/dev/full)", test_writer_disk_full },
	{ "writer: file size limit while buffering", test_writer_fsize_buffered },
	{ "writer: file size limit on a direct write", test_writer_fsize_direct },
};

static void remove_tmpdir(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(tmpdir);

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		tmp_path(path, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

int main(void)
{
	const int nr = sizeof(tests) / sizeof(tests[0]);
	const char *base = getenv("TMPDIR");
	int i;

	snprintf(tmpdir, sizeof(tmpdir), "%s/recording_test.XXXXXX",
		 base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		TEST(check_contains(strerror(errno), "no error"), "a scratch directory %s", tmpdir);
		return test_done();
	}
	for (i = 0; i < nr; i++)
		TEST(tests[i].fn(), "%s", tests[i].name);
	remove_tmpdir();
	return test_done();
}

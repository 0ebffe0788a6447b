// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes the fuzzer's seed recordings (tests/fuzz/corpus/) with the real
 * writer, so the seeds are valid files libFuzzer mutates from rather than
 * noise it must first turn into a header.  Run once by hand when the
 * format changes:
 *
 *   gcc -std=gnu11 -D_GNU_SOURCE -Iuserspace/include -Iuserspace/lib -Ikmod/include \
 *       tests/fuzz/make_corpus.c userspace/lib/format/recording_writer.c \
 *       userspace/lib/format/sample_pack.c \
 *       -o /tmp/make_corpus && /tmp/make_corpus tests/fuzz/corpus [SEED]
 *
 * The seeds of format 1 (minimal, every-type, wide-no-end) were written
 * before format 2 and are kept as they are: old recordings must read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailor/recording.h"
#include "tailor/sample_pack.h"
#include "uapi/tailor.h"

static const char meta[] =
	"format=tailor-recording 1\n"
	"tool=tailor 0.1\n"
	"event=cycles\n"
	"event_config=0x3c\n"
	"record_size=32\n"
	"regs_mask=0x800000\n";
static const char end[] =
	"reason=target-exited\n"
	"samples=3\n";

static int put(struct tlr_writer *w, uint32_t type, const void *a,
	       size_t alen, const void *b, size_t blen)
{
	const void *parts[] = { a, b };
	size_t lens[] = { alen, blen };

	return tlr_write(w, type, parts, lens, b ? 2 : 1);
}

/* @count samples of @record_size bytes: tsc, ip, who, then registers. */
static int put_samples(struct tlr_writer *w, uint32_t record_size,
		       uint32_t count)
{
	struct tlr_samples hdr = { .record_size = record_size, .count = count };
	uint64_t words[64] = { 0 };
	uint32_t i, per = record_size / 8;

	for (i = 0; i < count && (i + 1) * per <= 64; i++) {
		words[i * per] = 5000 + i * 100;
		words[i * per + 1] = 0x401000 + i * 4;
		words[i * per + 2] = tailor_who_pack(100 + i, 100, i, 0);
		words[i * per + 3] = 0xabc0 + i;
	}
	return put(w, TLR_SAMPLES, &hdr, sizeof(hdr), words,
		   (size_t)count * record_size);
}

/* The format the file being made is in: packed batches differ. */
static uint32_t corpus_version;

/*
 * The same samples packed, with a second thread and kernel IPs; from
 * format 3 with the batch's summary after its header.
 */
static int put_packed(struct tlr_writer *w, uint32_t record_size, uint32_t count)
{
	struct tlr_samples_packed hdr = { .record_size = record_size, .count = count };
	uint64_t words[64] = { 0 };
	uint8_t packed[1024];
	struct tlr_pack_state st;
	uint32_t i, per = record_size / 8;
	size_t len = 0;

	if (tlr_pack_begin(&st, record_size) || (size_t)count * per > 64)
		return -1;
	for (i = 0; i < count; i++) {
		uint32_t sf = i % 3 ? 0 : TAILOR_SF_KERNEL;

		words[i * per] = 5000 + i * 100 - (i % 2) * 7;
		words[i * per + 1] = (sf ? 0xffffffff81000000ull : 0x401000) + i * 4;
		words[i * per + 2] = tailor_who_pack(100 + i % 2, 100, i % 2, sf);
		if (per > 3)
			words[i * per + 3] = i % 4 ? 0xabc0 : 0;
		if (per > 4)
			words[i * per + 4] = words[i * per + 1];
		len += tlr_pack_one(&st, &words[i * per], packed + len);
	}
	hdr.packed_size = (uint32_t)len;
	if (corpus_version >= 3) {
		const void *parts[] = { &hdr, &st.sum, packed };
		size_t lens[] = { sizeof(hdr), sizeof(st.sum), len };

		return tlr_write(w, TLR_SAMPLES_PACKED, parts, lens, 3);
	}
	return put(w, TLR_SAMPLES_PACKED, &hdr, sizeof(hdr), packed, len);
}

/*
 * Packed batches between the side-band, as tailor record writes: all of
 * one sample size (an empty batch may state another; it holds none).
 */
static int packed(struct tlr_writer *w)
{
	return put(w, TLR_META, meta, strlen(meta), NULL, 0) ||
	       put_packed(w, 40, 12) ||
	       put(w, TLR_ROUND, NULL, 0, NULL, 0) ||
	       put_packed(w, 40, 5) ||
	       put_packed(w, 24, 0) ||
	       put(w, TLR_END, end, strlen(end), NULL, 0);
}

static int minimal(struct tlr_writer *w)
{
	return put(w, TLR_META, meta, strlen(meta), NULL, 0) ||
	       put(w, TLR_END, end, strlen(end), NULL, 0);
}

static int every_type(struct tlr_writer *w)
{
	static const char path[] = "/usr/bin/true";
	static const char name[] = "true";
	struct tlr_mmap m = { .tsc = 1, .pid = 100, .tid = 100,
			      .start = 0x400000, .len = 0x1000, .prot = 5,
			      .time_kind = TLR_TIME_START };
	struct tlr_comm c = { .tsc = 2, .pid = 100, .tid = 100,
			      .flags = TLR_COMM_EXEC };
	struct tlr_task t = { .tsc = 3, .event = TLR_TASK_FORK, .pid = 100,
			      .tid = 101, .ppid = 100, .ptid = 100 };
	struct tlr_switch out = { .tsc = 4, .pid = 100, .tid = 101, .cpu = 1,
				  .flags = TLR_SWITCH_OUT, .other_pid = -1, .other_tid = -1 };
	struct tlr_switch in = { .tsc = 5, .pid = 100, .tid = 101, .cpu = 0,
				 .other_pid = -1, .other_tid = -1 };
	struct tlr_wakeup wake = { .tsc = 5, .pid = 100, .tid = 100, .cpu = 0,
				   .target_tid = 101, .target_cpu = 0 };
	/* The path, then the piece: a perf map line. */
	static const char file_rest[] = "/tmp/perf-100.map\0" "1000 10 jitted\n";
	struct tlr_file file = { .kind = TLR_FILE_PERF_MAP, .pid = 100, .file_size = 15,
				 .path_len = 18, .piece_size = 15 };

	return put(w, TLR_META, meta, strlen(meta), NULL, 0) ||
	       put(w, TLR_MMAP, &m, sizeof(m), path, sizeof(path)) ||
	       put(w, TLR_COMM, &c, sizeof(c), name, sizeof(name)) ||
	       put(w, TLR_TASK, &t, sizeof(t), NULL, 0) ||
	       put(w, TLR_SWITCH, &out, sizeof(out), NULL, 0) ||
	       put(w, TLR_WAKEUP, &wake, sizeof(wake), NULL, 0) ||
	       put(w, TLR_SWITCH, &in, sizeof(in), NULL, 0) ||
	       put_samples(w, 32, 2) ||
	       put(w, TLR_FILE, &file, sizeof(file), file_rest, sizeof(file_rest)) ||
	       put(w, 77, "future", 6, NULL, 0) ||
	       put_samples(w, 32, 1) ||
	       put(w, TLR_END, end, strlen(end), NULL, 0);
}

/*
 * Kernel samples and the functions they fell in (KALLSYMS): two in
 * do_syscall_64, one in clear_page_erms, one in user code.  Their names
 * come from the record, whatever host reads it (tests/golden).
 */
static int kernel_symbols(struct tlr_writer *w)
{
	static const char path[] = "/usr/bin/true";
	static const char ksyms[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81001000 t do_syscall_64\n"
		"ffffffff81002000 T clear_page_erms\n";
	static const uint64_t ips[] = {
		0xffffffff81001010, 0xffffffff81001ff0, 0xffffffff81002004, 0x400010,
	};
	struct tlr_mmap m = { .tsc = 1, .pid = 100, .tid = 100,
			      .start = 0x400000, .len = 0x1000, .prot = 5,
			      .time_kind = TLR_TIME_START };
	struct tlr_samples hdr = { .record_size = 32, .count = 4 };
	uint64_t words[16] = { 0 };
	uint32_t i;

	for (i = 0; i < 4; i++) {
		words[i * 4] = 5000 + i * 100;
		words[i * 4 + 1] = ips[i];
		words[i * 4 + 2] = tailor_who_pack(100, 100, 0, i < 3 ? TAILOR_SF_KERNEL : 0);
	}
	return put(w, TLR_META, meta, strlen(meta), NULL, 0) ||
	       put(w, TLR_MMAP, &m, sizeof(m), path, sizeof(path)) ||
	       put(w, TLR_SAMPLES, &hdr, sizeof(hdr), words, sizeof(words)) ||
	       put(w, TLR_KALLSYMS, ksyms, strlen(ksyms), NULL, 0) ||
	       put(w, TLR_END, end, strlen(end), NULL, 0);
}

/* Wider samples (more registers, a data address); no END: cut short. */
static int wide_no_end(struct tlr_writer *w)
{
	return put(w, TLR_META, meta, strlen(meta), NULL, 0) ||
	       put_samples(w, 48, 3) ||
	       put_samples(w, 24, 0);
}

static int make(const char *dir, const char *name, uint32_t version,
		int (*fill)(struct tlr_writer *))
{
	char path[4096];
	struct tlr_writer *w;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	corpus_version = version;
	w = tlr_writer_create_version(path, version);
	if (!w) {
		perror(path);
		return 1;
	}
	ret = fill(w);
	if (tlr_writer_close(w) || ret) {
		fprintf(stderr, "%s: write failed\n", path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s CORPUS_DIR [SEED]\n", argv[0]);
		return 2;
	}
	/* One seed: the others, of older formats, are kept as they are. */
	if (argc == 3 && !strcmp(argv[2], "kernel-symbols.tlr"))
		return make(argv[1], argv[2], TLR_VERSION, kernel_symbols);
	if (argc == 3) {
		fprintf(stderr, "%s: no seed '%s' (one: kernel-symbols.tlr)\n", argv[0], argv[2]);
		return 2;
	}
	return make(argv[1], "kernel-symbols.tlr", TLR_VERSION, kernel_symbols) |
	       make(argv[1], "minimal.tlr", TLR_VERSION, minimal) |
	       make(argv[1], "every-type.tlr", TLR_VERSION, every_type) |
	       make(argv[1], "wide-no-end.tlr", TLR_VERSION, wide_no_end) |
	       make(argv[1], "packed.tlr", TLR_VERSION, packed) |
	       make(argv[1], "packed-v2.tlr", 2, packed);
}

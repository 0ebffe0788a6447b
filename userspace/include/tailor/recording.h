/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tailor recording format, version 3 (docs/recording-format.md is the
 * spec; this header is its C form).  Version 2 added packed samples
 * (TLR_SAMPLES_PACKED), version 3 a summary in each packed batch's header;
 * readers still read versions 1 and 2.  One reader/writer library
 * (userspace/lib/recording_*.c) serves every command.
 *
 * A recording is a file header followed by records, each an 8-byte
 * header { type, size } and a payload, size covering both and a multiple
 * of 8.  Readers skip record types they do not know, by size.  All
 * integers are little-endian (x86-64 native).
 */
#ifndef TAILOR_RECORDING_H
#define TAILOR_RECORDING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TLR_MAGIC		"TAILORRC"
/*
 * 4: samples may carry OpenTelemetry's ids (META flags_used OTEL_CTX),
 * after the tag word: a version-3 reader would take them for the stack id.
 */
#define TLR_VERSION		4
#define TLR_MAX_RECORD_SIZE	(64u << 20)

struct tlr_file_header {
	char magic[8];		/* TLR_MAGIC, no NUL */
	uint32_t version;	/* TLR_VERSION */
	uint32_t header_size;	/* sizeof(struct tlr_file_header) */
	uint64_t flags;		/* none defined; must be 0 */
	uint64_t reserved;	/* must be 0 */
};

struct tlr_record_header {
	uint32_t type;		/* enum tlr_record_type */
	uint32_t size;		/* header + payload, multiple of 8, >= 8 */
};

enum tlr_record_type {
	TLR_META	= 1,	/* text: key=value lines; first record */
	TLR_SAMPLES	= 2,	/* struct tlr_samples + samples */
	TLR_MMAP	= 3,	/* struct tlr_mmap + path */
	TLR_COMM	= 4,	/* struct tlr_comm + name */
	TLR_TASK	= 5,	/* struct tlr_task */
	TLR_END		= 6,	/* text: key=value lines; last record */
	/*
	 * Empty.  Every source was drained to empty since the previous
	 * ROUND: no record after the next ROUND is older than the newest
	 * record before this one (perf's FINISHED_ROUND).
	 */
	TLR_ROUND	= 7,
	TLR_SWITCH	= 8,	/* struct tlr_switch: a context switch */
	TLR_WAKEUP	= 9,	/* struct tlr_wakeup: a thread woken */
	TLR_FILE	= 10,	/* struct tlr_file + path + a piece of the file */
	TLR_SAMPLES_PACKED = 11, /* struct tlr_samples_packed + packed samples */
	/*
	 * Text in /proc/kallsyms's form: _text, then the kernel's function
	 * symbols that the recording's kernel samples fell in, one each --
	 * so that a report names them wherever it runs.  Before END.
	 */
	TLR_KALLSYMS	= 12,
	/*
	 * struct tlr_stack + its entries: a call stack (tailor record
	 * --call-graph fp), written once, before the first batch with a
	 * sample on it.  Such a recording's samples (TAILOR_CFG_CALLCHAIN in
	 * META's flags_used) end with one word more, after the tag word:
	 * their stack's id, 0 for none.
	 */
	TLR_STACK	= 13,
	/*
	 * Text, "PATH\tHEX\n" a file: the GNU build-ids of the files the
	 * recording mapped, as they were when it ended (perf.data's BUILD_ID
	 * feature).  Once, before END.
	 */
	TLR_BUILD_IDS	= 14,
	/* 15..: application markers, labels (later) */
};

/*
 * A batch of samples exactly as /dev/tailor delivered them (struct
 * tailor_sample in kmod/include/uapi/tailor.h, record_size bytes each).
 */
struct tlr_samples {
	uint32_t record_size;	/* >= 24, multiple of 8; = META record_size */
	uint32_t count;
	/* count * record_size bytes follow */
};

/*
 * Version 2: a batch of samples packed (tailor/sample_pack.h), which
 * unpack to exactly what TLR_SAMPLES would hold.  At most
 * TLR_MAX_RECORD_SIZE bytes unpacked.
 */
struct tlr_samples_packed {
	uint32_t record_size;	/* of each unpacked sample, as in TLR_SAMPLES */
	uint32_t count;
	uint32_t packed_size;	/* bytes of the stream after the header */
	uint32_t reserved;	/* 0 */
	/* version 3: struct tlr_samples_summary; then packed_size bytes, padding */
};

/*
 * Version 3: what a packed batch holds, after its header, so that a
 * reader that needs only counts and times (the first pass of a report)
 * does not unpack it.  Unpacking checks it.
 */
struct tlr_samples_summary {
	uint64_t min_tsc;	/* of the batch's samples; ~0 if none */
	uint64_t max_tsc;	/* 0 if none */
	uint32_t flags_any;	/* their TAILOR_SF_* bits ORed */
	uint32_t tag_word_bad;	/* how many have TAILOR_SF_TAG_WORD_BAD */
};

/* Both batches start alike: readers take count and size from either. */
_Static_assert(offsetof(struct tlr_samples_packed, count) == offsetof(struct tlr_samples, count),
	       "tlr_samples_packed starts as tlr_samples");

/* How a side-band record's tsc was obtained. */
enum tlr_time_kind {
	TLR_TIME_TSC	= 0,	/* the kernel stamped it with the TSC */
	TLR_TIME_PERF	= 1,	/* perf time converted with time_zero/mult */
	TLR_TIME_SEEN	= 2,	/* rdtsc when the collector read it (later) */
	TLR_TIME_START	= 3,	/* existed at start (from /proc/PID/maps) */
};

/* An executable mapping of a sampled process. */
struct tlr_mmap {
	uint64_t tsc;
	uint32_t pid;
	uint32_t tid;
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t prot;		/* PROT_* */
	uint32_t time_kind;	/* enum tlr_time_kind */
	/* NUL-terminated path, padded with NULs to the record size */
};

#define TLR_COMM_EXEC	1u	/* the name changed by exec */

struct tlr_comm {
	uint64_t tsc;
	uint32_t pid;
	uint32_t tid;
	uint32_t flags;		/* TLR_COMM_* */
	uint32_t time_kind;
	/* NUL-terminated name, padded */
};

enum tlr_task_event {
	TLR_TASK_FORK = 1,
	TLR_TASK_EXIT = 2,
};

struct tlr_task {
	uint64_t tsc;
	uint32_t event;		/* enum tlr_task_event */
	uint32_t time_kind;
	uint32_t pid;
	uint32_t tid;
	uint32_t ppid;
	uint32_t ptid;
};

#define TLR_SWITCH_OUT		1u	/* switched out; else in */
#define TLR_SWITCH_PREEMPTED	2u	/* out while still runnable */
#define TLR_SWITCH_FLAGS	(TLR_SWITCH_OUT | TLR_SWITCH_PREEMPTED)

/*
 * A context switch of a recorded thread, on @cpu: perf's side-band
 * PERF_RECORD_SWITCH (or _CPU_WIDE, which also names the thread on the
 * other side).
 */
struct tlr_switch {
	uint64_t tsc;
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t flags;		/* TLR_SWITCH_* */
	int32_t other_pid;	/* the thread switched to or from, or -1 */
	int32_t other_tid;
	uint32_t time_kind;	/* enum tlr_time_kind */
	uint32_t reserved;	/* 0 */
};

/*
 * A thread woken by a recorded thread (@pid/@tid, on @cpu): the
 * sched:sched_waking tracepoint through perf's side-band.  The kernel
 * names the woken thread by its tid alone.
 */
struct tlr_wakeup {
	uint64_t tsc;
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t target_tid;
	int32_t target_cpu;	/* where it is to run, or -1 */
	uint32_t time_kind;	/* enum tlr_time_kind */
};

enum tlr_file_kind {
	TLR_FILE_JITDUMP = 1,	/* a JIT's jit-PID.dump */
	TLR_FILE_PERF_MAP = 2,	/* a JIT's /tmp/perf-PID.map */
};

/*
 * A file a report needs that may be gone by then (a JIT's, in /tmp),
 * copied in at the end of the recording.  A file larger than a record
 * comes in pieces, in order: @offset is this piece's place in it.
 */
struct tlr_file {
	uint32_t kind;		/* enum tlr_file_kind */
	uint32_t pid;		/* the process it describes */
	uint64_t offset;	/* of this piece in the file */
	uint64_t file_size;	/* the whole file's */
	uint32_t path_len;	/* bytes of the path that follows, its NUL included */
	uint32_t piece_size;	/* bytes of the file after the path */
	/* the path as the JIT wrote it, then the piece */
};

/*
 * A call stack as the kernel gave it (kmod/include/uapi/tailor.h, perf's
 * PERF_SAMPLE_CALLCHAIN): leaf first, PERF_CONTEXT_* markers among the
 * addresses.  Ids count from 1, one more each record.
 */
struct tlr_stack {
	uint32_t id;
	uint32_t nr;		/* entries that follow */
	/* nr uint64_t entries */
};

/* ---- writer (recording_writer.c) ---- */

struct tlr_writer;

/*
 * Create @path (truncating, mode 0600) and write the file header; NULL +
 * errno.  The header is buffered like a record: an error writing it (a
 * full disk) shows up at the first flush.
 */
struct tlr_writer *tlr_writer_create(const char *path);
/*
 * The same, for an older format @version (1 to TLR_VERSION; else NULL,
 * EINVAL): the caller lays its records out as that version does.  For
 * tests of old recordings.
 */
struct tlr_writer *tlr_writer_create_version(const char *path, uint32_t version);
/*
 * Append one record of @type from @n payload parts (padded to 8 bytes).
 * Buffered.  Returns 0, or -errno once a write has failed: the file is
 * then cut back to its last complete record and nothing more is written.
 * -EINVAL, nothing written and not sticky: @n < 0, a NULL part of non-zero
 * length, or a record over TLR_MAX_RECORD_SIZE.
 */
int tlr_write(struct tlr_writer *w, uint32_t type, const void *const parts[],
	      const size_t lens[], int n);
int tlr_write_flush(struct tlr_writer *w);
/* Bytes in the file when everything buffered is written. */
uint64_t tlr_writer_size(const struct tlr_writer *w);
int tlr_writer_error(const struct tlr_writer *w);	/* 0 or -errno */
/* Flush and close; returns the first error, if any. */
int tlr_writer_close(struct tlr_writer *w);

/* ---- reader (recording_reader.c) ---- */

struct tlr_reader;

struct tlr_record {
	uint32_t type;
	uint32_t size;		/* payload bytes */
	uint64_t offset;	/* of the record header in the file */
	const void *payload;	/* valid until the reader is closed */
	/*
	 * SAMPLES and SAMPLES_PACKED: the samples, raw, whose count and
	 * record_size are the first two fields of either payload.  A packed
	 * batch is unpacked once, by the check, into the reader's buffer:
	 * valid until the next tlr_next() (a raw batch's until close).
	 */
	const void *samples;
	/*
	 * SAMPLES_PACKED: what the batch holds, until the next tlr_next().
	 * Read by a reader told tlr_reader_summarize(), the batch is not
	 * unpacked (samples NULL): in format 3 the summary is the one its
	 * header states (checked when the batch is unpacked), before that
	 * the stream was checked and summarized.  Told
	 * tlr_reader_leave_packed(): samples NULL, and the summary NULL
	 * before format 3.
	 */
	const struct tlr_samples_summary *summary;
};

/*
 * Open a recording (or a buffer, which must outlive the reader).  On
 * failure returns NULL and writes a message naming the problem to @err
 * (not the path: the caller adds it).  Payloads are 8-byte aligned when
 * the buffer is.
 */
struct tlr_reader *tlr_reader_open(const char *path, char *err, size_t errlen);
struct tlr_reader *tlr_reader_open_mem(const void *data, size_t len,
				       char *err, size_t errlen);
void tlr_reader_close(struct tlr_reader *r);
/*
 * From now on, check packed batches and summarize them instead of
 * unpacking them: for a first pass that needs only counts and times.
 */
void tlr_reader_summarize(struct tlr_reader *r);
/*
 * From now on, check only a packed batch's header and leave its stream
 * to the caller: for a pass that unpacks into memory of its own with
 * tlr_unpack_record().
 */
void tlr_reader_leave_packed(struct tlr_reader *r);
/*
 * Unpack SAMPLES_PACKED record @rec, which @r's tlr_next() returned, into
 * @out (count * record_size bytes, 8-byte aligned): 0; -1 with what is
 * wrong with the stream in @err; -2 when the stream is good but the
 * summary in its header (format 3) is not the samples'.
 */
int tlr_unpack_record(const struct tlr_reader *r, const struct tlr_record *rec, void *out,
		      char *err, size_t errlen);
/*
 * The next record, validated for its type: 1 and *rec filled, 0 at a
 * clean end of file, -1 on a corrupt or truncated file (tlr_reader_error()
 * says where and what; the records before it were good).  0 too at a
 * record boundary without END: the caller checks the last record was END.
 * Once -1, always -1.
 */
int tlr_next(struct tlr_reader *r, struct tlr_record *rec);
/* The format version of the file (its header's). */
uint32_t tlr_reader_version(const struct tlr_reader *r);
/* "offset N: what", or "" while nothing went wrong. */
const char *tlr_reader_error(const struct tlr_reader *r);

/*
 * Look up @key in a META/END text payload; copies the value into @buf.
 * Returns the value's length, or -1 if absent (or too long for @buf).
 * The first "key=" at a line start wins.
 */
int tlr_kv_get(const void *text, size_t len, const char *key, char *buf,
	       size_t buflen);
/*
 * Same, parsed as an unsigned number (decimal or 0x hex): 0, or -1 if
 * absent, not all digits, or over 64 bits (*@val then untouched).
 */
int tlr_kv_get_u64(const void *text, size_t len, const char *key,
		   uint64_t *val);

#endif /* TAILOR_RECORDING_H */

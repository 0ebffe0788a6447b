/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Readers of the files JITs leave for profilers, perf's JIT interface:
 *
 *   jitdump.c   jit-PID.dump, code loads and moves with times, and the
 *               source lines of the code (tools/perf/Documentation/
 *               jitdump-specification.txt)
 *   perfmap.c   /tmp/perf-PID.map, a name for each address range
 *
 * Both read a whole file from memory and call back for what it holds, in
 * file order; strings point into the buffer (a jitdump's are checked to
 * end within their record, a perf map's are not terminated: use the
 * length).  Both are fed untrusted bytes and fuzzed (tests/fuzz).
 */
#ifndef TAILOR_JIT_SOURCES_H
#define TAILOR_JIT_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JITDUMP_MAGIC		0x4A695444u	/* "JiTD" as a little-endian u32 */
#define JITDUMP_HEADER_SIZE	40u
#define JITDUMP_FLAG_TSC	1ull		/* JITDUMP_FLAGS_ARCH_TIMESTAMP */

enum jitdump_record {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

struct jitdump_header {
	uint32_t version;
	uint32_t pid;
	uint64_t timestamp;
	bool tsc;		/* times are TSC ticks; else CLOCK_MONOTONIC ns */
};

/* A source line: from @addr up to the next entry's address. */
struct jit_line {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

struct jit_load {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t code_addr, code_size, code_index;
	const char *name;
	/* From the DEBUG_INFO record for this code_addr just before it. */
	const struct jit_line *lines;
	size_t nr_lines;
};

struct jit_move {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t old_addr, new_addr, code_size, code_index;
};

struct jitdump_handler {
	int (*load)(void *ctx, const struct jit_load *l);
	int (*move)(void *ctx, const struct jit_move *m);
};

/* A jitdump's name as perf's JIT interface gives it: jit-PID.dump. */
bool jitdump_is_path(const char *path);

/*
 * Reads the jitdump in @buf: fills @hdr, then calls @h for each load and
 * move.  0 when the whole file was read; -EINVAL when it is not a jitdump
 * or is corrupt or truncated, @err naming the problem and its offset
 * (what came before was delivered); -ENOMEM; or a handler's non-zero
 * return.  Records of unknown kinds are skipped.
 */
int jitdump_read(const uint8_t *buf, size_t len, struct jitdump_header *hdr,
		 const struct jitdump_handler *h, void *ctx, char *err, size_t errlen);

struct perfmap_entry {
	uint64_t start, size;
	const char *name;	/* not NUL-terminated */
	size_t name_len;
};

/*
 * Reads the perf map in @buf ("START SIZE NAME" lines, START and SIZE in
 * hex), calling @fn for each entry.  Lines that are not entries are
 * skipped and counted in *@bad, the first named in @err with its line
 * number and offset.  0, -ENOMEM, or @fn's non-zero return.
 */
int perfmap_read(const char *buf, size_t len,
		 int (*fn)(void *ctx, const struct perfmap_entry *e), void *ctx,
		 size_t *bad, char *err, size_t errlen);

#endif /* TAILOR_JIT_SOURCES_H */

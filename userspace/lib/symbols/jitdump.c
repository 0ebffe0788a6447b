// SPDX-License-Identifier: GPL-2.0-only
/*
 * The jitdump reader (jit_sources.h).  A JIT appends records while it
 * runs, so a dump read after a crash or while the JIT still runs may end
 * in the middle of one: what came before is delivered and the cut is
 * named, as any other corruption, by its offset.  Fields are read with
 * memcpy, never through casts: records are packed and unaligned.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/jit_sources.h"
#include "util/grow.h"
#include "util/path.h"

#define EM_X86_64_MACHINE	62
#define PREFIX_SIZE		16u	/* id, total_size, timestamp */
#define LOAD_FIXED		40u	/* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_FIXED		40u	/* pid, tid, vma, old, new, code_size, code_index */
#define DEBUG_FIXED		16u	/* code_addr, nr_entry */
#define DEBUG_ENTRY_FIXED	16u	/* addr, lineno, discrim */

struct reader {
	const uint8_t *buf;
	size_t len;
	char *err;
	size_t errlen;
	/* The last DEBUG_INFO's lines, for the load of its code_addr. */
	struct jit_line *lines;
	size_t nr_lines, cap_lines;
	uint64_t lines_addr;
	bool have_lines;
};

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int corrupt(struct reader *r, size_t off, const char *fmt, const char *what)
{
	char why[160];

	snprintf(why, sizeof(why), fmt, what);
	snprintf(r->err, r->errlen, "offset %zu: %s", off, why);
	return -EINVAL;
}

/* The NUL-terminated string at @p within @end, or NULL. */
static const char *string_at(const uint8_t *p, const uint8_t *end)
{
	return memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

static int debug_info(struct reader *r, size_t off, const uint8_t *p, const uint8_t *end)
{
	uint64_t n, i;
	const char *prev_file = NULL;

	if ((size_t)(end - p) < DEBUG_FIXED)
		return corrupt(r, off, "%s record too short", "DEBUG_INFO");
	r->lines_addr = u64_at(p);
	n = u64_at(p + 8);
	p += DEBUG_FIXED;
	/* Each entry takes at least its fixed part and a NUL. */
	if (n > (uint64_t)(end - p) / (DEBUG_ENTRY_FIXED + 1))
		return corrupt(r, off, "%s: more entries than the record holds", "DEBUG_INFO");
	if (array_grow((void **)&r->lines, &r->cap_lines, (size_t)n ? (size_t)n : 1,
		       sizeof(*r->lines)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct jit_line *l = &r->lines[i];
		const char *file;
		int32_t lineno;

		if ((size_t)(end - p) < DEBUG_ENTRY_FIXED + 1)
			return corrupt(r, off, "%s: an entry runs past the record", "DEBUG_INFO");
		l->addr = u64_at(p);
		memcpy(&lineno, p + 8, sizeof(lineno));
		file = string_at(p + DEBUG_ENTRY_FIXED, end);
		if (!file)
			return corrupt(r, off, "%s: a file name runs past the record", "DEBUG_INFO");
		p += DEBUG_ENTRY_FIXED + strlen(file) + 1;
		/* "\xff": the same file as the entry before (perf's jvmti agent). */
		if (!strcmp(file, "\xff")) {
			if (!prev_file)
				return corrupt(r, off, "%s: first entry repeats a file name", "DEBUG_INFO");
			file = prev_file;
		}
		l->file = prev_file = file;
		l->line = lineno > 0 ? (uint32_t)lineno : 0;
	}
	r->nr_lines = (size_t)n;
	r->have_lines = true;
	return 0;
}

static int code_load(struct reader *r, const struct jitdump_handler *h, void *ctx,
		     size_t off, uint64_t time, const uint8_t *p, const uint8_t *end)
{
	struct jit_load l = { .time = time };
	const uint8_t *code;

	if ((size_t)(end - p) < LOAD_FIXED + 1)
		return corrupt(r, off, "%s record too short", "CODE_LOAD");
	l.pid = u32_at(p);
	l.tid = u32_at(p + 4);
	l.code_addr = u64_at(p + 16);
	l.code_size = u64_at(p + 24);
	l.code_index = u64_at(p + 32);
	l.name = string_at(p + LOAD_FIXED, end);
	if (!l.name)
		return corrupt(r, off, "%s: the function name runs past the record", "CODE_LOAD");
	code = p + LOAD_FIXED + strlen(l.name) + 1;
	if (l.code_size > (uint64_t)(end - code))
		return corrupt(r, off, "%s: code_size runs past the record", "CODE_LOAD");
	if (!l.code_size || l.code_addr + l.code_size < l.code_addr)
		return corrupt(r, off, "%s: empty or wrapping code range", "CODE_LOAD");
	if (r->have_lines && r->lines_addr == l.code_addr) {
		l.lines = r->lines;
		l.nr_lines = r->nr_lines;
	}
	r->have_lines = false;
	return h->load ? h->load(ctx, &l) : 0;
}

static int code_move(struct reader *r, const struct jitdump_handler *h, void *ctx,
		     size_t off, uint64_t time, const uint8_t *p, const uint8_t *end)
{
	struct jit_move m = { .time = time };

	if ((size_t)(end - p) < MOVE_FIXED)
		return corrupt(r, off, "%s record too short", "CODE_MOVE");
	m.pid = u32_at(p);
	m.tid = u32_at(p + 4);
	m.old_addr = u64_at(p + 16);
	m.new_addr = u64_at(p + 24);
	m.code_size = u64_at(p + 32);
	/* The index follows in version 1; a move without one still moves. */
	m.code_index = (size_t)(end - p) >= MOVE_FIXED + 8 ? u64_at(p + 40) : 0;
	if (!m.code_size || m.old_addr + m.code_size < m.old_addr ||
	    m.new_addr + m.code_size < m.new_addr)
		return corrupt(r, off, "%s: empty or wrapping code range", "CODE_MOVE");
	return h->move ? h->move(ctx, &m) : 0;
}

static int read_records(struct reader *r, size_t off, const struct jitdump_handler *h,
			void *ctx)
{
	while (off < r->len) {
		const uint8_t *p = r->buf + off, *end;
		uint32_t id, size;
		uint64_t time;
		int ret = 0;

		if (r->len - off < PREFIX_SIZE)
			return corrupt(r, off, "%s: a record header cut short (the JIT still writing, or killed?)",
				       "truncated");
		id = u32_at(p);
		size = u32_at(p + 4);
		time = u64_at(p + 8);
		if (size < PREFIX_SIZE)
			return corrupt(r, off, "record size %s", "smaller than its header");
		if (size > r->len - off)
			return corrupt(r, off, "%s: a record runs past the end (the JIT still writing, or killed?)",
				       "truncated");
		end = p + size;
		p += PREFIX_SIZE;
		switch (id) {
		case JITDUMP_CODE_LOAD:
			ret = code_load(r, h, ctx, off, time, p, end);
			break;
		case JITDUMP_CODE_MOVE:
			ret = code_move(r, h, ctx, off, time, p, end);
			break;
		case JITDUMP_CODE_DEBUG_INFO:
			ret = debug_info(r, off, p, end);
			break;
		case JITDUMP_CODE_CLOSE:
			return 0;	/* the JIT closed the dump: nothing follows */
		default:	/* unwinding info, kinds of later versions */
			break;
		}
		if (ret)
			return ret;
		off += size;
	}
	return 0;
}

bool jitdump_is_path(const char *path)
{
	const char *base = path_base(path);
	size_t n;

	if (strncmp(base, "jit-", 4))
		return false;
	n = strspn(base + 4, "0123456789");
	return n > 0 && !strcmp(base + 4 + n, ".dump");
}

int jitdump_read(const uint8_t *buf, size_t len, struct jitdump_header *hdr,
		 const struct jitdump_handler *h, void *ctx, char *err, size_t errlen)
{
	struct reader r = { .buf = buf, .len = len, .err = err, .errlen = errlen };
	uint32_t magic, size, mach;
	int ret;

	if (errlen)
		err[0] = 0;
	memset(hdr, 0, sizeof(*hdr));
	if (len < JITDUMP_HEADER_SIZE)
		return corrupt(&r, 0, "%s: shorter than a jitdump header", "truncated");
	magic = u32_at(buf);
	if (magic == __builtin_bswap32(JITDUMP_MAGIC))
		return corrupt(&r, 0, "%s", "a jitdump of the other byte order");
	if (magic != JITDUMP_MAGIC)
		return corrupt(&r, 0, "%s", "not a jitdump (no JiTD magic)");
	hdr->version = u32_at(buf + 4);
	size = u32_at(buf + 8);
	mach = u32_at(buf + 12);
	hdr->pid = u32_at(buf + 20);
	hdr->timestamp = u64_at(buf + 24);
	hdr->tsc = u64_at(buf + 32) & JITDUMP_FLAG_TSC;
	if (!hdr->version)
		return corrupt(&r, 4, "%s", "version 0");
	if (size < JITDUMP_HEADER_SIZE || size > len)
		return corrupt(&r, 8, "%s", "header size out of range");
	if (mach != EM_X86_64_MACHINE) {
		char what[32];

		snprintf(what, sizeof(what), "%" PRIu32, mach);
		return corrupt(&r, 12, "code for ELF machine %s, not x86-64", what);
	}
	ret = read_records(&r, size, h, ctx);
	free(r.lines);
	return ret;
}

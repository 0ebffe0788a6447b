// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the JIT symbol sources: jitdumps and perf maps
 * come from JITs nobody here wrote, and from JITs killed mid-write.  The
 * input is read both ways -- as the jitdump a mapping names, and as the
 * perf map of a process sampled in unmapped memory -- and then looked up
 * at addresses taken from itself, so that loads, moves, line tables and
 * map entries it declares are all walked.  Whatever it holds, no crash,
 * and every answer in JIT code names a function.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/jit_sources.h"
#include "tailor/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *data;
	size_t size;
};

static int embedded(void *ctx, const char *path, const void **data, size_t *len)
{
	const struct input *in = ctx;

	(void)path;
	*data = in->data;
	*len = in->size;
	return 0;
}

/* Both clocks: even inputs keep their times, odd ones drop them. */
static int clock_of(void *ctx, bool tsc, uint64_t *time)
{
	(void)ctx;
	(void)time;
	return tsc ? 0 : -1;
}

/* An answer from JIT file @path (the dump's own mapping is a file's). */
static bool named_by(const struct sym_result *r, const char *path)
{
	return (r->status == SYM_OK || r->status == SYM_NO_LINE) && r->path &&
	       !strcmp(r->path, path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct symbolizer *s = sym_new();
	struct tev_consumer *c;
	struct tev_mmap marker = { .time = 1, .start = 0x100000, .len = 0x1000,
				   .path = "/tmp/jit-1.dump", .pid = 1, .tid = 1 };
	size_t i, n;

	if (!s)
		return 0;
	c = sym_consumer(s);
	if (sym_set_jit_files(s, embedded, &in) || sym_set_jit_clock(s, clock_of, NULL) ||
	    c->mmap(c, &marker))
		abort();
	/* Addresses and times from the input: the dump's own code_addrs among them. */
	for (i = 0; i + 16 <= size && i < 64 * 16; i += 8) {
		uint64_t ip, time;
		struct sym_result r;

		memcpy(&ip, data + i, sizeof(ip));
		memcpy(&time, data + i + 8, sizeof(time));
		sym_lookup(s, 1, ip, time, &r);
		if (named_by(&r, "/tmp/jit-1.dump") && !r.function)
			abort();
		sym_lookup(s, 2, ip, time, &r);
		if (named_by(&r, "/tmp/perf-2.map") && !r.function)
			abort();
	}
	n = sym_jit_nr_sources(s);
	for (i = 0; i < n; i++) {
		const struct sym_jit_source *src = sym_jit_source(s, i);

		/* A problem is named, with the offset for a corrupt jitdump. */
		if (!src->perf_map && src->problem[0] && !strstr(src->problem, "offset "))
			abort();
	}
	sym_free(s);
	return 0;
}

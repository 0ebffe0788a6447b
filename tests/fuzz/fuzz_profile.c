// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the profile readers tailor report uses: tailor
 * recordings and perf.data files (userspace/lib/profile*.c).  No input
 * may crash them, and a profile that opens must visit exactly the
 * samples it counted at open.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tailor/profile.h"
#include "tailor/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *ctx, const struct prof_sample *s)
{
	(void)s;
	++*(uint64_t *)ctx;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct symbolizer *sym = sym_new();
	struct prof_input *in;
	uint64_t visited = 0;
	char err[512];

	if (fd < 0) {
		fd = memfd_create("fuzz-profile", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size || !sym)
		abort();
	in = prof_open(path, sym, 23, 1000000, err, sizeof(err));
	if (in) {
		prof_foreach(in, count, &visited);
		if (visited != prof_info(in)->nr_samples)
			abort();
		prof_close(in);
	} else if (!err[0]) {
		abort();	/* every refusal says why */
	}
	sym_free(sym);
	return 0;
}

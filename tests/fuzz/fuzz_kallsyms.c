// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the kallsyms reader (userspace/lib/symbols/
 * kallsyms.c), which reads a file a user names with --kallsyms: no input
 * may crash it; a file it takes names an address at or above its first
 * symbol, and a refusal says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tailor/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct kallsyms *k;
	char err[512] = "";
	uint32_t index;

	if (fd < 0) {
		fd = memfd_create("fuzz-kallsyms", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	k = kallsyms_load(path, err, sizeof(err));
	if (!k) {
		if (!err[0])
			abort();	/* every refusal says why */
		return 0;
	}
	/* The highest address is at or above every symbol: it has a name. */
	if (!kallsyms_name(k, UINT64_MAX, &index))
		abort();
	kallsyms_name(k, 0, &index);
	kallsyms_name(k, kallsyms_text(k), &index);
	kallsyms_free(k);
	return 0;
}

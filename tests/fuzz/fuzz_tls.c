// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the thread-local variables' readers (userspace/
 * lib/symbols/tls_offset.c and tls_live.c), which read the target's own
 * executable and libraries: no ELF file may crash them, a found offset
 * is one the thread pointer can have (negative: static TLS ends there),
 * and every refusal but "not defined" says why.  The live reader reads
 * "GOT entries" of this very process, at a buffer the input fills.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tailor/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t got[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	char err[512] = "";
	int64_t offset = 0;
	int rc;

	if (fd < 0) {
		fd = memfd_create("fuzz-tls", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	memcpy(got, data, size < sizeof(got) ? size : sizeof(got));
	rc = tls_symbol_offset(path, OTEL_CTX_SYMBOL, &offset, err, sizeof(err));
	if (rc && rc != -ENOENT && !err[0])
		abort();	/* every refusal says why */
	if (!rc && offset >= 0)
		abort();
	err[0] = 0;
	rc = tls_object_offset(getpid(), path, "fuzzed", (uint64_t)(uintptr_t)got, OTEL_CTX_SYMBOL,
			       &offset, err, sizeof(err));
	if (rc && rc != -ENOENT && !err[0])
		abort();
	if (!rc && offset >= 0)
		abort();
	return 0;
}

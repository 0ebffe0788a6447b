// SPDX-License-Identifier: GPL-2.0-only
/*
 * The build-ids of the files a recording mapped, stored at its end as a
 * BUILD_IDS record, as perf record stores its BUILD_ID feature: a report
 * made after a file was rebuilt, upgraded or deleted can tell, and reads
 * a kept copy of the recorded build or says why it cannot, instead of
 * naming samples from a build that never ran them.  The paths come from
 * the recording's own MMAP records, read back as jit_files.c reads them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include "cli.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* @path's GNU build-id as hex into @hex (room for 81); false if none. */
static bool file_build_id(const char *path, char *hex)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	const unsigned char *bits;
	const void *id = NULL;
	ssize_t n, i;
	Elf *elf;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	bits = id;
	for (i = 0; i < n && i < 40; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	if (elf)
		elf_end(elf);
	close(fd);
	return n > 0;
}

int build_ids_store(const char *recording, struct tlr_writer *w)
{
	char err[256], hex[81];
	struct str_map seen = { 0 };
	struct tlr_record rec;
	struct tlr_reader *r;
	char *text = NULL;
	size_t n = 0, cap = 0;
	uint32_t v;
	int ret = 0;

	elf_version(EV_CURRENT);
	/* What was written is read back: all of it on disk first. */
	ret = tlr_write_flush(w);
	if (ret)
		return ret;
	r = tlr_reader_open(recording, err, sizeof(err));
	if (!r)
		return -EIO;
	/* Only the side-band is wanted: no batch is unpacked. */
	tlr_reader_leave_packed(r);
	while (!ret && tlr_next(r, &rec) > 0) {
		const struct tlr_mmap *m = rec.payload;
		const char *path = (const char *)(m + 1);
		size_t len;

		if (rec.type != TLR_MMAP || path[0] != '/' || strpbrk(path, "\t\n") ||
		    str_map_get(&seen, path, &v))
			continue;
		if (str_map_put(&seen, path, 1)) {
			ret = -ENOMEM;
			break;
		}
		if (!file_build_id(path, hex))
			continue;
		len = strlen(path) + strlen(hex) + 2;
		if (array_grow((void **)&text, &cap, n + len + 1, 1)) {
			ret = -ENOMEM;
			break;
		}
		n += (size_t)snprintf(text + n, cap - n, "%s\t%s\n", path, hex);
	}
	tlr_reader_close(r);
	str_map_free(&seen);
	if (!ret && n) {
		const void *parts[] = { text };
		size_t lens[] = { n };

		ret = tlr_write(w, TLR_BUILD_IDS, parts, lens, 1);
	}
	free(text);
	return ret;
}

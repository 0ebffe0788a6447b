// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor record's last step before END: the files JITs left for
 * profilers, copied into the recording (FILE records), so that a report
 * names JIT code on another host and after /tmp is cleaned.
 *
 * Which files is the recording's own say: it is read back (mappings,
 * comm and task records are few and its samples are skipped by size) for
 * the jitdumps its processes mapped -- the mapping perf finds them by --
 * and the pids whose /tmp/perf-PID.map may exist.  A file is read with
 * O_NONBLOCK (a FIFO in /tmp must not hang the recorder) and only if it
 * is a regular file.  A perf map is found by its pid alone: one older
 * than the command tailor started is an earlier process's.  A jitdump
 * the process mapped is its own, however old (tailor record -p).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "symbols/jit_sources.h"
#include "tailor/recording.h"

#define PIECE_SIZE	(16u << 20)	/* well under TLR_MAX_RECORD_SIZE */
#define MAX_FILE_SIZE	(1ull << 30)	/* what a report will hold of one file */

struct wanted {
	uint32_t pid;
	uint32_t kind;		/* enum tlr_file_kind */
	char *path;
};

struct wanted_list {
	struct wanted *w;
	size_t n;
};

static int want(struct wanted_list *l, uint32_t pid, uint32_t kind, const char *path)
{
	struct wanted *w;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->w[i].pid == pid && !strcmp(l->w[i].path, path))
			return 0;
	w = realloc(l->w, (l->n + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	l->w = w;
	w[l->n] = (struct wanted){ .pid = pid, .kind = kind, .path = strdup(path) };
	if (!w[l->n].path)
		return -ENOMEM;
	l->n++;
	return 0;
}

/* The jitdumps mapped and the perf maps that may exist, from the recording. */
static int find_wanted(const char *recording, struct wanted_list *l)
{
	char err[256], path[64];
	struct tlr_record rec;
	struct tlr_reader *r = tlr_reader_open(recording, err, sizeof(err));
	int ret = 0;

	if (!r)
		return -EIO;
	/* Only the side-band is wanted: no batch is unpacked. */
	tlr_reader_leave_packed(r);
	while (!ret && tlr_next(r, &rec) > 0) {
		uint32_t pid;

		if (rec.type == TLR_MMAP) {
			const struct tlr_mmap *m = rec.payload;
			const char *file = (const char *)(m + 1);

			if (jitdump_is_path(file))
				ret = want(l, m->pid, TLR_FILE_JITDUMP, file);
			pid = m->pid;
		} else if (rec.type == TLR_COMM) {
			pid = ((const struct tlr_comm *)rec.payload)->pid;
		} else if (rec.type == TLR_TASK) {
			pid = ((const struct tlr_task *)rec.payload)->pid;
		} else {
			continue;
		}
		snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
		if (!ret && !access(path, F_OK))
			ret = want(l, pid, TLR_FILE_PERF_MAP, path);
	}
	tlr_reader_close(r);
	return ret;
}

/* @path's bytes as FILE records; 1 if skipped (why in @why), 0, -errno. */
static int carry(struct tlr_writer *tw, const struct wanted *w, uint64_t not_before,
		 uint64_t *size, const char **why)
{
	int fd = open(w->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;
	struct tlr_file h = { .kind = w->kind, .pid = w->pid };
	uint8_t *data = NULL;
	struct stat st;
	uint64_t off;

	if (fd < 0) {
		*why = strerror(errno);
		return 1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		err = 1;
	} else if (w->kind == TLR_FILE_PERF_MAP &&
		   (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec <
		   not_before) {
		*why = "older than the recording";
		err = 1;
	} else if ((uint64_t)st.st_size > MAX_FILE_SIZE) {
		*why = "larger than 1 GiB";
		err = 1;
	} else if (st.st_size) {
		data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data == MAP_FAILED) {
			*why = strerror(errno);
			data = NULL;
			err = 1;
		}
	}
	close(fd);
	if (err)
		return err;
	*size = h.file_size = (uint64_t)st.st_size;
	h.path_len = (uint32_t)strlen(w->path) + 1;
	off = 0;
	do {
		uint64_t piece = h.file_size - off < PIECE_SIZE ? h.file_size - off : PIECE_SIZE;
		const void *parts[3] = { &h, w->path, data + off };
		size_t lens[3] = { sizeof(h), h.path_len, (size_t)piece };

		h.offset = off;
		h.piece_size = (uint32_t)piece;
		err = tlr_write(tw, TLR_FILE, parts, lens, piece ? 3 : 2);
		off += piece;
	} while (!err && off < h.file_size);
	if (data)
		munmap(data, (size_t)st.st_size);
	return err;
}

int jit_files_carry(const char *recording, struct tlr_writer *tw, uint64_t start_wall_ns,
		    bool quiet)
{
	struct wanted_list l = { 0 };
	size_t i;
	int err;

	/* What is buffered must be in the file to be read back. */
	err = tlr_write_flush(tw);
	if (!err)
		err = find_wanted(recording, &l);
	for (i = 0; !err && i < l.n; i++) {
		const char *why = NULL;
		uint64_t size = 0;
		int ret = carry(tw, &l.w[i], start_wall_ns, &size, &why);

		if (ret < 0)
			err = ret;
		else if (ret && l.w[i].kind == TLR_FILE_JITDUMP)
			fprintf(stderr, "tailor: record: %s, mapped by process %" PRIu32 ", not kept: %s\n",
				l.w[i].path, l.w[i].pid, why);
		else if (!ret && !quiet)
			fprintf(stderr, "tailor: record: kept %s (%.1f KiB) in the recording\n",
				l.w[i].path, size / 1024.0);
	}
	for (i = 0; i < l.n; i++)
		free(l.w[i].path);
	free(l.w);
	return err == -EIO ? 0 : err;
}

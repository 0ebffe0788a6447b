// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes tailor recordings (docs/recording-format.md).
 *
 * The collector appends records for as long as a session runs, so writes
 * are buffered.  A failed write (disk full, I/O error, file size limit)
 * must never leave half a record on disk: the file is cut back to its
 * last complete record and the writer refuses everything after, so a
 * recording always reads cleanly up to where it stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tailor/recording.h"

/* Big enough that a busy session costs few syscalls, small enough to lose. */
#define TLR_WRITER_BUFSIZE	(1u << 20)

struct tlr_writer {
	int fd;
	int error;		/* the first write failure (-errno), sticky */
	uint64_t committed;	/* bytes of the file holding complete records */
	size_t used;		/* bytes buffered: whole records only */
	unsigned char *buf;
};

static const unsigned char zero_padding[8];

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* write(2) all of @len, or -errno; a write that makes no progress is -EIO. */
static int write_all(int fd, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len) {
		ssize_t done = write(fd, p, len);

		if (done < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (done == 0)
			return -EIO;
		p += done;
		len -= done;
	}
	return 0;
}

/*
 * A write failed part way: drop what is buffered, cut the file back to
 * its last complete record and remember why.  ftruncate() fails on what
 * is not a regular file (/dev/full, a pipe); nothing more can be done
 * there, the error is still reported.
 */
static int writer_fail(struct tlr_writer *w, int err)
{
	if (!w->error)
		w->error = err;
	w->used = 0;
	while (ftruncate(w->fd, (off_t)w->committed) < 0 && errno == EINTR)
		;
	return w->error;
}

static int flush_buffer(struct tlr_writer *w)
{
	int ret;

	if (w->error)
		return w->error;
	if (!w->used)
		return 0;
	ret = write_all(w->fd, w->buf, w->used);
	if (ret)
		return writer_fail(w, ret);
	w->committed += w->used;
	w->used = 0;
	return 0;
}

/*
 * Sum the payload parts into *@payload.  Checking the running total
 * against the limit keeps the sum from overflowing.
 */
static int payload_size(const void *const parts[], const size_t lens[], int n,
			size_t *payload)
{
	const size_t limit = TLR_MAX_RECORD_SIZE -
			     sizeof(struct tlr_record_header);
	size_t total = 0;
	int i;

	if (n < 0 || (n > 0 && (!parts || !lens)))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (lens[i] && !parts[i])
			return -EINVAL;
		if (lens[i] > limit - total)
			return -EINVAL;
		total += lens[i];
	}
	*payload = total;
	return 0;
}

/* Lay the record out in the buffer: header, parts, zero padding. */
static void buffer_record(struct tlr_writer *w, uint32_t type,
			  const void *const parts[], const size_t lens[], int n,
			  size_t payload)
{
	struct tlr_record_header hdr = {
		.type = type,
		.size = (uint32_t)(sizeof(hdr) + pad8(payload)),
	};
	unsigned char *p = w->buf + w->used;
	int i;

	memcpy(p, &hdr, sizeof(hdr));
	p += sizeof(hdr);
	for (i = 0; i < n; i++) {
		if (lens[i])
			memcpy(p, parts[i], lens[i]);
		p += lens[i];
	}
	memset(p, 0, pad8(payload) - payload);
	w->used += hdr.size;
}

/* A record bigger than the buffer goes straight to the file. */
static int write_record_direct(struct tlr_writer *w, uint32_t type,
			       const void *const parts[], const size_t lens[],
			       int n, size_t payload)
{
	struct tlr_record_header hdr = {
		.type = type,
		.size = (uint32_t)(sizeof(hdr) + pad8(payload)),
	};
	int ret, i;

	ret = write_all(w->fd, &hdr, sizeof(hdr));
	for (i = 0; !ret && i < n; i++)
		ret = write_all(w->fd, parts[i], lens[i]);
	if (!ret)
		ret = write_all(w->fd, zero_padding, pad8(payload) - payload);
	if (ret)
		return writer_fail(w, ret);
	w->committed += hdr.size;
	return 0;
}

struct tlr_writer *tlr_writer_create(const char *path)
{
	return tlr_writer_create_version(path, TLR_VERSION);
}

struct tlr_writer *tlr_writer_create_version(const char *path, uint32_t version)
{
	struct tlr_file_header hdr = {
		.version = version,
		.header_size = sizeof(hdr),
	};
	struct tlr_writer *w;
	int saved_errno;

	if (!version || version > TLR_VERSION) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->buf = malloc(TLR_WRITER_BUFSIZE);
	if (!w->buf)
		goto fail;
	/* 0600 like perf.data: a recording shows command lines and addresses. */
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0)
		goto fail;
	/*
	 * The header is buffered with the first records: like any other
	 * write, a failure shows up at the first flush.
	 */
	memcpy(hdr.magic, TLR_MAGIC, sizeof(hdr.magic));
	memcpy(w->buf, &hdr, sizeof(hdr));
	w->used = sizeof(hdr);
	return w;
fail:
	saved_errno = errno;
	free(w->buf);
	free(w);
	errno = saved_errno;
	return NULL;
}

int tlr_write(struct tlr_writer *w, uint32_t type, const void *const parts[],
	      const size_t lens[], int n)
{
	size_t payload, record;
	int ret;

	if (w->error)
		return w->error;
	/* A bad request is the caller's bug: refused, but not sticky. */
	ret = payload_size(parts, lens, n, &payload);
	if (ret)
		return ret;
	record = sizeof(struct tlr_record_header) + pad8(payload);
	if (record > TLR_WRITER_BUFSIZE - w->used) {
		ret = flush_buffer(w);
		if (ret)
			return ret;
	}
	if (record > TLR_WRITER_BUFSIZE)
		return write_record_direct(w, type, parts, lens, n, payload);
	buffer_record(w, type, parts, lens, n, payload);
	return 0;
}

int tlr_write_flush(struct tlr_writer *w)
{
	return flush_buffer(w);
}

uint64_t tlr_writer_size(const struct tlr_writer *w)
{
	return w->committed + w->used;
}

int tlr_writer_error(const struct tlr_writer *w)
{
	return w->error;
}

int tlr_writer_close(struct tlr_writer *w)
{
	int ret;

	if (!w)
		return 0;
	ret = flush_buffer(w);
	/* Delayed write-back errors (NFS, quotas) surface at close. */
	if (close(w->fd) < 0 && !ret && errno != EINTR)
		ret = -errno;
	free(w->buf);
	free(w);
	return ret;
}

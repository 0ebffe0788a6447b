// SPDX-License-Identifier: GPL-2.0-only
/*
 * libtailor's jitdump writer (tools/perf/Documentation/jitdump-
 * specification.txt) and perf map appender, for JITs.  JITs compile on
 * several threads, so one mutex orders the records; each call builds
 * its records in one buffer and writes them at the known end of the
 * file, which it cuts back on failure: a reader stops at the first torn
 * record, and must never see one.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "tailor/jitdump.h"

#define JITDUMP_MAGIC		0x4A695444u	/* "JiTD" */
#define JITDUMP_VERSION		1
#define JITDUMP_FLAGS_ARCH_TIMESTAMP	(1ull << 0)

#if defined(__x86_64__)
#define JITDUMP_ELF_MACH	EM_X86_64
#elif defined(__i386__)
#define JITDUMP_ELF_MACH	EM_386
#elif defined(__aarch64__)
#define JITDUMP_ELF_MACH	EM_AARCH64
#else
#error "jitdump: no ELF machine known for this architecture"
#endif

enum {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
};

/* The file's layouts; natural alignment leaves no holes in any of them. */
struct jd_header {
	uint32_t magic;
	uint32_t version;
	uint32_t total_size;
	uint32_t elf_mach;
	uint32_t pad1;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

struct jd_prefix {
	uint32_t id;
	uint32_t total_size;
	uint64_t timestamp;
};

struct jd_load {
	struct jd_prefix p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t code_addr;
	uint64_t code_size;
	uint64_t code_index;
	/* then the name, NUL-terminated, then the code */
};

struct jd_move {
	struct jd_prefix p;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t old_code_addr;
	uint64_t new_code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

struct jd_debug_info {
	struct jd_prefix p;
	uint64_t code_addr;
	uint64_t nr_entry;
	/* then nr_entry entries */
};

struct jd_debug_entry {
	uint64_t addr;
	int32_t line;
	int32_t discrim;
	/* then the file name, NUL-terminated */
};

_Static_assert(sizeof(struct jd_header) == 40, "jitdump header layout");
_Static_assert(sizeof(struct jd_prefix) == 16, "jitdump record prefix layout");
_Static_assert(sizeof(struct jd_load) == 56, "jitdump code load layout");
_Static_assert(sizeof(struct jd_move) == 64, "jitdump code move layout");
_Static_assert(sizeof(struct jd_debug_info) == 32, "jitdump debug info layout");
_Static_assert(sizeof(struct jd_debug_entry) == 16, "jitdump debug entry layout");

/* Where a code index lives now: what a move record must name. */
struct jd_code {
	uint64_t addr;
	uint64_t index;
};

struct tailor_jitdump {
	pthread_mutex_t lock;
	int fd;
	void *marker;			/* the executable mapping perf looks for */
	size_t marker_size;
	bool tsc;
	uint32_t pid;
	int error;			/* the file could not be repaired; sticky */
	off_t end;			/* after the last whole record */
	uint64_t next_index;
	/*
	 * Every load, newest arrival at its address last (a move takes its
	 * entry to the end), so the last entry for an address is the code
	 * there now.  16 bytes a load; JITs rarely move code, so a move's
	 * linear search is cheap enough.
	 */
	struct jd_code *codes;
	size_t nr_codes, cap_codes;
	char path[];
};

static uint64_t jd_now(const struct tailor_jitdump *j)
{
	struct timespec ts;

#if defined(__x86_64__) || defined(__i386__)
	if (j->tsc)
		return __builtin_ia32_rdtsc();
#else
	(void)j;
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Write @buf whole at the end, or leave the file as it was. */
static int jd_append(struct tailor_jitdump *j, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;
	ssize_t n;
	int err;

	if (j->error)
		return j->error;
	while (done < len) {
		n = pwrite(j->fd, p + done, len - done, j->end + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			if (done && ftruncate(j->fd, j->end))
				j->error = -errno;
			return err;
		}
		done += n;
	}
	j->end += len;
	return 0;
}

struct tailor_jitdump *tailor_jitdump_open(const char *dir, unsigned int flags,
					   int *err)
{
	struct tailor_jitdump *j;
	struct jd_header h;
	size_t len;
	int ret;

	if (!dir)
		dir = "/tmp";
	if (flags & ~TAILOR_JITDUMP_TSC) {
		ret = -EINVAL;
		goto out_fail;
	}
#if !defined(__x86_64__) && !defined(__i386__)
	if (flags & TAILOR_JITDUMP_TSC) {
		ret = -EOPNOTSUPP;
		goto out_fail;
	}
#endif
	len = strlen(dir) + sizeof("/jit-4294967295.dump");
	j = calloc(1, sizeof(*j) + len);
	if (!j) {
		ret = -ENOMEM;
		goto out_fail;
	}
	j->pid = getpid();
	j->tsc = flags & TAILOR_JITDUMP_TSC;
	snprintf(j->path, len, "%s/jit-%u.dump", dir, j->pid);
	ret = pthread_mutex_init(&j->lock, NULL);
	if (ret) {
		free(j);
		ret = -ret;
		goto out_fail;
	}
	j->fd = open(j->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (j->fd < 0) {
		ret = -errno;
		goto out_free;
	}

	memset(&h, 0, sizeof(h));
	h.magic = JITDUMP_MAGIC;
	h.version = JITDUMP_VERSION;
	h.total_size = sizeof(h);
	h.elf_mach = JITDUMP_ELF_MACH;
	h.pid = j->pid;
	h.timestamp = jd_now(j);
	h.flags = j->tsc ? JITDUMP_FLAGS_ARCH_TIMESTAMP : 0;
	ret = jd_append(j, &h, sizeof(h));
	if (ret)
		goto out_unlink;

	/*
	 * Executable, or perf record (which by default records only mmaps
	 * of code) would not see it; private, so that no write of ours
	 * could ever reach the file through it.  One page names the file.
	 */
	j->marker_size = sysconf(_SC_PAGESIZE);
	j->marker = mmap(NULL, j->marker_size, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE, j->fd, 0);
	if (j->marker == MAP_FAILED) {
		ret = -errno;
		goto out_unlink;
	}
	return j;

out_unlink:
	close(j->fd);
	unlink(j->path);
out_free:
	pthread_mutex_destroy(&j->lock);
	free(j);
out_fail:
	if (err)
		*err = ret;
	return NULL;
}

const char *tailor_jitdump_path(const struct tailor_jitdump *j)
{
	return j ? j->path : NULL;
}

static int jd_remember(struct tailor_jitdump *j, uint64_t addr, uint64_t index)
{
	if (j->nr_codes == j->cap_codes) {
		size_t cap = j->cap_codes ? j->cap_codes * 2 : 64;
		struct jd_code *c = realloc(j->codes, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		j->codes = c;
		j->cap_codes = cap;
	}
	j->codes[j->nr_codes].addr = addr;
	j->codes[j->nr_codes].index = index;
	j->nr_codes++;
	return 0;
}

int tailor_jitdump_load(struct tailor_jitdump *j, const char *name,
			const void *code, uint64_t size,
			const struct tailor_jit_line *lines, size_t nr_lines)
{
	uint64_t start = (uintptr_t)code, debug_size = 0, load_size, now;
	struct jd_debug_info di;
	struct jd_debug_entry de;
	struct jd_load ld;
	size_t name_len, i, off = 0;
	char *buf;
	int ret;

	if (!j || !name || (!code && size) || (!lines && nr_lines))
		return -EINVAL;
	if (size > UINT32_MAX || size > UINT64_MAX - start)
		return -E2BIG;
	name_len = strlen(name) + 1;
	load_size = sizeof(ld) + name_len + size;
	if (load_size > UINT32_MAX)
		return -E2BIG;
	if (nr_lines) {
		debug_size = sizeof(di);
		for (i = 0; i < nr_lines; i++) {
			/* An entry outside the code describes no byte of it. */
			if (!lines[i].file || lines[i].line > INT32_MAX ||
			    lines[i].addr < start || lines[i].addr - start >= size)
				return -EINVAL;
			debug_size += sizeof(de) + strlen(lines[i].file) + 1;
			if (debug_size > UINT32_MAX)
				return -E2BIG;
		}
	}
	/* One buffer for both records: a line table never outlives its code. */
	buf = malloc(debug_size + load_size);
	if (!buf)
		return -ENOMEM;

	pthread_mutex_lock(&j->lock);
	/* Under the lock: records go into the file in timestamp order. */
	now = jd_now(j);
	if (nr_lines) {
		di.p.id = JIT_CODE_DEBUG_INFO;
		di.p.total_size = debug_size;
		di.p.timestamp = now;
		di.code_addr = start;
		di.nr_entry = nr_lines;
		memcpy(buf, &di, sizeof(di));
		off = sizeof(di);
		for (i = 0; i < nr_lines; i++) {
			size_t flen = strlen(lines[i].file) + 1;

			de.addr = lines[i].addr;
			de.line = lines[i].line;
			de.discrim = 0;
			memcpy(buf + off, &de, sizeof(de));
			memcpy(buf + off + sizeof(de), lines[i].file, flen);
			off += sizeof(de) + flen;
		}
	}
	ld.p.id = JIT_CODE_LOAD;
	ld.p.total_size = load_size;
	ld.p.timestamp = now;
	ld.pid = j->pid;
	ld.tid = gettid();
	ld.vma = start;
	ld.code_addr = start;
	ld.code_size = size;
	ld.code_index = j->next_index;
	memcpy(buf + off, &ld, sizeof(ld));
	memcpy(buf + off + sizeof(ld), name, name_len);
	if (size)
		memcpy(buf + off + sizeof(ld) + name_len, code, size);

	/* Remember first: a load the file has but we forgot could not move. */
	ret = jd_remember(j, start, j->next_index);
	if (!ret) {
		ret = jd_append(j, buf, debug_size + load_size);
		if (ret)
			j->nr_codes--;
		else
			j->next_index++;
	}
	pthread_mutex_unlock(&j->lock);
	free(buf);
	return ret;
}

int tailor_jitdump_move(struct tailor_jitdump *j, uint64_t old_addr,
			uint64_t new_addr, uint64_t size)
{
	struct jd_move mv;
	struct jd_code moved;
	bool known = false;
	size_t i;
	int ret;

	if (!j)
		return -EINVAL;
	pthread_mutex_lock(&j->lock);
	memset(&mv, 0, sizeof(mv));
	for (i = j->nr_codes; i-- > 0; ) {
		if (j->codes[i].addr == old_addr) {
			mv.code_index = j->codes[i].index;
			known = true;
			break;
		}
	}
	mv.p.id = JIT_CODE_MOVE;
	mv.p.total_size = sizeof(mv);
	mv.p.timestamp = jd_now(j);
	mv.pid = j->pid;
	mv.tid = gettid();
	mv.vma = new_addr;
	mv.old_code_addr = old_addr;
	mv.new_code_addr = new_addr;
	mv.code_size = size;
	ret = jd_append(j, &mv, sizeof(mv));
	if (!ret && known) {
		/* The newest arrival at new_addr: to the end, keeping the order. */
		moved = j->codes[i];
		moved.addr = new_addr;
		memmove(&j->codes[i], &j->codes[i + 1],
			(j->nr_codes - i - 1) * sizeof(*j->codes));
		j->codes[j->nr_codes - 1] = moved;
	}
	pthread_mutex_unlock(&j->lock);
	return ret;
}

int tailor_jitdump_close(struct tailor_jitdump *j)
{
	struct jd_prefix cl;
	int ret;

	if (!j)
		return -EINVAL;
	pthread_mutex_lock(&j->lock);
	cl.id = JIT_CODE_CLOSE;
	cl.total_size = sizeof(cl);
	cl.timestamp = jd_now(j);
	ret = jd_append(j, &cl, sizeof(cl));
	pthread_mutex_unlock(&j->lock);

	if (munmap(j->marker, j->marker_size) && !ret)
		ret = -errno;
	if (close(j->fd) && !ret)
		ret = -errno;
	pthread_mutex_destroy(&j->lock);
	free(j->codes);
	free(j);
	return ret;
}

int tailor_perfmap_append(pid_t pid, uint64_t start, uint64_t size,
			  const char *name)
{
	char path[sizeof("/tmp/perf-4294967295.map")];
	size_t len, done = 0;
	char *line;
	ssize_t n;
	int fd, ret = 0;

	/* A newline would start a line of its own in a line-based file. */
	if (!name || !*name || strchr(name, '\n'))
		return -EINVAL;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", (unsigned int)pid);
	len = snprintf(NULL, 0, "%" PRIx64 " %" PRIx64 " %s\n", start, size, name);
	line = malloc(len + 1);
	if (!line)
		return -ENOMEM;
	snprintf(line, len + 1, "%" PRIx64 " %" PRIx64 " %s\n", start, size, name);
	/* O_APPEND: other threads and processes may add their lines too. */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	while (done < len) {
		n = write(fd, line + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		done += n;
	}
	if (close(fd) && !ret)
		ret = -errno;
out:
	free(line);
	return ret;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by tailor's kselftests: session setup, draining, and
 * workloads whose ground truth is known (a loop that holds a tag in r15).
 * Header-only because lib.mk builds each test from one .c file.
 */
#ifndef TAILOR_UTIL_H
#define TAILOR_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "uapi/tailor.h"

#define TAILOR_KO_DEFAULT	"/tailor/tailor.ko"

/*
 * tagged_spin(tag, iterations): hold @tag in r15 while counting down.
 * Every instruction between tagged_spin_loop and tagged_spin_end runs
 * with r15 == tag, so a sample whose IP is in there must carry it.
 */
void tagged_spin(uint64_t tag, uint64_t iterations);
extern const char tagged_spin_loop[], tagged_spin_end[];
__asm__(".text\n"
	".globl tagged_spin\n"
	".type tagged_spin, @function\n"
	"tagged_spin:\n"
	"	push %r15\n"
	"	mov %rdi, %r15\n"
	".globl tagged_spin_loop\n"
	"tagged_spin_loop:\n"
	"	dec %rsi\n"
	"	jnz tagged_spin_loop\n"
	".globl tagged_spin_end\n"
	"tagged_spin_end:\n"
	"	pop %r15\n"
	"	ret\n"
	".size tagged_spin, .-tagged_spin\n");

/* Whether @ip lies in tagged_spin()'s loop, where r15 is its tag. */
static inline bool in_loop(uint64_t ip)
{
	return ip >= (uintptr_t)tagged_spin_loop && ip < (uintptr_t)tagged_spin_end;
}

/*
 * SKIP the test unless tailor.ko is loaded; a macro, since the harness
 * (included after this header) defines SKIP and the test's metadata.
 */
#define SKIP_UNLESS_LOADED()						\
	do {								\
		if (access(TAILOR_DEVICE, F_OK))			\
			SKIP(return, "%s missing: load tailor.ko first", \
			     TAILOR_DEVICE);				\
	} while (0)

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Spin with @tag until @ns of CPU time have passed, in short slices. */
static inline void tagged_spin_for(uint64_t tag, uint64_t ns)
{
	struct timespec ts;
	uint64_t start, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	do {
		tagged_spin(tag, 2000000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	} while (t - start < ns);
}

/* Whether the running kernel carries tailor's patches (patches/). */
static inline int kernel_has_symbol(const char *name)
{
	char line[512], sym[256];
	FILE *f = fopen("/proc/kallsyms", "r");
	int found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %255s", sym) == 1 &&
			!strcmp(sym, name);
	fclose(f);
	return found;
}

static inline int tailor_open(void)
{
	return open(TAILOR_DEVICE, O_RDWR | O_CLOEXEC);
}

static inline void tailor_config_init(struct tailor_config *cfg, pid_t pid)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->abi_version = TAILOR_ABI_VERSION;
	cfg->source = TAILOR_SOURCE_TIMER;
	cfg->target_pid = pid;
	cfg->flags = TAILOR_CFG_EXCLUDE_KERNEL;
	cfg->timer_period_ns = 1000000;
}

static inline int tailor_configure(int fd, struct tailor_config *cfg)
{
	return ioctl(fd, TAILOR_IOC_CONFIGURE, cfg) ? -errno : 0;
}

static inline int tailor_stats(int fd, struct tailor_stats *st,
			       struct tailor_cpu_stats *cpus, uint32_t nr)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->cpus = (uintptr_t)cpus;
	st->nr_cpus = nr;
	return ioctl(fd, TAILOR_IOC_STATS, st) ? -errno : 0;
}

static inline int tailor_info(struct tailor_info *info)
{
	int fd = tailor_open(), ret;

	if (fd < 0)
		return -errno;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	ret = ioctl(fd, TAILOR_IOC_INFO, info) ? -errno : 0;
	close(fd);
	return ret;
}

/* Samples read back, as a flat array of record_size-byte records. */
struct sample_buf {
	uint8_t *data;
	size_t nr;
	size_t cap;
	uint32_t record_size;
};

static inline const struct tailor_sample *sample_at(const struct sample_buf *b,
						    size_t i)
{
	return (const struct tailor_sample *)(b->data + i * b->record_size);
}

/* Read whatever is there (non-blocking); -errno on a bad read. */
static inline int drain_available(int fd, struct sample_buf *b)
{
	for (;;) {
		ssize_t n;

		if (b->cap - b->nr < 4096) {
			size_t cap = b->cap ? b->cap * 2 : 65536;
			uint8_t *d = realloc(b->data, cap * b->record_size);

			if (!d)
				return -ENOMEM;
			b->data = d;
			b->cap = cap;
		}
		n = read(fd, b->data + b->nr * b->record_size,
			 (b->cap - b->nr) * b->record_size);
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0;
		if (n % b->record_size)
			return -EPROTO;
		b->nr += n / b->record_size;
	}
}

static inline void sample_buf_free(struct sample_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/*
 * A child that waits for a byte on a pipe, then spins with @tag for
 * @spin_ns of CPU time and exits.  *go_fd is the write end to start it.
 */
static inline pid_t spawn_tagged_child(uint64_t tag, uint64_t spin_ns,
				       int *go_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(3);
		tagged_spin_for(tag, spin_ns);
		_exit(0);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

static inline void go(int go_fd)
{
	char c = 'g';

	if (write(go_fd, &c, 1) != 1)
		abort();
	close(go_fd);
}

static inline int wait_exit_code(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Slot of register @reg (TAILOR_REG_*) in a record captured with @mask. */
static inline int reg_slot(uint64_t mask, int reg)
{
	return __builtin_popcountll(mask & ((1ull << reg) - 1));
}

/* Takes @cpu offline or brings it up (root): 0 or -errno. */
static inline int set_cpu_online(int cpu, bool online)
{
	char path[80];
	int fd, ok;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ok = write(fd, online ? "1" : "0", 1) == 1;
	if (!ok)
		ok = -errno;
	close(fd);
	return ok == 1 ? 0 : ok;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- the module itself: for the tests that reload it ---- */

/* tailor.ko's path: $TAILOR_KO, else where the test box puts it. */
static inline const char *tailor_ko_path(void)
{
	const char *p = getenv("TAILOR_KO");

	return p ? p : TAILOR_KO_DEFAULT;
}

/* rmmod without waiting: 0, or -EWOULDBLOCK while anything holds it. */
static inline int tailor_unload(void)
{
	return syscall(SYS_delete_module, "tailor", O_NONBLOCK) ? -errno : 0;
}

static inline int tailor_load(const char *params)
{
	int fd = open(tailor_ko_path(), O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline bool tailor_loaded(void)
{
	return access("/sys/module/tailor", F_OK) == 0;
}

/* The unprivileged user of the tests that load tailor.ko with open_gid. */
#define TAILOR_TEST_UID		4242
#define TAILOR_TEST_GID		4242
#define TAILOR_TEST_OPEN_GID	"open_gid=4242"

/*
 * Become TAILOR_TEST_UID in group TAILOR_TEST_GID, real, effective and
 * saved, with no capabilities left: 0 or -1.
 */
static inline int drop_root_to_test_user(void)
{
	gid_t groups[] = { TAILOR_TEST_GID };

	if (setgroups(1, groups) ||
	    setresgid(TAILOR_TEST_GID, TAILOR_TEST_GID, TAILOR_TEST_GID) ||
	    setresuid(TAILOR_TEST_UID, TAILOR_TEST_UID, TAILOR_TEST_UID))
		return -1;
	return 0;
}

/*
 * @fn(@arg) in a child as the test user: its exit code, 100 if dropping
 * root failed.  Dropping root makes a process undumpable, and its
 * children with it; a login's processes are dumpable, so this one is
 * made dumpable again.
 */
static inline int run_as_test_user(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (drop_root_to_test_user() || prctl(PR_SET_DUMPABLE, 1))
			_exit(100);
		_exit(fn(arg));
	}
	return wait_exit_code(pid);
}

/*
 * A setuid-root copy of this very program named @name beside it (the
 * box mounts /tmp nosuid), its path in @path: a target whose exec changes
 * credentials.  0 or -1.
 */
static inline int setuid_copy_of_self(const char *name, char *path, size_t len)
{
	char self[4096], buf[65536];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int in, out;

	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(path, len, "%.*s/%s", (int)(strrchr(self, '/') - self), self, name);
	in = open(self, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	close(in);
	if (close(out) || n < 0 || chmod(path, 04755))
		return -1;
	return 0;
}

/*
 * Run a shell command; the start of its stdout in @out (the rest read and
 * dropped: a command cut off by a closed pipe would die of SIGPIPE).
 * Returns the exit status.
 */
static inline int capture(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	char rest[4096];
	size_t n = 0;
	int status;

	out[0] = 0;
	if (!p)
		return -1;
	while (n + 1 < len && fgets(out + n, len - n, p))
		n += strlen(out + n);
	while (fread(rest, 1, sizeof(rest), p) > 0)
		;
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#endif /* TAILOR_UTIL_H */

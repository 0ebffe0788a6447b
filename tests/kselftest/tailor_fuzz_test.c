// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor_fuzz_test: a syscall fuzzer for /dev/tailor, syzkaller's way on a
 * small scale: random and mutated-valid calls from several processes and
 * threads at once, against targets that fork, exec, exit and change
 * credentials, while another thread tries to unload the module and loads
 * it again whenever that works.
 *
 *   tailor_fuzz_test [--seed N] [--calls N] [--procs N] [--threads N]
 *                    [--seconds N]
 *
 * (also TAILOR_FUZZ_SEED, _CALLS, _PROCS, _THREADS, _SECONDS).  Needs
 * root and tailor.ko at $TAILOR_KO (default /tailor/tailor.ko); it loads
 * the module with open_gid=4242 so that half the workers run as an
 * unprivileged member of that group, and leaves it loaded with defaults.
 *
 * Each thread draws its calls from its own xorshift generator seeded with
 * (seed, process, thread): the calls of one thread repeat with the seed,
 * their interleaving does not.  A call is one of: open (blocking or not),
 * close, dup, every ioctl with valid, mutated and random arguments and
 * sizes (a neighbouring _IOC size, a random command, NULL, kernel, unmapped,
 * read-only and page-straddling pointers), read with odd sizes into good
 * and bad buffers, poll, mmap of rings (right and wrong sizes, offsets,
 * protections and sharing; kept, split, unmapped, with nonsense written
 * to the reader's tail), and a fork whose child uses the inherited files
 * and mappings and exits.  Files are shared by the threads of a process, so STOP,
 * CONFIGURE and close race against reads on the same session, and signals
 * interrupt blocked reads.
 *
 * What it checks besides the kernel staying up (the box fails on any
 * KASAN, lockdep, WARN or kmemleak report, an oops, a hung task, an RCU
 * stall, or a CPU that kept box-pulse waiting, see run-in-box.sh):
 *  - a configuration with a reserved field set is refused with -EINVAL;
 *  - read() returns whole records of the configured size;
 *  - a mapping that succeeds is shared, one ring's size, and its control
 *    page describes that ring; records taken in place are whole;
 *  - a session that excludes kernel samples (and every unprivileged one,
 *    which cannot have them) delivers no kernel IP;
 *  - an unprivileged worker never starts a session on a root process;
 *  - event records (ABI 5) only in sessions that asked for switches or
 *    wakeups, of a known kind, zero after the event word;
 *  - counters: produced == delivered + lost + queued once stopped;
 *  - a software-clock session takes no more samples than its period fits
 *    into the CPU time of every CPU while it ran.
 * A violation fails the test with the call that broke it.  At the end it
 * prints calls made, how many reached the driver (at least half must),
 * sessions configured and started, records read, module unloads and
 * loads, and errors by errno.
 */
#include <linux/perf_event.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tailor_util.h"

#define MAX_PROCS		8
#define MAX_THREADS		8
#define FDS_PER_PROC		12
#define MAPS_PER_PROC		6
#define NR_TARGETS		6
#define PAGE			4096
#define KERNEL_START		0xffff800000000000ull

enum op {
	OP_OPEN, OP_CLOSE, OP_DUP, OP_INFO, OP_CONFIGURE, OP_START, OP_STOP,
	OP_STATS, OP_RAW_IOCTL, OP_READ, OP_POLL, OP_FORK, OP_PRIVATE, OP_MMAP,
	NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"open", "close", "dup", "info", "configure", "start", "stop", "stats",
	"raw ioctl", "read", "poll", "fork", "private session", "mmap",
};

/* Relative weights of the calls. */
static const unsigned int op_weight[NR_OPS] = {
	[OP_OPEN] = 8, [OP_CLOSE] = 5, [OP_DUP] = 2, [OP_INFO] = 3,
	[OP_CONFIGURE] = 14, [OP_START] = 6, [OP_STOP] = 6, [OP_STATS] = 8,
	[OP_RAW_IOCTL] = 10, [OP_READ] = 16, [OP_POLL] = 6, [OP_FORK] = 1,
	[OP_PRIVATE] = 2, [OP_MMAP] = 6,
};

/* Shared by every process of the run (MAP_SHARED). */
struct shared {
	uint64_t budget;		/* calls to make in all */
	uint64_t calls;
	uint64_t by_op[NR_OPS], ok_by_op[NR_OPS];
	uint64_t ns_by_op[NR_OPS];	/* threads' wall time in each kind of step */
	uint64_t by_errno[160];
	uint64_t configured, started, samples, events, private_sessions;
	uint64_t opens_absent;		/* opens that found no /dev/tailor: the module was out */
	uint64_t unloads, loads, unload_refused;
	uint64_t violations;
	int stop;
	int quiet;			/* workers close their files: see unloader_main() */
	uint64_t quiet_gen;		/* the quiet spell's number */
	uint64_t quiet_acks;		/* threads that closed their files in it */
	char violation[512];
	pid_t root_targets[NR_TARGETS];
	pid_t user_targets[NR_TARGETS];
};

static struct shared *sh;
static uint64_t seed = 1;
static unsigned int nr_procs = 4, nr_threads = 3;

/* Memory that makes the kernel fault: see setup_memory(). */
static uint8_t *rw_page;	/* read-write, followed by ... */
static uint8_t *guard_page;	/* ... no access */
static uint8_t *ro_page;	/* read-only */

struct rng {
	uint64_t s;
};

static uint64_t next(struct rng *r)
{
	/* xorshift64*: small, fast and good enough to pick calls. */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? next(r) % n : 0;
}

static bool one_in(struct rng *r, unsigned int n)
{
	return below(r, n) == 0;
}

static void count_call(enum op op, long ret)
{
	__atomic_fetch_add(&sh->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->by_op[op], 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		__atomic_fetch_add(&sh->ok_by_op[op], 1, __ATOMIC_RELAXED);
	else if (-ret < (long)(sizeof(sh->by_errno) / sizeof(sh->by_errno[0])))
		__atomic_fetch_add(&sh->by_errno[-ret], 1, __ATOMIC_RELAXED);
}

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void violation(const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&sh->violations, 1, __ATOMIC_RELAXED) == 0) {
		va_start(ap, fmt);
		vsnprintf(sh->violation, sizeof(sh->violation), fmt, ap);
		va_end(ap);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
}

static bool done(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&sh->calls, __ATOMIC_RELAXED) >= sh->budget;
}

/* ---- arguments ---- */

static uint64_t boundary_u64(struct rng *r)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 7, 8, 63, 64, 1000, 4096, 32768, 65536, 1000000,
		TAILOR_MAX_FREQ, TAILOR_MAX_FREQ + 1, TAILOR_MIN_TIMER_NS - 1,
		TAILOR_MIN_TIMER_NS, 0x7fffffff, 0x80000000, 0xffffffff,
		0x100000000ull, INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX,
		UINT64_MAX - 1,
	};

	return one_in(r, 4) ? next(r) : v[below(r, sizeof(v) / sizeof(v[0]))];
}

/* A pointer the kernel must cope with; @len bytes are wanted there. */
static void *bad_pointer(struct rng *r, size_t len)
{
	switch (below(r, 7)) {
	case 0:
		return NULL;
	case 1:
		return (void *)1;
	case 2:
		return (void *)0xffffffff81000000ull;	/* kernel text */
	case 3:
		return guard_page;
	case 4:
		/*
		 * The last bytes before the guard page: the buffer starts in
		 * rw_page and runs into it.  Never below rw_page: a read of
		 * 64 KiB started up to 60 KiB lower wrote samples over
		 * whatever lay there, a thread's stack and its TCB among
		 * them (a 7M-call run on 6.1 died of it).
		 */
		return rw_page + PAGE - (len > 1 ? below(r, len - 1 < PAGE ? len - 1 : PAGE - 1) + 1 : 1);
	case 5:
		return ro_page;
	default:
		return (void *)(uintptr_t)next(r);
	}
}

static pid_t pick_target(struct rng *r)
{
	switch (below(r, 10)) {
	case 0:
		return getpid();
	case 1:
		return (pid_t)boundary_u64(r);
	case 2:
		return 1;
	case 3: case 4: case 5:
		return __atomic_load_n(&sh->root_targets[below(r, NR_TARGETS)], __ATOMIC_RELAXED);
	default:
		return __atomic_load_n(&sh->user_targets[below(r, NR_TARGETS)], __ATOMIC_RELAXED);
	}
}

static bool root_owned(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return pid > 0 && !stat(path, &st) && st.st_uid == 0;
}

/* A valid configuration, then mutated; @reserved says if one was set. */
static void make_config(struct rng *r, struct tailor_config *c, bool *reserved)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->abi_version = TAILOR_ABI_VERSION;
	c->source = TAILOR_SOURCE_TIMER;
	c->flags = TAILOR_CFG_EXCLUDE_KERNEL | (one_in(r, 2) ? TAILOR_CFG_CHILDREN : 0) |
		   (one_in(r, 2) ? TAILOR_CFG_SWITCHES : 0) | (one_in(r, 2) ? TAILOR_CFG_WAKEUPS : 0);
	c->target_pid = pick_target(r);
	c->timer_period_ns = 1000000;
	c->ring_records = one_in(r, 2) ? 64 << below(r, 6) : 0;
	*reserved = false;
	/* Mutations: most calls get one or two, some many. */
	for (int n = (int)below(r, one_in(r, 8) ? 12 : 3); n > 0; n--) {
		switch (below(r, 16)) {
		case 0: c->size = (uint32_t)boundary_u64(r); break;
		case 1: c->abi_version = (uint32_t)below(r, 6); break;
		case 2: c->source = (uint32_t)below(r, 5); break;
		case 3: c->flags = (uint32_t)below(r, TAILOR_CFG_FLAGS_ALL + 1); break;
		case 4: c->flags = (uint32_t)next(r); break;
		case 5: c->timer_period_ns = boundary_u64(r); break;
		case 6: c->sample_freq = boundary_u64(r); break;
		case 7: c->sample_period = boundary_u64(r); break;
		case 8: c->regs_mask = one_in(r, 2) ? boundary_u64(r) :
				      one_in(r, 2) ? TAILOR_REGS_CAPTURABLE : TAILOR_REGS_GPR;
			break;
		case 9: c->ring_records = (uint32_t)boundary_u64(r); break;
		case 10: c->wakeup_records = (uint32_t)boundary_u64(r); break;
		case 11: c->flags |= TAILOR_CFG_TAG_WORD;
			 c->tag_word_offset = one_in(r, 2) ? -8 * (int64_t)below(r, 8) :
						 (int64_t)boundary_u64(r);
			 break;
		case 12: if (one_in(r, 2)) {
				 c->reserved = next(r) | 1;
				 *reserved = true;
			 } else {
				 /* Judged at the end, with the flags. */
				 c->callchain_max = one_in(r, 2) ? (uint32_t)below(r, 130) :
						    (uint32_t)next(r) | 1;
			 }
			 break;
		case 13: c->event_type = (uint32_t)below(r, 6); c->precise = (uint32_t)below(r, 5);
			 c->event_config = boundary_u64(r);
			 break;
		case 14: if (one_in(r, 2)) {
				 c->flags |= TAILOR_CFG_ALL_CPUS;
				 break;
			 }
			 /* ABI 4's out fields: ignored, but reserved before. */
			 c->ring_mmap_bytes = one_in(r, 2) ? boundary_u64(r) : 0;
			 c->ring_capacity = (uint32_t)boundary_u64(r);
			 break;
		case 15: if (one_in(r, 2)) {
				 /* Call stacks (ABI 6): walked in the handler, every frame. */
				 c->flags |= TAILOR_CFG_CALLCHAIN;
				 break;
			 }
			 c->target_pid = pick_target(r);
			 break;
		default: c->target_pid = pick_target(r); break;
		}
	}
	if (c->abi_version >= 1 && c->abi_version < 4 && (c->ring_mmap_bytes || c->ring_capacity))
		*reserved = true;
	/* callchain_max was reserved32: it must be 0 without a stack, and at most 127. */
	if (c->callchain_max && (!(c->flags & TAILOR_CFG_CALLCHAIN) ||
				 c->callchain_max > TAILOR_MAX_CALLCHAIN))
		*reserved = true;
}

/* ---- one process's files ---- */

struct mapping {
	void *addr;
	size_t len;
};

struct proc_files {
	int fd[FDS_PER_PROC];
	struct mapping *map[MAPS_PER_PROC];	/* rings kept mapped, any thread's */
};

static struct proc_files files;

/*
 * An open of /dev/tailor that found no device node: the module was out
 * (unloaded outside a quiet spell).  Not a call the driver saw; a moment,
 * so that the threads do not spin on it until the load.
 */
static void open_failed(int err)
{
	if (err != ENOENT)
		return;
	__atomic_fetch_add(&sh->opens_absent, 1, __ATOMIC_RELAXED);
	usleep(1000);
}

/* Whether this process has a file open in its table. */
static bool any_open(void)
{
	for (unsigned int i = 0; i < FDS_PER_PROC; i++)
		if (__atomic_load_n(&files.fd[i], __ATOMIC_RELAXED) >= 0)
			return true;
	return false;
}

/*
 * A file for the next call: nearly always one that is open, so that the
 * calls reach the driver.  A slot picked at random is empty a third of the
 * time (opens and closes balance there), and other threads close files
 * under us anyway; a run of 4.5M calls that took slots blindly made 74% of
 * them on no file at all.  So: the first open slot from a random one, and
 * on purpose, one call in 40, -1 or a number nothing has open.  Never 0-2:
 * the box's console takes tty ioctls, and a blocking read there would
 * wait for input.  -1 when the process has no file open.
 */
static int random_fd(struct rng *r)
{
	unsigned int first = (unsigned int)below(r, FDS_PER_PROC);

	if (one_in(r, 40))
		return one_in(r, 2) ? -1 : 1000 + (int)below(r, 64);
	for (unsigned int i = 0; i < FDS_PER_PROC; i++) {
		int fd = __atomic_load_n(&files.fd[(first + i) % FDS_PER_PROC], __ATOMIC_RELAXED);

		if (fd >= 0)
			return fd;
	}
	return -1;
}

static long sys_ret(long ret)
{
	return ret < 0 ? -errno : ret;
}

/*
 * An event record (ABI 5): only where the session asked for events, of a
 * known kind, and nothing but zeros after its event word.
 */
static void check_event(const uint8_t *rec, uint32_t record_size, bool events_asked,
			const char *what)
{
	const struct tailor_sample *s = (const void *)rec;
	uint32_t kind = tailor_ev_kind(s->ip);

	if (!events_asked)
		violation("%s: an event record in a session that asked for none", what);
	if (kind < TAILOR_EV_SWITCH_OUT || kind > TAILOR_EV_WAKEUP)
		violation("%s: an event record of kind %u", what, kind);
	for (uint32_t off = TAILOR_SAMPLE_BASE_SIZE; off < record_size; off++)
		if (rec[off])
			violation("%s: byte %u of an event record is %#x, not 0", what, off,
				  rec[off]);
	__atomic_fetch_add(&sh->events, 1, __ATOMIC_RELAXED);
}

/*
 * A sample's call stack (ABI 6), at the end of its record: no more entries
 * than the slots, zeros after them, and in a session without kernel
 * samples no kernel frame and no kernel context.
 */
static void check_callchain(const uint8_t *rec, const struct tailor_config *cfg, bool no_kernel,
			    const char *what)
{
	uint32_t slots = cfg->callchain_max + 2, at = cfg->record_size - 8 * (slots + 1), nr, i;
	uint64_t word, e;

	memcpy(&word, rec + at, 8);
	nr = TAILOR_CALLCHAIN_NR(word);
	if (nr > slots)
		violation("%s: a stack of %u entries in %u slots", what, nr, slots);
	for (i = 0; i < slots; i++) {
		memcpy(&e, rec + at + 8 + 8ull * i, 8);
		if (i >= nr && e)
			violation("%s: stack slot %u past its %u entries holds %#llx", what, i, nr,
				  (unsigned long long)e);
		if (i < nr && no_kernel && e >= KERNEL_START && e != (uint64_t)PERF_CONTEXT_USER)
			violation("%s: a kernel frame %#llx in a session without kernel samples",
				  what, (unsigned long long)e);
	}
}

static void check_records(const uint8_t *buf, long got, const struct tailor_config *cfg,
			  bool no_kernel, bool events_asked, const char *what)
{
	uint32_t record_size = cfg->record_size;

	if (got <= 0)
		return;
	if (record_size && got % record_size)
		violation("%s: read returned %ld bytes, not whole %u-byte records", what, got,
			  record_size);
	if (!record_size)
		return;
	for (long off = 0; off + (long)sizeof(struct tailor_sample) <= got; off += record_size) {
		const struct tailor_sample *s = (const void *)(buf + off);

		if (tailor_who_is_event(s->who)) {
			check_event(buf + off, record_size, events_asked, what);
			continue;
		}
		if (no_kernel && ((tailor_who_flags(s->who) & TAILOR_SF_KERNEL) || s->ip >= KERNEL_START))
			violation("%s: a kernel IP %#llx in a session without kernel samples",
				  what, (unsigned long long)s->ip);
		if (cfg->flags_used & TAILOR_CFG_CALLCHAIN)
			check_callchain(buf + off, cfg, no_kernel, what);
	}
	__atomic_fetch_add(&sh->samples, (uint64_t)got / record_size, __ATOMIC_RELAXED);
}

static void do_ioctl_config(struct rng *r, int fd, bool privileged)
{
	struct tailor_config cfg, *arg = &cfg;
	bool reserved;
	long ret;

	make_config(r, &cfg, &reserved);
	if (one_in(r, 12))
		arg = bad_pointer(r, sizeof(cfg));
	ret = sys_ret(ioctl(fd, TAILOR_IOC_CONFIGURE, arg));
	count_call(OP_CONFIGURE, ret);
	if (arg != &cfg || ret < 0)
		return;
	__atomic_fetch_add(&sh->configured, 1, __ATOMIC_RELAXED);
	if (reserved)
		violation("configure with reserved[] set returned 0, not -EINVAL");
	if (!privileged && (cfg.flags_used & TAILOR_CFG_ALL_CPUS))
		violation("an unprivileged session was configured for all CPUs");
}

static void do_raw_ioctl(struct rng *r, int fd)
{
	static const unsigned int cmds[] = {
		TAILOR_IOC_INFO, TAILOR_IOC_CONFIGURE, TAILOR_IOC_START, TAILOR_IOC_STOP,
		TAILOR_IOC_STATS,
	};
	unsigned int cmd = cmds[below(r, 5)];
	uint8_t buf[512];
	void *arg = buf;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)next(r);
	/* A size field that fits the struct now and then. */
	if (one_in(r, 2))
		((uint32_t *)buf)[0] = one_in(r, 2) ? sizeof(struct tailor_config) :
				       sizeof(struct tailor_stats);
	switch (below(r, 4)) {
	case 0:	/* the same command with another size in its number */
		cmd = _IOC(_IOC_DIR(cmd), TAILOR_IOC_MAGIC, _IOC_NR(cmd),
			   (unsigned int)below(r, 1 << _IOC_SIZEBITS));
		break;
	case 1:	/* another number, direction or magic */
		cmd = one_in(r, 2) ? (unsigned int)next(r) :
		      _IOC((unsigned int)below(r, 4), TAILOR_IOC_MAGIC, (unsigned int)below(r, 16),
			   (unsigned int)below(r, 256));
		/*
		 * The VFS answers some commands for every file before the
		 * driver sees them: FIFREEZE ('X') would freeze devtmpfs.
		 */
		if (_IOC_TYPE(cmd) == 'X' || _IOC_TYPE(cmd) == 'f' || _IOC_TYPE(cmd) == 0x94)
			cmd = TAILOR_IOC_STATS + 1;
		break;
	default:
		break;
	}
	if (one_in(r, 4))
		arg = bad_pointer(r, 64);
	count_call(OP_RAW_IOCTL, sys_ret(ioctl(fd, cmd, arg)));
}

static void do_stats(struct rng *r, int fd)
{
	struct tailor_cpu_stats cpus[16];
	struct tailor_stats st = { .size = sizeof(st) }, *arg = &st;

	switch (below(r, 5)) {
	case 0: st.cpus = (uintptr_t)cpus; st.nr_cpus = 16; break;
	case 1: st.cpus = (uintptr_t)bad_pointer(r, sizeof(cpus)); st.nr_cpus = (uint32_t)next(r); break;
	case 2: st.cpus = (uintptr_t)(rw_page + PAGE - sizeof(cpus[0]));
		st.nr_cpus = (uint32_t)below(r, 64);
		break;
	case 3: arg = bad_pointer(r, sizeof(st)); break;
	default: break;
	}
	if (one_in(r, 10))
		st.size = (uint32_t)boundary_u64(r);
	count_call(OP_STATS, sys_ret(ioctl(fd, TAILOR_IOC_STATS, arg)));
}

static void do_read(struct rng *r, int fd)
{
	static const size_t sizes[] = { 0, 1, 7, 23, 24, 31, 32, 33, 40, 48, 4095, 4096, 65536 };
	uint8_t *buf = malloc(65536);
	size_t len = sizes[below(r, sizeof(sizes) / sizeof(sizes[0]))];
	void *to = buf;
	long ret;

	if (!buf)
		return;
	if (one_in(r, 6))
		to = bad_pointer(r, len);
	ret = sys_ret(read(fd, to, len));
	count_call(OP_READ, ret);
	/* Shared files: another thread may have reconfigured; sizes only. */
	if (to == buf && ret > 0 && ret % 8)
		violation("read of %zu bytes returned %ld: not 8-byte records", len, ret);
	free(buf);
}

static void do_poll(struct rng *r, int fd)
{
	struct pollfd p = { .fd = fd, .events = (short)(POLLIN | (one_in(r, 4) ? POLLOUT : 0)) };

	count_call(OP_POLL, sys_ret(poll(&p, 1, (int)below(r, 3))));
}

/* A ring's mapping size for a guessed capacity and record size. */
static size_t guess_ring_bytes(struct rng *r)
{
	static const uint32_t caps[] = { 64, 128, 256, 512, 1024, 2048, 32768 };
	static const uint32_t sizes[] = { 32, 40, 48, 24, 56, 160 };
	size_t data = (size_t)caps[below(r, 7)] * sizes[below(r, 6)];

	return PAGE + ((data + PAGE - 1) & ~(size_t)(PAGE - 1));
}

static void unmap_slot(int slot)
{
	struct mapping *m = __atomic_exchange_n(&files.map[slot], NULL, __ATOMIC_RELAXED);

	if (m) {
		munmap(m->addr, m->len);
		free(m);
	}
}

/*
 * Records in place are whole: the control page must describe the ring.
 * mmap() rounds a length up to whole pages, so 10000 bytes map a ring of
 * 12288 (as the fuzzer found).
 */
static void check_control(const struct tailor_ring_control *ctl, size_t len)
{
	uint64_t data = (uint64_t)ctl->capacity * ctl->record_size;
	uint64_t mapped = ((uint64_t)len + PAGE - 1) & ~(uint64_t)(PAGE - 1);

	if (ctl->data_offset != PAGE || ctl->record_size < 24 || ctl->record_size % 8 ||
	    !ctl->capacity || (ctl->capacity & (ctl->capacity - 1)) ||
	    PAGE + ((data + PAGE - 1) & ~(uint64_t)(PAGE - 1)) != mapped)
		violation("mapped ring of %zu bytes: control page says data at %llu, %u records of %u bytes",
			  len, (unsigned long long)ctl->data_offset, ctl->capacity,
			  ctl->record_size);
}

static void do_mmap(struct rng *r, int fd)
{
	int prot = one_in(r, 5) ? PROT_READ : PROT_READ | PROT_WRITE;
	int flags = one_in(r, 8) ? MAP_PRIVATE : MAP_SHARED;
	size_t len;
	off_t off;
	struct tailor_ring_control *ctl;
	struct mapping *m;
	volatile uint8_t sink;
	long ret;

	switch (below(r, 4)) {
	case 0: len = (size_t)PAGE * (1 + below(r, 64)); break;
	case 1: len = (size_t)boundary_u64(r); break;
	default: len = guess_ring_bytes(r); break;
	}
	off = one_in(r, 6) ? (off_t)(PAGE * below(r, 4096)) : (off_t)(below(r, 4) * len);
	if (one_in(r, 16))
		prot |= PROT_EXEC;
	ctl = mmap(NULL, len, prot, flags, fd, off);
	ret = ctl == MAP_FAILED ? -errno : 0;
	count_call(OP_MMAP, ret);
	if (ret)
		return;
	if (flags & MAP_PRIVATE)
		violation("a private mapping of %zu bytes at %lld succeeded", len, (long long)off);
	check_control(ctl, len);
	/* Every page is there to read. */
	for (size_t o = 0; o < len; o += PAGE)
		sink = ((volatile uint8_t *)ctl)[o];
	(void)sink;
	if (prot & PROT_WRITE) {
		switch (below(r, 4)) {
		case 0: ctl->tail = next(r); break;	/* nonsense */
		case 1: ctl->tail = tailor_ring_head(ctl); break;
		/* Not the geometry: other threads check it (check_control). */
		case 2: ctl->head = next(r); ctl->reserved[below(r, 5)] = next(r); break;
		default: break;
		}
	}
	if (one_in(r, 6))	/* a ring cannot grow or move elsewhere bigger */
		if (mremap(ctl, len, len + PAGE, MREMAP_MAYMOVE) != MAP_FAILED)
			violation("a ring's mapping grew by mremap");
	if (one_in(r, 3)) {
		munmap(ctl, len);
		return;
	}
	if (one_in(r, 4) && len > PAGE) {
		/* Split: the records stay mapped without their control page. */
		munmap(ctl, PAGE);
		ctl = (void *)((uint8_t *)ctl + PAGE);
		len -= PAGE;
	}
	m = malloc(sizeof(*m));
	if (!m) {
		munmap(ctl, len);
		return;
	}
	m->addr = ctl;
	m->len = len;
	{
		int slot = (int)below(r, MAPS_PER_PROC);
		struct mapping *old = __atomic_exchange_n(&files.map[slot], m, __ATOMIC_RELAXED);

		if (old) {
			munmap(old->addr, old->len);
			free(old);
		}
	}
}

static void do_open(struct rng *r)
{
	int flags = O_RDWR | O_CLOEXEC | (one_in(r, 3) ? 0 : O_NONBLOCK);
	int fd = open(TAILOR_DEVICE, one_in(r, 20) ? O_RDONLY : flags);
	int err = fd < 0 ? errno : 0;
	int slot = (int)below(r, FDS_PER_PROC), old;

	count_call(OP_OPEN, fd < 0 ? -err : fd);
	if (fd < 0) {
		open_failed(err);
		return;
	}
	old = __atomic_exchange_n(&files.fd[slot], fd, __ATOMIC_RELAXED);
	if (old >= 0)
		count_call(OP_CLOSE, sys_ret(close(old)));
}

static void do_close(struct rng *r)
{
	int old = __atomic_exchange_n(&files.fd[below(r, FDS_PER_PROC)], -1, __ATOMIC_RELAXED);

	if (old >= 0)
		count_call(OP_CLOSE, sys_ret(close(old)));
}

static void do_dup(struct rng *r)
{
	int fd = random_fd(r), copy = fd >= 0 ? dup(fd) : -1;

	count_call(OP_DUP, copy < 0 ? -errno : copy);
	if (copy >= 0) {
		int old = __atomic_exchange_n(&files.fd[below(r, FDS_PER_PROC)], copy,
					      __ATOMIC_RELAXED);
		if (old >= 0)
			close(old);
	}
}

/*
 * A child that uses the files it inherited, then exits with them open
 * (killed by SIGALRM if a read blocks: a reader killed mid-session).
 */
static void do_fork(struct rng *r)
{
	pid_t pid = fork();

	count_call(OP_FORK, pid < 0 ? -errno : pid);
	if (pid == 0) {
		struct rng child = { next(r) | 1 };

		/* No thread here to interrupt a blocked read: SIGALRM ends it. */
		alarm(2);

		for (int i = 0; i < 20; i++) {
			int fd = random_fd(&child);

			if (one_in(&child, 2))
				do_read(&child, fd);
			else
				count_call(OP_STOP, sys_ret(ioctl(fd, TAILOR_IOC_STOP)));
		}
		_exit(0);
	}
	/* Signals interrupt the wait too; the child must be gone before we go on. */
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

#define PRIVATE_MAX_CPUS	64

/*
 * Take what each mapped ring holds, by the uapi header's protocol,
 * checking every record; 0, or -1 if a ring looked broken.
 */
static int drain_in_place(struct tailor_ring_control **ctl, int nr, const struct tailor_config *cfg,
			  bool no_kernel, bool events_asked, const char *what)
{
	int broken = 0;

	for (int cpu = 0; cpu < nr; cpu++) {
		struct tailor_ring_control *c = ctl[cpu];
		uint64_t head, tail;

		if (!c)
			continue;
		head = tailor_ring_head(c);
		tail = c->tail;
		if (head - tail > c->capacity) {
			violation("%s: CPU %d's ring says head %llu, tail %llu: more than its %u records",
				  what, cpu, (unsigned long long)head, (unsigned long long)tail,
				  c->capacity);
			broken = -1;
			continue;
		}
		for (; tail != head; tail++)
			check_records(tailor_ring_at(c, tail), c->record_size, cfg,
				      no_kernel, events_asked, what);
		tailor_ring_release(c, head);
	}
	return broken;
}

/*
 * The software clock samples a thread once per period of its CPU time
 * (perf's cpu-clock: an hrtimer running while the thread does, forwarded
 * a period at each expiry), never faster than perf's 10 us floor; so a
 * session cannot take more samples than its period fits into the CPU
 * time of every CPU from START to STOP.  A timer re-armed faster than
 * its period (timer_period_ns with bit 63 once made one fire every
 * nanosecond) breaks this: on 88188c3's module, 24 samples in 29 ms
 * at a period of 2^64 - 1 ns.  A counter's first sample comes a whole
 * period after START and STOP ends them all, so the clock reads around
 * the two ioctls bound the CPU time; the slack is a sample per CPU.
 */
static void check_timer_rate(const struct tailor_config *cfg, const struct tailor_stats *st,
			     uint64_t wall_ns)
{
	uint64_t period = cfg->timer_period_ns, bound;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cfg->source_used != TAILOR_SOURCE_TIMER || cpus < 1)
		return;
	if (!period)
		period = 1000000000ull / (cfg->sample_freq ? cfg->sample_freq : 1000);
	if (period < 10000)
		period = 10000;
	bound = wall_ns / period * (uint64_t)cpus * 11 / 10 + (uint64_t)cpus;
	if (st->total.produced > bound)
		violation("a timer session of period %llu ns took %llu samples in %llu us on %ld CPUs: more than %llu",
			  (unsigned long long)period, (unsigned long long)st->total.produced,
			  (unsigned long long)(wall_ns / 1000), cpus, (unsigned long long)bound);
}

/*
 * A session this thread alone uses, so its answers can be checked: the
 * configuration it asked for is the one in force.  Half of them are read
 * in place through mappings of their rings.
 */
static void private_session(struct rng *r, bool privileged)
{
	struct tailor_ring_control *ctl[PRIVATE_MAX_CPUS] = { NULL };
	int nr_cpus = 0, mapped = 0;
	bool no_kernel, events_asked;
	struct tailor_config cfg;
	struct tailor_stats st = { .size = sizeof(st) };
	uint8_t *buf = malloc(65536);
	int fd = open(TAILOR_DEVICE, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	int err = fd < 0 ? errno : 0;
	bool reserved, root_target;
	uint64_t started_ns = 0, stopped_ns = 0;
	long ret;

	count_call(OP_PRIVATE, fd < 0 ? -err : 0);
	if (fd < 0)
		open_failed(err);
	if (fd < 0 || !buf)
		goto out;
	make_config(r, &cfg, &reserved);
	if (one_in(r, 2)) {	/* mostly valid here, to get samples */
		cfg.reserved = 0;
		cfg.callchain_max = 0;
		cfg.ring_mmap_bytes = 0;
		cfg.ring_capacity = 0;
		cfg.size = sizeof(cfg);
		reserved = false;
	}
	if (one_in(r, 4)) {	/* a valid session at a boundary rate, for check_timer_rate() */
		make_config(r, &cfg, &reserved);
		cfg = (struct tailor_config){
			.size = sizeof(cfg), .abi_version = TAILOR_ABI_VERSION,
			.source = TAILOR_SOURCE_TIMER, .target_pid = cfg.target_pid,
			.flags = cfg.flags & (TAILOR_CFG_EXCLUDE_KERNEL | TAILOR_CFG_CHILDREN),
		};
		if (one_in(r, 2))
			cfg.timer_period_ns = boundary_u64(r);
		else
			cfg.sample_freq = boundary_u64(r);
		reserved = false;
	}
	root_target = root_owned(cfg.target_pid);
	ret = sys_ret(ioctl(fd, TAILOR_IOC_CONFIGURE, &cfg));
	count_call(OP_CONFIGURE, ret);
	if (ret < 0)
		goto out;
	__atomic_fetch_add(&sh->private_sessions, 1, __ATOMIC_RELAXED);
	if (reserved)
		violation("configure with reserved[] set returned 0, not -EINVAL");
	started_ns = now_ns();
	ret = sys_ret(ioctl(fd, TAILOR_IOC_START));
	count_call(OP_START, ret);
	if (ret == 0) {
		__atomic_fetch_add(&sh->started, 1, __ATOMIC_RELAXED);
		if (!privileged && root_target && !(cfg.flags_used & TAILOR_CFG_ALL_CPUS) &&
		    root_owned(cfg.target_pid))
			violation("an unprivileged worker started a session on root's process %d",
				  cfg.target_pid);
	}
	no_kernel = !privileged || (cfg.flags_used & TAILOR_CFG_EXCLUDE_KERNEL);
	events_asked = cfg.flags_used & (TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS);
	if (cfg.abi_version >= 4 && one_in(r, 2)) {
		nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
		nr_cpus = nr_cpus < PRIVATE_MAX_CPUS ? nr_cpus : PRIVATE_MAX_CPUS;
		for (int cpu = 0; cpu < nr_cpus; cpu++) {
			void *map = mmap(NULL, cfg.ring_mmap_bytes, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, (off_t)cpu * (off_t)cfg.ring_mmap_bytes);

			count_call(OP_MMAP, map == MAP_FAILED ? -errno : 0);
			if (map == MAP_FAILED)
				continue;
			ctl[cpu] = map;
			mapped++;
			check_control(ctl[cpu], cfg.ring_mmap_bytes);
			if (ctl[cpu]->record_size != cfg.record_size)
				violation("CPU %d's ring has %u-byte records, the session %u", cpu,
					  ctl[cpu]->record_size, cfg.record_size);
		}
	}
	for (int i = 0; i < 4; i++) {
		usleep(500 * (useconds_t)below(r, 4));
		if (mapped) {
			drain_in_place(ctl, nr_cpus, &cfg, no_kernel, events_asked,
				       "session read in place");
			/* One consumer: read() refused while mapped. */
			ret = sys_ret(read(fd, buf, 65536));
			count_call(OP_READ, ret);
			if (ret != -EBUSY)
				violation("read() of a mapped session returned %ld, not -EBUSY", ret);
			continue;
		}
		ret = sys_ret(read(fd, buf, 65536));
		count_call(OP_READ, ret);
		check_records(buf, ret, &cfg, no_kernel, events_asked,
			      privileged ? "private session" : "unprivileged session");
	}
	count_call(OP_STOP, sys_ret(ioctl(fd, TAILOR_IOC_STOP)));
	stopped_ns = now_ns();
	if (mapped)
		drain_in_place(ctl, nr_cpus, &cfg, no_kernel, events_asked,
			       "draining a stopped session in place");
	else
		while ((ret = sys_ret(read(fd, buf, 65536))) > 0)
			check_records(buf, ret, &cfg, no_kernel, events_asked,
				      "draining a stopped session");
	ret = sys_ret(ioctl(fd, TAILOR_IOC_STATS, &st));
	count_call(OP_STATS, ret);
	if (ret == 0 && !st.running &&
	    st.total.produced != st.total.delivered + st.total.lost + st.total.queued)
		violation("stopped session: produced %llu != delivered %llu + lost %llu + queued %llu",
			  (unsigned long long)st.total.produced,
			  (unsigned long long)st.total.delivered,
			  (unsigned long long)st.total.lost, (unsigned long long)st.total.queued);
	if (ret == 0 && !st.running && !events_asked)
		check_timer_rate(&cfg, &st, stopped_ns - started_ns);
	/* Every ring mapped and drained after the stop: nothing may be left. */
	if (ret == 0 && !st.running && mapped == nr_cpus && st.total.queued)
		violation("stopped session drained in place still has %llu queued",
			  (unsigned long long)st.total.queued);
out:
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		if (ctl[cpu])
			munmap(ctl[cpu], cfg.ring_mmap_bytes);
	if (fd >= 0)
		close(fd);
	free(buf);
}

struct worker {
	pthread_t thread;
	struct rng rng;
	bool privileged;
	uint64_t quiet_gen;	/* the last quiet spell it closed its files for */
};

static enum op pick_op(struct rng *r)
{
	unsigned int total = 0, x;
	int op;

	for (op = 0; op < NR_OPS; op++)
		total += op_weight[op];
	x = (unsigned int)below(r, total);
	for (op = 0; op < NR_OPS; op++) {
		if (x < op_weight[op])
			return (enum op)op;
		x -= op_weight[op];
	}
	return OP_INFO;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rng *r = &w->rng;

	while (!done()) {
		enum op op = pick_op(r);
		int fd = random_fd(r);
		uint64_t step_begin;
		struct tailor_info info = { .size = sizeof(info) };

		if (__atomic_load_n(&sh->quiet, __ATOMIC_ACQUIRE)) {
			uint64_t gen = __atomic_load_n(&sh->quiet_gen, __ATOMIC_ACQUIRE);

			/* Every file this thread stored is in the table by now. */
			for (int i = 0; i < FDS_PER_PROC; i++) {
				int old = __atomic_exchange_n(&files.fd[i], -1, __ATOMIC_RELAXED);

				if (old >= 0)
					count_call(OP_CLOSE, sys_ret(close(old)));
			}
			/* A mapping holds its file, and so the module, too. */
			for (int i = 0; i < MAPS_PER_PROC; i++)
				unmap_slot(i);
			if (gen != w->quiet_gen) {
				w->quiet_gen = gen;
				__atomic_fetch_add(&sh->quiet_acks, 1, __ATOMIC_RELEASE);
			}
			/*
			 * No call until the spell ends: on closed files they
			 * would reach nothing, and would count as calls made.
			 */
			usleep(2000);
			continue;
		}
		/*
		 * Nothing open in this process: open something first (not
		 * when random_fd() chose a bad descriptor on purpose).
		 */
		if (fd < 0 && op != OP_PRIVATE && op != OP_FORK && !any_open())
			op = OP_OPEN;

		step_begin = now_ns();
		switch (op) {
		case OP_OPEN: do_open(r); break;
		case OP_CLOSE: do_close(r); break;
		case OP_DUP: do_dup(r); break;
		case OP_INFO:
			count_call(op, sys_ret(ioctl(fd, TAILOR_IOC_INFO,
						     one_in(r, 4) ? bad_pointer(r, sizeof(info)) :
						     (void *)&info)));
			break;
		case OP_CONFIGURE: do_ioctl_config(r, fd, w->privileged); break;
		case OP_START:
			count_call(op, sys_ret(ioctl(fd, TAILOR_IOC_START)));
			break;
		case OP_STOP:
			count_call(op, sys_ret(ioctl(fd, TAILOR_IOC_STOP)));
			break;
		case OP_STATS: do_stats(r, fd); break;
		case OP_RAW_IOCTL: do_raw_ioctl(r, fd); break;
		case OP_READ: do_read(r, fd); break;
		case OP_POLL: do_poll(r, fd); break;
		case OP_FORK: do_fork(r); break;
		case OP_PRIVATE: private_session(r, w->privileged); break;
		case OP_MMAP: do_mmap(r, fd); break;
		default: break;
		}
		/* Where a run's time goes: a step is its calls, a fork's child's too. */
		__atomic_fetch_add(&sh->ns_by_op[op], now_ns() - step_begin, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void on_poke(int sig)
{
	(void)sig;
}

/*
 * One fuzzing process: @threads threads sharing its files.  A read that
 * blocks on a session with nothing to sample (its target asleep) would
 * hold its file, and the module, for the rest of the run: every 20-70 ms
 * each thread gets a signal that interrupts whatever call it is in.
 */
static void fuzz_process(unsigned int index, bool privileged)
{
	struct sigaction poke = { .sa_handler = on_poke };	/* no SA_RESTART */
	struct worker w[MAX_THREADS];
	struct rng r = { seed ^ (index + 1) };
	unsigned int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!privileged && drop_root_to_test_user()) {
		perror("tailor_fuzz_test: dropping privileges");
		_exit(2);
	}
	for (i = 0; i < FDS_PER_PROC; i++)
		files.fd[i] = -1;
	for (i = 0; i < MAPS_PER_PROC; i++)
		files.map[i] = NULL;
	sigaction(SIGUSR1, &poke, NULL);
	for (i = 0; i < nr_threads; i++) {
		w[i].rng.s = (seed * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)index << 32) ^ (i + 1);
		w[i].rng.s |= 1;
		w[i].privileged = privileged;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i])) {
			perror("tailor_fuzz_test: pthread_create");
			_exit(2);
		}
	}
	while (!done()) {
		usleep(20000 + (useconds_t)below(&r, 50000));
		for (i = 0; i < nr_threads; i++)
			pthread_kill(w[i].thread, SIGUSR1);
	}
	for (i = 0; i < nr_threads; i++)
		pthread_join(w[i].thread, NULL);
	_exit(0);
}

/* ---- targets ---- */

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * A target's life of @ms milliseconds: on the CPU a third of it, in turns
 * of a millisecond (the default sampling period) and two asleep.  It is
 * sampled and switches in and out (switch and wakeup events) all along,
 * and twelve targets leave the box's two CPUs to the fuzzing threads;
 * spinning all the time, they took half of them.
 */
static void spin_ms(unsigned int ms)
{
	struct timespec t0, turn;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < (long)ms) {
		clock_gettime(CLOCK_MONOTONIC, &turn);
		while (ms_since(&turn) < 1)
			;
		usleep(2000);
	}
}

/*
 * A target's life, by kind: spin and exit; spin while forking children
 * that exit; exec itself again (a new image, the same pid); exec the
 * setuid copy of this program (credentials change under a session).
 */
static void target_main(unsigned int kind, const char *self, const char *suid)
{
	char ms[16];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	switch (kind % 4) {
	case 0:
		spin_ms(50 + (kind % 16) * 7);
		_exit(0);
	case 1:
		for (int i = 0; i < 20; i++) {
			pid_t c = fork();

			if (c == 0) {
				spin_ms(2);
				_exit(0);
			}
			spin_ms(5);
			if (c > 0)
				waitpid(c, NULL, 0);
		}
		_exit(0);
	case 2:
		spin_ms(20);
		snprintf(ms, sizeof(ms), "%u", 40 + kind % 16);
		execl(self, self, "--spin-ms", ms, (char *)NULL);
		_exit(1);
	default:
		spin_ms(20);
		snprintf(ms, sizeof(ms), "%u", 40 + kind % 16);
		execl(suid, suid, "--spin-ms", ms, (char *)NULL);
		_exit(1);
	}
}

static pid_t spawn_target(unsigned int kind, bool as_user, const char *self, const char *suid)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (as_user && drop_root_to_test_user())
			_exit(2);
		target_main(kind, self, suid);
	}
	return pid;
}

/* ---- the module ---- */

/* Who holds /dev/tailor open, and where its threads wait: for a report. */
static void show_holders(void)
{
	char path[1024], link[256], line[256];
	FILE *f = fopen("/sys/module/tailor/refcnt", "r");
	DIR *procs = opendir("/proc"), *fds, *tasks;
	struct dirent *p, *d, *t;

	if (f && fgets(line, sizeof(line), f))
		printf("# tailor.ko refcnt %s", line);
	if (f)
		fclose(f);
	while (procs && (p = readdir(procs))) {
		bool holds = false;

		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		while (fds && (d = readdir(fds))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, d->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = 0, strstr(link, "tailor"))) {
				printf("# pid %s fd %s -> %s\n", p->d_name, d->d_name, link);
				holds = true;
			}
		}
		if (fds)
			closedir(fds);
		if (!holds)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		while (tasks && (t = readdir(tasks))) {
			if (t->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/wchan", p->d_name, t->d_name);
			f = fopen(path, "r");
			if (f && fgets(line, sizeof(line), f))
				printf("#   task %s waits in %s\n", t->d_name, line);
			if (f)
				fclose(f);
		}
		if (tasks)
			closedir(tasks);
	}
	if (procs)
		closedir(procs);
}

/*
 * Tries to unload while sessions run; loads again when it worked.  About
 * every half second a quiet spell: every worker thread closes its
 * process's files and makes no call until the spell ends.  Once all
 * have, nothing holds the module, and the unload must work: a refusal
 * then is a reference leaked.
 */
static void *unloader_main(void *arg)
{
	struct rng r = { seed ^ 0xabcdef };
	uint64_t all = (uint64_t)nr_procs * nr_threads;

	(void)arg;
	while (!done()) {
		bool quiet = one_in(&r, 40);
		int ret, i;

		usleep(2000 + (useconds_t)below(&r, 20000));
		if (quiet) {
			__atomic_store_n(&sh->quiet_acks, 0, __ATOMIC_RELAXED);
			__atomic_fetch_add(&sh->quiet_gen, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&sh->quiet, 1, __ATOMIC_RELEASE);
			/* Blocked reads end at the next signal (fuzz_process()). */
			for (i = 0; i < 3000 && !done() &&
			     __atomic_load_n(&sh->quiet_acks, __ATOMIC_ACQUIRE) < all; i++)
				usleep(1000);
			quiet = __atomic_load_n(&sh->quiet_acks, __ATOMIC_ACQUIRE) >= all;
		}
		ret = tailor_unload();
		/* A release still on its way (another CPU): a moment. */
		for (i = 0; quiet && ret == -EWOULDBLOCK && i < 100; i++) {
			usleep(10000);
			ret = tailor_unload();
		}
		if (ret == 0) {
			__atomic_fetch_add(&sh->unloads, 1, __ATOMIC_RELAXED);
			usleep((useconds_t)below(&r, 3000));
			if (tailor_load(TAILOR_TEST_OPEN_GID) == 0)
				__atomic_fetch_add(&sh->loads, 1, __ATOMIC_RELAXED);
			else
				violation("tailor.ko could not be loaded again after an unload");
		} else if (quiet) {
			show_holders();
			violation("every worker had closed its files, and the unload still got %s",
				  strerror(-ret));
		} else {
			__atomic_fetch_add(&sh->unload_refused, 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&sh->quiet, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* ---- the run ---- */

static void setup_memory(void)
{
	uint8_t *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	if (m == MAP_FAILED) {
		perror("tailor_fuzz_test: mmap");
		exit(1);
	}
	rw_page = m;
	guard_page = m + PAGE;
	ro_page = m + 2 * PAGE;
	memset(rw_page, 0x5a, PAGE);
	if (mprotect(guard_page, PAGE, PROT_NONE) || mprotect(ro_page, PAGE, PROT_READ)) {
		perror("tailor_fuzz_test: mprotect");
		exit(1);
	}
}

static uint64_t env_or(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Calls the driver saw: the rest found no file (EBADF) or no device node
 * (an open while the module was unloaded; other calls' ENOENT is perf's,
 * for an event no PMU takes, and did reach the driver).
 */
static uint64_t reached_driver(void)
{
	return sh->calls - sh->by_errno[EBADF] - sh->opens_absent;
}

static void print_report(double seconds)
{
	printf("# seed %llu: %llu calls in %.1f s (%.0f/s) from %u processes x %u threads\n",
	       (unsigned long long)seed, (unsigned long long)sh->calls, seconds,
	       (double)sh->calls / (seconds > 0 ? seconds : 1), nr_procs, nr_threads);
	printf("# sessions: %llu configured, %llu private, %llu started; %llu records read, %llu of them events\n",
	       (unsigned long long)sh->configured, (unsigned long long)sh->private_sessions,
	       (unsigned long long)sh->started, (unsigned long long)sh->samples,
	       (unsigned long long)sh->events);
	printf("# module: %llu unloads and %llu loads under fire, %llu unloads refused (busy)\n",
	       (unsigned long long)sh->unloads, (unsigned long long)sh->loads,
	       (unsigned long long)sh->unload_refused);
	for (int op = 0; op < NR_OPS; op++)
		printf("#   %-16s %9llu calls, %9llu succeeded, %8.1f s in its steps\n", op_names[op],
		       (unsigned long long)sh->by_op[op], (unsigned long long)sh->ok_by_op[op],
		       (double)sh->ns_by_op[op] / 1e9);
	printf("# %llu calls (%.1f%%) reached the driver: not EBADF, nor an open while tailor.ko was out\n",
	       (unsigned long long)reached_driver(), 100.0 * (double)reached_driver() /
	       (double)(sh->calls ? sh->calls : 1));
	printf("# errors by errno:");
	for (size_t e = 1; e < sizeof(sh->by_errno) / sizeof(sh->by_errno[0]); e++)
		if (sh->by_errno[e])
			printf(" %s %llu", strerrorname_np((int)e) ? strerrorname_np((int)e) : "?",
			       (unsigned long long)sh->by_errno[e]);
	printf("\n");
}

int main(int argc, char **argv)
{
	char suid[4096 + 32];
	pid_t procs[MAX_PROCS];
	pthread_t unloader;
	char self[4096];
	uint64_t calls, seconds;
	double t0, last_progress;
	ssize_t n;
	unsigned int i, kind = 0;
	int pass;

	/* The targets this program becomes: spin, then exit. */
	if (argc == 3 && !strcmp(argv[1], "--spin-ms")) {
		spin_ms((unsigned int)strtoul(argv[2], NULL, 10));
		return 0;
	}
	seed = env_or("TAILOR_FUZZ_SEED", (uint64_t)time(NULL));
	/*
	 * make check's run on every kernel; bench/fuzz-dev.sh asks for
	 * millions.  On the debug kernel in the test box 100k calls take
	 * 4-6 minutes (285-430 calls a second), 500k took 20-28.
	 */
	calls = env_or("TAILOR_FUZZ_CALLS", 100000);
	/* A slow host stops it here, well inside the debug box's 2400 s. */
	seconds = env_or("TAILOR_FUZZ_SECONDS", 1500);
	nr_procs = (unsigned int)env_or("TAILOR_FUZZ_PROCS", nr_procs);
	nr_threads = (unsigned int)env_or("TAILOR_FUZZ_THREADS", nr_threads);
	for (int a = 1; a + 1 < argc; a += 2) {
		uint64_t v = strtoull(argv[a + 1], NULL, 0);

		if (!strcmp(argv[a], "--seed"))
			seed = v;
		else if (!strcmp(argv[a], "--calls"))
			calls = v;
		else if (!strcmp(argv[a], "--procs"))
			nr_procs = (unsigned int)v;
		else if (!strcmp(argv[a], "--threads"))
			nr_threads = (unsigned int)v;
		else if (!strcmp(argv[a], "--seconds"))
			seconds = v;
		else {
			fprintf(stderr, "usage: %s [--seed N] [--calls N] [--procs N] [--threads N] [--seconds N]\n",
				argv[0]);
			return 2;
		}
	}
	if (!nr_procs || nr_procs > MAX_PROCS || !nr_threads || nr_threads > MAX_THREADS) {
		fprintf(stderr, "tailor_fuzz_test: 1..%d processes and 1..%d threads\n", MAX_PROCS,
			MAX_THREADS);
		return 2;
	}
	printf("TAP version 13\n1..1\n");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("ok 1 # SKIP needs root\n# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 4;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = 0;
	if (n <= 0 || setuid_copy_of_self("tailor-fuzz-suid", suid, sizeof(suid))) {
		printf("not ok 1 - setting up the setuid target\n");
		printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	sh->budget = calls;
	setup_memory();
	/* open_gid lets the unprivileged workers in, with perf's checks. */
	if (tailor_loaded() && tailor_unload()) {
		printf("not ok 1 - tailor.ko could not be unloaded to load it with open_gid\n");
		printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	if (tailor_load(TAILOR_TEST_OPEN_GID)) {
		printf("not ok 1 - loading %s with " TAILOR_TEST_OPEN_GID "\n", tailor_ko_path());
		printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	printf("# seed %llu, %llu calls (TAILOR_FUZZ_SEED=%llu repeats each thread's calls)\n",
	       (unsigned long long)seed, (unsigned long long)calls, (unsigned long long)seed);
	for (i = 0; i < NR_TARGETS; i++) {
		sh->root_targets[i] = spawn_target(kind++, false, self, suid);
		sh->user_targets[i] = spawn_target(kind++, true, self, suid);
	}
	t0 = now_s();
	last_progress = t0;
	for (i = 0; i < nr_procs; i++) {
		procs[i] = fork();
		if (procs[i] == 0)
			fuzz_process(i, i % 2 == 0);
	}
	pthread_create(&unloader, NULL, unloader_main, NULL);
	/* Targets die and come back; the run ends at its budget or time. */
	while (!done()) {
		pid_t dead = waitpid(-1, NULL, WNOHANG);
		double now = now_s();

		if (now - t0 > (double)seconds)
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
		/* Progress, a line a minute: a long run says how far it is. */
		if (now - last_progress >= 60) {
			uint64_t made = __atomic_load_n(&sh->calls, __ATOMIC_RELAXED);

			last_progress = now;
			printf("# %.0f s: %llu of %llu calls (%.0f/s), %.1f%% reached the driver\n",
			       now - t0, (unsigned long long)made, (unsigned long long)calls,
			       (double)made / (now - t0),
			       100.0 * (double)reached_driver() / (double)(made ? made : 1));
		}
		if (dead <= 0) {
			usleep(10000);
			continue;
		}
		for (i = 0; i < nr_procs; i++)
			if (procs[i] == dead)
				violation("fuzzing process %d ended before the run did", dead);
		for (i = 0; i < NR_TARGETS; i++) {
			if (sh->root_targets[i] == dead)
				__atomic_store_n(&sh->root_targets[i],
						 spawn_target(kind++, false, self, suid), __ATOMIC_RELAXED);
			if (sh->user_targets[i] == dead)
				__atomic_store_n(&sh->user_targets[i],
						 spawn_target(kind++, true, self, suid), __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	pthread_join(unloader, NULL);
	/* Workers blocked in read() are killed there: a reader killed mid-session. */
	sleep(2);
	for (i = 0; i < nr_procs; i++)
		kill(procs[i], SIGKILL);
	for (i = 0; i < NR_TARGETS; i++) {
		kill(sh->root_targets[i], SIGKILL);
		kill(sh->user_targets[i], SIGKILL);
	}
	while (waitpid(-1, NULL, 0) > 0)
		;
	print_report(now_s() - t0);
	unlink(suid);
	/* Leave tailor.ko loaded with its defaults, as found. */
	if (tailor_loaded() && tailor_unload())
		violation("tailor.ko could not be unloaded after the run: a reference leaked");
	if (tailor_load(""))
		violation("tailor.ko could not be loaded again after the run");
	/* A fuzzer whose calls mostly find no file exercises little. */
	if (reached_driver() < sh->calls / 2)
		violation("only %llu of %llu calls reached the driver",
			  (unsigned long long)reached_driver(), (unsigned long long)sh->calls);
	pass = !sh->violations && sh->calls >= calls;
	if (sh->violations)
		printf("# %llu violations; the first: %s\n", (unsigned long long)sh->violations,
		       sh->violation);
	printf("%s 1 - %llu calls on /dev/tailor from %u processes and unloads under fire\n",
	       pass ? "ok" : "not ok", (unsigned long long)sh->calls, nr_procs);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", pass, !pass);
	return pass ? 0 : 1;
}

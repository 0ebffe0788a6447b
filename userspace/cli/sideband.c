// SPDX-License-Identifier: GPL-2.0-only
/*
 * Side-band: which code was mapped where, and when.
 *
 * Samples carry only IPs; to map them, a recording needs every executable
 * mapping the target had over the run, including code mapped after start
 * (dlopen'ed generated code) and code unmapped before the end.  Reading
 * /proc/PID/maps at some moment misses both, so, as perf does, tailor asks
 * the kernel for its mmap/comm/task events through a perf "dummy" event
 * on the target (inherited by new threads) or on every CPU, and turns
 * them into MMAP, COMM and TASK records.  What existed before recording
 * started comes from /proc/PID/maps.  perf refuses to mmap an inherited
 * per-task event, so, as perf record does, there is one event per CPU
 * (for each thread of the target), and all events of a CPU share that
 * CPU's ring.
 *
 * With a module older than ABI 5, the same events report the target's
 * context switches (PERF_RECORD_SWITCH, attr.context_switch), written as
 * SWITCH records for the parallelism view, and wakeups come from the
 * sched:sched_waking tracepoint, opened per CPU and thread like the
 * dummy event and writing into the same rings.  It fires in the waker's
 * context, so a wakeup is recorded when one of the target's threads wakes
 * any thread, which is how a worker pool's threads wake each other (the
 * kernel may also fire the woken thread's own event: the report drops
 * such a twin).  Its id comes from tracefs; without tracefs, or without
 * the right to read tracepoints, there are no WAKEUP records and the
 * META says why (the parallelism view then counts a woken thread from its
 * switch in).  tailor.ko of ABI 5 writes both itself, from scheduler
 * probes, on the samples' own TSC and at a fraction of the side-band's
 * cost (kmod/sched.c says why); record.c then asks for neither here.
 *
 * Times: with the patched kernel the events are stamped with
 * CLOCK_PERF_HW_CLOCK, the TSC itself.  Otherwise perf time is converted
 * to TSC through the perf mmap page where the kernel offers that
 * (cap_user_time_zero), or else the TSC at the moment tailor reads the
 * event is used; each record says which (time_kind).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "cli.h"

#define CLOCK_PERF_HW_CLOCK	12	/* patches/0002 */
#define RING_DATA_PAGES		16	/* 64 KiB a ring */
/* Switches come at up to tens of thousands a second: 256 KiB a ring. */
#define RING_DATA_PAGES_SWITCHES 64

/*
 * SB_CLOCK_MONO: the BPF collector's samples are on CLOCK_MONOTONIC, and
 * perf stamps its events with it too (use_clockid), so no conversion.
 */
enum sb_clock { SB_CLOCK_TSC, SB_CLOCK_PERF, SB_CLOCK_SEEN, SB_CLOCK_MONO };

struct sb_ring {
	int cpu;
	int fd;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	size_t data_size;
};

struct sideband {
	struct sb_ring *rings;
	/* sched:sched_waking's id, or -1 (no wakeups: wakeups_off says why) */
	int waking_id;
	const char *wakeups_off;
	int nr_rings;
	int *shared_fds;	/* events writing into another event's ring */
	int nr_shared;
	enum sb_clock clock;
	bool switches;		/* context switches asked for */
	size_t data_pages;	/* per ring */
	uint64_t lost;
	uint8_t bounce[65536];	/* a record that wraps the ring end */
};

/* @clockid: CLOCK_PERF_HW_CLOCK, CLOCK_MONOTONIC, or -1 for perf's own. */
static int perf_open(pid_t pid, int cpu, int clockid, bool switches)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.context_switch = switches,
		.inherit = pid != -1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.use_clockid = clockid >= 0,
		.clockid = clockid >= 0 ? clockid : 0,
	};

	return syscall(SYS_perf_event_open, &attr, pid, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

/* A tracepoint's id from tracefs (mounted at either place), or -1. */
static int tracepoint_id(const char *event)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];
	size_t i;
	int id = -1;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]) && id < 0; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], event);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

/*
 * The wakeups @pid's threads make on @cpu: every firing a sample, its
 * raw data the woken thread.  Clock and inheritance as the dummy's, so
 * that it can write into that CPU's ring.
 */
static int waking_open(const struct sideband *sb, pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (uint64_t)sb->waking_id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW,
		.sample_id_all = 1,
		.inherit = pid != -1,
		.use_clockid = sb->clock == SB_CLOCK_TSC || sb->clock == SB_CLOCK_MONO,
		.clockid = sb->clock == SB_CLOCK_TSC ? CLOCK_PERF_HW_CLOCK :
			   sb->clock == SB_CLOCK_MONO ? CLOCK_MONOTONIC : 0,
	};

	return syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static struct sb_ring *ring_of_cpu(struct sideband *sb, int cpu)
{
	int i;

	for (i = 0; i < sb->nr_rings; i++)
		if (sb->rings[i].cpu == cpu)
			return &sb->rings[i];
	return NULL;
}

/* A later thread's event on @cpu writes into the ring already there. */
static int share_ring(struct sideband *sb, struct sb_ring *ring, int fd)
{
	int *fds;

	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd)) {
		int err = -errno;

		close(fd);
		return err;
	}
	fds = realloc(sb->shared_fds, (sb->nr_shared + 1) * sizeof(*fds));
	if (!fds) {
		close(fd);
		return -ENOMEM;
	}
	sb->shared_fds = fds;
	sb->shared_fds[sb->nr_shared++] = fd;
	return 0;
}

static int add_ring(struct sideband *sb, pid_t pid, int cpu);

/*
 * The dummy event for @pid on @cpu, then its wakeups into the same ring.
 * Wakeups refused (no right to tracepoints) are given up, not the
 * recording.
 */
static int add_event(struct sideband *sb, pid_t pid, int cpu)
{
	int err = add_ring(sb, pid, cpu), fd;

	if (err || sb->waking_id < 0)
		return err;
	fd = waking_open(sb, pid, cpu);
	if (fd < 0) {
		if (errno == ESRCH)
			return -ESRCH;
		err = -errno;
	} else {
		err = share_ring(sb, ring_of_cpu(sb, cpu), fd);
		if (!err)
			return 0;
	}
	/*
	 * Off for the whole recording: the events already open stay (their
	 * fds are shared ones), and emit_wakeup() drops what they write.
	 */
	sb->waking_id = -1;
	sb->wakeups_off = err == -EACCES || err == -EPERM ?
			  "sched_waking refused (perf_event_paranoid)" :
			  err == -EMFILE ? "sched_waking: out of file descriptors (ulimit -n)" :
			  "sched_waking cannot be opened";
	return 0;
}

static int add_ring(struct sideband *sb, pid_t pid, int cpu)
{
	size_t page = sysconf(_SC_PAGESIZE);
	struct sb_ring *r, *rings;
	int fd;
	void *m;

	fd = perf_open(pid, cpu, sb->clock == SB_CLOCK_TSC ? CLOCK_PERF_HW_CLOCK :
			   sb->clock == SB_CLOCK_MONO ? CLOCK_MONOTONIC : -1, sb->switches);
	if (fd < 0 && errno == EINVAL && sb->clock == SB_CLOCK_TSC && !sb->nr_rings) {
		/* No CLOCK_PERF_HW_CLOCK in this kernel: perf time it is. */
		sb->clock = SB_CLOCK_PERF;
		fd = perf_open(pid, cpu, -1, sb->switches);
	}
	if (fd < 0)
		return -errno;
	r = ring_of_cpu(sb, cpu);
	if (r)
		return share_ring(sb, r, fd);
	m = mmap(NULL, (sb->data_pages + 1) * page, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	rings = realloc(sb->rings, (sb->nr_rings + 1) * sizeof(*rings));
	if (!rings) {
		munmap(m, (sb->data_pages + 1) * page);
		close(fd);
		return -ENOMEM;
	}
	sb->rings = rings;
	r = &sb->rings[sb->nr_rings++];
	r->cpu = cpu;
	r->fd = fd;
	r->page = m;
	r->data = (uint8_t *)m + page;
	r->data_size = sb->data_pages * page;
	return 0;
}

/* An event on every CPU for @pid (-1: all tasks); offline CPUs skipped. */
static int add_cpus(struct sideband *sb, pid_t pid)
{
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int err, added = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		err = add_event(sb, pid, cpu);
		if (err == -ENODEV || err == -EINVAL)
			continue;
		if (err)
			return err;
		added++;
	}
	return added ? 0 : -ENODEV;
}

static bool seen_tid(const pid_t *tids, int n, pid_t tid)
{
	int i;

	for (i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/*
 * Every thread of @pid has its own events (mmaps are reported to the
 * mapping thread's events); threads created later inherit them.  A thread
 * cloned while we attach may have been missed, or have inherited events
 * for only some CPUs: scan again until a pass finds no new thread (an
 * extra event only duplicates harmless MMAP records).
 */
static int add_process(struct sideband *sb, pid_t pid)
{
	pid_t *tids = NULL;
	int nr = 0, err = 0, found;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	do {
		struct dirent *d;
		DIR *dir = opendir(path);

		if (!dir) {
			err = nr ? 0 : add_cpus(sb, pid);
			break;
		}
		found = 0;
		while (!err && (d = readdir(dir))) {
			pid_t tid, *t;

			if (!isdigit((unsigned char)d->d_name[0]))
				continue;
			tid = atoi(d->d_name);
			if (seen_tid(tids, nr, tid))
				continue;
			t = realloc(tids, (nr + 1) * sizeof(*tids));
			if (!t) {
				err = -ENOMEM;
				break;
			}
			tids = t;
			tids[nr++] = tid;
			err = add_cpus(sb, tid);
			/* A thread that exited meanwhile is no loss. */
			if (err == -ESRCH)
				err = 0;
			found++;
		}
		closedir(dir);
	} while (!err && found);
	free(tids);
	if (!err && !sb->nr_rings)
		err = -ESRCH;
	return err;
}

struct sideband *sideband_open(enum sideband_target target, pid_t pid, bool switches,
			       bool wakeups, bool monotonic)
{
	struct sideband *sb = calloc(1, sizeof(*sb));
	int err;

	if (!sb)
		return NULL;
	sb->clock = monotonic ? SB_CLOCK_MONO : SB_CLOCK_TSC;
	sb->switches = switches;
	sb->waking_id = -1;
	sb->wakeups_off = "not asked for";
	if (wakeups) {
		sb->waking_id = tracepoint_id("sched/sched_waking");
		if (sb->waking_id < 0)
			sb->wakeups_off = "no tracefs with sched/sched_waking";
	}
	sb->data_pages = switches ? RING_DATA_PAGES_SWITCHES : RING_DATA_PAGES;
	err = target == SB_PROCESS ? add_process(sb, pid) : add_cpus(sb, -1);
	if (err || !sb->nr_rings) {
		err_msg("cannot follow the target's mappings with perf_event_open: %s%s",
			strerror(err ? -err : ENODEV),
			err == -EACCES || err == -EPERM ?
			" (run as root, or lower /proc/sys/kernel/perf_event_paranoid)" :
			err == -EMFILE ? " (one event per thread and CPU: raise 'ulimit -n')" : "");
		sideband_close(sb);
		return NULL;
	}
	/* Converting perf time needs cap_user_time_zero; else use read time. */
	if (sb->clock == SB_CLOCK_PERF && !sb->rings[0].page->cap_user_time_zero)
		sb->clock = SB_CLOCK_SEEN;
	return sb;
}

int sideband_fds(struct sideband *sb, int *fds, int max)
{
	int i;

	for (i = 0; i < sb->nr_rings && i < max; i++)
		fds[i] = sb->rings[i].fd;
	return i;
}

bool sideband_switches(const struct sideband *sb)
{
	return sb->switches && sb->clock != SB_CLOCK_SEEN;
}

const char *sideband_wakeups(const struct sideband *sb)
{
	if (sb->clock == SB_CLOCK_SEEN)
		return "not recorded (no clock to stamp them)";
	if (sb->waking_id < 0) {
		static char why[128];

		snprintf(why, sizeof(why), "not recorded (%s)", sb->wakeups_off);
		return why;
	}
	return "recorded";
}

const char *sideband_clock_name(const struct sideband *sb)
{
	static const char *const names[] = { "tsc", "perf", "seen", "monotonic" };

	return names[sb->clock];
}

uint64_t sideband_lost(const struct sideband *sb)
{
	return sb->lost;
}

/* perf_event.h's recipe for turning perf time back into TSC cycles. */
static uint64_t perf_time_to_tsc(const struct perf_event_mmap_page *pg,
				 uint64_t t)
{
	uint64_t time = t - pg->time_zero;
	uint64_t quot = time / pg->time_mult, rem = time % pg->time_mult;

	return (quot << pg->time_shift) +
	       (rem << pg->time_shift) / pg->time_mult;
}

/* @t, a record's perf time (or TSC), as TSC, and how it was had. */
static void tsc_of(struct sideband *sb, struct sb_ring *r, uint64_t t, uint64_t *tsc,
		   uint32_t *kind)
{
	switch (sb->clock) {
	case SB_CLOCK_TSC:
	case SB_CLOCK_MONO:
		/* The samples' own clock. */
		*tsc = t;
		*kind = TLR_TIME_TSC;
		break;
	case SB_CLOCK_PERF:
		*tsc = perf_time_to_tsc(r->page, t);
		*kind = TLR_TIME_PERF;
		break;
	default:
		*tsc = rdtsc();
		*kind = TLR_TIME_SEEN;
	}
}

static void event_time(struct sideband *sb, struct sb_ring *r,
		       const struct perf_event_header *h, uint64_t *tsc,
		       uint32_t *kind)
{
	uint64_t t;

	/* sample_id_all puts { pid, tid, time } at the end of the record. */
	memcpy(&t, (const uint8_t *)h + h->size - sizeof(t), sizeof(t));
	tsc_of(sb, r, t, tsc, kind);
}

struct perf_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct perf_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

struct perf_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct perf_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

/* Strings end before the 16-byte sample_id trailer; bound them by it. */
static size_t bounded_strlen(const char *s, const struct perf_event_header *h)
{
	const char *end = (const char *)h + h->size - 16;

	return s < end ? strnlen(s, end - s) : 0;
}

static int emit_mmap(struct tlr_writer *w, const struct perf_mmap2 *m,
		     uint64_t tsc, uint32_t kind)
{
	struct tlr_mmap rec = {
		.tsc = tsc, .pid = m->pid, .tid = m->tid, .start = m->addr,
		.len = m->len, .pgoff = m->pgoff, .inode = m->ino,
		.dev_major = m->maj, .dev_minor = m->min, .prot = m->prot,
		.time_kind = kind,
	};
	size_t n = bounded_strlen(m->filename, &m->h);
	const void *parts[] = { &rec, m->filename, "" };
	size_t lens[] = { sizeof(rec), n, 1 };

	return tlr_write(w, TLR_MMAP, parts, lens, 3);
}

/*
 * The sample_id trailer names the switching thread (the one going out,
 * or coming in); a CPU-wide record also names the other.  Each ring
 * holds one CPU's events, so the ring says where it happened.
 */
static int emit_switch(struct sideband *sb, struct sb_ring *r,
		       const struct perf_event_header *h, struct tlr_writer *w)
{
	struct tlr_switch rec = { .cpu = (uint32_t)r->cpu, .other_pid = -1, .other_tid = -1 };
	const void *parts[1] = { &rec };
	size_t lens[1] = { sizeof(rec) };
	uint32_t id[2];

	/* Stamped when read, a switch would be off by up to a poll interval. */
	if (sb->clock == SB_CLOCK_SEEN)
		return 0;
	if (h->size < sizeof(*h) + 16 ||
	    (h->type == PERF_RECORD_SWITCH_CPU_WIDE && h->size < sizeof(*h) + 8 + 16))
		return 0;
	memcpy(id, (const uint8_t *)h + h->size - 16, sizeof(id));
	rec.pid = id[0];
	rec.tid = id[1];
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT)
		rec.flags |= TLR_SWITCH_OUT;
	if ((h->misc & PERF_RECORD_MISC_SWITCH_OUT) &&
	    (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT))
		rec.flags |= TLR_SWITCH_PREEMPTED;
	if (h->type == PERF_RECORD_SWITCH_CPU_WIDE) {
		memcpy(id, h + 1, sizeof(id));
		rec.other_pid = (int32_t)id[0];
		rec.other_tid = (int32_t)id[1];
	}
	event_time(sb, r, h, &rec.tsc, &rec.time_kind);
	return tlr_write(w, TLR_SWITCH, parts, lens, 1);
}

/*
 * A sched_waking sample: { pid, tid, time, raw size, raw }, the raw data
 * sched_wakeup_template's (include/trace/events/sched.h, the same since
 * Linux 4.3): 8 bytes of common fields, comm[16], pid, prio, target_cpu.
 */
static int emit_wakeup(struct sideband *sb, struct sb_ring *r,
		       const struct perf_event_header *h, struct tlr_writer *w)
{
	const uint8_t *b = (const uint8_t *)(h + 1);
	struct tlr_wakeup rec = { .cpu = (uint32_t)r->cpu };
	const void *parts[1] = { &rec };
	size_t lens[1] = { sizeof(rec) };
	uint32_t raw_size;
	int32_t tid;
	uint64_t t;

	if (sb->clock == SB_CLOCK_SEEN || sb->waking_id < 0 || h->size < sizeof(*h) + 20 + 36)
		return 0;
	memcpy(&raw_size, b + 16, 4);
	if (raw_size < 36 || raw_size > h->size - sizeof(*h) - 20)
		return 0;
	memcpy(&rec.pid, b, 4);
	memcpy(&rec.tid, b + 4, 4);
	memcpy(&t, b + 8, 8);
	memcpy(&tid, b + 20 + 24, 4);
	memcpy(&rec.target_cpu, b + 20 + 32, 4);
	if (tid <= 0)
		return 0;
	rec.target_tid = (uint32_t)tid;
	tsc_of(sb, r, t, &rec.tsc, &rec.time_kind);
	return tlr_write(w, TLR_WAKEUP, parts, lens, 1);
}

static int emit(struct sideband *sb, struct sb_ring *r,
		const struct perf_event_header *h, struct tlr_writer *w)
{
	uint64_t tsc;
	uint32_t kind;

	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		const struct perf_mmap2 *m = (const void *)h;

		if (h->size < sizeof(*m) + 16)
			return 0;
		event_time(sb, r, h, &tsc, &kind);
		return emit_mmap(w, m, tsc, kind);
	}
	case PERF_RECORD_COMM: {
		const struct perf_comm *c = (const void *)h;
		struct tlr_comm rec;
		const void *parts[3];
		size_t lens[3];

		if (h->size < sizeof(*c) + 16)
			return 0;
		event_time(sb, r, h, &tsc, &kind);
		rec = (struct tlr_comm){
			.tsc = tsc, .pid = c->pid, .tid = c->tid, .time_kind = kind,
			.flags = h->misc & PERF_RECORD_MISC_COMM_EXEC ? TLR_COMM_EXEC : 0,
		};
		parts[0] = &rec;
		parts[1] = c->comm;
		parts[2] = "";
		lens[0] = sizeof(rec);
		lens[1] = bounded_strlen(c->comm, h);
		lens[2] = 1;
		return tlr_write(w, TLR_COMM, parts, lens, 3);
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		const struct perf_task *t = (const void *)h;
		struct tlr_task rec;
		const void *parts[1];
		size_t lens[1];

		if (h->size < sizeof(*t))
			return 0;
		event_time(sb, r, h, &tsc, &kind);
		rec = (struct tlr_task){
			.tsc = tsc, .time_kind = kind,
			.event = h->type == PERF_RECORD_FORK ? TLR_TASK_FORK :
							       TLR_TASK_EXIT,
			.pid = t->pid, .tid = t->tid, .ppid = t->ppid, .ptid = t->ptid,
		};
		parts[0] = &rec;
		lens[0] = sizeof(rec);
		return tlr_write(w, TLR_TASK, parts, lens, 1);
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return emit_switch(sb, r, h, w);
	case PERF_RECORD_SAMPLE:	/* only the wakeup tracepoint samples */
		return emit_wakeup(sb, r, h, w);
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(struct perf_lost))
			sb->lost += ((const struct perf_lost *)h)->lost;
		return 0;
	}
	return 0;
}

static int drain_ring(struct sideband *sb, struct sb_ring *r,
		      struct tlr_writer *w)
{
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail;
	int err = 0;

	while (tail < head && !err) {
		size_t off = tail % r->data_size;
		const struct perf_event_header *h = (const void *)(r->data + off);
		struct perf_event_header hdr;

		/* The header itself may wrap. */
		if (off + sizeof(hdr) > r->data_size) {
			size_t first = r->data_size - off;

			memcpy(&hdr, r->data + off, first);
			memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
		} else {
			hdr = *h;
		}
		/* bounce holds any u16 size; a zero size would never advance. */
		if (hdr.size < sizeof(hdr))
			break;
		if (off + hdr.size > r->data_size) {
			size_t first = r->data_size - off;

			memcpy(sb->bounce, r->data + off, first);
			memcpy(sb->bounce + first, r->data, hdr.size - first);
			h = (const void *)sb->bounce;
		}
		err = emit(sb, r, h, w);
		tail += hdr.size;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

int sideband_drain(struct sideband *sb, struct tlr_writer *w)
{
	int i, err = 0;

	for (i = 0; i < sb->nr_rings && !err; i++)
		err = drain_ring(sb, &sb->rings[i], w);
	return err;
}

/*
 * The names @pid's threads have now (/proc/PID/task/TID/comm), as COMM
 * records in force from the start: a process that never execs while
 * recorded (attach mode, -a, a launched command before its exec) is
 * named in the report as perf names it from the comm events perf record
 * synthesizes, not by its number.
 */
int sideband_snapshot_comms(struct tlr_writer *w, pid_t pid, uint64_t tsc)
{
	char path[64], name[64];
	struct dirent *d;
	int err = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;	/* gone */
	while (!err && (d = readdir(dir))) {
		struct tlr_comm rec;
		const void *parts[3];
		size_t lens[3];
		FILE *f;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", pid, d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		rec = (struct tlr_comm){ .tsc = tsc, .pid = (uint32_t)pid,
					 .tid = (uint32_t)atoi(d->d_name),
					 .time_kind = TLR_TIME_START };
		parts[0] = &rec;
		parts[1] = name;
		parts[2] = "";
		lens[0] = sizeof(rec);
		lens[1] = strcspn(name, "\n");
		lens[2] = 1;
		err = tlr_write(w, TLR_COMM, parts, lens, 3);
	}
	closedir(dir);
	return err;
}

static int snapshot_pid(struct tlr_writer *w, pid_t pid, uint64_t tsc)
{
	char path[64], line[4096 + 256];
	FILE *f;
	int err = 0;

	err = sideband_snapshot_comms(w, pid, tsc);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;	/* gone, or a kernel thread: nothing to map */
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, inode;
		size_t got = strlen(line);
		unsigned int maj, min;
		char perms[8];
		int n = 0;
		struct tlr_mmap rec;
		const char *file;
		const void *parts[3];
		size_t lens[3];

		/* A path longer than the buffer: skip it whole, never re-parse its tail. */
		if (got && line[got - 1] != '\n' && !feof(f)) {
			int ch;

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end,
			   perms, &pgoff, &maj, &min, &inode, &n) < 7 ||
		    perms[2] != 'x')
			continue;
		file = line + n;
		rec = (struct tlr_mmap){
			.tsc = tsc, .pid = pid, .tid = pid, .start = start,
			.len = end - start, .pgoff = pgoff, .inode = inode,
			.dev_major = maj, .dev_minor = min,
			.prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) | 4,
			.time_kind = TLR_TIME_START,
		};
		parts[0] = &rec;
		parts[1] = file;
		parts[2] = "";
		lens[0] = sizeof(rec);
		lens[1] = strcspn(file, "\n");
		lens[2] = 1;
		err = tlr_write(w, TLR_MMAP, parts, lens, 3);
	}
	fclose(f);
	return err;
}

int sideband_snapshot(struct tlr_writer *w, pid_t pid, uint64_t tsc)
{
	struct dirent *d;
	DIR *dir;
	int err = 0;

	if (pid > 0)
		return snapshot_pid(w, pid, tsc);
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir)))
		if (isdigit((unsigned char)d->d_name[0]))
			err = snapshot_pid(w, atoi(d->d_name), tsc);
	closedir(dir);
	return err;
}

void sideband_close(struct sideband *sb)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int i;

	if (!sb)
		return;
	for (i = 0; i < sb->nr_shared; i++)
		close(sb->shared_fds[i]);
	for (i = 0; i < sb->nr_rings; i++) {
		munmap(sb->rings[i].page, (sb->data_pages + 1) * page);
		close(sb->rings[i].fd);
	}
	free(sb->shared_fds);
	free(sb->rings);
	free(sb);
}

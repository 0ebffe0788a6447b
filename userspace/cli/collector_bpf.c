// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF collector (collector.h), for kernels that load no tailor.ko:
 * the software clock (cpu-clock), on each online CPU for every task (all
 * CPUs), or for each of the target's threads wherever it runs and,
 * inherited, what they create, with userspace/bpf/tailor_sample.bpf.c
 * attached to each counter.  The program writes tailor.ko's records into
 * a BPF ring buffer per CPU, which this side maps and takes in place
 * (libbpf's ring_buffer); their time is CLOCK_MONOTONIC, which the
 * recording says (clock=monotonic).  The program also keeps to the
 * target's processes itself: its tgid, and with TAILOR_CFG_CHILDREN every
 * process it forks, added at the fork.
 *
 * It needs CAP_BPF and CAP_PERFMON (or root), and a kernel with BTF
 * (5.11 or later: bpf_task_pt_regs() came in 5.15).  Where the CPU has
 * PEBS, a precise hardware event instead of the clock, perf's PMU driver
 * filling the registers and data address from each PEBS record; the time
 * is then the interrupt's, not the record's TSC (the module's way).  Call
 * stacks by bpf_get_stack().  Switches and wakeups are not the program's:
 * perf's side-band gives them, on the same clock.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <asm/prctl.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "collector.h"
#include "tailor_bpf.h"
#include "tailor_bpf.skel.h"

struct bpf_collector;

/* libbpf's ring_buffer context for a CPU's ring. */
struct ring_ctx {
	struct bpf_collector *b;
	uint32_t cpu;
};

struct bpf_collector {
	struct tailor_bpf *skel;
	struct tailor_config cfg;	/* as configured */
	struct ring_buffer *rb;
	int *ring_fds;			/* by CPU, -1 where none */
	struct clock_event {
		int fd;
		struct bpf_link *link;
	} *events;			/* the clock's counters, with the program */
	size_t nr_events, cap_events;
	struct ring_ctx *ctx;		/* by CPU */
	int nr_cpus;			/* possible */
	bool *online;			/* by CPU, at configure */
	bool *online_now;		/* by CPU, at the last refresh */
	struct tailor_bpf_counts *per_cpu;	/* the counts map's, read by stats */
	int target_fd;			/* pidfd of the target, or -1 */
	bool stopped;
	uint64_t taken;
	/* One drain's: where the callback hands records on, in runs of batch. */
	collector_record_fn fn;
	void *arg;
	int err;
	int last_cpu;
	uint32_t batch, in_run;
};

static int nr_possible_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? n : -1;
}

/* The ring of the session's record size, from --ring-records or 2 MiB. */
static uint32_t ring_bytes(const struct tailor_config *cfg)
{
	uint64_t want = cfg->ring_records ? (uint64_t)cfg->ring_records : 32768;
	uint64_t bytes = want * (cfg->record_size + 8);	/* each with its header */
	uint64_t pow = 4096;

	while (pow < bytes && pow < (1ull << 30))
		pow <<= 1;
	return (uint32_t)pow;
}

/*
 * The inode of tailor's pid namespace where that is not the initial one
 * (a container's), else 0: the ids the program writes are then this
 * namespace's, as perf's side-band and the target's pid are.
 */
static uint32_t own_pid_namespace(void)
{
	struct stat st;

	/* PROC_PID_INIT_INO, include/linux/proc_ns.h: the initial namespace's, for good. */
	if (stat("/proc/self/ns/pid", &st) || st.st_ino == 0xEFFFFFFCU)
		return 0;
	return (uint32_t)st.st_ino;
}

/* CPU @cpu's ring, made and named to the program; 0, or -1 said. */
static int add_ring(struct bpf_collector *b, uint32_t cpu)
{
	uint32_t size = (uint32_t)b->cfg.ring_mmap_bytes;
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, size, NULL);

	if (fd < 0) {
		err_msg("cannot create CPU %u's ring of %u KiB: %s", cpu, size / 1024,
			strerror(errno));
		return -1;
	}
	b->ring_fds[cpu] = fd;
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.rings), &cpu, &fd, BPF_ANY)) {
		err_msg("cannot install CPU %u's ring: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static int bpf_configure(struct collector *c, struct tailor_config *cfg, const char *event)
{
	struct bpf_collector *b = c->priv;
	struct tailor_bpf__rodata *ro;
	uint64_t mask;
	uint32_t nr = 0, cpu, size;
	uint32_t flags = cfg->flags, chain_max = 0;
	int err, reg;
	bool pebs;

	pebs = cfg->source == TAILOR_SOURCE_PEBS ||
	       (cfg->source == TAILOR_SOURCE_AUTO && (c->info.caps & TAILOR_CAP_PEBS));
	if (pebs && !(c->info.caps & TAILOR_CAP_PEBS)) {
		err_msg("event '%s' needs PEBS, and this CPU has none (no 'pebs' in /proc/cpuinfo, or no perf PMU 'cpu'): sample with the software clock (-e cpu-clock)",
			event);
		return -1;
	}
	if (flags & TAILOR_CFG_CALLCHAIN) {
		uint64_t want = cfg->callchain_max ? cfg->callchain_max : TAILOR_DEFAULT_CALLCHAIN;
		unsigned long max_stack = 0;
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");

		if (f && fscanf(f, "%lu", &max_stack) != 1)
			max_stack = 0;
		if (f)
			fclose(f);
		if (want > TAILOR_MAX_CALLCHAIN || (max_stack && want > max_stack)) {
			err_msg("a call stack of %llu frames is more than %s allows (%lu)",
				(unsigned long long)want,
				want > TAILOR_MAX_CALLCHAIN ? "tailor" : "kernel.perf_event_max_stack",
				want > TAILOR_MAX_CALLCHAIN ? (unsigned long)TAILOR_MAX_CALLCHAIN :
				max_stack);
			return -1;
		}
		chain_max = (uint32_t)want;
	}
	/* Data addresses come with PEBS; scheduler events from perf's side-band. */
	if (!pebs)
		flags &= ~TAILOR_CFG_DATA_ADDR;
	flags &= ~(TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS);
	mask = (flags & TAILOR_CFG_NO_REGS) ? 0 :
	       cfg->regs_mask ? cfg->regs_mask : TAILOR_REGS_DEFAULT;
	if (mask & ~TAILOR_REGS_CAPTURABLE) {
		err_msg("the BPF collector captures the general-purpose registers and rip only");
		return -1;
	}
	if (!(flags & TAILOR_CFG_ALL_CPUS) && cfg->target_pid <= 0) {
		err_msg("no process to sample");
		return -1;
	}

	b->skel = tailor_bpf__open();
	if (!b->skel) {
		err_msg("cannot open the BPF collector's program: %s", strerror(errno));
		return -1;
	}
	ro = b->skel->rodata;
	for (reg = 0; reg < 64; reg++)
		if (mask & (1ull << reg))
			ro->cfg_reg_index[nr++] = (uint8_t)reg;
	size = TAILOR_SAMPLE_BASE_SIZE + 8 * nr + ((flags & TAILOR_CFG_DATA_ADDR) ? 8 : 0) +
	       ((flags & TAILOR_CFG_TAG_WORD) ? 8 : 0) +
	       ((flags & TAILOR_CFG_OTEL_CTX) ? TAILOR_OTEL_IDS_SIZE : 0) +
	       ((flags & TAILOR_CFG_CALLCHAIN) ? 8 * (1 + chain_max + 2) : 0);
	ro->cfg_flags = flags;
	ro->cfg_callchain_max = chain_max;
	ro->cfg_nr_regs = nr;
	ro->cfg_record_size = size;
	ro->cfg_tag_word_offset = cfg->tag_word_offset;
	ro->cfg_otel_ctx_offset = cfg->otel_ctx_offset;
	ro->cfg_target_tgid = (flags & TAILOR_CFG_ALL_CPUS) ? 0 : (uint32_t)cfg->target_pid;
	ro->cfg_pidns_ino = own_pid_namespace();
	/* The launched command runs on our FS base until its exec. */
	if (c->launched && (flags & (TAILOR_CFG_TAG_WORD | TAILOR_CFG_OTEL_CTX))) {
		unsigned long fsbase = 0;

		if (!syscall(SYS_arch_prctl, ARCH_GET_FS, &fsbase))
			ro->cfg_launch_fsbase = fsbase;
	}

	cfg->source_used = pebs ? TAILOR_SOURCE_PEBS : TAILOR_SOURCE_TIMER;
	/* The time is the handler's, also for PEBS: BPF sees no record's TSC. */
	cfg->tsc_source = TAILOR_TSC_HANDLER;
	if (pebs && !cfg->precise)
		cfg->precise = 2;
	cfg->flags_used = flags;
	cfg->regs_used = mask;
	cfg->nr_regs = nr;
	cfg->record_size = size;
	cfg->callchain_max = chain_max;
	size = ring_bytes(cfg);
	cfg->ring_capacity = size / (cfg->record_size + 8);
	cfg->ring_mmap_bytes = size;
	ro->cfg_wakeup_bytes = size / 4;
	b->cfg = *cfg;

	err = bpf_map__set_max_entries(b->skel->maps.rings, (uint32_t)b->nr_cpus);
	if (!err)
		err = tailor_bpf__load(b->skel);
	if (err == -EPERM) {
		err_msg("not allowed to load the BPF collector's program: it needs CAP_BPF and CAP_PERFMON (or root)");
		return -1;
	}
	if (err) {
		err_msg("the kernel refused the BPF collector's program (%s): it needs BTF and Linux 5.15 or later; TAILOR_BPF_DEBUG=1 prints the verifier's log",
			strerror(-err));
		return -1;
	}
	/* Rings for the CPUs online now: the events are opened on those. */
	for (cpu = 0; cpu < (uint32_t)b->nr_cpus; cpu++)
		if (b->online[cpu] && add_ring(b, cpu))
			return -1;
	if (ro->cfg_target_tgid) {
		uint32_t tgid = ro->cfg_target_tgid;
		uint8_t one = 1;

		if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.targets), &tgid, &one, BPF_ANY)) {
			err_msg("cannot name process %u to the program: %s", tgid, strerror(errno));
			return -1;
		}
		b->target_fd = (int)syscall(SYS_pidfd_open, tgid, 0);
		if (b->target_fd < 0) {
			err_msg(errno == ESRCH ? "no process %u" : "cannot follow process %u: %s",
				tgid, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int ring_record(void *ctx, void *data, size_t size);

/*
 * One cpu-clock counter, disabled, with the program on it: on @cpu for
 * every task (@tid -1), or for thread @tid (@cpu -1) and, inherited, the
 * threads (and with TAILOR_CFG_CHILDREN the processes) it creates.  0, 1
 * for a CPU that is offline or a thread that is gone, or -1 said.
 */
static int open_clock(struct bpf_collector *b, pid_t tid, int cpu)
{
	const struct tailor_bpf__rodata *ro = b->skel->rodata;
	const struct tailor_config *cfg = &b->cfg;
	bool pebs = cfg->source_used == TAILOR_SOURCE_PEBS;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = pebs ? cfg->event_type : PERF_TYPE_SOFTWARE,
		.config = pebs ? cfg->event_config : PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
		.exclude_kernel = !!(ro->cfg_flags & TAILOR_CFG_EXCLUDE_KERNEL),
		.exclude_user = !!(ro->cfg_flags & TAILOR_CFG_EXCLUDE_USER),
		.exclude_hv = 1,
		.inherit = tid != -1,
		.inherit_thread = tid != -1 && !(ro->cfg_flags & TAILOR_CFG_CHILDREN),
	};
	struct clock_event *ev;
	int fd;

	if (pebs) {
		/*
		 * The PEBS record's registers reach the program only with
		 * REGS_INTR; a precise event's program may take a stack only
		 * from perf's own callchain (perf_event_set_bpf_handler()); one
		 * record per interrupt (wakeup_events 1, no large PEBS), so
		 * that the program's time is the sample's.
		 */
		attr.precise_ip = cfg->precise;
		attr.sample_type = PERF_SAMPLE_IP;
		if (cfg->regs_used) {
			attr.sample_type |= PERF_SAMPLE_REGS_INTR;
			attr.sample_regs_intr = cfg->regs_used;
		}
		if (cfg->flags_used & TAILOR_CFG_CALLCHAIN)
			attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (cfg->flags_used & TAILOR_CFG_DATA_ADDR)
			attr.sample_type |= PERF_SAMPLE_ADDR;
		attr.wakeup_events = 1;
	}
	if (pebs && cfg->sample_period) {
		attr.sample_period = cfg->sample_period;
	} else if (!pebs && cfg->timer_period_ns) {
		attr.sample_period = cfg->timer_period_ns;
	} else {
		attr.freq = 1;
		attr.sample_freq = cfg->sample_freq ? cfg->sample_freq : 4000;
	}
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		unsigned long max_rate = 0;
		FILE *f;

		if (errno == ENODEV || errno == ESRCH)
			return 1;
		f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
		if (f && fscanf(f, "%lu", &max_rate) != 1)
			max_rate = 0;
		if (f)
			fclose(f);
		if (errno == EINVAL && attr.freq && max_rate && attr.sample_freq > max_rate)
			err_msg("-F %llu is over kernel.perf_event_max_sample_rate (%lu), which the BPF collector's perf counters keep to",
				(unsigned long long)attr.sample_freq, max_rate);
		else if (errno == EACCES || errno == EPERM)
			err_msg("not allowed to open %s: the BPF collector needs CAP_PERFMON (or root)",
				pebs ? "the PEBS event" : "the software clock");
		else if (pebs && (errno == ENOENT || errno == EOPNOTSUPP))
			err_msg("the CPU's PMU refused the PEBS event (type %u, config %#llx, precise %u): %s",
				attr.type, (unsigned long long)attr.config, attr.precise_ip,
				strerror(errno));
		else
			err_msg("cannot open %s%s: %s", pebs ? "the PEBS event" : "the software clock",
				cpu >= 0 ? " on a CPU" : "", strerror(errno));
		return -1;
	}
	if (b->nr_events == b->cap_events) {
		size_t cap = b->cap_events ? 2 * b->cap_events : 16;

		ev = realloc(b->events, cap * sizeof(*ev));
		if (!ev) {
			close(fd);
			err_msg("out of memory");
			return -1;
		}
		b->events = ev;
		b->cap_events = cap;
	}
	ev = &b->events[b->nr_events++];
	ev->fd = fd;
	ev->link = bpf_program__attach_perf_event(b->skel->progs.tailor_sample, fd);
	if (!ev->link) {
		err_msg("cannot attach the program to %s: %s",
			pebs ? "the PEBS event" : "the clock", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The clock: on every online CPU for every task (all CPUs), or for each
 * thread of the target on any CPU, inherited by what it creates, so that
 * the timer runs only while the target does (a launched command is one
 * thread until it runs).  Threads an attached process creates while this
 * runs are missed, as perf's are.
 */
static int bpf_start(struct collector *c)
{
	struct bpf_collector *b = c->priv;
	const struct tailor_bpf__rodata *ro = b->skel->rodata;
	pid_t *tids = NULL;
	size_t nr_tids = 1, i;
	int cpu, err = 0, opened = 0;

	if (ro->cfg_target_tgid && !c->launched) {
		char path[64];
		struct dirent *e;
		DIR *dir;

		snprintf(path, sizeof(path), "/proc/%u/task", ro->cfg_target_tgid);
		dir = opendir(path);
		if (!dir) {
			err_msg("cannot list the threads of process %u: %s", ro->cfg_target_tgid,
				strerror(errno));
			return -1;
		}
		nr_tids = 0;
		while ((e = readdir(dir)) != NULL) {
			pid_t *more;

			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			more = realloc(tids, (nr_tids + 1) * sizeof(*tids));
			if (!more) {
				closedir(dir);
				free(tids);
				err_msg("out of memory");
				return -1;
			}
			tids = more;
			tids[nr_tids++] = (pid_t)atoi(e->d_name);
		}
		closedir(dir);
	}
	if (!ro->cfg_target_tgid) {
		for (cpu = 0; cpu < b->nr_cpus && err >= 0; cpu++) {
			if (b->ring_fds[cpu] < 0)
				continue;
			err = open_clock(b, -1, cpu);
			opened += err == 0;
		}
	}
	/*
	 * A thread's counter on whatever CPU it runs (-1): one counter a
	 * thread, not one a thread and CPU, and a CPU that comes up later
	 * is sampled too (its samples counted lost until bpf_refresh() gives
	 * it a ring).
	 */
	for (i = 0; ro->cfg_target_tgid && i < nr_tids && err >= 0; i++) {
		err = open_clock(b, tids ? tids[i] : (pid_t)ro->cfg_target_tgid, -1);
		opened += err == 0;
	}
	free(tids);
	if (err < 0)
		return -1;
	if (!opened) {
		err_msg(ro->cfg_target_tgid ? "process %u is gone" : "no CPU to sample on",
			ro->cfg_target_tgid);
		return -1;
	}
	/* The fork, exec and exit tracepoints (tailor_sample is attached above). */
	bpf_program__set_autoattach(b->skel->progs.tailor_sample, false);
	if (tailor_bpf__attach(b->skel)) {
		err_msg("cannot attach to the scheduler's fork, exec and exit tracepoints: %s",
			strerror(errno));
		return -1;
	}
	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		int err;

		if (b->ring_fds[cpu] < 0)
			continue;
		if (!b->rb) {
			b->rb = ring_buffer__new(b->ring_fds[cpu], ring_record, &b->ctx[cpu], NULL);
			err = b->rb ? 0 : -errno;
		} else {
			err = ring_buffer__add(b->rb, b->ring_fds[cpu], ring_record, &b->ctx[cpu]);
		}
		if (err) {
			err_msg("cannot map CPU %d's ring: %s", cpu, strerror(-err));
			return -1;
		}
	}
	for (i = 0; i < b->nr_events; i++)
		ioctl(b->events[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

static void bpf_stop(struct collector *c)
{
	struct bpf_collector *b = c->priv;
	size_t i;

	for (i = 0; i < b->nr_events; i++)
		ioctl(b->events[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	b->stopped = true;
}

static int bpf_poll_fd(struct collector *c)
{
	struct bpf_collector *b = c->priv;

	return b->rb ? ring_buffer__epoll_fd(b->rb) : -1;
}

/*
 * libbpf's callback, for one record of the ring @ctx: records come ring
 * by ring, so a CPU's run ends where the next CPU's begins.
 */
static int ring_record(void *ctx, void *data, size_t size)
{
	const struct ring_ctx *rc = ctx;
	struct bpf_collector *b = rc->b;
	int err;

	if (size != b->cfg.record_size)
		return 0;	/* not the program's: cannot be */
	if (b->last_cpu >= 0 && ((uint32_t)b->last_cpu != rc->cpu || b->in_run == b->batch)) {
		err = b->fn(b->arg, (uint32_t)b->last_cpu, NULL);
		if (err)
			return b->err = err;
		b->in_run = 0;
	}
	b->last_cpu = (int)rc->cpu;
	err = b->fn(b->arg, rc->cpu, data);
	if (err)
		return b->err = err;
	b->in_run++;
	b->taken++;
	return 0;
}

/* The target is gone (a pidfd is readable once it has exited). */
static bool target_gone(const struct bpf_collector *b)
{
	struct pollfd pfd = { .fd = b->target_fd, .events = POLLIN };

	return b->target_fd >= 0 && poll(&pfd, 1, 0) == 1;
}

static long bpf_drain(struct collector *c, collector_record_fn fn, void *arg, uint32_t batch,
		      bool *ended)
{
	struct bpf_collector *b = c->priv;
	uint64_t before = b->taken;
	bool over;
	int n, err;

	*ended = false;
	if (!b->rb)
		return 0;
	/*
	 * The target gone, the session is over, as tailor.ko ends it: the
	 * processes it forked may run on, but their counters stop here, so
	 * that the rings drain to an end.
	 */
	if (!b->stopped && target_gone(b))
		bpf_stop(c);
	over = b->stopped;
	b->fn = fn;
	b->arg = arg;
	b->err = 0;
	b->last_cpu = -1;
	b->batch = batch ? batch : 1;
	b->in_run = 0;
	n = ring_buffer__consume(b->rb);
	if (b->err)
		return b->err;
	if (n < 0) {
		err_msg("reading the BPF rings failed: %s", strerror(-n));
		return -EIO;
	}
	if (b->last_cpu >= 0) {
		err = fn(arg, (uint32_t)b->last_cpu, NULL);
		if (err)
			return err;
	}
	/* Over, and a pass after it found nothing: nothing more comes. */
	*ended = over && b->taken == before;
	return (long)(b->taken - before);
}

/*
 * A CPU that came up since: its ring (until then its samples counted
 * lost), mapped with the others, and for an all-CPU session its clock.
 * tailor record calls this once a second.
 */
static int bpf_refresh(struct collector *c)
{
	struct bpf_collector *b = c->priv;
	const struct tailor_bpf__rodata *ro;
	int cpu, err;

	if (!b->skel || !b->rb || b->stopped ||
	    cpu_list("/sys/devices/system/cpu/online", b->online_now, (uint32_t)b->nr_cpus))
		return 0;
	ro = b->skel->rodata;
	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		if (!b->online_now[cpu] || b->ring_fds[cpu] >= 0)
			continue;
		if (add_ring(b, (uint32_t)cpu))
			return -1;
		err = ring_buffer__add(b->rb, b->ring_fds[cpu], ring_record, &b->ctx[cpu]);
		if (err) {
			err_msg("cannot map CPU %d's ring: %s", cpu, strerror(-err));
			return -1;
		}
		if (!ro->cfg_target_tgid) {
			err = open_clock(b, -1, cpu);
			if (err < 0)
				return -1;
			if (!err)
				ioctl(b->events[b->nr_events - 1].fd, PERF_EVENT_IOC_ENABLE, 0);
		}
	}
	return 0;
}

static int bpf_stats(struct collector *c, struct tailor_stats *st)
{
	struct bpf_collector *b = c->priv;
	struct tailor_bpf_counts *per;
	uint32_t zero = 0;
	int cpu;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->running = !b->stopped;
	if (!b->skel)
		return 0;
	per = b->per_cpu;
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.counts), &zero, per))
		return -1;
	for (cpu = 0; cpu < b->nr_cpus; cpu++) {
		st->total.produced += per[cpu].produced;
		st->total.lost += per[cpu].lost;
		st->kernel_ip_dropped += per[cpu].kernel_ip_dropped;
	}
	st->total.delivered = b->taken;
	/* Written and not yet taken. */
	if (st->total.produced > st->total.delivered + st->total.lost)
		st->total.queued = st->total.produced - st->total.delivered - st->total.lost;
	return 0;
}

static void bpf_close(struct collector *c)
{
	struct bpf_collector *b = c->priv;
	size_t i;
	int cpu;

	if (!b)
		return;
	ring_buffer__free(b->rb);
	/* A perf link owns its event's fd: libbpf closes it with the link. */
	for (i = 0; i < b->nr_events; i++) {
		if (b->events[i].link)
			bpf_link__destroy(b->events[i].link);
		else
			close(b->events[i].fd);
	}
	for (cpu = 0; cpu < b->nr_cpus; cpu++)
		if (b->ring_fds[cpu] >= 0)
			close(b->ring_fds[cpu]);
	tailor_bpf__destroy(b->skel);
	if (b->target_fd >= 0)
		close(b->target_fd);
	free(b->ring_fds);
	free(b->events);
	free(b->ctx);
	free(b->online);
	free(b->online_now);
	free(b->per_cpu);
	free(b);
	c->priv = NULL;
}

static const struct collector_ops bpf_ops = {
	.configure = bpf_configure,
	.start = bpf_start,
	.stop = bpf_stop,
	.poll_fd = bpf_poll_fd,
	.drain = bpf_drain,
	.refresh = bpf_refresh,
	.stats = bpf_stats,
	.close = bpf_close,
};

/*
 * PEBS, as perf offers it: the CPU says so (the 'pebs' flag) and perf
 * has its core PMU ('cpu'; a hybrid CPU's 'cpu_core').
 */
static bool cpu_has_pebs(void)
{
	char line[8192];
	bool flag = false;
	FILE *f;

	if (access("/sys/bus/event_source/devices/cpu", F_OK) &&
	    access("/sys/bus/event_source/devices/cpu_core", F_OK))
		return false;
	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	while (!flag && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5))
			flag = strstr(line, " pebs ") || strstr(line, " pebs\n");
	fclose(f);
	return flag;
}

/* libbpf's own messages: only with TAILOR_BPF_DEBUG set. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !getenv("TAILOR_BPF_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int collector_bpf_open(struct collector *c, char *why, size_t len)
{
	struct bpf_collector *b;
	int n = nr_possible_cpus(), cpu;

	memset(c, 0, sizeof(*c));
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, len, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
		return -1;
	}
	if (n < 0 || n > TAILOR_BPF_MAX_CPUS) {
		snprintf(why, len, "cannot count the possible CPUs");
		return -1;
	}
	b = calloc(1, sizeof(*b));
	if (b) {
		b->online = calloc((size_t)n, sizeof(bool));
		b->online_now = calloc((size_t)n, sizeof(bool));
		b->ring_fds = malloc((size_t)n * sizeof(int));
		b->ctx = calloc((size_t)n, sizeof(*b->ctx));
		b->per_cpu = calloc((size_t)n, sizeof(*b->per_cpu));
	}
	if (!b || !b->online || !b->online_now || !b->ring_fds || !b->ctx || !b->per_cpu ||
	    cpu_list("/sys/devices/system/cpu/online", b->online, (uint32_t)n)) {
		snprintf(why, len, b && b->online && b->online_now && b->ring_fds && b->ctx &&
			 b->per_cpu ? "cannot read the online CPUs" : "out of memory");
		if (b) {
			free(b->online);
			free(b->online_now);
			free(b->ring_fds);
			free(b->ctx);
			free(b->per_cpu);
		}
		free(b);
		return -1;
	}
	b->nr_cpus = n;
	b->target_fd = -1;
	for (cpu = 0; cpu < n; cpu++) {
		b->ring_fds[cpu] = -1;
		b->ctx[cpu] = (struct ring_ctx){ b, (uint32_t)cpu };
	}
	libbpf_set_print(libbpf_print);
	c->ops = &bpf_ops;
	c->name = "bpf";
	c->priv = b;
	c->clock_monotonic = true;
	/* tailor.ko's facts, as this collector has them: a 1 GHz clock. */
	c->info.size = sizeof(c->info);
	c->info.abi_version = TAILOR_ABI_VERSION;
	c->info.caps = TAILOR_CAP_ENTRY_IP | (cpu_has_pebs() ? TAILOR_CAP_PEBS : 0);
	c->info.tsc_khz = 1000000;
	c->info.tsc_khz_measured = 1000000;
	c->info.tsc_mult = 1;
	c->info.tsc_shift = 0;
	c->info.nr_cpu_ids = (uint32_t)n;
	return 0;
}

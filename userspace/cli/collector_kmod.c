// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tailor.ko collector (collector.h): /dev/tailor opened, configured,
 * its rings mapped and drained in place, its stats, with every failure
 * turned into one sentence that says what to do.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <poll.h>
#include "cli.h"
#include "collector.h"

/* Every possible CPU's ring, mapped (ABI 4); NULL for a CPU without one. */
struct ring_maps {
	struct tailor_ring_control **ctl;	/* by CPU; NULL: no ring (yet) */
	bool *possible;				/* by CPU */
	uint32_t nr_cpus;
	size_t bytes;				/* of each mapping */
	uint32_t capacity, record_size;		/* the session's, each ring's */
};

/* A span of whole records in a mapped ring. */
struct ring_span {
	const void *data;
	size_t bytes;
};

const char *source_name(uint32_t source)
{
	switch (source) {
	case TAILOR_SOURCE_AUTO:
		return "auto";
	case TAILOR_SOURCE_PEBS:
		return "pebs";
	case TAILOR_SOURCE_TIMER:
		return "timer";
	}
	return "unknown";
}

static int device_open(void)
{
	int fd = open(TAILOR_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT) {
		if (access("/sys/module/tailor", F_OK))
			err_msg("the tailor kernel module is not loaded: 'sudo modprobe tailor' where DKMS built it (the tailor-dkms package, or 'make install-dkms' and 'dkms install tailor/" TAILOR_VERSION "'), else 'sudo insmod kmod/tailor.ko' after 'make'");
		else
			err_msg("tailor.ko is loaded but %s is missing: is devtmpfs mounted on /dev?",
				TAILOR_DEVICE);
	} else if (errno == EACCES || errno == EPERM) {
		err_msg("no permission to open %s: run as root, or load tailor.ko with open_gid=<a group you are in>",
			TAILOR_DEVICE);
	} else {
		err_msg("cannot open %s: %s", TAILOR_DEVICE, strerror(errno));
	}
	return -1;
}

static int device_info(int fd, struct tailor_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (!ioctl(fd, TAILOR_IOC_INFO, info))
		return 0;
	if (errno == EINVAL || errno == ENOTTY)
		err_msg("tailor.ko speaks another ABI than this tailor (%d): rebuild both with 'make'",
			TAILOR_ABI_VERSION);
	else
		err_msg("TAILOR_IOC_INFO failed: %s", strerror(errno));
	return -1;
}

static int device_configure(int fd, struct tailor_config *cfg, const char *event)
{
	if (!ioctl(fd, TAILOR_IOC_CONFIGURE, cfg))
		return 0;
	switch (errno) {
	case EOPNOTSUPP:
		err_msg("event '%s' needs PEBS, which this CPU does not offer (see /sys/class/misc/tailor/pebs): use '--source timer' (or auto) to sample with the software clock",
			event);
		break;
	case EPERM:
		err_msg("not allowed: sampling all CPUs, kernel code or a raw event with the AnyThread bit needs CAP_PERFMON (run as root); a kernel locked down for confidentiality lets no session capture registers (--regs none); and a user's rings are limited across sessions (tailor.ko's user_ring_kb per CPU, plus RLIMIT_MEMLOCK)");
		break;
	case EACCES:
		err_msg("not allowed to profile process %d: you may only profile processes you could ptrace",
			cfg->target_pid);
		break;
	case ESRCH:
		err_msg("no process %d", cfg->target_pid);
		break;
	case EINVAL:
		err_msg("tailor.ko refused the configuration (event '%s'): check the rate and registers (see 'tailor record --help')",
			event);
		break;
	default:
		err_msg("configuring the session failed: %s", strerror(errno));
	}
	return -1;
}

static int device_stats(int fd, unsigned int abi_version, struct tailor_stats *st)
{
	memset(st, 0, sizeof(*st));
	/* A module before ABI 7 takes its own size only. */
	st->size = abi_version >= 7 ? sizeof(*st) : TAILOR_STATS_SIZE_VER0;
	return ioctl(fd, TAILOR_IOC_STATS, st) ? -1 : 0;
}

static int device_map_new_rings(int fd, struct ring_maps *m);
static void device_unmap_rings(struct ring_maps *m);

/*
 * CPU @cpu's ring into m->ctl[cpu]: 0, also for a CPU that has none
 * (offline when the session was configured: tailor.ko gives it one when
 * it comes up), or -1 with the error said.
 */
static int map_ring(int fd, struct ring_maps *m, uint32_t cpu)
{
	struct tailor_ring_control *ctl;
	void *map;

	map = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)cpu * (off_t)m->bytes);
	if (map == MAP_FAILED) {
		if (errno == ENODEV)
			return 0;
		err_msg("cannot map CPU %u's ring of %zu bytes from %s: %s", cpu, m->bytes,
			TAILOR_DEVICE, strerror(errno));
		return -1;
	}
	ctl = map;
	/* ring_peek() trusts the geometry: it must be the session's. */
	if (ctl->capacity != m->capacity || ctl->record_size != m->record_size ||
	    ctl->data_offset + (uint64_t)m->capacity * m->record_size > m->bytes) {
		munmap(map, m->bytes);
		err_msg("CPU %u's ring is not the one tailor.ko configured: rebuild tailor and tailor.ko with 'make'",
			cpu);
		return -1;
	}
	m->ctl[cpu] = ctl;
	return 0;
}

static int device_map_rings(int fd, const struct tailor_config *cfg, uint32_t nr_cpu_ids,
			    struct ring_maps *m)
{
	memset(m, 0, sizeof(*m));
	m->ctl = calloc(nr_cpu_ids, sizeof(*m->ctl));
	m->possible = calloc(nr_cpu_ids, sizeof(*m->possible));
	if (!m->possible || !m->ctl) {
		err_msg("out of memory");
		goto fail;
	}
	m->nr_cpus = nr_cpu_ids;
	m->bytes = cfg->ring_mmap_bytes;
	m->capacity = cfg->ring_capacity;
	m->record_size = cfg->record_size;
	if (cpu_list("/sys/devices/system/cpu/possible", m->possible, nr_cpu_ids)) {
		err_msg("cannot read the possible CPUs from /sys/devices/system/cpu/possible");
		goto fail;
	}
	if (device_map_new_rings(fd, m))
		goto fail;
	return 0;
fail:
	device_unmap_rings(m);
	return -1;
}

/*
 * Maps the rings of possible CPUs not mapped yet: at the start, and then
 * now and again for CPUs that came up since.  0 or -1.
 */
static int device_map_new_rings(int fd, struct ring_maps *m)
{
	uint32_t cpu;

	for (cpu = 0; cpu < m->nr_cpus; cpu++)
		if (m->possible[cpu] && !m->ctl[cpu] && map_ring(fd, m, cpu))
			return -1;
	return 0;
}

static void device_unmap_rings(struct ring_maps *m)
{
	uint32_t cpu;

	for (cpu = 0; m->ctl && cpu < m->nr_cpus; cpu++)
		if (m->ctl[cpu])
			munmap(m->ctl[cpu], m->bytes);
	free(m->ctl);
	free(m->possible);
	memset(m, 0, sizeof(*m));
}

static uint64_t ring_peek(const struct ring_maps *m, uint32_t cpu, struct ring_span span[2])
{
	struct tailor_ring_control *ctl = m->ctl[cpu];
	uint64_t head, tail, count, first, idx;
	uint32_t cap, rs;

	span[0].bytes = span[1].bytes = 0;
	if (!ctl)
		return 0;
	head = tailor_ring_head(ctl);
	tail = ctl->tail;
	cap = ctl->capacity;
	rs = ctl->record_size;
	count = head - tail;
	if (!count || count > cap)
		return 0;
	/* At most two spans: up to the ring's end, and from its start. */
	idx = tail & (cap - 1);
	first = count < cap - idx ? count : cap - idx;
	span[0].data = tailor_ring_at(ctl, tail);
	span[0].bytes = first * rs;
	span[1].data = tailor_ring_at(ctl, 0);
	span[1].bytes = (count - first) * rs;
	return count;
}

static void ring_release(const struct ring_maps *m, uint32_t cpu, uint64_t count)
{
	struct tailor_ring_control *ctl = m->ctl[cpu];

	/* Our reads of the records are done before the module reuses them. */
	tailor_ring_release(ctl, ctl->tail + count);
}

/* ---- the collector ---- */

struct kmod {
	int fd;
	struct ring_maps maps;
};

static int kmod_configure(struct collector *c, struct tailor_config *cfg, const char *event)
{
	struct kmod *k = c->priv;

	if (device_configure(k->fd, cfg, event) ||
	    device_map_rings(k->fd, cfg, c->info.nr_cpu_ids, &k->maps))
		return -1;
	fcntl(k->fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static int kmod_start(struct collector *c)
{
	struct kmod *k = c->priv;

	if (!ioctl(k->fd, TAILOR_IOC_START))
		return 0;
	err_msg("starting the session failed: %s", strerror(errno));
	return -1;
}

static void kmod_stop(struct collector *c)
{
	struct kmod *k = c->priv;

	ioctl(k->fd, TAILOR_IOC_STOP);
}

static int kmod_poll_fd(struct collector *c)
{
	return ((struct kmod *)c->priv)->fd;
}

/*
 * Each CPU's records in place, in runs of @batch: a run's slots go back
 * to the module once @fn has taken them (it copies what it keeps), before
 * the run is written (@fn with NULL), so that a slow write holds no slot.
 */
static long kmod_drain(struct collector *c, collector_record_fn fn, void *arg, uint32_t batch,
		       bool *ended)
{
	struct kmod *k = c->priv;
	struct pollfd pfd = { .fd = k->fd, .events = POLLIN };
	long taken = 0;
	uint32_t cpu;
	int err;

	/*
	 * Hang-up first: it says stopped and empty, and a stopped session
	 * produces nothing more, so after this pass there is nothing left.
	 */
	*ended = poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP);
	for (cpu = 0; cpu < k->maps.nr_cpus; cpu++) {
		const uint32_t rs = k->maps.record_size;
		struct ring_span span[2];
		uint64_t n = ring_peek(&k->maps, cpu, span), first = span[0].bytes / rs, i = 0;

		while (i < n) {
			uint64_t end = n - i < batch ? n : i + batch, run = end - i;

			for (; i < end; i++) {
				err = fn(arg, cpu, i < first ?
					 (const uint8_t *)span[0].data + i * rs :
					 (const uint8_t *)span[1].data + (i - first) * rs);
				if (err)
					return err;
			}
			ring_release(&k->maps, cpu, run);
			err = fn(arg, cpu, NULL);
			if (err)
				return err;
			taken += (long)run;
		}
	}
	return taken;
}

/* A CPU that came up has a ring now (CPU hotplug, ABI 8). */
static int kmod_refresh(struct collector *c)
{
	struct kmod *k = c->priv;

	return device_map_new_rings(k->fd, &k->maps);
}

static int kmod_stats(struct collector *c, struct tailor_stats *st)
{
	struct kmod *k = c->priv;

	return device_stats(k->fd, c->info.abi_version, st);
}

static void kmod_close(struct collector *c)
{
	struct kmod *k = c->priv;

	if (!k)
		return;
	device_unmap_rings(&k->maps);
	if (k->fd >= 0)
		close(k->fd);
	free(k);
	c->priv = NULL;
}

static const struct collector_ops kmod_ops = {
	.configure = kmod_configure,
	.start = kmod_start,
	.stop = kmod_stop,
	.poll_fd = kmod_poll_fd,
	.drain = kmod_drain,
	.refresh = kmod_refresh,
	.stats = kmod_stats,
	.close = kmod_close,
};

int collector_kmod_open(struct collector *c)
{
	struct kmod *k = calloc(1, sizeof(*k));

	memset(c, 0, sizeof(*c));
	if (!k) {
		err_msg("out of memory");
		return -1;
	}
	k->fd = device_open();
	if (k->fd < 0) {
		free(k);
		return -1;
	}
	c->ops = &kmod_ops;
	c->name = "tailor.ko";
	c->priv = k;
	if (device_info(k->fd, &c->info)) {
		kmod_close(c);
		return -1;
	}
	return 0;
}

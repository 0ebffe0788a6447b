// SPDX-License-Identifier: GPL-2.0-only
/*
 * The collector's side of /dev/tailor: open, configure, stats and the
 * mapped rings, with every failure turned into one sentence that says
 * what to do.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "cli.h"

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

int device_open(void)
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

int device_info(int fd, struct tailor_info *info)
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

int device_configure(int fd, struct tailor_config *cfg, const char *event)
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

int device_stats(int fd, unsigned int abi_version, struct tailor_stats *st)
{
	memset(st, 0, sizeof(*st));
	/* A module before ABI 7 takes its own size only. */
	st->size = abi_version >= 7 ? sizeof(*st) : TAILOR_STATS_SIZE_VER0;
	return ioctl(fd, TAILOR_IOC_STATS, st) ? -1 : 0;
}

/* The CPUs the kernel may ever bring up: /sys/devices/system/cpu/possible. */
static int possible_cpus(bool *possible, uint32_t nr)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	char list[4096], *tok, *save;

	if (!f || !fgets(list, sizeof(list), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (tok = strtok_r(list, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		unsigned long lo, hi;
		char *end;

		lo = strtoul(tok, &end, 10);
		hi = *end == '-' ? strtoul(end + 1, &end, 10) : lo;
		if (*end || hi < lo)
			return -1;
		for (; lo <= hi && lo < nr; lo++)
			possible[lo] = true;
	}
	return 0;
}

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

int device_map_rings(int fd, const struct tailor_config *cfg, uint32_t nr_cpu_ids,
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
	if (possible_cpus(m->possible, nr_cpu_ids)) {
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
int device_map_new_rings(int fd, struct ring_maps *m)
{
	uint32_t cpu;

	for (cpu = 0; cpu < m->nr_cpus; cpu++)
		if (m->possible[cpu] && !m->ctl[cpu] && map_ring(fd, m, cpu))
			return -1;
	return 0;
}

void device_unmap_rings(struct ring_maps *m)
{
	uint32_t cpu;

	for (cpu = 0; m->ctl && cpu < m->nr_cpus; cpu++)
		if (m->ctl[cpu])
			munmap(m->ctl[cpu], m->bytes);
	free(m->ctl);
	free(m->possible);
	memset(m, 0, sizeof(*m));
}

uint64_t ring_peek(const struct ring_maps *m, uint32_t cpu, struct ring_span span[2])
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

void ring_release(const struct ring_maps *m, uint32_t cpu, uint64_t count)
{
	struct tailor_ring_control *ctl = m->ctl[cpu];

	/* Our reads of the records are done before the module reuses them. */
	tailor_ring_release(ctl, ctl->tail + count);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rings read in place (ABI 4): each CPU's ring mapped with mmap() and
 * drained by the head/tail protocol of the uapi header.  The mapping's
 * geometry, every mapping the module must refuse, samples that arrive
 * whole and in order, read() and CONFIGURE refused while mapped, a reader
 * that writes a wrong tail, forks, old clients that see nothing new, and
 * rings that come and go with CPU hotplug (ABI 8).  Needs tailor.ko
 * loaded and root.
 */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include "tailor_util.h"
#include "kselftest_harness.h"

#define MMAP_TAG	0x3a9b

FIXTURE(ring_map) {
	int fd;
	pid_t child;
	int go_fd;
	struct tailor_config cfg;
	struct tailor_info info;
	long page;
};

FIXTURE_SETUP(ring_map)
{
	if (access(TAILOR_DEVICE, F_OK))
		SKIP(return, "%s missing: load tailor.ko first", TAILOR_DEVICE);
	ASSERT_EQ(0, tailor_info(&self->info));
	self->page = sysconf(_SC_PAGESIZE);
	self->fd = tailor_open();
	ASSERT_LE(0, self->fd);
	self->child = spawn_tagged_child(MMAP_TAG, 300000000, &self->go_fd);
	ASSERT_LT(0, self->child);
	tailor_config_init(&self->cfg, self->child);
}

FIXTURE_TEARDOWN(ring_map)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
		if (self->go_fd >= 0)
			close(self->go_fd);
	}
	close(self->fd);
}

static void *map_cpu(int fd, const struct tailor_config *cfg, int cpu)
{
	return mmap(NULL, cfg->ring_mmap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)cpu * (off_t)cfg->ring_mmap_bytes);
}

static bool cpu_possible(int cpu)
{
	char path[80];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	return !access(path, F_OK);
}

/* Every possible CPU's ring into @maps (NULL for the others): 0, or -1. */
static int map_every_cpu(int fd, const struct tailor_config *cfg, unsigned int nr, void **maps)
{
	for (unsigned int cpu = 0; cpu < nr; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		maps[cpu] = map_cpu(fd, cfg, cpu);
		if (maps[cpu] == MAP_FAILED) {
			maps[cpu] = NULL;
			return -1;
		}
	}
	return 0;
}

/*
 * Take what one ring holds, as the uapi header says; check each record
 * and count it: the child's pid, the tag in r15 wherever the IP is in the
 * tagged loop (outside it r15 is the child's own), TSCs that never go
 * back within a ring (one CPU).  Returns the number taken.
 */
static uint64_t drain_ring(struct __test_metadata *_metadata, void *map, pid_t pid,
			   uint64_t *last_tsc, uint64_t *bad, uint64_t *looped)
{
	struct tailor_ring_control *ctl = map;
	uint64_t head = tailor_ring_head(ctl);
	uint64_t tail = ctl->tail, n;

	EXPECT_GE(ctl->capacity, head - tail);
	for (n = tail; n != head; n++) {
		const struct tailor_sample *s = tailor_ring_at(ctl, n);

		if (tailor_who_pid(s->who) != (uint32_t)pid || s->tsc < *last_tsc ||
		    (in_loop(s->ip) && s->regs[0] != MMAP_TAG)) {
			if (!(*bad)++)
				TH_LOG("first bad sample: pid %u (child %d), tsc %llu after %llu, ip %#llx%s, r15 %#llx",
				       tailor_who_pid(s->who), pid, (unsigned long long)s->tsc,
				       (unsigned long long)*last_tsc, (unsigned long long)s->ip,
				       in_loop(s->ip) ? " (in the loop)" : "",
				       (unsigned long long)s->regs[0]);
		}
		*looped += in_loop(s->ip);
		*last_tsc = s->tsc;
	}
	tailor_ring_release(ctl, head);
	return head - tail;
}

TEST_F(ring_map, geometry_and_control_page)
{
	struct tailor_ring_control *ctl;
	void *map;

	self->cfg.ring_records = 1000;	/* rounded up to 1024 */
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	EXPECT_EQ(1024, self->cfg.ring_capacity);
	EXPECT_EQ((uint64_t)self->page + ((1024 * 32 + self->page - 1) & ~(self->page - 1)),
		  self->cfg.ring_mmap_bytes);
	for (unsigned int cpu = 0; cpu < self->info.nr_cpu_ids; cpu++) {
		if (!cpu_possible(cpu))
			continue;
		map = map_cpu(self->fd, &self->cfg, cpu);
		ASSERT_NE(MAP_FAILED, map);
		ctl = map;
		EXPECT_EQ(64, offsetof(struct tailor_ring_control, tail));
		EXPECT_EQ((uint64_t)self->page, ctl->data_offset);
		EXPECT_EQ(32, ctl->record_size);
		EXPECT_EQ(1024, ctl->capacity);
		EXPECT_EQ(0, ctl->head);
		EXPECT_EQ(0, ctl->tail);
		ASSERT_EQ(0, munmap(map, self->cfg.ring_mmap_bytes));
	}
}

TEST_F(ring_map, bad_mappings_refused)
{
	size_t len;
	void *map;

	/* Nothing configured: no rings to map. */
	map = mmap(NULL, self->page * 2, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	len = self->cfg.ring_mmap_bytes;
	/* Private: the reader's tail would land in a copy. */
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	ASSERT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EINVAL, errno);
	/* Part of a ring, and more than one. */
	map = mmap(NULL, len - self->page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EINVAL, errno);
	map = mmap(NULL, len * 2, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EINVAL, errno);
	/* Not at a ring's start. */
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, self->page);
	ASSERT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EINVAL, errno);
	/* A CPU there is not. */
	map = map_cpu(self->fd, &self->cfg, self->info.nr_cpu_ids);
	ASSERT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EINVAL, errno);
	/* Refusals leave nothing mapped: CONFIGURE still works. */
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	/* A mapping cannot grow. */
	map = map_cpu(self->fd, &self->cfg, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(MAP_FAILED, mremap(map, len, len * 2, MREMAP_MAYMOVE));
	ASSERT_EQ(0, munmap(map, len));
}

TEST_F(ring_map, samples_in_place_match_stats)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	unsigned int nr = self->info.nr_cpu_ids, cpu;
	uint64_t taken = 0, bad = 0, looped = 0, last[1024] = { 0 };
	struct tailor_stats st;
	void *maps[1024] = { NULL };
	bool hup = false;

	ASSERT_GE(1024, nr);
	self->cfg.ring_records = 64;	/* small, so the ring wraps */
	self->cfg.wakeup_records = 8;
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, map_every_cpu(self->fd, &self->cfg, nr, maps));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	go(self->go_fd);
	self->go_fd = -1;
	/* The target's exit stops the session; then poll says HUP. */
	while (!hup) {
		ASSERT_LE(0, poll(&pfd, 1, 5000));
		hup = pfd.revents & POLLHUP;
		for (cpu = 0; cpu < nr; cpu++)
			if (maps[cpu])
				taken += drain_ring(_metadata, maps[cpu], self->child, &last[cpu],
						    &bad, &looped);
	}
	EXPECT_EQ(0, wait_exit_code(self->child));
	self->child = 0;
	ASSERT_EQ(0, tailor_stats(self->fd, &st, NULL, 0));
	EXPECT_EQ(0, st.running);
	EXPECT_EQ(0, bad);
	/* 300 ms at 1 ms: the 64-record rings wrapped several times. */
	EXPECT_LT(200, taken);
	EXPECT_LT(taken * 9 / 10, looped);
	EXPECT_EQ(taken, st.total.delivered);
	EXPECT_EQ(0, st.total.queued);
	EXPECT_EQ(st.total.produced, st.total.delivered + st.total.lost);
	TH_LOG("%llu samples taken in place (%llu in the loop, %llu bad), %llu lost",
	       (unsigned long long)taken, (unsigned long long)looped, (unsigned long long)bad,
	       (unsigned long long)st.total.lost);
	for (cpu = 0; cpu < nr; cpu++)
		if (maps[cpu])
			ASSERT_EQ(0, munmap(maps[cpu], self->cfg.ring_mmap_bytes));
}

TEST_F(ring_map, one_consumer_while_mapped)
{
	char rec[64];
	void *map;
	pid_t pid;

	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	map = map_cpu(self->fd, &self->cfg, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(-1, read(self->fd, rec, sizeof(rec)));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-EBUSY, tailor_configure(self->fd, &self->cfg));
	/* A fork's copy of the mapping counts until it is gone too. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(200000);
		_exit(0);
	}
	ASSERT_EQ(0, munmap(map, self->cfg.ring_mmap_bytes));
	EXPECT_EQ(-EBUSY, tailor_configure(self->fd, &self->cfg));
	EXPECT_EQ(0, wait_exit_code(pid));
	/* Unmapped everywhere: read() and CONFIGURE are back. */
	EXPECT_EQ(0, tailor_configure(self->fd, &self->cfg));
	EXPECT_EQ(0, read(self->fd, rec, sizeof(rec)));
}

struct reader {
	int fd;
	size_t size;
	ssize_t ret;
	bool done;
};

static void *blocking_read(void *arg)
{
	struct reader *r = arg;
	char *buf = malloc(r->size);

	r->ret = buf ? read(r->fd, buf, r->size) : -1;
	free(buf);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A read() waiting for samples is the rings' consumer: they cannot be
 * mapped until it returns (before, mmap() succeeded and two consumers
 * moved tail).
 */
TEST_F(ring_map, no_mapping_while_a_read_waits)
{
	struct reader r = { .fd = self->fd };
	pthread_t t;
	void *map;

	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	/* The child waits for go: no samples, so read() blocks. */
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	r.size = self->cfg.record_size * 16;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocking_read, &r));
	usleep(300000);
	ASSERT_FALSE(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE));
	map = map_cpu(self->fd, &self->cfg, 0);
	EXPECT_EQ(MAP_FAILED, map) {
		TH_LOG("the rings were mapped while a read() was under way");
		munmap(map, self->cfg.ring_mmap_bytes);
	}
	EXPECT_EQ(EBUSY, errno);
	/* STOP ends the read (nothing queued: 0), and mapping works again. */
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	pthread_join(t, NULL);
	EXPECT_EQ(0, r.ret);
	map = map_cpu(self->fd, &self->cfg, 0);
	ASSERT_NE(MAP_FAILED, map);
	munmap(map, self->cfg.ring_mmap_bytes);
}

/* A reader that writes nonsense to tail harms only its own samples. */
TEST_F(ring_map, wrong_tail_costs_only_the_reader)
{
	unsigned int nr = self->info.nr_cpu_ids, cpu;
	struct tailor_stats st;
	void *maps[1024] = { NULL };

	ASSERT_GE(1024, nr);
	self->cfg.ring_records = 64;
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, map_every_cpu(self->fd, &self->cfg, nr, maps));
	for (cpu = 0; cpu < nr; cpu++)
		if (maps[cpu]) {
			/* Ahead of head, then the page's other fields too. */
			((struct tailor_ring_control *)maps[cpu])->tail = 1ULL << 63;
			((struct tailor_ring_control *)maps[cpu])->head = 12345;
			((struct tailor_ring_control *)maps[cpu])->capacity = 1U << 31;
		}
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	go(self->go_fd);
	self->go_fd = -1;
	EXPECT_EQ(0, wait_exit_code(self->child));
	self->child = 0;
	/* The tick notices the exit within 100 ms. */
	usleep(300000);
	ASSERT_EQ(0, tailor_stats(self->fd, &st, NULL, 0));
	EXPECT_EQ(0, st.running);
	/* Every sample was dropped as if the ring were full, and counted. */
	EXPECT_LT(100, st.total.produced);
	EXPECT_EQ(st.total.produced, st.total.lost);
	EXPECT_EQ(0, st.total.delivered);
	EXPECT_EQ(0, st.total.queued);
	for (cpu = 0; cpu < nr; cpu++) {
		if (!maps[cpu])
			continue;
		/* Nothing committed, so nothing written: head is still ours. */
		EXPECT_EQ(12345, ((struct tailor_ring_control *)maps[cpu])->head);
		ASSERT_EQ(0, munmap(maps[cpu], self->cfg.ring_mmap_bytes));
	}
	/* Unmapped, read() takes the rings back from head: end of stream. */
	{
		uint8_t buf[64 * 32];

		EXPECT_EQ(0, read(self->fd, buf, sizeof(buf)));
	}
}

TEST_F(ring_map, earlier_abi_sees_no_change)
{
	struct tailor_config cfg;
	void *map;

	tailor_config_init(&cfg, self->child);
	cfg.abi_version = 3;
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	/* Reserved before ABI 4: left zero, and must be zero. */
	EXPECT_EQ(0, cfg.ring_mmap_bytes);
	EXPECT_EQ(0, cfg.ring_capacity);
	cfg.ring_capacity = 64;
	EXPECT_EQ(-EINVAL, tailor_configure(self->fd, &cfg));
	cfg.ring_capacity = 0;
	cfg.ring_mmap_bytes = 1;
	EXPECT_EQ(-EINVAL, tailor_configure(self->fd, &cfg));
	/* ABI 4 ignores what comes in the out fields, not the reserved ones. */
	tailor_config_init(&cfg, self->child);
	cfg.ring_mmap_bytes = 1;
	cfg.ring_capacity = 3;
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	EXPECT_EQ(32768, cfg.ring_capacity);
	cfg.callchain_max = 1;
	EXPECT_EQ(-EINVAL, tailor_configure(self->fd, &cfg));
	cfg.callchain_max = 0;
	cfg.reserved = 1;
	EXPECT_EQ(-EINVAL, tailor_configure(self->fd, &cfg));
	/* An old client's session can still be mapped, if it knew how. */
	map = map_cpu(self->fd, &(struct tailor_config){
		.ring_mmap_bytes = self->page + 32768 * 32 }, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map, self->page + 32768 * 32));
}

/*
 * ABI 8: rings for the CPUs online at configure, and for a CPU when it
 * comes up; mmap() of a CPU without one says ENODEV.  The box takes CPU
 * 1 offline and back (Linux's own CPU hotplug, as a cloud VM's vCPUs come
 * and go); a session's target then runs on it and its samples there are
 * taken in place.  Teardown brings CPU 1 back whatever happened.
 */
#define HOTPLUG_CPU	1

FIXTURE(hotplug) {
	int fd;
	pid_t child;
	int go_fd;
	bool offlined;
};

FIXTURE_SETUP(hotplug)
{
	int err;

	self->fd = -1;
	if (access(TAILOR_DEVICE, F_OK))
		SKIP(return, "%s missing: load tailor.ko first", TAILOR_DEVICE);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU online: none to take away");
	err = set_cpu_online(HOTPLUG_CPU, false);
	if (err)
		SKIP(return, "cannot take CPU %d offline: %s", HOTPLUG_CPU, strerror(-err));
	self->offlined = true;
	self->fd = tailor_open();
	ASSERT_LE(0, self->fd);
	self->child = spawn_tagged_child(MMAP_TAG, 300000000, &self->go_fd);
	ASSERT_LT(0, self->child);
}

FIXTURE_TEARDOWN(hotplug)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
		if (self->go_fd >= 0)
			close(self->go_fd);
	}
	if (self->fd >= 0)
		close(self->fd);
	if (self->offlined)
		EXPECT_EQ(0, set_cpu_online(HOTPLUG_CPU, true));
}

TEST_F(hotplug, rings_come_with_their_cpu)
{
	struct tailor_config cfg, old_cfg;
	struct tailor_ring_control *ctl;
	struct tailor_stats st;
	uint64_t last = 0, bad = 0, looped = 0, taken;
	cpu_set_t set;
	int old_fd;
	void *map;

	tailor_config_init(&cfg, self->child);
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	map = map_cpu(self->fd, &cfg, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map, cfg.ring_mmap_bytes));
	/* Offline at configure: no ring. */
	map = map_cpu(self->fd, &cfg, HOTPLUG_CPU);
	EXPECT_EQ(MAP_FAILED, map);
	EXPECT_EQ(ENODEV, errno);
	if (map != MAP_FAILED)
		munmap(map, cfg.ring_mmap_bytes);

	/* A client before ABI 8 maps every possible CPU's ring, as it did. */
	old_fd = tailor_open();
	ASSERT_LE(0, old_fd);
	tailor_config_init(&old_cfg, self->child);
	old_cfg.abi_version = 7;
	ASSERT_EQ(0, tailor_configure(old_fd, &old_cfg));
	map = map_cpu(old_fd, &old_cfg, HOTPLUG_CPU);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map, old_cfg.ring_mmap_bytes));
	close(old_fd);

	/* Up again: the session has its ring, and the target runs there. */
	ASSERT_EQ(0, set_cpu_online(HOTPLUG_CPU, true));
	self->offlined = false;
	map = map_cpu(self->fd, &cfg, HOTPLUG_CPU);
	ASSERT_NE(MAP_FAILED, map);
	ctl = map;
	EXPECT_EQ(cfg.ring_capacity, ctl->capacity);
	EXPECT_EQ(cfg.record_size, ctl->record_size);
	CPU_ZERO(&set);
	CPU_SET(HOTPLUG_CPU, &set);
	ASSERT_EQ(0, sched_setaffinity(self->child, sizeof(set), &set));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	go(self->go_fd);
	self->go_fd = -1;
	EXPECT_EQ(0, wait_exit_code(self->child));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	taken = drain_ring(_metadata, map, self->child, &last, &bad, &looped);
	self->child = 0;
	ASSERT_EQ(0, tailor_stats(self->fd, &st, NULL, 0));
	/* 300 ms at 1 ms, all of it on the CPU that came up. */
	EXPECT_LT(200, taken);
	EXPECT_EQ(taken, st.total.delivered);
	EXPECT_EQ(0, bad);
	TH_LOG("%llu samples in place from CPU %d, which came up after the configure, %llu lost",
	       (unsigned long long)taken, HOTPLUG_CPU, (unsigned long long)st.total.lost);
	ASSERT_EQ(0, munmap(map, cfg.ring_mmap_bytes));
}

TEST_HARNESS_MAIN

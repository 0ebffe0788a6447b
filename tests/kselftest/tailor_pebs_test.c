// SPDX-License-Identifier: GPL-2.0-only
/*
 * PEBS sessions: precise IPs, r15 taken from the PEBS record, and the
 * TSC spacing of samples taken every N cycles.  These need an Intel CPU
 * whose PEBS the kernel drives; everywhere else they SKIP.  They have
 * not run in tailor's CI, which has no PEBS hardware.
 */
#include "tailor_util.h"
#include "kselftest_harness.h"

#define TAG		0xfeed15ull
#define PERIOD_CYCLES	100003ull

FIXTURE(pebs) {
	int fd;
	int go_fd;
	pid_t child;
	struct tailor_config cfg;
	struct sample_buf b;
};

FIXTURE_SETUP(pebs)
{
	self->fd = -1;
	self->child = 0;
}

FIXTURE_TEARDOWN(pebs)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	sample_buf_free(&self->b);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * Set up a PEBS session on a tagged child, or SKIP.  This lives in the
 * test body, not FIXTURE_SETUP: the 6.1 harness runs the body even after
 * a SKIP in setup.
 */
static bool pebs_ready(struct __test_metadata *_metadata,
		       FIXTURE_DATA(pebs) *self)
{
	struct tailor_info info;

	if (access(TAILOR_DEVICE, F_OK))
		SKIP(return false, "%s missing: load tailor.ko first",
		     TAILOR_DEVICE);
	if (tailor_info(&info) || !(info.caps & TAILOR_CAP_PEBS))
		SKIP(return false,
		     "no PEBS on this CPU (see /sys/class/misc/tailor/pebs)");
	self->fd = tailor_open();
	EXPECT_LE(0, self->fd);
	self->child = spawn_tagged_child(TAG, 1000000000ull, &self->go_fd);
	EXPECT_LT(0, self->child);
	tailor_config_init(&self->cfg, self->child);
	self->cfg.source = TAILOR_SOURCE_PEBS;
	self->cfg.timer_period_ns = 0;
	self->cfg.event_type = TAILOR_EVENT_HARDWARE;
	self->cfg.event_config = 0; /* PERF_COUNT_HW_CPU_CYCLES */
	self->cfg.precise = 2;
	self->cfg.sample_period = PERIOD_CYCLES;
	return self->fd >= 0 && self->child > 0;
}

/* The session of self->cfg on the child, drained once it exited; its totals in @st. */
static void run_session(struct __test_metadata *_metadata, FIXTURE_DATA(pebs) *self,
			struct tailor_stats *st)
{
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	ASSERT_EQ(TAILOR_SOURCE_PEBS, self->cfg.source_used);
	self->b.record_size = self->cfg.record_size;
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	go(self->go_fd);
	ASSERT_EQ(0, wait_exit_code(self->child));
	self->child = 0;
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, drain_available(self->fd, &self->b));
	ASSERT_EQ(0, tailor_stats(self->fd, st, NULL, 0));
}

static void record(struct __test_metadata *_metadata, FIXTURE_DATA(pebs) *self)
{
	struct tailor_stats st;

	run_session(_metadata, self, &st);
	ASSERT_EQ(st.total.produced, st.total.delivered + st.total.lost);
	/* Every PEBS record reaches the handler: no large-PEBS drops. */
	ASSERT_LE(1000, self->b.nr);
}

TEST_F(pebs, precise_ip_and_r15_from_record)
{
	size_t i, inside = 0, tagged = 0, exact = 0;

	if (!pebs_ready(_metadata, self))
		return;
	record(_metadata, self);
	for (i = 0; i < self->b.nr; i++) {
		const struct tailor_sample *s = sample_at(&self->b, i);
		bool in = s->ip >= (uintptr_t)tagged_spin_loop &&
			  s->ip < (uintptr_t)tagged_spin_end;

		inside += in;
		tagged += s->regs[0] == TAG;
		exact += !!(tailor_who_flags(s->who) & TAILOR_SF_EXACT_IP);
	}
	TH_LOG("%zu samples: %zu in loop, %zu tagged, %zu exact",
	       self->b.nr, inside, tagged, exact);
	ASSERT_LE(self->b.nr * 99, inside * 100);
	ASSERT_LE(self->b.nr * 99, tagged * 100);
	ASSERT_EQ(self->b.nr, exact);
}

TEST_F(pebs, tsc_spacing_follows_cycle_period)
{
	uint64_t *d, median;
	size_t i, nd = 0, near = 0, from_record = 0;
	struct tailor_info info;

	if (!pebs_ready(_metadata, self))
		return;
	record(_metadata, self);
	d = calloc(self->b.nr, sizeof(*d));
	ASSERT_NE(NULL, d);
	for (i = 1; i < self->b.nr; i++) {
		const struct tailor_sample *p = sample_at(&self->b, i - 1);
		const struct tailor_sample *s = sample_at(&self->b, i);

		from_record += !!(tailor_who_flags(s->who) & TAILOR_SF_TSC_PEBS);
		if (tailor_who_cpu(p->who) != tailor_who_cpu(s->who))
			continue;
		ASSERT_LT(p->tsc, s->tsc);
		d[nd++] = s->tsc - p->tsc;
	}
	qsort(d, nd, sizeof(*d), cmp_u64);
	median = d[nd / 2];
	for (i = 0; i < nd; i++)
		near += d[i] * 100 >= median * 95 && d[i] * 100 <= median * 105;
	TH_LOG("median TSC spacing %llu for %llu cycles",
	       (unsigned long long)median, PERIOD_CYCLES);
	/*
	 * A busy loop runs at one core frequency, so samples every N cycles
	 * are a fixed number of TSC ticks apart (the paper saw ~40 cycles of
	 * deviation); the ratio to N is the core/TSC frequency ratio.
	 */
	ASSERT_LE(nd * 90, near * 100);
	ASSERT_LE(median, PERIOD_CYCLES * 4);
	ASSERT_GE(median * 4, PERIOD_CYCLES);
	/*
	 * On the patched kernel the TSC is the PEBS record's own (PEBS
	 * format 3, Skylake and later, has one in every record).
	 */
	ASSERT_EQ(0, tailor_info(&info));
	TH_LOG("%zu of %zu TSCs from the PEBS record", from_record, self->b.nr);
	if (info.caps & TAILOR_CAP_PEBS_TSC) {
		ASSERT_LE((self->b.nr - 1) * 99, from_record * 100);
	} else {
		ASSERT_EQ(0, from_record);
	}
	free(d);
}

/* A child that enters the kernel all the time: getppid() in a loop. */
static pid_t spawn_syscall_loop(int *go_fd)
{
	int go_pipe[2];
	pid_t pid;
	char c;

	if (pipe(go_pipe))
		return -1;
	pid = fork();
	if (pid == 0) {
		uint64_t end;

		close(go_pipe[1]);
		if (read(go_pipe[0], &c, 1) != 1)
			_exit(3);
		end = now_ns() + 500000000ull;
		while (now_ns() < end)
			syscall(SYS_getppid);
		_exit(0);
	}
	close(go_pipe[0]);
	*go_fd = go_pipe[1];
	return pid;
}

/*
 * With precise 1 a PEBS IP is the next instruction's: after a SYSCALL,
 * the kernel's entry.  A session that excludes the kernel delivers no
 * kernel IP; what it drops is counted in kernel_ip_dropped (ABI 7).
 */
TEST_F(pebs, user_only_sessions_get_no_kernel_ip)
{
	struct tailor_stats st;
	size_t i, kernel = 0;

	if (!pebs_ready(_metadata, self))
		return;
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	close(self->go_fd);
	self->child = spawn_syscall_loop(&self->go_fd);
	ASSERT_LT(0, self->child);
	tailor_config_init(&self->cfg, self->child);
	self->cfg.source = TAILOR_SOURCE_PEBS;
	self->cfg.timer_period_ns = 0;
	self->cfg.precise = 1;
	self->cfg.sample_period = 20003;
	self->cfg.flags |= TAILOR_CFG_EXCLUDE_KERNEL;
	run_session(_metadata, self, &st);
	for (i = 0; i < self->b.nr; i++)
		kernel += (int64_t)sample_at(&self->b, i)->ip < 0;
	TH_LOG("%zu samples, %zu with a kernel IP, %llu dropped for one", self->b.nr, kernel,
	       (unsigned long long)st.kernel_ip_dropped);
	EXPECT_LT(0, self->b.nr);
	EXPECT_EQ(0, kernel);
}

TEST_HARNESS_MAIN

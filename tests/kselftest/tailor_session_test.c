// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session life cycle of /dev/tailor and every way to get it wrong:
 * each bad input has its own error and leaves the session usable.
 * Needs tailor.ko loaded and root.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/userfaultfd.h>
#include "tailor_util.h"
#include "kselftest_harness.h"

#define SESSION_TAG	0x7a11

FIXTURE(session) {
	int fd;
	pid_t child;
	int go_fd;
	struct tailor_config cfg;
};

FIXTURE_SETUP(session)
{
	if (access(TAILOR_DEVICE, F_OK))
		SKIP(return, "%s missing: load tailor.ko first", TAILOR_DEVICE);
	self->fd = tailor_open();
	ASSERT_LE(0, self->fd);
	self->child = spawn_tagged_child(SESSION_TAG, 200000000, &self->go_fd);
	ASSERT_LT(0, self->child);
	tailor_config_init(&self->cfg, self->child);
}

FIXTURE_TEARDOWN(session)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
		close(self->go_fd);
	}
	close(self->fd);
}

/* A good configuration still works after a refused one. */
static void expect_usable(struct __test_metadata *_metadata, int fd, pid_t pid)
{
	struct tailor_config cfg;

	tailor_config_init(&cfg, pid);
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(TAILOR_SOURCE_TIMER, cfg.source_used);
	ASSERT_EQ(32, cfg.record_size);
}

TEST_F(session, configure_start_stop)
{
	struct tailor_stats st;

	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	EXPECT_EQ(TAILOR_SOURCE_TIMER, self->cfg.source_used);
	EXPECT_EQ(TAILOR_TSC_HANDLER, self->cfg.tsc_source);
	/* IP + TSC + r15 (the default register) fit in 32 bytes. */
	EXPECT_EQ(32, self->cfg.record_size);
	EXPECT_EQ(1, self->cfg.nr_regs);
	EXPECT_EQ(TAILOR_REGS_DEFAULT, self->cfg.regs_used);
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(0, tailor_stats(self->fd, &st, NULL, 0));
	EXPECT_EQ(1, st.running);
	EXPECT_LE(1, st.nr_counters);
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	ASSERT_EQ(0, tailor_stats(self->fd, &st, NULL, 0));
	EXPECT_EQ(0, st.running);
	/* Stopped sessions can start again. */
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	/* Stop is idempotent once stopped. */
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
}

TEST_F(session, start_before_configure)
{
	ASSERT_EQ(-1, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, TAILOR_IOC_STOP));
	ASSERT_EQ(EINVAL, errno);
	expect_usable(_metadata, self->fd, self->child);
}

TEST_F(session, configure_while_running_is_busy)
{
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(-EBUSY, tailor_configure(self->fd, &self->cfg));
	ASSERT_EQ(-1, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(EBUSY, errno);
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	expect_usable(_metadata, self->fd, self->child);
}

struct bad_config {
	const char *what;
	void (*spoil)(struct tailor_config *cfg);
	int err;
};

/* Below ABI 1-6's size, which every client passes at least. */
static void bad_size(struct tailor_config *c) { c->size = TAILOR_CONFIG_SIZE_VER0 - 8; }
static void bad_abi(struct tailor_config *c) { c->abi_version = 999; }
static void bad_source(struct tailor_config *c) { c->source = 7; }
static void bad_flag(struct tailor_config *c) { c->flags |= 1u << 30; }
static void bad_reserved(struct tailor_config *c) { c->reserved = 1; }
static void bad_excl(struct tailor_config *c)
{
	c->flags |= TAILOR_CFG_EXCLUDE_USER | TAILOR_CFG_EXCLUDE_KERNEL;
}
static void bad_freq_and_period(struct tailor_config *c) { c->sample_freq = 100; }
static void bad_freq(struct tailor_config *c)
{
	c->timer_period_ns = 0;
	c->sample_freq = TAILOR_MAX_FREQ + 1;
}
static void bad_period(struct tailor_config *c) { c->timer_period_ns = 100; }
/* Negative as the hrtimer's signed time: re-armed at once, unthrottled. */
static void bad_period_bit63(struct tailor_config *c)
{
	c->timer_period_ns = (1ull << 63) | 1000000;
}
static void bad_period_long(struct tailor_config *c)
{
	c->timer_period_ns = TAILOR_MAX_TIMER_NS + 1;
}
static void bad_regs(struct tailor_config *c) { c->regs_mask = 1ull << 9; /* flags */ }
static void bad_noregs(struct tailor_config *c)
{
	c->flags |= TAILOR_CFG_NO_REGS;
	c->regs_mask = TAILOR_REGS_DEFAULT;
}
static void bad_no_target(struct tailor_config *c) { c->target_pid = 0; }
static void bad_both_targets(struct tailor_config *c) { c->flags |= TAILOR_CFG_ALL_CPUS; }
static void bad_timer_addr(struct tailor_config *c) { c->flags |= TAILOR_CFG_DATA_ADDR; }
static void bad_timer_event(struct tailor_config *c) { c->event_config = 0xc0; }
static void bad_timer_precise(struct tailor_config *c) { c->precise = 2; }
static void bad_event_type(struct tailor_config *c)
{
	c->source = TAILOR_SOURCE_AUTO;
	c->event_type = 2; /* tracepoint */
}
static void bad_precise(struct tailor_config *c)
{
	c->source = TAILOR_SOURCE_AUTO;
	c->precise = 4;
}
static void bad_ring(struct tailor_config *c) { c->ring_records = 1; }
static void bad_ring_huge(struct tailor_config *c) { c->ring_records = 1u << 30; }
static void bad_wakeup(struct tailor_config *c)
{
	c->ring_records = 64;
	c->wakeup_records = 65;
}
static void no_such_pid(struct tailor_config *c) { c->target_pid = 0x3ffffe; }

static const struct bad_config bad_configs[] = {
	{ "size", bad_size, EINVAL },
	{ "abi version", bad_abi, EINVAL },
	{ "source", bad_source, EINVAL },
	{ "unknown flag", bad_flag, EINVAL },
	{ "reserved", bad_reserved, EINVAL },
	{ "exclude user and kernel", bad_excl, EINVAL },
	{ "freq with period", bad_freq_and_period, EINVAL },
	{ "freq too high", bad_freq, EINVAL },
	{ "period below 10us", bad_period, EINVAL },
	{ "period with bit 63", bad_period_bit63, EINVAL },
	{ "period over a minute", bad_period_long, EINVAL },
	{ "register neither GPR nor IP", bad_regs, EINVAL },
	{ "NO_REGS with a mask", bad_noregs, EINVAL },
	{ "no target", bad_no_target, EINVAL },
	{ "pid and all CPUs", bad_both_targets, EINVAL },
	{ "data address on timer", bad_timer_addr, EINVAL },
	{ "event on timer", bad_timer_event, EINVAL },
	{ "precise on timer", bad_timer_precise, EINVAL },
	{ "event type", bad_event_type, EINVAL },
	{ "precise level", bad_precise, EINVAL },
	{ "ring too small", bad_ring, EINVAL },
	{ "ring too large", bad_ring_huge, EINVAL },
	{ "wakeup beyond ring", bad_wakeup, EINVAL },
	{ "no such process", no_such_pid, ESRCH },
};

TEST_F(session, bad_configs_refused_and_session_usable)
{
	size_t i;

	/* A configured session must keep its configuration on refusal. */
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	for (i = 0; i < sizeof(bad_configs) / sizeof(bad_configs[0]); i++) {
		struct tailor_config cfg;

		tailor_config_init(&cfg, self->child);
		bad_configs[i].spoil(&cfg);
		EXPECT_EQ(-bad_configs[i].err, tailor_configure(self->fd, &cfg)) {
			TH_LOG("config '%s' not refused as expected",
			       bad_configs[i].what);
		}
	}
	/* The earlier configuration is still in force and starts. */
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	expect_usable(_metadata, self->fd, self->child);
}

TEST_F(session, unknown_ioctl)
{
	ASSERT_EQ(-1, ioctl(self->fd, _IO(TAILOR_IOC_MAGIC, 99)));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->fd, TAILOR_IOC_CONFIGURE, (void *)8));
	ASSERT_EQ(EFAULT, errno);
	expect_usable(_metadata, self->fd, self->child);
}

TEST_F(session, read_rules)
{
	char small[8], rec[64];

	/* Nothing configured: no record size, so no read. */
	ASSERT_EQ(-1, read(self->fd, small, sizeof(small)));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	/* A buffer smaller than one record. */
	ASSERT_EQ(-1, read(self->fd, small, sizeof(small)));
	ASSERT_EQ(EINVAL, errno);
	/* Configured but never started: end of stream at once. */
	ASSERT_EQ(0, read(self->fd, rec, sizeof(rec)));
	/* Running with nothing yet and O_NONBLOCK: EAGAIN. */
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(-1, read(self->fd, rec, sizeof(rec)));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
}

TEST_F(session, poll_reports_data_and_hangup)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct sample_buf b = { .record_size = 32 };

	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	go(self->go_fd);
	self->go_fd = -1;
	/* The tick wakes pollers within 100 ms even below the mark. */
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	ASSERT_TRUE(pfd.revents & POLLIN);
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, drain_available(self->fd, &b));
	ASSERT_LT(0, b.nr);
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	ASSERT_TRUE(pfd.revents & POLLHUP);
	sample_buf_free(&b);
}

TEST_F(session, auto_source_says_what_it_got)
{
	struct tailor_info info;
	struct tailor_config cfg;

	ASSERT_EQ(0, tailor_info(&info));
	tailor_config_init(&cfg, self->child);
	cfg.source = TAILOR_SOURCE_AUTO;
	cfg.timer_period_ns = 0;
	cfg.sample_freq = 1000;
	cfg.flags |= TAILOR_CFG_DATA_ADDR;
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	if (info.caps & TAILOR_CAP_PEBS) {
		EXPECT_EQ(TAILOR_SOURCE_PEBS, cfg.source_used);
		EXPECT_EQ(40, cfg.record_size);
	} else {
		/* The software clock has no data address: dropped, and said. */
		EXPECT_EQ(TAILOR_SOURCE_TIMER, cfg.source_used);
		EXPECT_EQ(0, cfg.flags_used & TAILOR_CFG_DATA_ADDR);
		EXPECT_EQ(32, cfg.record_size);
	}
}

TEST_F(session, pebs_without_pebs_is_eopnotsupp)
{
	struct tailor_info info;
	struct tailor_config cfg;

	ASSERT_EQ(0, tailor_info(&info));
	if (info.caps & TAILOR_CAP_PEBS)
		SKIP(return, "this CPU has PEBS");
	tailor_config_init(&cfg, self->child);
	cfg.source = TAILOR_SOURCE_PEBS;
	cfg.timer_period_ns = 0;
	cfg.sample_period = 100003;
	ASSERT_EQ(-EOPNOTSUPP, tailor_configure(self->fd, &cfg));
	expect_usable(_metadata, self->fd, self->child);
}

TEST_F(session, register_masks_set_record_size)
{
	struct tailor_config cfg;

	tailor_config_init(&cfg, self->child);
	cfg.flags |= TAILOR_CFG_NO_REGS;
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	EXPECT_EQ(TAILOR_SAMPLE_BASE_SIZE, cfg.record_size);
	EXPECT_EQ(0, cfg.nr_regs);
	tailor_config_init(&cfg, self->child);
	cfg.regs_mask = TAILOR_REGS_GPR;
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	EXPECT_EQ(16, cfg.nr_regs);
	EXPECT_EQ(TAILOR_SAMPLE_BASE_SIZE + 16 * 8, cfg.record_size);
	tailor_config_init(&cfg, self->child);
	cfg.regs_mask = TAILOR_REGS_CAPTURABLE;
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	EXPECT_EQ(17, cfg.nr_regs);
	EXPECT_EQ(TAILOR_REGS_CAPTURABLE, cfg.regs_used);
	EXPECT_EQ(TAILOR_SAMPLE_BASE_SIZE + 17 * 8, cfg.record_size);
}

/* Every capturable register, each in its slot: r15 last, the IP at 8. */
TEST_F(session, all_registers_in_ascending_slots)
{
	struct sample_buf b = {};
	struct tailor_config cfg;
	size_t k, inside = 0;

	tailor_config_init(&cfg, self->child);
	cfg.regs_mask = TAILOR_REGS_CAPTURABLE;
	ASSERT_EQ(0, tailor_configure(self->fd, &cfg));
	b.record_size = cfg.record_size;
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	go(self->go_fd);
	self->go_fd = -1;
	ASSERT_EQ(0, wait_exit_code(self->child));
	self->child = 0;
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, drain_available(self->fd, &b));
	ASSERT_LT(0, b.nr);
	for (k = 0; k < b.nr; k++) {
		const struct tailor_sample *s = sample_at(&b, k);

		/* A user sample's rip is its ip. */
		ASSERT_EQ(s->ip, s->regs[reg_slot(cfg.regs_used, TAILOR_REG_IP)]);
		if (s->ip < (uintptr_t)tagged_spin_loop || s->ip >= (uintptr_t)tagged_spin_end)
			continue;
		ASSERT_EQ(SESSION_TAG, s->regs[reg_slot(cfg.regs_used, TAILOR_REG_R15)]);
		inside++;
	}
	ASSERT_LT(0, inside);
	sample_buf_free(&b);
}

TEST_F(session, target_exit_ends_stream)
{
	struct sample_buf b = { .record_size = 32 };
	struct tailor_stats st;
	char rec[32 * 64];
	ssize_t n;

	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_START));
	go(self->go_fd);
	self->go_fd = -1;
	/* Blocking reads until the target exits and the rings drain. */
	while ((n = read(self->fd, rec, sizeof(rec))) > 0)
		ASSERT_EQ(0, n % 32);
	ASSERT_EQ(0, n);
	ASSERT_EQ(0, wait_exit_code(self->child));
	self->child = 0;
	ASSERT_EQ(0, tailor_stats(self->fd, &st, NULL, 0));
	EXPECT_EQ(1, st.target_exited);
	EXPECT_EQ(0, st.running);
	EXPECT_EQ(st.total.produced, st.total.delivered + st.total.lost);
	EXPECT_LT(0, st.total.delivered);
	/* The process is gone: starting again says so. */
	ASSERT_EQ(-1, ioctl(self->fd, TAILOR_IOC_START));
	ASSERT_EQ(ESRCH, errno);
	sample_buf_free(&b);
}

TEST(info_and_sysfs_agree)
{
	struct tailor_info info;
	unsigned int khz = 0, measured = 0, mult = 0, shift = 0;
	uint64_t ns;
	FILE *f;

	if (access(TAILOR_DEVICE, F_OK))
		SKIP(return, "%s missing: load tailor.ko first", TAILOR_DEVICE);
	ASSERT_EQ(0, tailor_info(&info));
	EXPECT_EQ(TAILOR_ABI_VERSION, info.abi_version);
	EXPECT_LT(0, info.tsc_khz_measured);
	EXPECT_LT(0, info.tsc_mult);
	f = fopen("/sys/class/misc/tailor/tsc_khz", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%u", &khz));
	fclose(f);
	f = fopen("/sys/class/misc/tailor/tsc_khz_measured", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%u", &measured));
	fclose(f);
	f = fopen("/sys/class/misc/tailor/tsc_mult_shift", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(2, fscanf(f, "%u %u", &mult, &shift));
	fclose(f);
	EXPECT_EQ(info.tsc_khz, khz);
	EXPECT_EQ(info.tsc_khz_measured, measured);
	EXPECT_EQ(info.tsc_mult, mult);
	EXPECT_EQ(info.tsc_shift, shift);
	/* mult/shift turn one second of measured cycles into 1e9 ns. */
	ns = tailor_tsc_to_ns((uint64_t)measured * 1000, mult, shift);
	EXPECT_GE(1000, llabs((long long)ns - 1000000000LL));
	TH_LOG("tsc_khz kernel %u, measured %u", khz, measured);
}

TEST(pebs_tsc_capability_matches_kernel)
{
	struct tailor_info info;
	int patched;

	if (access(TAILOR_DEVICE, F_OK))
		SKIP(return, "%s missing: load tailor.ko first", TAILOR_DEVICE);
	char state[200] = "";
	FILE *f;

	patched = kernel_has_symbol("perf_hw_clock_usable");
	ASSERT_LE(0, patched);
	ASSERT_EQ(0, tailor_info(&info));
	f = fopen("/sys/class/misc/tailor/pebs_tsc", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(state, sizeof(state), f));
	fclose(f);
	TH_LOG("kernel %s tailor's patches; module: PEBS record TSC %s; pebs_tsc: %s",
	       patched ? "has" : "lacks",
	       info.caps & TAILOR_CAP_PEBS_TSC ? "available" : "unavailable", state);
	/* Built against the patched tree, the module must say so; else not. */
	ASSERT_EQ(patched, !strncmp(state, "kernel patched", 14));
	/*
	 * Used only where PEBS records carry a TSC (format 3 on): never
	 * without PEBS, as in the test box.
	 */
	ASSERT_EQ(!strcmp(state, "kernel patched, used\n"), !!(info.caps & TAILOR_CAP_PEBS_TSC));
	if (!(info.caps & TAILOR_CAP_PEBS))
		ASSERT_EQ(0, info.caps & TAILOR_CAP_PEBS_TSC);
}

/*
 * ABI 7: the structs grow by size.  A larger struct of a later client is
 * taken when what the module does not know is zero, and answered with
 * the size both know; a smaller one than ABI 1-6's is refused; an ABI 6
 * client's stats are answered in its own 72 bytes (before, any size but
 * the module's own was -EINVAL).
 */
TEST_F(session, structs_extend_by_size)
{
	struct {
		struct tailor_config cfg;
		uint64_t later[4];
	} big;
	struct {
		struct tailor_stats st;
		uint64_t later[2];
	} bigst;
	struct {
		struct tailor_info info;
		uint64_t later[2];
	} biginfo;
	union {
		struct tailor_stats st;
		uint8_t bytes[sizeof(struct tailor_stats)];
	} v6;

	memset(&big, 0, sizeof(big));
	tailor_config_init(&big.cfg, self->child);
	big.cfg.size = sizeof(big);
	ASSERT_EQ(0, tailor_configure(self->fd, &big.cfg));
	EXPECT_EQ(sizeof(struct tailor_config), big.cfg.size);
	EXPECT_EQ(32, big.cfg.record_size);
	EXPECT_EQ(0, big.later[0] | big.later[3]);
	big.later[2] = 1;
	big.cfg.size = sizeof(big);
	EXPECT_EQ(-E2BIG, tailor_configure(self->fd, &big.cfg));
	big.later[2] = 0;
	big.cfg.size = TAILOR_CONFIG_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, tailor_configure(self->fd, &big.cfg));

	memset(&bigst, 0, sizeof(bigst));
	bigst.st.size = sizeof(bigst);
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STATS, &bigst));
	EXPECT_EQ(sizeof(struct tailor_stats), bigst.st.size);
	bigst.later[1] = 7;
	bigst.st.size = sizeof(bigst);
	EXPECT_EQ(-1, ioctl(self->fd, TAILOR_IOC_STATS, &bigst));
	EXPECT_EQ(E2BIG, errno);

	/* An ABI 6 client: 72 bytes in, 72 out, nothing written past them. */
	memset(&v6, 0xa5, sizeof(v6));
	memset(&v6, 0, TAILOR_STATS_SIZE_VER0);
	v6.st.size = TAILOR_STATS_SIZE_VER0;
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_STATS, &v6));
	EXPECT_EQ(TAILOR_STATS_SIZE_VER0, v6.st.size);
	EXPECT_EQ(0xa5, v6.bytes[TAILOR_STATS_SIZE_VER0]);
	EXPECT_EQ(0xa5, v6.bytes[sizeof(v6) - 1]);

	memset(&biginfo, 0, sizeof(biginfo));
	biginfo.info.size = sizeof(biginfo);
	ASSERT_EQ(0, ioctl(self->fd, TAILOR_IOC_INFO, &biginfo));
	EXPECT_EQ(sizeof(struct tailor_info), biginfo.info.size);
	EXPECT_EQ(TAILOR_ABI_VERSION, biginfo.info.abi_version);
}

struct stats_call {
	int fd;
	struct tailor_cpu_stats *cpus;
	int err;
};

static void *stats_thread(void *arg)
{
	struct stats_call *c = arg;
	struct tailor_stats st;

	c->err = tailor_stats(c->fd, &st, c->cpus, 1);
	return NULL;
}

static void *start_thread(void *arg)
{
	struct stats_call *c = arg;

	c->err = ioctl(c->fd, TAILOR_IOC_START) ? -errno : 0;
	return NULL;
}

/*
 * STATS copies its per-CPU figures out to a page whose fault userfaultfd
 * holds: the session's other ioctls go on meanwhile (before, STATS held
 * the session's lock across the copy, and START waited for the fault).
 */
TEST_F(session, stats_copy_out_stalls_nothing)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zero = { .mode = 0 };
	struct stats_call stats = { .fd = self->fd, .err = 1 };
	struct stats_call start = { .fd = self->fd, .err = 1 };
	long page = sysconf(_SC_PAGESIZE);
	pthread_t ts, tb;
	struct pollfd pfd;
	struct uffd_msg msg;
	int uffd, i;
	void *area;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	area = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	reg.range.start = (uintptr_t)area;
	reg.range.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(0, tailor_configure(self->fd, &self->cfg));

	stats.cpus = area;
	ASSERT_EQ(0, pthread_create(&ts, NULL, stats_thread, &stats));
	/* STATS is in its copy-out once the fault arrives. */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	ASSERT_EQ(0, pthread_create(&tb, NULL, start_thread, &start));
	for (i = 0; i < 200 && __atomic_load_n(&start.err, __ATOMIC_ACQUIRE) == 1; i++)
		usleep(10000);
	EXPECT_EQ(0, start.err) {
		TH_LOG("START still waiting 2 s into STATS's fault on its copy-out");
	}

	/* Let the copy finish either way. */
	zero.range.start = (uintptr_t)area;
	zero.range.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	pthread_join(ts, NULL);
	pthread_join(tb, NULL);
	EXPECT_EQ(0, stats.err);
	EXPECT_EQ(0, start.err);
	EXPECT_EQ(0, ioctl(self->fd, TAILOR_IOC_STOP));
	munmap(area, page);
	close(uffd);
}

TEST(device_is_root_only)
{
	struct stat st;

	if (access(TAILOR_DEVICE, F_OK))
		SKIP(return, "%s missing: load tailor.ko first", TAILOR_DEVICE);
	ASSERT_EQ(0, stat(TAILOR_DEVICE, &st));
	if ((st.st_mode & 0777) != 0600)
		SKIP(return, "tailor.ko loaded with open_gid");
	EXPECT_EQ(0, st.st_uid);
}

TEST_HARNESS_MAIN

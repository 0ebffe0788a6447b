// SPDX-License-Identifier: GPL-2.0-only
/*
 * /dev/tailor under load, and what must never leak: 64 sessions on one
 * target and on 64 targets; a target that creates and ends 200 threads
 * during a session; a ring left unread at the highest rate the box
 * reaches, where every sample must be counted once (delivered, lost or
 * queued); throttling provoked, at a lowered perf_event_max_sample_rate;
 * every reserved field refused; no byte the kernel did not write
 * reaching userspace (the debug kernel has no KMSAN: buffers are filled
 * with a pattern that must not come back); and an unprivileged member of
 * open_gid refused a setuid process.  Needs root and $TAILOR_KO (default
 * /tailor/tailor.ko); leaves tailor.ko loaded with its defaults.
 */
#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include "tailor_util.h"
#include "kselftest_harness.h"

#define STRESS_TAG	0x5157
#define PATTERN		0xaaaaaaaaaaaaaaaaull
#define NR_SESSIONS	64

/* Every sample of a stopped session: delivered, lost or still queued. */
static void expect_all_counted(struct __test_metadata *_metadata, int fd, size_t read_back)
{
	struct tailor_stats st;

	ASSERT_EQ(0, tailor_stats(fd, &st, NULL, 0));
	EXPECT_EQ(0, st.running);
	EXPECT_EQ(st.total.produced, st.total.delivered + st.total.lost + st.total.queued);
	EXPECT_EQ(0, st.total.queued);
	EXPECT_EQ(read_back, st.total.delivered);
}

/* Reads a session until it has stopped and drained; returns the samples. */
static size_t drain_all(struct __test_metadata *_metadata, int fd, uint32_t record_size)
{
	char buf[32 * 512];
	size_t n = 0;
	ssize_t got;

	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		EXPECT_EQ(0, got % record_size);
		n += (size_t)got / record_size;
	}
	EXPECT_EQ(0, got);
	return n;
}

static void sessions_on(struct __test_metadata *_metadata, const pid_t *targets,
			const int *go_fds, int nr_targets)
{
	struct tailor_config cfg;
	int fd[NR_SESSIONS], i;
	size_t total = 0, fewest = SIZE_MAX;

	for (i = 0; i < NR_SESSIONS; i++) {
		fd[i] = tailor_open();
		ASSERT_LE(0, fd[i]);
		tailor_config_init(&cfg, targets[i % nr_targets]);
		ASSERT_EQ(0, tailor_configure(fd[i], &cfg));
		ASSERT_EQ(0, ioctl(fd[i], TAILOR_IOC_START));
	}
	for (i = 0; i < nr_targets; i++)
		go(go_fds[i]);
	for (i = 0; i < nr_targets; i++)
		EXPECT_EQ(0, wait_exit_code(targets[i]));
	for (i = 0; i < NR_SESSIONS; i++) {
		/* The targets have exited: each session ends by itself. */
		size_t n = drain_all(_metadata, fd[i], 32);

		expect_all_counted(_metadata, fd[i], n);
		total += n;
		if (n < fewest)
			fewest = n;
		close(fd[i]);
	}
	TH_LOG("%d sessions on %d targets: %zu samples, the fewest %zu", NR_SESSIONS,
	       nr_targets, total, fewest);
	EXPECT_LT(0, fewest);
}

TEST(sessions_64_on_one_target)
{
	int go_fd;
	pid_t child;

	SKIP_UNLESS_LOADED();
	child = spawn_tagged_child(STRESS_TAG, 300000000ull, &go_fd);
	ASSERT_LT(0, child);
	sessions_on(_metadata, &child, &go_fd, 1);
}

TEST(sessions_64_on_64_targets)
{
	pid_t child[NR_SESSIONS];
	int go_fd[NR_SESSIONS], i;

	SKIP_UNLESS_LOADED();
	for (i = 0; i < NR_SESSIONS; i++) {
		child[i] = spawn_tagged_child(STRESS_TAG, 20000000ull, &go_fd[i]);
		ASSERT_LT(0, child[i]);
	}
	sessions_on(_metadata, child, go_fd, NR_SESSIONS);
}

#define NR_THREADS	200
#define THREADS_AT_ONCE	20

static void *short_thread(void *arg)
{
	(void)arg;
	tagged_spin_for(STRESS_TAG, 20000000ull);
	return NULL;
}

/* 200 threads, 20 at a time, each spinning 20 ms of CPU time. */
static int many_threads_main(void)
{
	pthread_t t[THREADS_AT_ONCE];
	int i, j;

	for (i = 0; i < NR_THREADS; i += THREADS_AT_ONCE) {
		for (j = 0; j < THREADS_AT_ONCE; j++)
			if (pthread_create(&t[j], NULL, short_thread, NULL))
				return 1;
		for (j = 0; j < THREADS_AT_ONCE; j++)
			pthread_join(t[j], NULL);
	}
	return 0;
}

TEST(target_with_200_threads)
{
	struct sample_buf b = { .record_size = 32 };
	struct tailor_config cfg;
	uint64_t tids[NR_THREADS + 1];
	size_t nr_tids = 0, i, n;
	int go_fd, fd, p[2];
	pid_t child;
	char c;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(3);
		_exit(many_threads_main());
	}
	close(p[0]);
	go_fd = p[1];
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, child);
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	go(go_fd);
	ASSERT_EQ(0, wait_exit_code(child));
	/* Stopped by the target's exit; read it all. */
	for (;;) {
		size_t before = b.nr;

		ASSERT_EQ(0, drain_available(fd, &b));
		if (b.nr == before)
			break;
	}
	expect_all_counted(_metadata, fd, b.nr);
	for (i = 0; i < b.nr; i++) {
		uint64_t tid = tailor_who_tid(sample_at(&b, i)->who);

		if (tid == (uint64_t)child)
			continue;
		for (n = 0; n < nr_tids && tids[n] != tid; n++)
			;
		if (n == nr_tids && nr_tids < NR_THREADS + 1)
			tids[nr_tids++] = tid;
	}
	TH_LOG("%zu samples from %zu of the %d threads", b.nr, nr_tids, NR_THREADS);
	/* Each thread runs 20 ms at 1 kHz: one that got no sample was missed. */
	EXPECT_LE(NR_THREADS * 9 / 10, nr_tids);
	close(fd);
	sample_buf_free(&b);
}

#define WAVES		20
#define WAVE_THREADS	50

static void *sleeping_thread(void *arg)
{
	(void)arg;
	usleep(150000);
	return NULL;
}

/*
 * WAVES waves of WAVE_THREADS threads, each living 150 ms, so that every
 * tick of the session meets some; then a byte on @done, and a wait for
 * the test to be done looking (@stay) before exiting.
 */
static int thread_waves_main(int done, int stay)
{
	pthread_t t[WAVE_THREADS];
	int i, j;
	char c;

	for (i = 0; i < WAVES; i++) {
		for (j = 0; j < WAVE_THREADS; j++)
			if (pthread_create(&t[j], NULL, sleeping_thread, NULL))
				return 1;
		for (j = 0; j < WAVE_THREADS; j++)
			pthread_join(t[j], NULL);
	}
	if (write(done, "d", 1) != 1 || read(stay, &c, 1) < 0)
		return 2;
	return 0;
}

/* task_struct objects in use (/proc/slabinfo), or -1. */
static long task_structs(void)
{
	char line[512];
	long active = -1;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "task_struct %ld", &active) == 1)
			break;
	fclose(f);
	return active;
}

/*
 * The session keeps no exited thread (before, every thread a tick met
 * stayed pinned until STOP: 1000 task_structs for 20 waves of 50
 * threads, while the target still ran).
 */
TEST(exited_threads_are_let_go)
{
	int go_pipe[2], done[2], stay[2], fd;
	struct tailor_config cfg;
	long before, after;
	pid_t child;
	char c;

	SKIP_UNLESS_LOADED();
	if (task_structs() < 0)
		SKIP(return, "no task_struct line in /proc/slabinfo");
	/*
	 * KASAN's quarantine holds freed objects back from the slab (1000
	 * task_structs fit): slabinfo cannot tell a reference from them.
	 */
	if (kernel_has_symbol("__kasan_slab_free") > 0)
		SKIP(return, "KASAN kernel: its quarantine keeps freed task_structs in the slab's count");
	ASSERT_EQ(0, pipe2(go_pipe, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(done, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(stay, O_CLOEXEC));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(go_pipe[1]);
		close(done[0]);
		close(stay[1]);
		if (read(go_pipe[0], &c, 1) != 1)
			_exit(3);
		_exit(thread_waves_main(done[1], stay[0]));
	}
	close(go_pipe[0]);
	close(done[1]);
	close(stay[0]);
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, child);
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	before = task_structs();
	go(go_pipe[1]);
	ASSERT_EQ(1, read(done[0], &c, 1));
	/* Three ticks, and RCU's grace period for the freed tasks. */
	usleep(500000);
	after = task_structs();
	TH_LOG("task_structs in use: %ld before the %d threads, %ld after they exited",
	       before, WAVES * WAVE_THREADS, after);
	EXPECT_GT(before + WAVES * WAVE_THREADS / 4, after);
	close(stay[1]);
	EXPECT_EQ(0, wait_exit_code(child));
	close(fd);
	close(done[0]);
}

/*
 * One session at @period_ns, into a ring of @ring_records (0: the
 * default), on a target spinning 0.5 s; drained after the target exits,
 * every sample counted once; its totals in @st.
 */
static void spinning_target_session(struct __test_metadata *_metadata, uint64_t period_ns,
				    uint32_t ring_records, struct tailor_stats *st)
{
	struct tailor_config cfg;
	int go_fd, fd;
	pid_t child;
	size_t n;

	child = spawn_tagged_child(STRESS_TAG, 500000000ull, &go_fd);
	ASSERT_LT(0, child);
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, child);
	cfg.timer_period_ns = period_ns;
	if (ring_records)
		cfg.ring_records = ring_records;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	go(go_fd);
	ASSERT_EQ(0, wait_exit_code(child));
	n = drain_all(_metadata, fd, 32);
	expect_all_counted(_metadata, fd, n);
	ASSERT_EQ(0, tailor_stats(fd, st, NULL, 0));
	close(fd);
}

/*
 * The highest rate (the timer's 10 us floor) into a 64-record ring nobody
 * reads while the target runs: most samples are lost, and each is counted
 * once.  Throttling is reported, not required: perf throttles a counter
 * whose handler eats too much of the CPU, which TCG may or may not reach.
 */
TEST(stalled_ring_counts_every_sample)
{
	struct tailor_stats st;

	SKIP_UNLESS_LOADED();
	spinning_target_session(_metadata, TAILOR_MIN_TIMER_NS, 64, &st);
	TH_LOG("0.5 s of CPU at a 10 us period: %llu produced (%.0f/s), %llu delivered, %llu lost, throttled %llu times%s",
	       (unsigned long long)st.total.produced, st.total.produced / 0.5,
	       (unsigned long long)st.total.delivered, (unsigned long long)st.total.lost,
	       (unsigned long long)st.total.throttled,
	       st.total.throttled ? "" : " (this box did not provoke throttling)");
	EXPECT_LE(64, st.total.delivered);
	EXPECT_LT(0, st.total.lost);
}

#define MAX_RATE_SYSCTL	"/proc/sys/kernel/perf_event_max_sample_rate"
#define LOWERED_MAX_RATE	1000

/* The perf_event_max_sample_rate the test found, put back however it ends. */
FIXTURE(lowered_max_rate) {
	char saved[32];
};

FIXTURE_SETUP(lowered_max_rate)
{
}

FIXTURE_TEARDOWN(lowered_max_rate)
{
	int fd;

	if (!self->saved[0])
		return;
	fd = open(MAX_RATE_SYSCTL, O_WRONLY);
	EXPECT_LE(0, fd);
	if (fd >= 0) {
		EXPECT_EQ((ssize_t)strlen(self->saved),
			  write(fd, self->saved, strlen(self->saved)));
		close(fd);
	}
}

/*
 * Throttling, provoked: perf stops a counter that overflows more than
 * perf_event_max_sample_rate / HZ times in a tick, until the next tick.
 * The box's timer cannot reach the default limit (100 kHz), so the test
 * lowers it to 1 kHz and samples at 10 kHz.  Every throttle is counted,
 * the session keeps sampling after each (the tick restarts the counter:
 * far more samples than one tick's), throttling holds the rate down
 * (under half of the same session's unthrottled), and every sample is
 * still counted once.
 */
TEST_F(lowered_max_rate, throttled_counter_resumes_and_counts)
{
	struct tailor_stats free_run, throttled;
	char low[16];
	ssize_t len;
	int fd;

	SKIP_UNLESS_LOADED();
	fd = open(MAX_RATE_SYSCTL, O_RDWR);
	if (fd < 0)
		SKIP(return, "%s: %s", MAX_RATE_SYSCTL, strerror(errno));
	len = read(fd, self->saved, sizeof(self->saved) - 1);
	ASSERT_LT(0, len);
	self->saved[len] = '\0';
	close(fd);

	spinning_target_session(_metadata, 100000, 0, &free_run);

	fd = open(MAX_RATE_SYSCTL, O_WRONLY);
	ASSERT_LE(0, fd);
	len = snprintf(low, sizeof(low), "%d\n", LOWERED_MAX_RATE);
	ASSERT_EQ(len, write(fd, low, (size_t)len));
	close(fd);
	spinning_target_session(_metadata, 100000, 0, &throttled);

	TH_LOG("0.5 s of CPU at 10 kHz: %llu samples; with perf_event_max_sample_rate %d: %llu samples, throttled %llu times (was %s)",
	       (unsigned long long)free_run.total.produced, LOWERED_MAX_RATE,
	       (unsigned long long)throttled.total.produced,
	       (unsigned long long)throttled.total.throttled, strtok(self->saved, "\n"));
	EXPECT_LT(0, throttled.total.throttled);
	EXPECT_LT(100, throttled.total.produced);
	EXPECT_LT(2 * throttled.total.produced, free_run.total.produced);
}

TEST(every_reserved_word_refused)
{
	struct tailor_config cfg;
	int fd, i;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);
	for (i = 0; i < 64; i += 21) {
		tailor_config_init(&cfg, getpid());
		cfg.reserved = 1ull << i;
		EXPECT_EQ(-EINVAL, tailor_configure(fd, &cfg));
		tailor_config_init(&cfg, getpid());
		cfg.callchain_max = 1u << (i % 32);
		EXPECT_EQ(-EINVAL, tailor_configure(fd, &cfg));
		/* ABI 4's out fields were reserved words before it. */
		tailor_config_init(&cfg, getpid());
		cfg.abi_version = 3;
		cfg.ring_mmap_bytes = 1ull << i;
		EXPECT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	}
	tailor_config_init(&cfg, getpid());
	cfg.flags |= TAILOR_CFG_FLAGS_ALL + 1;
	EXPECT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	tailor_config_init(&cfg, getpid());
	EXPECT_EQ(0, tailor_configure(fd, &cfg));
	close(fd);
}

/* No 8-byte word of @p is the pattern the caller filled it with. */
static size_t pattern_words(const void *p, size_t len)
{
	const uint64_t *w = p;
	size_t i, n = 0;

	for (i = 0; i < len / 8; i++)
		n += w[i] == PATTERN;
	return n;
}

TEST(no_unwritten_byte_reaches_userspace)
{
	struct tailor_cpu_stats cpus[64];
	struct tailor_config cfg;
	struct tailor_stats st;
	struct tailor_info info;
	uint8_t *buf;
	int go_fd, fd;
	ssize_t got;
	pid_t child;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);
	/* INFO: every field written, the reserved ones zero. */
	memset(&info, 0xaa, sizeof(info));
	info.size = sizeof(info);
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_INFO, &info));
	EXPECT_EQ(0, pattern_words(&info, sizeof(info)));
	EXPECT_EQ(0, info.reserved[0] | info.reserved[1] | info.reserved[2] | info.reserved[3]);
	/* CONFIGURE: the out fields written. */
	child = spawn_tagged_child(STRESS_TAG, 100000000ull, &go_fd);
	ASSERT_LT(0, child);
	tailor_config_init(&cfg, child);
	memset(&cfg.source_used, 0xaa, offsetof(struct tailor_config, tag_word_offset) -
	       offsetof(struct tailor_config, source_used));
	/* ABI 4's out fields: what comes in is ignored, and overwritten. */
	cfg.ring_mmap_bytes = PATTERN;
	cfg.ring_capacity = (uint32_t)PATTERN;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	EXPECT_EQ(0, pattern_words(&cfg, sizeof(cfg)));
	EXPECT_EQ(32768, cfg.ring_capacity);
	EXPECT_EQ(32, cfg.record_size);
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	go(go_fd);
	ASSERT_EQ(0, wait_exit_code(child));
	/* STATS: totals, flags and per-CPU entries written. */
	memset(&st, 0xaa, sizeof(st));
	memset(cpus, 0xaa, sizeof(cpus));
	st.size = sizeof(st);
	st.cpus = (uintptr_t)cpus;
	st.nr_cpus = 64;
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_STATS, &st));
	EXPECT_EQ(0, pattern_words(&st, sizeof(st)));
	EXPECT_EQ(0, st.reserved);
	EXPECT_LT(0, st.nr_cpus);
	EXPECT_EQ(0, pattern_words(cpus, st.nr_cpus * sizeof(cpus[0])));
	/* Samples: whole records written, nothing past what read() returned. */
	buf = malloc(1 << 20);
	ASSERT_NE(NULL, buf);
	memset(buf, 0xaa, 1 << 20);
	got = read(fd, buf, 1 << 20);
	ASSERT_LT(0, got);
	EXPECT_EQ(0, got % 32);
	EXPECT_EQ(0, pattern_words(buf, (size_t)got));
	EXPECT_EQ(((1 << 20) - (size_t)got) / 8, pattern_words(buf + got, (1 << 20) - (size_t)got));
	free(buf);
	close(fd);
}

/* ---- an unprivileged member of open_gid and a setuid process ---- */

/* Waits up to 2 s for @pid to run as root (its /proc entry root's). */
static bool became_root(pid_t pid)
{
	char path[64];
	struct stat st;
	int i;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	for (i = 0; i < 200; i++) {
		if (!stat(path, &st) && st.st_uid == 0)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * As the group's member: its own child may be sampled until it execs a
 * setuid program; the session then ends by itself, and a new one is
 * refused.  0, or the step that failed.
 */
static int user_vs_setuid(void *suid_path)
{
	const char *suid = suid_path;
	struct tailor_config cfg;
	struct tailor_stats st;
	int p[2], fd = tailor_open(), fd2 = tailor_open(), ret = 0, i;
	pid_t child;
	char c;

	if (fd < 0 || fd2 < 0 || pipe2(p, O_CLOEXEC))
		return 1;
	child = fork();
	if (child == 0) {
		if (read(p[0], &c, 1) != 1)
			_exit(3);
		execl(suid, suid, "--spin-ms", "3000", (char *)NULL);
		_exit(4);
	}
	tailor_config_init(&cfg, child);
	if (tailor_configure(fd, &cfg) || ioctl(fd, TAILOR_IOC_START))
		ret = 2;	/* its own process, before the exec */
	if (!ret && write(p[1], "x", 1) != 1)
		ret = 3;
	if (!ret && !became_root(child))
		ret = 4;
	tailor_config_init(&cfg, child);
	if (!ret && tailor_configure(fd2, &cfg) != -EACCES)
		ret = 5;
	/* The session attached before the exec ends within a few ticks. */
	for (i = 0; !ret && i < 100; i++) {
		if (tailor_stats(fd, &st, NULL, 0)) {
			ret = 6;
			break;
		}
		if (!st.running)
			break;
		usleep(20000);
	}
	if (!ret && st.running)
		ret = 7;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(fd);
	close(fd2);
	return ret;
}

TEST(member_of_open_gid_refused_a_setuid_process)
{
	char suid[4096 + 32];

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, setuid_copy_of_self("tailor-stress-suid", suid, sizeof(suid)));
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(TAILOR_TEST_OPEN_GID));
	EXPECT_EQ(0, run_as_test_user(user_vs_setuid, suid));
	unlink(suid);
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(""));
}

/*
 * The setuid copy of this program runs as a target: spin, exit.  glibc
 * hands constructors the arguments, so this runs before the harness.
 */
static void __attribute__((constructor)) spin_target(int argc, char **argv)
{
	uint64_t end;

	if (argc != 3 || strcmp(argv[1], "--spin-ms"))
		return;
	end = now_ns() + strtoul(argv[2], NULL, 10) * 1000000ull;
	while (now_ns() < end)
		;
	_exit(0);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module life cycle and privileges: load and unload, rmmod while a
 * session is open, a reader killed mid-session, non-root callers, and the
 * open_gid parameter with the checks perf would make (ptrace access,
 * CAP_PERFMON for all CPUs and kernel samples).  Each test leaves
 * tailor.ko loaded with default parameters.  Needs root and the path of
 * tailor.ko in $TAILOR_KO (default /tailor/tailor.ko).
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "tailor_util.h"
#include "kselftest_harness.h"



/* Back to "loaded, default parameters", whatever the test did. */
static int reload(const char *params)
{
	int ret;

	if (tailor_loaded()) {
		ret = tailor_unload();
		if (ret)
			return ret;
	}
	return tailor_load(params);
}

FIXTURE(module) {
	int unused;
};

FIXTURE_SETUP(module)
{
	if (geteuid())
		SKIP(return, "needs root");
	if (access(tailor_ko_path(), R_OK))
		SKIP(return, "%s not found; set TAILOR_KO", tailor_ko_path());
	ASSERT_EQ(0, reload(""));
}

FIXTURE_TEARDOWN(module)
{
	if (!geteuid() && !access(tailor_ko_path(), R_OK))
		EXPECT_EQ(0, reload(""));
}

TEST_F(module, load_unload_cycles)
{
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, tailor_unload());
		ASSERT_NE(0, access(TAILOR_DEVICE, F_OK));
		ASSERT_EQ(0, tailor_load(""));
		ASSERT_EQ(0, access(TAILOR_DEVICE, F_OK));
	}
	/* Loading twice is refused by the kernel. */
	ASSERT_EQ(-EEXIST, tailor_load(""));
}

TEST_F(module, rmmod_refused_while_session_open)
{
	struct tailor_config cfg;
	int fd = tailor_open(), go_fd;
	pid_t child;

	ASSERT_LE(0, fd);
	child = spawn_tagged_child(0x11, 100000000ull, &go_fd);
	ASSERT_LT(0, child);
	tailor_config_init(&cfg, child);
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	go(go_fd);
	/* The open file pins the module: counters can't outlive it. */
	ASSERT_EQ(-EWOULDBLOCK, tailor_unload());
	ASSERT_TRUE(tailor_loaded());
	ASSERT_EQ(0, wait_exit_code(child));
	close(fd);
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(""));
}

TEST_F(module, killed_reader_leaves_nothing_behind)
{
	int ready[2];
	pid_t reader;
	char c;

	ASSERT_EQ(0, pipe(ready));
	reader = fork();
	ASSERT_LE(0, reader);
	if (reader == 0) {
		/* Sample itself, all CPUs too, and block in read(). */
		int fd = tailor_open(), fd2 = tailor_open();
		struct tailor_config cfg;
		char buf[4096];

		tailor_config_init(&cfg, getpid());
		if (fd < 0 || tailor_configure(fd, &cfg) ||
		    ioctl(fd, TAILOR_IOC_START))
			_exit(2);
		tailor_config_init(&cfg, 0);
		cfg.flags |= TAILOR_CFG_ALL_CPUS;
		if (fd2 < 0 || tailor_configure(fd2, &cfg) ||
		    ioctl(fd2, TAILOR_IOC_START))
			_exit(2);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		tagged_spin_for(1, 200000000ull);
		for (;;)
			if (read(fd2, buf, sizeof(buf)) < 0)
				_exit(2);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	usleep(300000);
	ASSERT_EQ(0, kill(reader, SIGKILL));
	ASSERT_EQ(128 + SIGKILL, wait_exit_code(reader));
	/* Its sessions are gone, counters and rings with them. */
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(""));
}

static int open_errno(void *arg)
{
	int fd = tailor_open();

	(void)arg;
	if (fd >= 0)
		return 0;
	return errno;
}

TEST_F(module, non_root_refused_by_default)
{
	struct stat st;

	ASSERT_EQ(0, stat(TAILOR_DEVICE, &st));
	ASSERT_EQ(0600, st.st_mode & 0777);
	ASSERT_EQ(EACCES, run_as_test_user(open_errno, NULL));
}

struct user_case {
	pid_t own_child;
};

/* 0 if every check matched, else the number of the one that did not. */
static int user_checks(void *arg)
{
	struct user_case *uc = arg;
	struct tailor_config cfg;
	int fd = tailor_open();

	if (fd < 0)
		return 1;
	/* All CPUs needs CAP_PERFMON. */
	tailor_config_init(&cfg, 0);
	cfg.flags |= TAILOR_CFG_ALL_CPUS;
	if (tailor_configure(fd, &cfg) != -EPERM)
		return 2;
	/* So do kernel-mode samples. */
	tailor_config_init(&cfg, getpid());
	cfg.flags = 0;
	if (tailor_configure(fd, &cfg) != -EPERM)
		return 3;
	/* A root process: not ours to ptrace. */
	tailor_config_init(&cfg, 1);
	if (tailor_configure(fd, &cfg) != -EACCES)
		return 4;
	/* A root-owned process, started by the test: refused too. */
	tailor_config_init(&cfg, uc->own_child);
	if (tailor_configure(fd, &cfg) != -EACCES)
		return 5;
	/* Ourselves, user mode only: allowed, and it samples. */
	tailor_config_init(&cfg, getpid());
	if (tailor_configure(fd, &cfg) || ioctl(fd, TAILOR_IOC_START))
		return 6;
	tagged_spin_for(7, 100000000ull);
	if (ioctl(fd, TAILOR_IOC_STOP))
		return 7;
	close(fd);
	return 0;
}

TEST_F(module, open_gid_admits_group_with_perf_rules)
{
	struct user_case uc;
	struct stat st;
	int go_fd;
	pid_t pid;

	ASSERT_EQ(0, reload(TAILOR_TEST_OPEN_GID));
	ASSERT_EQ(0, stat(TAILOR_DEVICE, &st));
	ASSERT_EQ(0666, st.st_mode & 0777);
	uc.own_child = spawn_tagged_child(1, 1, &go_fd);
	ASSERT_LT(0, uc.own_child);
	EXPECT_EQ(0, run_as_test_user(user_checks, &uc));
	go(go_fd);
	wait_exit_code(uc.own_child);
	/* Not in the group: refused at open. */
	pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		_exit(open_errno(NULL));
	}
	EXPECT_EQ(EACCES, wait_exit_code(pid));
}

/*
 * The target starts the session itself, on the file it inherited, after
 * making itself undumpable (which takes it out of its user's reach, as
 * ptrace would have it).  START checks with the configurer's credentials
 * and no "own process" shortcut: -EACCES (before, the target passed as
 * the caller's own thread group, and was sampled).  0 if so, else a step.
 */
static int target_starts_itself(void *unused)
{
	struct tailor_config cfg;
	int fd, go_pipe[2], status;
	pid_t target;
	char c;

	(void)unused;
	fd = tailor_open();
	if (fd < 0 || pipe(go_pipe))
		return 1;
	target = fork();
	if (target == 0) {
		close(go_pipe[1]);
		if (read(go_pipe[0], &c, 1) != 1)
			_exit(2);
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			_exit(3);
		_exit(ioctl(fd, TAILOR_IOC_START) ? errno : 0);
	}
	close(go_pipe[0]);
	tailor_config_init(&cfg, target);
	if (tailor_configure(fd, &cfg))
		return 4;
	go(go_pipe[1]);
	status = wait_exit_code(target);
	close(fd);
	if (status != EACCES) {
		printf("# the undumpable target's own START gave %d, not EACCES (%d)\n",
		       status, EACCES);
		return 5;
	}
	return 0;
}

TEST_F(module, start_checks_the_configurer_not_the_caller)
{
	ASSERT_EQ(0, reload(TAILOR_TEST_OPEN_GID));
	EXPECT_EQ(0, run_as_test_user(target_starts_itself, NULL));
}

/* Sleeps as root in a thread of a target whose leader becomes the test user. */
static void *root_thread(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/*
 * A process whose main thread is the test user's (setresuid(2) through
 * the raw syscall changes one thread) while another thread stays root:
 * its leader passes configure's check, and START checks every thread, so
 * the root one refuses it (before, only the leader was checked and the
 * root thread got a counter).
 */
static pid_t spawn_mixed_creds_target(int *ready_fd)
{
	int ready[2];
	pid_t pid;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		pthread_t t;

		close(ready[0]);
		if (pthread_create(&t, NULL, root_thread, NULL))
			_exit(2);
		if (syscall(SYS_setresgid, TAILOR_TEST_GID, TAILOR_TEST_GID, TAILOR_TEST_GID) ||
		    syscall(SYS_setresuid, TAILOR_TEST_UID, TAILOR_TEST_UID, TAILOR_TEST_UID) ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(3);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		pause();
		_exit(0);
	}
	close(ready[1]);
	*ready_fd = ready[0];
	return pid;
}

static int start_on_mixed_target(void *arg)
{
	pid_t target = *(pid_t *)arg;
	struct tailor_config cfg;
	int fd, err;

	fd = tailor_open();
	if (fd < 0)
		return 1;
	tailor_config_init(&cfg, target);
	if (tailor_configure(fd, &cfg))
		return 2;
	err = ioctl(fd, TAILOR_IOC_START) ? errno : 0;
	close(fd);
	if (err != EACCES) {
		printf("# START on a target with a root thread gave %d, not EACCES (%d)\n",
		       err, EACCES);
		return 3;
	}
	return 0;
}

TEST_F(module, start_checks_every_thread)
{
	int ready_fd;
	pid_t target;
	char c;

	ASSERT_EQ(0, reload(TAILOR_TEST_OPEN_GID));
	target = spawn_mixed_creds_target(&ready_fd);
	ASSERT_LT(0, target);
	ASSERT_EQ(1, read(ready_fd, &c, 1));
	EXPECT_EQ(0, run_as_test_user(start_on_mixed_target, &target));
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	close(ready_fd);
}

/* A raw event's AnyThread bit (21) counts the sibling hyperthread too. */
static int any_thread_refused(void *unused)
{
	struct tailor_config cfg;
	int fd, err, go_fd;
	pid_t target;

	(void)unused;
	target = spawn_tagged_child(1, 1, &go_fd);
	fd = tailor_open();
	if (target < 0 || fd < 0)
		return 1;
	tailor_config_init(&cfg, target);
	cfg.source = TAILOR_SOURCE_AUTO;
	cfg.timer_period_ns = 0;
	cfg.event_type = TAILOR_EVENT_RAW;
	cfg.event_config = 0x2000c0;	/* INST_RETIRED.ANY_P, AnyThread */
	err = tailor_configure(fd, &cfg);
	close(fd);
	if (err != -EPERM) {
		printf("# a raw AnyThread event gave %d, not -EPERM\n", err);
		return 2;
	}
	return 0;
}

TEST_F(module, any_thread_needs_perfmon)
{
	ASSERT_EQ(0, reload(TAILOR_TEST_OPEN_GID));
	EXPECT_EQ(0, run_as_test_user(any_thread_refused, NULL));
}

/*
 * Rings are charged to their user across sessions: with RLIMIT_MEMLOCK
 * 0, the allowance is user_ring_kb (8 MiB) per possible CPU, so sessions
 * of 2 MiB per CPU (the unprivileged maximum, plus a control page) fit 3
 * at a time, the 4th is refused, and closing one makes room (before, one
 * user could pin 4 MiB per session without end: 411 sessions took 1.6
 * GiB).  0, or the step that failed.
 */
#define RING_SESSIONS	16

static int rings_charged_per_user(void *unused)
{
	struct rlimit none = { 0, 0 };
	int fds[RING_SESSIONS], ok = 0, refused = 0, i, err = 0;
	struct tailor_config cfg;
	pid_t target;
	int go_fd;

	(void)unused;
	if (setrlimit(RLIMIT_MEMLOCK, &none))
		return 1;
	target = spawn_tagged_child(1, 1, &go_fd);
	if (target < 0)
		return 2;
	for (i = 0; i < RING_SESSIONS; i++) {
		fds[i] = tailor_open();
		if (fds[i] < 0)
			return 3;
		tailor_config_init(&cfg, target);
		cfg.ring_records = (2u << 20) / 32;
		err = tailor_configure(fds[i], &cfg);
		if (!err)
			ok++;
		else if (err == -EPERM)
			refused++;
		else
			return 4;
	}
	printf("# %d sessions of 2 MiB per CPU configured, %d refused\n", ok, refused);
	if (ok != 3)
		return 5;
	/* The first session's rings go: a refused one fits now. */
	close(fds[0]);
	tailor_config_init(&cfg, target);
	cfg.ring_records = (2u << 20) / 32;
	if (tailor_configure(fds[RING_SESSIONS - 1], &cfg))
		return 6;
	for (i = 1; i < RING_SESSIONS; i++)
		close(fds[i]);
	go(go_fd);
	wait_exit_code(target);
	return 0;
}

TEST_F(module, rings_are_charged_to_their_user)
{
	ASSERT_EQ(0, reload(TAILOR_TEST_OPEN_GID));
	EXPECT_EQ(0, run_as_test_user(rings_charged_per_user, NULL));
}

TEST_HARNESS_MAIN

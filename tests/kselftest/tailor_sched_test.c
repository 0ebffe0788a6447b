// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scheduler events (ABI 5): the switches and wakeups tailor.ko writes
 * into a session's rings with TAILOR_CFG_SWITCHES and _WAKEUPS.
 *
 * The workload is a process of two threads that hand a token back and
 * forth ROUNDS times over two pipes, so one or both block and are woken
 * by the other every round; a process outside the session sleeps and wakes all
 * the while.  What must hold: every event is of the target (or, with
 * TAILOR_CFG_CHILDREN, of its descendants); each thread's switches
 * alternate out and in on the TSC; each block has its wakeup, nearly all
 * by the other thread; the event records are well formed and zero-padded; and nothing
 * changes for sessions that do not ask, or clients of ABI 4.
 * Needs tailor.ko loaded and root.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include "tailor_util.h"
#include "kselftest_harness.h"

#define ROUNDS		300

struct pingpong {
	int ab[2], ba[2];
	pid_t tid_b;
};

static void *player_b(void *arg)
{
	struct pingpong *pp = arg;
	char c;
	int i;

	pp->tid_b = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < ROUNDS; i++) {
		if (read(pp->ab[0], &c, 1) != 1 || write(pp->ba[1], &c, 1) != 1)
			_exit(4);
	}
	return NULL;
}

/*
 * In the target: thread A (the main thread) and thread B pass a byte
 * ROUNDS times.  Reports A's and B's tids on @report, then exits.
 */
static void play_pingpong(int report)
{
	struct pingpong pp = { .tid_b = 0 };
	pid_t tids[2];
	pthread_t b;
	char c = 'x';
	int i;

	if (pipe(pp.ab) || pipe(pp.ba) || pthread_create(&b, NULL, player_b, &pp))
		_exit(5);
	for (i = 0; i < ROUNDS; i++) {
		if (write(pp.ab[1], &c, 1) != 1 || read(pp.ba[0], &c, 1) != 1)
			_exit(6);
	}
	pthread_join(b, NULL);
	tids[0] = (pid_t)syscall(SYS_gettid);
	tids[1] = pp.tid_b;
	if (write(report, tids, sizeof(tids)) != sizeof(tids))
		_exit(7);
}

/* The players in the target itself, or in a child it forks (dumpable or not). */
enum workload { PINGPONG, PINGPONG_IN_CHILD, PINGPONG_IN_UNDUMPABLE_CHILD };

struct target {
	pid_t pid;
	int go;			/* write a byte to start it */
	int report;		/* the players' pid and tids come back here */
};

static pid_t spawn_target(enum workload w, struct target *t)
{
	int go[2], rep[2];
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(rep, O_CLOEXEC))
		return -1;
	t->pid = fork();
	if (t->pid == 0) {
		close(go[1]);
		close(rep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		if (w != PINGPONG) {
			pid_t child = fork();

			if (child == 0) {
				pid_t me = getpid();

				if (w == PINGPONG_IN_UNDUMPABLE_CHILD &&
				    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
					_exit(9);
				if (write(rep[1], &me, sizeof(me)) != sizeof(me))
					_exit(8);
				play_pingpong(rep[1]);
				_exit(0);
			}
			_exit(wait_exit_code(child));
		}
		{
			pid_t me = getpid();

			if (write(rep[1], &me, sizeof(me)) != sizeof(me))
				_exit(8);
		}
		play_pingpong(rep[1]);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	t->go = go[1];
	t->report = rep[0];
	return t->pid;
}

/* A process outside every session that sleeps and wakes until killed. */
static pid_t spawn_bystander(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			usleep(200);
	}
	return pid;
}

struct run {
	struct sample_buf b;
	struct tailor_stats st;
	pid_t players_pid;	/* the process whose threads play */
	pid_t tid_a, tid_b;
	int exit_code;
};

/* One session with @flags over workload @w, drained until the end. */
static int record_run(enum workload w, uint32_t flags, struct run *r)
{
	struct tailor_config cfg;
	struct target t;
	pid_t bystander, tids[2], reaped = 0;
	int fd, err, status = 0;

	memset(r, 0, sizeof(*r));
	fd = tailor_open();
	if (fd < 0)
		return -errno;
	if (spawn_target(w, &t) < 0)
		return -errno;
	bystander = spawn_bystander();
	tailor_config_init(&cfg, t.pid);
	cfg.flags |= flags;
	err = tailor_configure(fd, &cfg);
	if (!err && ioctl(fd, TAILOR_IOC_START))
		err = -errno;
	r->b.record_size = cfg.record_size;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	go(t.go);
	if (!err) {
		/* Drain as it runs: 2 * ROUNDS switches and wakeups each. */
		while (!err && (reaped = waitpid(t.pid, &status, WNOHANG)) == 0) {
			err = drain_available(fd, &r->b);
			usleep(2000);
		}
	}
	if (reaped != t.pid)
		reaped = waitpid(t.pid, &status, 0);
	r->exit_code = reaped != t.pid ? -1 :
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);
	if (read(t.report, &r->players_pid, sizeof(r->players_pid)) != sizeof(r->players_pid) ||
	    read(t.report, tids, sizeof(tids)) != sizeof(tids))
		err = err ?: -EPIPE;
	r->tid_a = tids[0];
	r->tid_b = tids[1];
	close(t.report);
	if (!err && ioctl(fd, TAILOR_IOC_STOP))
		err = -errno;
	if (!err)
		err = drain_available(fd, &r->b);
	if (!err)
		err = tailor_stats(fd, &r->st, NULL, 0);
	close(fd);
	return err;
}

static uint32_t who_flags(const struct tailor_sample *s)
{
	return tailor_who_flags(s->who);
}

/* Per thread of the players: its switches in TSC order, and wakeups. */
struct thread_events {
	pid_t tid;
	size_t outs, outs_blocked, ins, wakeups, woken_by_other;
	size_t out_of_order;	/* two outs or two ins in a row */
};

struct event_ref {
	uint64_t tsc;
	uint32_t kind;
};

static int cmp_event(const void *a, const void *b)
{
	const struct event_ref *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

static void tally_thread(const struct run *r, pid_t tid, pid_t other,
			 struct thread_events *te)
{
	struct event_ref *ev = calloc(r->b.nr, sizeof(*ev));
	size_t i, n = 0;

	memset(te, 0, sizeof(*te));
	te->tid = tid;
	for (i = 0; ev && i < r->b.nr; i++) {
		const struct tailor_sample *s = sample_at(&r->b, i);
		uint32_t kind = tailor_ev_kind(s->ip);

		if (!tailor_who_is_event(s->who) || tailor_who_tid(s->who) != (uint32_t)tid)
			continue;
		if (kind == TAILOR_EV_WAKEUP) {
			te->wakeups++;
			te->woken_by_other += tailor_ev_other_tid(s->ip) == (uint32_t)other;
			continue;
		}
		ev[n++] = (struct event_ref){ s->tsc, kind };
		if (kind == TAILOR_EV_SWITCH_OUT) {
			te->outs++;
			te->outs_blocked += !(tailor_ev_flags(s->ip) & TAILOR_EVF_PREEMPTED);
		} else {
			te->ins++;
		}
	}
	qsort(ev, n, sizeof(*ev), cmp_event);
	for (i = 1; i < n; i++)
		te->out_of_order += ev[i].kind == ev[i - 1].kind;
	free(ev);
}

TEST(abi4_clients_cannot_ask_for_events)
{
	struct tailor_config cfg;
	struct tailor_info info;
	int fd;

	SKIP_UNLESS_LOADED();
	/* Debian's 6.1 and 6.12 and the debug kernel all have the tracepoints. */
	ASSERT_EQ(0, tailor_info(&info));
	ASSERT_EQ(TAILOR_ABI_VERSION, info.abi_version);
	ASSERT_TRUE(info.caps & TAILOR_CAP_SCHED_EVENTS);
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 4;
	cfg.flags |= TAILOR_CFG_SWITCHES;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 4;
	cfg.flags |= TAILOR_CFG_WAKEUPS;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	tailor_config_init(&cfg, getpid());
	cfg.flags |= TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS,
		  cfg.flags_used & (TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS));
	close(fd);
}

TEST(switches_and_wakeups_of_the_target_only)
{
	struct thread_events a, b;
	struct run r;
	size_t i, events = 0, samples = 0;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, record_run(PINGPONG, TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS, &r));
	ASSERT_EQ(0, r.exit_code);
	ASSERT_EQ(0, r.st.total.lost);
	ASSERT_EQ(0, r.st.total.queued);
	ASSERT_EQ(r.st.total.produced, r.st.total.delivered);
	ASSERT_EQ(r.b.nr, r.st.total.delivered);

	for (i = 0; i < r.b.nr; i++) {
		const struct tailor_sample *s = sample_at(&r.b, i);
		size_t k;

		if (!tailor_who_is_event(s->who)) {
			samples++;
			continue;
		}
		events++;
		/* Only the flag pair, and nothing after the three words. */
		ASSERT_EQ(TAILOR_SF_EVENT, who_flags(s));
		for (k = 0; k < (r.b.record_size - 24) / 8; k++)
			ASSERT_EQ(0, s->regs[k]) TH_LOG("record %zu: word %zu not zero", i, k + 3);
		ASSERT_EQ(r.players_pid, tailor_who_pid(s->who))
			TH_LOG("an event of pid %u (tid %u), not the target's",
			       tailor_who_pid(s->who), tailor_who_tid(s->who));
		ASSERT_GE(TAILOR_EV_WAKEUP, tailor_ev_kind(s->ip));
		ASSERT_LE(TAILOR_EV_SWITCH_OUT, tailor_ev_kind(s->ip));
		ASSERT_EQ(0, s->ip >> 60);
		/* A named other thread has both ids. */
		ASSERT_EQ(tailor_ev_other_tid(s->ip) == 0, tailor_ev_other_pid(s->ip) == 0);
	}
	tally_thread(&r, r.tid_a, r.tid_b, &a);
	tally_thread(&r, r.tid_b, r.tid_a, &b);
	TH_LOG("%zu events, %zu samples; A: %zu out (%zu blocked), %zu in, %zu woken (%zu by B); B: %zu out (%zu blocked), %zu in, %zu woken (%zu by A)",
	       events, samples, a.outs, a.outs_blocked, a.ins, a.wakeups, a.woken_by_other,
	       b.outs, b.outs_blocked, b.ins, b.wakeups, b.woken_by_other);
	/*
	 * A read with no byte in the pipe blocks, so each round blocks one
	 * thread or both, unless the byte came just in time.  How often each
	 * blocks is the scheduler's: 6.1 blocks both nearly every round;
	 * 6.12 (EEVDF) often lets the woken thread preempt the writer, which
	 * then finds its reply waiting (2026-11-24: 130 and 194 of 300).
	 */
	EXPECT_LE(ROUNDS / 2, a.outs_blocked + b.outs_blocked);
	/* Out and in alternate; a thread ends out (it exited) or in. */
	EXPECT_EQ(0, a.out_of_order);
	EXPECT_EQ(0, b.out_of_order);
	EXPECT_GE(1, (ssize_t)a.outs - (ssize_t)a.ins);
	EXPECT_GE(1, (ssize_t)b.outs - (ssize_t)b.ins);
	/*
	 * A blocked thread runs again only once woken, so each blocked out
	 * has its wakeup (a thread woken on its way to sleep has one more);
	 * the other thread makes nearly all of them.
	 */
	EXPECT_LE(a.outs_blocked, a.wakeups);
	EXPECT_LE(b.outs_blocked, b.wakeups);
	EXPECT_LE((a.wakeups + b.wakeups) * 9 / 10, a.woken_by_other + b.woken_by_other);
	sample_buf_free(&r.b);
}

TEST(no_events_unless_asked)
{
	struct run r;
	size_t i;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, record_run(PINGPONG, 0, &r));
	ASSERT_EQ(0, r.exit_code);
	for (i = 0; i < r.b.nr; i++)
		ASSERT_FALSE(tailor_who_is_event(sample_at(&r.b, i)->who));
	sample_buf_free(&r.b);
}

TEST(wakeups_and_switches_apart)
{
	struct run r;
	size_t i, wakeups = 0;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, record_run(PINGPONG, TAILOR_CFG_WAKEUPS, &r));
	for (i = 0; i < r.b.nr; i++) {
		const struct tailor_sample *s = sample_at(&r.b, i);

		if (!tailor_who_is_event(s->who))
			continue;
		ASSERT_EQ(TAILOR_EV_WAKEUP, tailor_ev_kind(s->ip));
		wakeups++;
	}
	/* 6.12 blocks one thread or the other about once a round (above). */
	EXPECT_LE(ROUNDS / 2, wakeups);
	sample_buf_free(&r.b);

	/* And switches without wakeups. */
	ASSERT_EQ(0, record_run(PINGPONG, TAILOR_CFG_SWITCHES, &r));
	for (i = wakeups = 0; i < r.b.nr; i++) {
		const struct tailor_sample *s = sample_at(&r.b, i);

		wakeups += tailor_who_is_event(s->who) && tailor_ev_kind(s->ip) == TAILOR_EV_WAKEUP;
	}
	EXPECT_EQ(0, wakeups);
	sample_buf_free(&r.b);
}

/* A process the target forks: followed with CHILDREN, not without. */
TEST(children_followed_only_when_asked)
{
	struct thread_events a, b;
	struct run r;
	size_t i, of_child;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, record_run(PINGPONG_IN_CHILD, TAILOR_CFG_SWITCHES | TAILOR_CFG_CHILDREN, &r));
	ASSERT_EQ(0, r.exit_code);
	tally_thread(&r, r.tid_a, r.tid_b, &a);
	tally_thread(&r, r.tid_b, r.tid_a, &b);
	EXPECT_LE(ROUNDS / 2, a.outs_blocked + b.outs_blocked);
	sample_buf_free(&r.b);

	ASSERT_EQ(0, record_run(PINGPONG_IN_CHILD, TAILOR_CFG_SWITCHES, &r));
	ASSERT_EQ(0, r.exit_code);
	for (i = of_child = 0; i < r.b.nr; i++) {
		const struct tailor_sample *s = sample_at(&r.b, i);

		of_child += tailor_who_is_event(s->who) &&
			    tailor_who_pid(s->who) == (uint32_t)r.players_pid;
	}
	EXPECT_EQ(0, of_child);
	sample_buf_free(&r.b);
}

/*
 * As an unprivileged member of open_gid, the session's events name the
 * other thread only where it is the session's own: the bystander (the
 * same user's, but not the target) and every other task read 0.  0, or
 * the step that failed.
 */
static int unprivileged_run(void *unused)
{
	size_t i, events = 0, named = 0;
	struct run r;

	(void)unused;
	if (record_run(PINGPONG, TAILOR_CFG_SWITCHES | TAILOR_CFG_WAKEUPS, &r) || r.exit_code)
		return 1;
	for (i = 0; i < r.b.nr; i++) {
		const struct tailor_sample *s = sample_at(&r.b, i);
		uint32_t other = tailor_ev_other_tid(s->ip);

		if (!tailor_who_is_event(s->who))
			continue;
		events++;
		if (tailor_who_pid(s->who) != (uint32_t)r.players_pid)
			return 2;
		if (other && other != (uint32_t)r.tid_a && other != (uint32_t)r.tid_b)
			return 3;
		named += other != 0;
	}
	sample_buf_free(&r.b);
	/* The players wake each other: those wakeups name the waker. */
	return events < ROUNDS ? 4 : !named ? 5 : 0;
}

TEST(unprivileged_sessions_name_only_their_own_threads)
{
	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(TAILOR_TEST_OPEN_GID));
	EXPECT_EQ(0, run_as_test_user(unprivileged_run, NULL));
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(""));
}

/*
 * The events of player B, which the undumpable child creates after it
 * made itself undumpable (so all of them come after), and of the
 * target's own process; -1 if the run failed.
 */
static int count_undumpable_run(size_t *of_players, size_t *of_others)
{
	struct run r;
	size_t i;

	*of_players = *of_others = 0;
	if (record_run(PINGPONG_IN_UNDUMPABLE_CHILD, TAILOR_CFG_SWITCHES | TAILOR_CFG_CHILDREN, &r) ||
	    r.exit_code)
		return -1;
	for (i = 0; i < r.b.nr; i++) {
		const struct tailor_sample *s = sample_at(&r.b, i);

		if (!tailor_who_is_event(s->who))
			continue;
		if (tailor_who_tid(s->who) == (uint32_t)r.tid_b)
			++*of_players;
		else if (tailor_who_pid(s->who) != (uint32_t)r.players_pid)
			++*of_others;
	}
	sample_buf_free(&r.b);
	return 0;
}

static int unprivileged_undumpable_run(void *unused)
{
	size_t players, others;

	(void)unused;
	if (count_undumpable_run(&players, &others))
		return 1;
	/* The target's own switches (it waits for its child) are there. */
	if (!others)
		return 2;
	if (players) {
		printf("# %zu events of the undumpable child recorded\n", players);
		return 3;
	}
	return 0;
}

/*
 * A child that made itself undumpable (PR_SET_DUMPABLE 0, as after a
 * setuid exec) is out of an unprivileged session's sight, as ptrace would
 * have it: none of its switches (before, all of them were recorded).  A
 * session with CAP_PERFMON still sees them.
 */
TEST(undumpable_children_hidden_from_unprivileged_sessions)
{
	size_t players, others;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, count_undumpable_run(&players, &others));
	/* B blocks and is woken every round: switches and wakeups. */
	EXPECT_LE(ROUNDS, players);
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(TAILOR_TEST_OPEN_GID));
	EXPECT_EQ(0, run_as_test_user(unprivileged_undumpable_run, NULL));
	ASSERT_EQ(0, tailor_unload());
	ASSERT_EQ(0, tailor_load(""));
}

TEST_HARNESS_MAIN

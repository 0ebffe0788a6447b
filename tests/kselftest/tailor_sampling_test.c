// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the samples say, checked against workloads whose truth is known:
 * the tag in r15, the IP range, TSC order and spacing, the stats
 * arithmetic, concurrent sessions, threads created before and after start,
 * all-CPU mode and kernel-mode samples.  Uses the software clock, which
 * every x86-64 box has.  Needs tailor.ko loaded and root.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "tailor_util.h"
#include "kselftest_harness.h"

#define TAG		0x5eed7a6ull
#define PERIOD_NS	1000000ull	/* 1 kHz */

/* tagged_syscalls(tag, n): n getpid() calls with r15 == tag throughout. */
void tagged_syscalls(uint64_t tag, uint64_t n);
extern const char tagged_syscalls_after_syscall[], tagged_syscalls_end[];
__asm__(".text\n"
	".globl tagged_syscalls\n"
	".type tagged_syscalls, @function\n"
	"tagged_syscalls:\n"
	"	push %r15\n"
	"	push %r12\n"
	"	mov %rdi, %r15\n"
	"	mov %rsi, %r12\n"
	"1:	mov $39, %eax\n"
	"	syscall\n"
	".globl tagged_syscalls_after_syscall\n"
	"tagged_syscalls_after_syscall:\n"
	"	dec %r12\n"
	"	jnz 1b\n"
	"	pop %r12\n"
	"	pop %r15\n"
	"	ret\n"
	".globl tagged_syscalls_end\n"
	"tagged_syscalls_end:\n"
	".size tagged_syscalls, .-tagged_syscalls\n");

/*
 * The share of a spinner's samples, in percent, that must land in its
 * loop.  Every sample in the loop must carry the tag; the few outside it
 * sit around the tagged_spin() calls, mostly where r15 is the caller's.
 * TCG takes interrupts at translation-block boundaries, which puts up to
 * 1% of them there (seen on the debug kernel), more than the time spent.
 */
#define IN_LOOP_MIN_PERCENT	95

/* Configure @fd for @cfg, start, release the child, collect until exit. */
static void record_child(struct __test_metadata *_metadata, int fd,
			 struct tailor_config *cfg, pid_t child, int go_fd,
			 struct sample_buf *b)
{
	struct tailor_stats st;
	char rec[4096];
	ssize_t n;

	ASSERT_EQ(0, tailor_configure(fd, cfg));
	b->record_size = cfg->record_size;
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	go(go_fd);
	ASSERT_EQ(0, wait_exit_code(child));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_STOP));
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, drain_available(fd, b));
	n = read(fd, rec, sizeof(rec));
	ASSERT_EQ(0, n); /* stopped and drained: end of stream */
	ASSERT_EQ(0, tailor_stats(fd, &st, NULL, 0));
	ASSERT_EQ(st.total.produced, st.total.delivered + st.total.lost);
	ASSERT_EQ(b->nr, st.total.delivered);
}

TEST(r15_tag_and_ip_of_user_samples)
{
	struct sample_buf b = {};
	struct tailor_config cfg;
	size_t i, user = 0, tagged = 0, inside = 0, tagged_inside = 0;
	int fd, go_fd, slot;
	pid_t child;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);
	child = spawn_tagged_child(TAG, 1500000000ull, &go_fd);
	ASSERT_LT(0, child);
	tailor_config_init(&cfg, child);
	cfg.timer_period_ns = PERIOD_NS;
	record_child(_metadata, fd, &cfg, child, go_fd, &b);
	slot = reg_slot(cfg.regs_used, TAILOR_REG_R15);

	for (i = 0; i < b.nr; i++) {
		const struct tailor_sample *s = sample_at(&b, i);

		ASSERT_EQ((uint32_t)child, tailor_who_pid(s->who));
		ASSERT_EQ(0, tailor_who_flags(s->who) & TAILOR_SF_KERNEL);
		user++;
		tagged += s->regs[slot] == TAG;
		inside += in_loop(s->ip);
		tagged_inside += in_loop(s->ip) && s->regs[slot] == TAG;
	}
	TH_LOG("%zu user samples, %zu with r15 = tag, %zu in the loop",
	       user, tagged, inside);
	/* 1.5 s at 1 kHz: demand at least a third, whatever TCG does. */
	ASSERT_LE(500, user);
	ASSERT_EQ(inside, tagged_inside);
	ASSERT_LE(user * IN_LOOP_MIN_PERCENT, inside * 100);
	sample_buf_free(&b);
	close(fd);
}

TEST(tsc_monotonic_per_cpu_and_spaced_by_period)
{
	struct sample_buf b = {};
	struct tailor_config cfg;
	struct tailor_info info;
	uint64_t last_tsc[8192] = {}, *deltas, tsc_before, tsc_after, median;
	uint32_t last_tid[8192] = {};
	size_t i, nd = 0, near = 0;
	int fd, go_fd = -1;
	pid_t child;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, tailor_info(&info));
	fd = tailor_open();
	ASSERT_LE(0, fd);
	child = spawn_tagged_child(TAG, 1500000000ull, &go_fd);
	ASSERT_LT(0, child);
	tailor_config_init(&cfg, child);
	cfg.timer_period_ns = PERIOD_NS;
	tsc_before = __builtin_ia32_rdtsc();
	record_child(_metadata, fd, &cfg, child, go_fd, &b);
	tsc_after = __builtin_ia32_rdtsc();
	ASSERT_LE(100, b.nr);

	deltas = calloc(b.nr, sizeof(*deltas));
	ASSERT_NE(NULL, deltas);
	for (i = 0; i < b.nr; i++) {
		const struct tailor_sample *s = sample_at(&b, i);
		uint32_t cpu = tailor_who_cpu(s->who);

		/* Raw TSC, the same clock userspace reads. */
		ASSERT_LE(tsc_before, s->tsc);
		ASSERT_GE(tsc_after, s->tsc);
		if (last_tsc[cpu]) {
			/* read() hands out each CPU's ring in order. */
			ASSERT_LT(last_tsc[cpu], s->tsc);
			if (last_tid[cpu] == tailor_who_tid(s->who))
				deltas[nd++] = tailor_tsc_to_ns(s->tsc - last_tsc[cpu],
								info.tsc_mult,
								info.tsc_shift);
		}
		last_tsc[cpu] = s->tsc;
		last_tid[cpu] = tailor_who_tid(s->who);
	}
	ASSERT_LE(50, nd);
	qsort(deltas, nd, sizeof(*deltas), cmp_u64);
	median = deltas[nd / 2];
	for (i = 0; i < nd; i++)
		near += deltas[i] * 10 >= PERIOD_NS * 9 &&
			deltas[i] * 10 <= PERIOD_NS * 11;
	TH_LOG("%zu spacings: min %llu p10 %llu p25 %llu median %llu p75 %llu p90 %llu max %llu ns; %zu within 10%%",
	       nd, (unsigned long long)deltas[0], (unsigned long long)deltas[nd / 10],
	       (unsigned long long)deltas[nd / 4], (unsigned long long)median,
	       (unsigned long long)deltas[nd * 3 / 4], (unsigned long long)deltas[nd * 9 / 10],
	       (unsigned long long)deltas[nd - 1], near);
	/*
	 * perf forwards the cpu-clock hrtimer on a fixed grid, so the
	 * median spacing is the period up to timer-interrupt latency;
	 * outliers are ticks lost to preemption of the (virtual) CPU, and
	 * those only ever lengthen a gap.
	 */
	ASSERT_LE(median * 100, PERIOD_NS * 105);
	ASSERT_GE(median * 100, PERIOD_NS * 95);
	ASSERT_LE(nd, near * 2);
	free(deltas);
	sample_buf_free(&b);
	close(fd);
}

TEST(stats_add_up_per_cpu)
{
	struct tailor_cpu_stats cpus[64] = {};
	struct sample_buf b = {};
	struct tailor_config cfg;
	struct tailor_stats st;
	uint64_t produced = 0, delivered = 0, lost = 0;
	int fd, go_fd = -1;
	uint32_t i;
	pid_t child;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);
	child = spawn_tagged_child(TAG, 300000000ull, &go_fd);
	ASSERT_LT(0, child);
	tailor_config_init(&cfg, child);
	record_child(_metadata, fd, &cfg, child, go_fd, &b);
	ASSERT_EQ(0, tailor_stats(fd, &st, cpus, 64));
	ASSERT_LT(0, st.nr_cpus);
	for (i = 0; i < st.nr_cpus; i++) {
		ASSERT_EQ(cpus[i].produced,
			  cpus[i].delivered + cpus[i].lost + cpus[i].queued);
		produced += cpus[i].produced;
		delivered += cpus[i].delivered;
		lost += cpus[i].lost;
	}
	ASSERT_EQ(st.total.produced, produced);
	ASSERT_EQ(st.total.delivered, delivered);
	ASSERT_EQ(st.total.lost, lost);
	ASSERT_EQ(0, st.total.queued);
	ASSERT_EQ(0, st.total.lost);
	sample_buf_free(&b);
	close(fd);
}

TEST(stalled_reader_loses_and_says_so)
{
	struct sample_buf b = {};
	struct tailor_config cfg;
	struct tailor_stats st;
	uint64_t queued;
	int fd, go_fd = -1;
	pid_t child;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);
	child = spawn_tagged_child(TAG, 500000000ull, &go_fd);
	ASSERT_LT(0, child);
	tailor_config_init(&cfg, child);
	cfg.ring_records = 64;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	go(go_fd);
	ASSERT_EQ(0, wait_exit_code(child));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_STOP));

	ASSERT_EQ(0, tailor_stats(fd, &st, NULL, 0));
	TH_LOG("produced %llu lost %llu queued %llu",
	       (unsigned long long)st.total.produced,
	       (unsigned long long)st.total.lost,
	       (unsigned long long)st.total.queued);
	ASSERT_LT(64, st.total.produced);
	ASSERT_LT(0, st.total.lost);
	ASSERT_EQ(0, st.total.delivered);
	ASSERT_EQ(st.total.produced, st.total.lost + st.total.queued);
	queued = st.total.queued;

	b.record_size = cfg.record_size;
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, drain_available(fd, &b));
	ASSERT_EQ(queued, b.nr);
	ASSERT_EQ(0, tailor_stats(fd, &st, NULL, 0));
	ASSERT_EQ(st.total.produced, st.total.delivered + st.total.lost);
	sample_buf_free(&b);
	close(fd);
}

TEST(several_sessions_at_once)
{
	struct tailor_config cfg[3];
	struct sample_buf b[3] = {};
	int fd[3], go_a = -1, go_b = -1, i;
	pid_t a, c;
	size_t k;

	SKIP_UNLESS_LOADED();
	a = spawn_tagged_child(0xaaa, 400000000ull, &go_a);
	c = spawn_tagged_child(0xbbb, 400000000ull, &go_b);
	ASSERT_LT(0, a);
	ASSERT_LT(0, c);
	for (i = 0; i < 3; i++) {
		fd[i] = tailor_open();
		ASSERT_LE(0, fd[i]);
		tailor_config_init(&cfg[i], i < 2 ? a : c);
		ASSERT_EQ(0, tailor_configure(fd[i], &cfg[i]));
		ASSERT_EQ(0, ioctl(fd[i], TAILOR_IOC_START));
		b[i].record_size = cfg[i].record_size;
	}
	go(go_a);
	go(go_b);
	ASSERT_EQ(0, wait_exit_code(a));
	ASSERT_EQ(0, wait_exit_code(c));
	for (i = 0; i < 3; i++) {
		uint64_t tag = i < 2 ? 0xaaa : 0xbbb;
		size_t inside = 0, tagged_inside = 0;
		int slot = reg_slot(cfg[i].regs_used, TAILOR_REG_R15);

		ASSERT_EQ(0, ioctl(fd[i], TAILOR_IOC_STOP));
		ASSERT_EQ(0, fcntl(fd[i], F_SETFL, O_NONBLOCK));
		ASSERT_EQ(0, drain_available(fd[i], &b[i]));
		ASSERT_LE(50, b[i].nr);
		for (k = 0; k < b[i].nr; k++) {
			const struct tailor_sample *s = sample_at(&b[i], k);

			ASSERT_EQ((uint32_t)(i < 2 ? a : c), tailor_who_pid(s->who));
			inside += in_loop(s->ip);
			tagged_inside += in_loop(s->ip) && s->regs[slot] == tag;
		}
		TH_LOG("session %d: %zu samples, %zu in the loop", i, b[i].nr, inside);
		ASSERT_EQ(inside, tagged_inside);
		ASSERT_LE(b[i].nr * IN_LOOP_MIN_PERCENT, inside * 100);
		sample_buf_free(&b[i]);
		close(fd[i]);
	}
}

/* The multi-threaded target: NR_EARLY threads before start, NR_LATE after. */
#define NR_EARLY	2
#define NR_LATE		2
#define NR_WORKERS	(NR_EARLY + NR_LATE)

struct worker {
	pthread_t thread;
	int index;
	int tid_fd;
	atomic_int *go;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int32_t msg[2] = { w->index, (int32_t)syscall(SYS_gettid) };

	if (write(w->tid_fd, msg, sizeof(msg)) != sizeof(msg))
		abort();
	while (!atomic_load(w->go))
		usleep(1000);
	tagged_spin_for(0x100 + w->index, 400000000ull);
	return NULL;
}

static void threaded_target(int go_rd, int tid_fd)
{
	struct worker w[NR_WORKERS];
	atomic_int go = 0;
	char c;
	int i;

	for (i = 0; i < NR_WORKERS; i++) {
		w[i] = (struct worker){ .index = i, .tid_fd = tid_fd, .go = &go };
		if (i == NR_EARLY && read(go_rd, &c, 1) != 1)
			_exit(3);
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]))
			_exit(4);
	}
	atomic_store(&go, 1);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(w[i].thread, NULL);
	_exit(0);
}

TEST(threads_before_and_after_start)
{
	int32_t tids[NR_WORKERS] = {}, msg[2];
	size_t per_thread[NR_WORKERS] = {}, tagged[NR_WORKERS] = {};
	int go_p[2], tid_p[2], fd, i, early = 0;
	struct sample_buf b = {};
	struct tailor_config cfg;
	pid_t child;
	size_t k;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, pipe(go_p));
	ASSERT_EQ(0, pipe(tid_p));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(go_p[1]);
		close(tid_p[0]);
		threaded_target(go_p[0], tid_p[1]);
	}
	close(go_p[0]);
	close(tid_p[1]);
	/* The early threads exist before the session starts. */
	while (early < NR_EARLY) {
		ASSERT_EQ(sizeof(msg), read(tid_p[0], msg, sizeof(msg)));
		tids[msg[0]] = msg[1];
		early++;
	}

	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, child);
	record_child(_metadata, fd, &cfg, child, go_p[1], &b);
	for (i = NR_EARLY; i < NR_WORKERS; i++) {
		ASSERT_EQ(sizeof(msg), read(tid_p[0], msg, sizeof(msg)));
		tids[msg[0]] = msg[1];
	}
	close(tid_p[0]);

	for (k = 0; k < b.nr; k++) {
		const struct tailor_sample *s = sample_at(&b, k);

		for (i = 0; i < NR_WORKERS; i++) {
			if ((uint32_t)tids[i] != tailor_who_tid(s->who))
				continue;
			per_thread[i]++;
			tagged[i] += in_loop(s->ip) && s->regs[0] == 0x100u + i;
		}
	}
	for (i = 0; i < NR_WORKERS; i++) {
		TH_LOG("thread %d (tid %d, %s start): %zu samples, %zu tagged",
		       i, tids[i], i < NR_EARLY ? "before" : "after",
		       per_thread[i], tagged[i]);
		EXPECT_LE(50, per_thread[i]);
		EXPECT_LE(per_thread[i] * IN_LOOP_MIN_PERCENT, tagged[i] * 100);
	}
	sample_buf_free(&b);
	close(fd);
}

TEST(all_cpus_sees_the_spinner)
{
	struct sample_buf b = {};
	struct tailor_config cfg;
	struct tailor_info info;
	size_t k, mine = 0, inside = 0, tagged = 0;
	int fd, go_fd = -1;
	pid_t child;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, tailor_info(&info));
	fd = tailor_open();
	ASSERT_LE(0, fd);
	child = spawn_tagged_child(TAG, 400000000ull, &go_fd);
	ASSERT_LT(0, child);
	tailor_config_init(&cfg, 0);
	cfg.flags |= TAILOR_CFG_ALL_CPUS;
	record_child(_metadata, fd, &cfg, child, go_fd, &b);
	for (k = 0; k < b.nr; k++) {
		const struct tailor_sample *s = sample_at(&b, k);

		ASSERT_GT(info.nr_cpu_ids, tailor_who_cpu(s->who));
		if (tailor_who_pid(s->who) != (uint32_t)child)
			continue;
		mine++;
		if (!in_loop(s->ip))
			continue;
		inside++;
		tagged += s->regs[0] == TAG;
	}
	TH_LOG("%zu samples, %zu of the spinner, %zu in its loop, %zu tagged",
	       b.nr, mine, inside, tagged);
	ASSERT_LE(100, mine);
	/* The loop holds the tag in every instruction: no exception. */
	ASSERT_EQ(inside, tagged);
	ASSERT_LE(mine * IN_LOOP_MIN_PERCENT, inside * 100);
	sample_buf_free(&b);
	close(fd);
}

/*
 * Kernel samples of a thread that enters the kernel only from
 * tagged_syscalls(): the user registers at entry hold its tag, and the
 * entry IP (where the module offers it) lies inside it.
 */
TEST(kernel_samples_carry_user_regs)
{
	struct sample_buf b = {};
	struct tailor_config cfg;
	struct tailor_info info;
	size_t k, kernel = 0, user_regs = 0, entry_inside = 0, entry_syscall = 0;
	int fd, go_p[2], tag_slot, ip_slot = -1;
	bool entry_ip;
	pid_t child;
	char c;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, tailor_info(&info));
	entry_ip = info.caps & TAILOR_CAP_ENTRY_IP;
	ASSERT_EQ(0, pipe(go_p));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		uint64_t start = now_ns();

		close(go_p[1]);
		if (read(go_p[0], &c, 1) != 1)
			_exit(3);
		while (now_ns() - start < 800000000ull)
			tagged_syscalls(TAG, 10000);
		_exit(0);
	}
	close(go_p[0]);
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, child);
	cfg.flags = TAILOR_CFG_EXCLUDE_USER;
	if (entry_ip)
		cfg.regs_mask = TAILOR_REGS_DEFAULT | 1ull << TAILOR_REG_IP;
	record_child(_metadata, fd, &cfg, child, go_p[1], &b);
	tag_slot = reg_slot(cfg.regs_used, TAILOR_REG_R15);
	if (entry_ip)
		ip_slot = reg_slot(cfg.regs_used, TAILOR_REG_IP);
	for (k = 0; k < b.nr; k++) {
		const struct tailor_sample *s = sample_at(&b, k);
		uint32_t f = tailor_who_flags(s->who);
		bool tagged = (f & TAILOR_SF_USER_REGS) && s->regs[tag_slot] == TAG;

		/* Excluding user mode leaves only kernel samples. */
		ASSERT_TRUE(f & TAILOR_SF_KERNEL);
		ASSERT_LE(0xffff800000000000ull, s->ip);
		kernel++;
		user_regs += tagged;
		if (ip_slot < 0 || !tagged)
			continue;
		/* r15 holds the tag only inside tagged_syscalls(). */
		ASSERT_LE((uintptr_t)tagged_syscalls, s->regs[ip_slot]);
		ASSERT_GT((uintptr_t)tagged_syscalls_end, s->regs[ip_slot]);
		entry_inside++;
		entry_syscall += s->regs[ip_slot] == (uintptr_t)tagged_syscalls_after_syscall;
	}
	TH_LOG("%zu kernel samples, %zu with the user's r15, %zu with an entry IP in tagged_syscalls(), %zu right after its syscall%s",
	       kernel, user_regs, entry_inside, entry_syscall,
	       entry_ip ? "" : " (not offered)");
	ASSERT_LE(20, kernel);
	ASSERT_LE(kernel * 95, user_regs * 100);
	/* Nearly all entries are the syscall; the rest interrupts. */
	if (entry_ip)
		ASSERT_LE(entry_inside * 90, entry_syscall * 100);
	sample_buf_free(&b);
	close(fd);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-thread tag word (ABI 2), read by tailor.ko at every sample.
 *
 * Ground truth: a thread stores a query id in its tag word, then spins in
 * tagged_spin() with the same id in r15, then stores the next id.  Every
 * sample inside the spin loop must therefore carry a word equal to its
 * r15: several threads switch queries at known points while running the
 * same code, so only the word can tell the queries apart.  Then the bad
 * cases: a thread that never set its word, an offset at unmapped memory,
 * a word unmapped while sampling -- flagged, never a fault, never a wrong
 * word -- and the ABI rules that keep version-1 clients working.  Last,
 * processes the target forks (ABI 3): sampled with their own pid only
 * when asked, and their word is never read, since their TLS need not be
 * the target's.
 * Needs tailor.ko loaded and root.
 */
#include <pthread.h>
#include <sys/mman.h>
#include "tailor_util.h"
#include "tailor/tag_word.h"
#include "kselftest_harness.h"

TAILOR_TAG_WORD_DEFINE;

#define PERIOD_NS	1000000ull	/* 1 kHz */
#define THREADS		2
#define PHASES		12
#define QUERIES		3

/* Spin for @ns of this thread's CPU time with @tag in r15. */
static void spin_cpu_ns(uint64_t tag, uint64_t ns)
{
	tagged_spin_for(tag, ns);
}

static int open_session(struct __test_metadata *_metadata,
			struct tailor_config *cfg, int64_t offset)
{
	int fd = tailor_open();

	EXPECT_LE(0, fd);
	tailor_config_init(cfg, getpid());
	cfg->timer_period_ns = PERIOD_NS;
	cfg->flags |= TAILOR_CFG_TAG_WORD;
	cfg->tag_word_offset = offset;
	EXPECT_EQ(0, tailor_configure(fd, cfg));
	/* r15 and the word: 24 + 8 + 8 bytes. */
	EXPECT_EQ(TAILOR_SAMPLE_BASE_SIZE + 16, cfg->record_size);
	EXPECT_NE(0, cfg->flags_used & TAILOR_CFG_TAG_WORD);
	return fd;
}

static void stop_and_drain(struct __test_metadata *_metadata, int fd,
			   const struct tailor_config *cfg, struct sample_buf *b)
{
	b->record_size = cfg->record_size;
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_STOP));
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, drain_available(fd, b));
}

/* The word of a sample recorded with r15 and TAILOR_CFG_TAG_WORD. */
static uint64_t word_of(const struct tailor_sample *s)
{
	return s->regs[1];
}

static bool word_bad(const struct tailor_sample *s)
{
	return tailor_who_flags(s->who) & TAILOR_SF_TAG_WORD_BAD;
}

struct worker {
	int index;
	pthread_barrier_t *start;
};

/*
 * Query q's phase: the word says q from before the loop is entered until
 * after it is left, and r15 says q inside the loop only.
 */
static void *switch_queries(void *arg)
{
	struct worker *w = arg;
	int k;

	pthread_barrier_wait(w->start);
	for (k = 0; k < PHASES; k++) {
		uint64_t q = 1 + (k + w->index) % QUERIES;
		uint64_t saved = tailor_tag_word_set(q);

		spin_cpu_ns(q, 60000000ull);
		tailor_tag_word_restore(saved);
	}
	return NULL;
}

TEST(identical_code_told_apart_by_the_word_alone)
{
	pthread_t threads[THREADS];
	struct worker workers[THREADS];
	pthread_barrier_t start;
	struct tailor_config cfg;
	struct sample_buf b = {};
	size_t i, in = 0, right = 0, wrong = 0, bad = 0, per_query[QUERIES + 1] = {};
	int fd;

	SKIP_UNLESS_LOADED();
	fd = open_session(_metadata, &cfg, tailor_tag_word_offset());
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, THREADS + 1));
	for (i = 0; i < THREADS; i++) {
		workers[i] = (struct worker){ (int)i, &start };
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, switch_queries, &workers[i]));
	}
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	pthread_barrier_wait(&start);
	for (i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	stop_and_drain(_metadata, fd, &cfg, &b);

	for (i = 0; i < b.nr; i++) {
		const struct tailor_sample *s = sample_at(&b, i);
		uint64_t r15 = s->regs[0];

		if (!in_loop(s->ip) || r15 < 1 || r15 > QUERIES)
			continue;
		in++;
		if (word_bad(s))
			bad++;
		else if (word_of(s) == r15)
			right++, per_query[r15]++;
		else
			wrong++;
	}
	TH_LOG("%zu samples, %zu in query code: %zu right (q1 %zu, q2 %zu, q3 %zu), %zu wrong, %zu unreadable",
	       b.nr, in, right, per_query[1], per_query[2], per_query[3], wrong, bad);
	/* 2 threads x 12 x 60 ms at 1 kHz: ~1440; demand a third. */
	ASSERT_LE(480, in);
	ASSERT_EQ(0, wrong);
	ASSERT_EQ(0, bad);
	ASSERT_LE(in * 99, right * 100);
	for (i = 1; i <= QUERIES; i++)
		ASSERT_LT(0, per_query[i]);
	sample_buf_free(&b);
	close(fd);
}

TEST(a_thread_that_never_set_the_word_reads_zero)
{
	struct tailor_config cfg;
	struct sample_buf b = {};
	size_t i, in = 0, zero = 0;
	int fd;

	SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, tailor_tag_word);
	fd = open_session(_metadata, &cfg, tailor_tag_word_offset());
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	spin_cpu_ns(0x42, 400000000ull);
	stop_and_drain(_metadata, fd, &cfg, &b);
	for (i = 0; i < b.nr; i++) {
		const struct tailor_sample *s = sample_at(&b, i);

		if (!in_loop(s->ip))
			continue;
		in++;
		zero += !word_bad(s) && word_of(s) == 0;
	}
	TH_LOG("%zu in the loop, %zu with word 0", in, zero);
	ASSERT_LE(130, in);
	ASSERT_EQ(in, zero);
	sample_buf_free(&b);
	close(fd);
}

static uintptr_t thread_pointer(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

/* A page of our own near the thread pointer: the offset must be small. */
static void *page_near_tp(void)
{
	uintptr_t tp = thread_pointer() & ~4095ul, step;

	for (step = 1 << 20; step < 1ul << 29; step += 1 << 20) {
		void *p = mmap((void *)(tp - step), 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			       -1, 0);

		if (p != MAP_FAILED && p == (void *)(tp - step))
			return p;
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	return NULL;
}

TEST(word_unmapped_mid_run_is_flagged_never_wrong)
{
	struct tailor_config cfg;
	struct sample_buf b = {};
	size_t i, mapped = 0, mapped_ok = 0, gone = 0, gone_flagged = 0;
	uint64_t *page;
	int fd;

	SKIP_UNLESS_LOADED();
	page = page_near_tp();
	ASSERT_NE(NULL, page);
	page[0] = 0x77;
	fd = open_session(_metadata, &cfg,
			  (int64_t)((uintptr_t)page - thread_pointer()));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	spin_cpu_ns(0x77, 300000000ull);
	ASSERT_EQ(0, munmap(page, 4096));
	spin_cpu_ns(0x88, 300000000ull);
	stop_and_drain(_metadata, fd, &cfg, &b);
	for (i = 0; i < b.nr; i++) {
		const struct tailor_sample *s = sample_at(&b, i);

		if (!in_loop(s->ip))
			continue;
		if (s->regs[0] == 0x77) {
			mapped++;
			mapped_ok += !word_bad(s) && word_of(s) == 0x77;
		} else if (s->regs[0] == 0x88) {
			gone++;
			gone_flagged += word_bad(s) && word_of(s) == 0;
		}
	}
	TH_LOG("mapped: %zu samples, %zu with the word; unmapped: %zu, %zu flagged",
	       mapped, mapped_ok, gone, gone_flagged);
	ASSERT_LE(100, mapped);
	ASSERT_LE(100, gone);
	ASSERT_EQ(mapped, mapped_ok);
	ASSERT_EQ(gone, gone_flagged);
	sample_buf_free(&b);
	close(fd);
}

TEST(offset_into_nowhere_is_flagged)
{
	struct tailor_config cfg;
	struct sample_buf b = {};
	size_t i, in = 0, flagged = 0;
	uint64_t *page;
	int fd;

	SKIP_UNLESS_LOADED();
	/* A page that was ours and is no more: nothing is mapped there. */
	page = page_near_tp();
	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, munmap(page, 4096));
	fd = open_session(_metadata, &cfg,
			  (int64_t)((uintptr_t)page - thread_pointer()));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	spin_cpu_ns(0x99, 300000000ull);
	stop_and_drain(_metadata, fd, &cfg, &b);
	for (i = 0; i < b.nr; i++) {
		const struct tailor_sample *s = sample_at(&b, i);

		if (!in_loop(s->ip))
			continue;
		in++;
		flagged += word_bad(s) && word_of(s) == 0;
	}
	TH_LOG("%zu in the loop, %zu flagged unreadable", in, flagged);
	ASSERT_LE(100, in);
	ASSERT_EQ(in, flagged);
	sample_buf_free(&b);
	close(fd);
}

TEST(abi_1_clients_keep_working_and_cannot_ask_for_the_word)
{
	struct tailor_config cfg;
	int fd;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);

	/* Version 1 as it was: accepted, the record as it was. */
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 1;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(TAILOR_SAMPLE_BASE_SIZE + 8, cfg.record_size);
	ASSERT_EQ(0, cfg.flags_used & TAILOR_CFG_TAG_WORD);

	/* Version 1 asking for the word, or with the old reserved field set. */
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 1;
	cfg.flags |= TAILOR_CFG_TAG_WORD;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 1;
	cfg.tag_word_offset = -8;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));

	/* Version 2: an offset needs the flag, and must be aligned and near. */
	tailor_config_init(&cfg, getpid());
	cfg.tag_word_offset = -8;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	cfg.flags |= TAILOR_CFG_TAG_WORD;
	cfg.tag_word_offset = -12;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	cfg.tag_word_offset = -(1LL << 31);
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	cfg.tag_word_offset = -8;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(TAILOR_SAMPLE_BASE_SIZE + 16, cfg.record_size);

	/* Version 2 knew no child processes; all CPUs have none to follow. */
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 2;
	cfg.flags |= TAILOR_CFG_CHILDREN;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	cfg.abi_version = TAILOR_ABI_VERSION;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_NE(0, cfg.flags_used & TAILOR_CFG_CHILDREN);
	tailor_config_init(&cfg, 0);
	cfg.flags |= TAILOR_CFG_ALL_CPUS | TAILOR_CFG_CHILDREN;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));

	/*
	 * Version 9: OpenTelemetry's context pointer, the same rules as the
	 * word's, and its ids in the record after the word; version 8 knew
	 * neither the flag nor the field.
	 */
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 8;
	cfg.flags |= TAILOR_CFG_OTEL_CTX;
	cfg.otel_ctx_offset = -8;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	tailor_config_init(&cfg, getpid());
	cfg.otel_ctx_offset = -8;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	cfg.flags |= TAILOR_CFG_OTEL_CTX;
	cfg.otel_ctx_offset = -12;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	cfg.otel_ctx_offset = -(1LL << 31);
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	/* At or past the thread pointer is the TCB, no static TLS. */
	cfg.otel_ctx_offset = 0;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	cfg.otel_ctx_offset = 16;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	tailor_config_init(&cfg, 0);
	cfg.flags |= TAILOR_CFG_ALL_CPUS | TAILOR_CFG_OTEL_CTX;
	cfg.otel_ctx_offset = -16;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	tailor_config_init(&cfg, getpid());
	cfg.flags |= TAILOR_CFG_OTEL_CTX;
	cfg.otel_ctx_offset = -16;
	cfg.flags |= TAILOR_CFG_TAG_WORD;
	cfg.tag_word_offset = -8;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_NE(0, cfg.flags_used & TAILOR_CFG_OTEL_CTX);
	ASSERT_EQ(TAILOR_SAMPLE_BASE_SIZE + 16 + TAILOR_OTEL_IDS_SIZE, cfg.record_size);

	/* A version from the future. */
	tailor_config_init(&cfg, getpid());
	cfg.abi_version = TAILOR_ABI_VERSION + 1;
	ASSERT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	close(fd);
}

/*
 * An ABI 8 client passes the 136 bytes it knows of the configuration:
 * read as if ABI 9's offset were zero, answered in those bytes, nothing
 * written past them.
 */
TEST(abi_8_clients_are_answered_in_their_own_size)
{
	union {
		struct tailor_config cfg;
		unsigned char bytes[sizeof(struct tailor_config) + 64];
	} old;
	size_t i;
	int fd;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&old.cfg, getpid());
	memset(old.bytes + TAILOR_CONFIG_SIZE_VER0, 0xa5, sizeof(old) - TAILOR_CONFIG_SIZE_VER0);
	old.cfg.size = TAILOR_CONFIG_SIZE_VER0;
	old.cfg.abi_version = 8;
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_CONFIGURE, &old.cfg));
	ASSERT_EQ(TAILOR_CONFIG_SIZE_VER0, old.cfg.size);
	ASSERT_EQ(TAILOR_SAMPLE_BASE_SIZE + 8, old.cfg.record_size);
	for (i = TAILOR_CONFIG_SIZE_VER0; i < sizeof(old); i++)
		ASSERT_EQ(0xa5, old.bytes[i]) TH_LOG("byte %zu written", i);
	close(fd);
}

#define PARENT_TAG	0x100
#define CHILD_TAG	0x200
#define PARENT_WORD	0x77

/*
 * The target: on go, set the word, fork a child that spins with its own
 * tag (and, inherited, the same word in the same TLS slot), spin, reap
 * it and report its pid.
 */
static void forking_target(int go_rd, int pid_wr)
{
	pid_t child;
	char c;

	if (read(go_rd, &c, 1) != 1)
		_exit(3);
	tailor_tag_word_set(PARENT_WORD);
	child = fork();
	if (child < 0)
		_exit(4);
	if (!child) {
		spin_cpu_ns(CHILD_TAG, 300000000ull);
		_exit(0);
	}
	spin_cpu_ns(PARENT_TAG, 300000000ull);
	if (wait_exit_code(child) || write(pid_wr, &child, sizeof(child)) != sizeof(child))
		_exit(5);
	_exit(0);
}

struct fork_counts {
	size_t parent, parent_word, child, child_in_loop, child_word, child_bad;
};

static void record_forking_target(struct __test_metadata *_metadata, bool children,
				  struct fork_counts *n)
{
	struct tailor_config cfg;
	struct sample_buf b = {};
	int go_p[2], pid_p[2], fd;
	pid_t target, child = 0;
	size_t i;

	ASSERT_EQ(0, pipe(go_p));
	ASSERT_EQ(0, pipe(pid_p));
	target = fork();
	ASSERT_LE(0, target);
	if (!target) {
		close(go_p[1]);
		close(pid_p[0]);
		forking_target(go_p[0], pid_p[1]);
	}
	close(go_p[0]);
	close(pid_p[1]);
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, target);
	cfg.timer_period_ns = PERIOD_NS;
	cfg.flags |= TAILOR_CFG_TAG_WORD | (children ? TAILOR_CFG_CHILDREN : 0);
	cfg.tag_word_offset = tailor_tag_word_offset();
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	ASSERT_EQ(0, ioctl(fd, TAILOR_IOC_START));
	go(go_p[1]);
	ASSERT_EQ(sizeof(child), read(pid_p[0], &child, sizeof(child)));
	ASSERT_EQ(0, wait_exit_code(target));
	close(pid_p[0]);
	stop_and_drain(_metadata, fd, &cfg, &b);

	memset(n, 0, sizeof(*n));
	for (i = 0; i < b.nr; i++) {
		const struct tailor_sample *s = sample_at(&b, i);

		if (tailor_who_pid(s->who) == (uint32_t)target) {
			n->parent++;
			n->parent_word += in_loop(s->ip) && s->regs[0] == PARENT_TAG &&
					  word_of(s) == PARENT_WORD;
		} else if (tailor_who_pid(s->who) == (uint32_t)child) {
			n->child++;
			n->child_in_loop += in_loop(s->ip) && s->regs[0] == CHILD_TAG;
			n->child_word += word_of(s) != 0;
			n->child_bad += word_bad(s);
		}
	}
	TH_LOG("children %s: target %zu samples (%zu with its word), child %d: %zu samples, %zu in its loop, %zu with a word, %zu flagged",
	       children ? "followed" : "not followed", n->parent, n->parent_word, child,
	       n->child, n->child_in_loop, n->child_word, n->child_bad);
	sample_buf_free(&b);
	close(fd);
}

TEST(forked_children_sampled_when_asked_never_with_the_targets_word)
{
	struct fork_counts with, without;

	SKIP_UNLESS_LOADED();
	record_forking_target(_metadata, true, &with);
	/* 300 ms each at 1 kHz: demand a sixth, whatever TCG does. */
	EXPECT_LE(50, with.parent_word);
	EXPECT_LE(50, with.child);
	EXPECT_LE(with.child * 95, with.child_in_loop * 100);
	EXPECT_EQ(0, with.child_word);
	EXPECT_EQ(0, with.child_bad);

	record_forking_target(_metadata, false, &without);
	EXPECT_LE(50, without.parent_word);
	EXPECT_EQ(0, without.child);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Call stacks through tailor.ko (ABI 6, tailor record --call-graph fp), in
 * the test box, and through the BPF collector natively (tests/bpf/
 * bpf_record_test.sh builds this with TAILOR_TEST_ROOT and runs it with
 * TAILOR_COLLECTOR=bpf; the module's configuration rules are skipped).  tw_stacks spins in main -> outer -> middle -> leaf_spin
 * and then writes to /dev/null from main -> write_loop, built so that
 * every function keeps a frame pointer: the program's shape is the truth.
 * Nearly every sample in leaf_spin must carry that whole chain; samples
 * in the kernel under write() must carry the kernel's frames from the
 * system call's entry, named from the recording's kernel symbols, below
 * the program's.  A bound of 4 frames must hold, and the frames past it
 * must be counted.  And the configuration's rules: a bound over perf's
 * PERF_MAX_STACK_DEPTH, or a bound without a stack, or the flag from an
 * ABI 5 client, is refused.
 */
#include "tailor_util.h"
#include "kselftest_harness.h"

#ifndef TAILOR_TEST_ROOT
#define TAILOR_TEST_ROOT	"/tailor"
#endif
#define TAILOR		TAILOR_TEST_ROOT "/bin/tailor"
#define TW_STACKS	TAILOR_TEST_ROOT "/workloads/tw_stacks"
#define REC		"/tmp/tailor-callchain-test.rec"
#define REC4		"/tmp/tailor-callchain-test-4.rec"

/* The BPF collector, as TAILOR_COLLECTOR=bpf has tailor record use. */
static bool bpf_collector(void)
{
	const char *c = getenv("TAILOR_COLLECTOR");

	return c && !strcmp(c, "bpf");
}

/* tailor record works here: tailor.ko loaded, or the BPF collector asked for. */
#define SKIP_UNLESS_RECORDING()							\
	do {									\
		if (!bpf_collector() && access(TAILOR_DEVICE, F_OK))		\
			SKIP(return, "%s missing: load tailor.ko first (or TAILOR_COLLECTOR=bpf)", \
			     TAILOR_DEVICE);					\
	} while (0)
/* About a second of each part under TCG; natively ~0.8 s and 0.15 s. */
#define IN_BOX		(!strcmp(TAILOR_TEST_ROOT, "/tailor"))
#define SPINS		(IN_BOX ? "40000000" : "1000000000")
#define WRITES		(IN_BOX ? "60000" : "2000000")

/* Whether @s ends with @suffix. */
static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/* The number after @key in @text, or -1. */
static long value_of(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? atol(p + strlen(key)) : -1;
}

static char folded[1 << 20];

TEST(stacks_have_the_programs_shape)
{
	long leaf = 0, whole = 0, kernel = 0, lines = 0;
	char *line, *save = NULL, dump[16384], cmd[512];

	SKIP_UNLESS_RECORDING();
	snprintf(cmd, sizeof(cmd), "%s record -q --call-graph fp -F 1000 -o %s -- %s %s %s >/dev/null",
		 TAILOR, REC, TW_STACKS, SPINS, WRITES);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, capture(TAILOR " dump " REC, dump, sizeof(dump)));
	ASSERT_EQ(0, capture(TAILOR " report -f folded --stack function -i " REC, folded,
			     sizeof(folded)));
	TH_LOG("dump:\n%.3000s\nfolded:\n%.6000s", dump, folded);
	EXPECT_LT(0, value_of(dump, "stacks: "));
	for (line = strtok_r(folded, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		long n;

		if (!sp)
			continue;
		n = atol(sp + 1);
		lines++;
		if (ends_with(line, sp - line, ";leaf_spin")) {
			leaf += n;
			if (ends_with(line, sp - line, ";main;outer;middle;leaf_spin"))
				whole += n;
		}
		*sp = 0;
		/* The kernel's frames from the system call's entry, under the program's. */
		if (strstr(line, ";main;") && strstr(line, ";entry_SYSCALL_64") &&
		    strstr(line, ";ksys_write"))
			kernel += n;
	}
	TH_LOG("%ld stacks; leaf_spin %ld samples, %ld with main;outer;middle; %ld under write() in the kernel",
	       lines, leaf, whole, kernel);
	EXPECT_LE(50, leaf);
	/* A sample taken between a call and its callee's frame may lack one. */
	EXPECT_LE(leaf * 95, whole * 100);
	EXPECT_LE(5, kernel);
}

TEST(a_bound_holds_and_what_it_cuts_is_counted)
{
	char *line, *save = NULL, dump[16384], cmd[512];
	long deepest = 0, lost, cut;

	SKIP_UNLESS_RECORDING();
	snprintf(cmd, sizeof(cmd), "%s record -q --call-graph fp,4 -F 1000 -o %s -- %s %s 1000 >/dev/null",
		 TAILOR, REC4, TW_STACKS, SPINS);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, capture(TAILOR " dump " REC4, dump, sizeof(dump)));
	ASSERT_EQ(0, capture(TAILOR " report -f folded --stack function -i " REC4, folded,
			     sizeof(folded)));
	TH_LOG("dump:\n%.3000s\nfolded:\n%.3000s", dump, folded);
	for (line = strtok_r(folded, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long depth = 1;
		char *c;

		for (c = line; *c && *c != ' '; c++)
			depth += *c == ';';
		if (depth > deepest)
			deepest = depth;
	}
	lost = value_of(dump, "end.stack_frames_lost: ");
	cut = value_of(dump, "end.stacks_cut: ");
	TH_LOG("deepest stack %ld frames; %ld stacks cut, %ld frames lost", deepest, cut, lost);
	EXPECT_EQ(4, deepest);
	/* leaf_spin's stack is 4 frames from main: libc's start is past the bound. */
	EXPECT_LT(0, cut);
	EXPECT_LE(cut, lost);
}

/* A bound past perf's is refused by tailor record, whichever collector. */
TEST(a_bound_past_perfs_is_refused)
{
	char out[4096];

	SKIP_UNLESS_RECORDING();
	EXPECT_NE(0, capture(TAILOR " record -q --call-graph fp,128 -o " REC4 " -- true 2>&1",
			     out, sizeof(out)));
	TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "128"));
}

TEST(the_configuration_rules)
{
	struct tailor_config cfg;
	int fd;

	SKIP_UNLESS_LOADED();
	fd = tailor_open();
	ASSERT_LE(0, fd);
	tailor_config_init(&cfg, getpid());
	cfg.flags |= TAILOR_CFG_CALLCHAIN;
	ASSERT_EQ(0, tailor_configure(fd, &cfg));
	EXPECT_EQ(TAILOR_DEFAULT_CALLCHAIN, cfg.callchain_max);
	EXPECT_EQ(TAILOR_SAMPLE_BASE_SIZE + 8 * cfg.nr_regs + 8 * (1 + TAILOR_DEFAULT_CALLCHAIN + 2),
		  cfg.record_size);
	/* The default ring holds 2 MiB of the larger records, what a user without CAP_PERFMON may have. */
	EXPECT_LE((uint64_t)cfg.ring_capacity * cfg.record_size, 2u << 20);
	EXPECT_LE(1024, cfg.ring_capacity);

	tailor_config_init(&cfg, getpid());
	cfg.flags |= TAILOR_CFG_CALLCHAIN;
	cfg.callchain_max = TAILOR_MAX_CALLCHAIN + 1;
	EXPECT_EQ(-EINVAL, tailor_configure(fd, &cfg));

	tailor_config_init(&cfg, getpid());
	cfg.callchain_max = 8;
	EXPECT_EQ(-EINVAL, tailor_configure(fd, &cfg));

	tailor_config_init(&cfg, getpid());
	cfg.abi_version = 5;
	cfg.flags |= TAILOR_CFG_CALLCHAIN;
	EXPECT_EQ(-EINVAL, tailor_configure(fd, &cfg));
	close(fd);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor report end to end, in the test box: tw_ops runs three operators
 * whose work is split 1:2:1 (scan's own loop; join in shared code under
 * tag 2; agg in unlinked runtime code under tag 3) and writes its Tagging
 * Dictionary.  Recorded by tailor record, and by perf record
 * --intr-regs=r15 as a peer, the operator report must show that split,
 * the pipeline level must add it up, and the timeline must show the
 * operators in the order they ran.  The exact attribution rules are the
 * golden tests' (tests/golden); here the whole chain runs on a real
 * kernel with real samples, so shares are checked within 5 points.
 */
#include <math.h>
#include <sys/stat.h>
#include "tailor_util.h"
#include "kselftest_harness.h"

#define TAILOR		"/tailor/bin/tailor"
#define TW_OPS		"/tailor/workloads/tw_ops"
#define PERF		"/usr/bin/perf"
#define REC		"/tmp/tailor-report-test.rec"
#define PERF_DATA	"/tmp/tailor-report-test.data"
#define DICT		"/tmp/tailor-report-test.dict"
#define TIMES		"/tmp/tailor-report-test.times"
#define TW_JITCODE	"/tailor/workloads/tw_jitcode"
#define JIT_REC		"/tmp/tailor-report-test-jit.rec"
/* About 1.5 s of scan + join + agg under TCG. */
#define WORK_SCAN	"150000000"
#define WORK_JOIN	"300000000"
#define WORK_AGG	"150000000"


/*
 * The "share" column of @name's first row in a report's CSV, or -1.  The
 * column is found by the heading: code tables have more columns after it
 * (object, path; process where several ran).
 */
static double share_of(const char *csv, const char *name)
{
	size_t len = strlen(name), n = strcspn(csv, "\n"), k;
	const char *p = csv, *h = csv;
	int col = 0;

	/* The heading's fields before "share". */
	while (h < csv + n && strncmp(h, "share", 5)) {
		h = memchr(h, ',', csv + n - h);
		if (!h)
			return -1;
		h++;
		col++;
	}
	while (p && *p) {
		n = strcspn(p, "\n");
		if (!strncmp(p, name, len) && p[len] == ',') {
			const char *f = p;

			for (k = 0; f && k < (size_t)col; k++) {
				f = memchr(f, ',', p + n - f);
				f = f ? f + 1 : NULL;
			}
			return f ? atof(f) : -1;
		}
		p = p[n] ? p + n + 1 : NULL;
	}
	return -1;
}

/*
 * The operators' shares of their own samples against the CPU time split
 * tw_ops measured, within 5 points (about 4 standard deviations of
 * sampling ~1400 times).  Under TCG equal iterations do not take equal
 * time, so the measured split is the truth, not the 1:2:1 of the work.
 * Exact attribution is the golden tests' job; this checks the chain on a
 * real kernel.
 */
#define EXPECT_SHARE_WITHIN(want, got, points) do {			\
	double _want = (want), _got = (got), _pts = (points);		\
	EXPECT_TRUE(_got >= _want - _pts && _got <= _want + _pts)	\
		TH_LOG("%s: %.2f%%, measured %.2f%% +- %.2f", #got, _got, _want, _pts); \
} while (0)
#define EXPECT_SHARE(want, got)	EXPECT_SHARE_WITHIN(want, got, 5.0)

static double attributed(const char *csv)
{
	return share_of(csv, "scan") + share_of(csv, "join") + share_of(csv, "agg");
}

static double share_or_zero(const char *csv, const char *name)
{
	double s = share_of(csv, name);

	return s < 0 ? 0 : s;
}

/*
 * Of the samples in tw_ops's own code, the share attributed to an
 * operator.  The kernel's share is left out: exec and page faults take
 * 6% of this short run on the debug kernel (KASAN), and they are no
 * operator's.
 */
static double attributed_in_engine(const char *csv)
{
	double ops = attributed(csv);

	return 100.0 * ops / (ops + share_or_zero(csv, "[tw_ops]") +
			      share_or_zero(csv, "[tag without link]"));
}

/* @name's share of the samples of @a, @b and @c (one of them). */
static double share_among(const char *csv, const char *name, const char *a,
			  const char *b, const char *c)
{
	double sum = share_of(csv, a) + share_of(csv, b) + (c ? share_of(csv, c) : 0);

	return 100.0 * share_of(csv, name) / sum;
}

static double op_share(const char *csv, const char *name)
{
	return share_among(csv, name, "scan", "join", "agg");
}

FIXTURE(recorded) {
	char out[16384];
};

FIXTURE_SETUP(recorded)
{
	if (access(TAILOR, X_OK) || access(TAILOR_DEVICE, F_OK))
		SKIP(return, "needs %s and tailor.ko loaded", TAILOR);
	/* One recording serves every test (each runs in its own process). */
	if (!access(REC, F_OK) && !access(DICT, F_OK))
		return;
	ASSERT_EQ(0, capture(TAILOR " record -q -o " REC " -F 1000 -- " TW_OPS " --dict " DICT
			     " --times " TIMES " " WORK_SCAN " " WORK_JOIN " " WORK_AGG " 2>&1", self->out,
			     sizeof(self->out))) TH_LOG("%s", self->out);
}

FIXTURE_TEARDOWN(recorded)
{
}

/* The measured split: each operator's share of their CPU time (tw_ops --times). */
struct split {
	double scan, join, agg;
};

static struct split measured(const char *path)
{
	unsigned long long s = 0, j = 0, a = 0;
	struct split out = { -100, -100, -100 };
	FILE *f = fopen(path, "r");

	if (f && fscanf(f, "scan_ns=%llu join_ns=%llu agg_ns=%llu", &s, &j, &a) == 3 &&
	    s + j + a) {
		out.scan = 100.0 * s / (s + j + a);
		out.join = 100.0 * j / (s + j + a);
		out.agg = 100.0 * a / (s + j + a);
	}
	if (f)
		fclose(f);
	return out;
}

static void expect_split(struct __test_metadata *_metadata, const char *csv,
			 const char *times)
{
	struct split t = measured(times);
	/*
	 * The measured split is thread CPU time, kernel time in the thread's
	 * context included (softirqs run there too), while kernel samples
	 * that carry no user tag or entry IP (perf.data: perf captures the
	 * kernel's registers) stay [kernel], belonging to no operator.  Each
	 * such sample widens the bound by its share.  Seen once in the 6.1
	 * box: 187 of 3102 samples in handle_softirqs, scan 24.0% against
	 * a measured 29.8%, perf report agreeing with tailor to the sample.
	 */
	double kernel = share_of(csv, "[kernel]");
	double points = 5.0 + (kernel > 0 ? kernel : 0);

	EXPECT_SHARE_WITHIN(t.scan, op_share(csv, "scan"), points);
	EXPECT_SHARE_WITHIN(t.join, op_share(csv, "join"), points);
	EXPECT_SHARE_WITHIN(t.agg, op_share(csv, "agg"), points);
	EXPECT_LE(99.0, attributed_in_engine(csv));
}

TEST_F(recorded, operator_shares_follow_the_work)
{
	if (access(REC, F_OK))
		SKIP(return, "no recording");
	ASSERT_EQ(0, capture(TAILOR " report -f csv -i " REC " -d " DICT, self->out,
			     sizeof(self->out)));
	TH_LOG("%s", self->out);
	expect_split(_metadata, self->out, TIMES);
}

TEST_F(recorded, pipelines_add_up_their_operators)
{
	if (access(REC, F_OK))
		SKIP(return, "no recording");
	ASSERT_EQ(0, capture(TAILOR " report -f csv -l pipeline -i " REC " -d " DICT,
			     self->out, sizeof(self->out)));
	TH_LOG("%s", self->out);
	struct split t = measured(TIMES);

	EXPECT_SHARE(t.scan + t.join, share_among(self->out, "pipeline 1", "pipeline 1", "pipeline 2", NULL));
	EXPECT_SHARE(t.agg, share_among(self->out, "pipeline 2", "pipeline 1", "pipeline 2", NULL));
	/* Pipelines add up operators exactly, sample for sample. */
	{
		char ops[16384];

		ASSERT_EQ(0, capture(TAILOR " report -f csv -i " REC " -d " DICT, ops, sizeof(ops)));
		EXPECT_TRUE(fabs(share_of(self->out, "pipeline 1") -
				 share_of(ops, "scan") - share_of(ops, "join")) < 0.001);
		EXPECT_TRUE(fabs(share_of(self->out, "pipeline 2") - share_of(ops, "agg")) < 0.001);
	}
}

/* The samples column (the third) of @name in a report's CSV, or -1. */
static long samples_of(const char *csv, const char *name)
{
	size_t len = strlen(name);
	const char *p = csv;

	while (p && *p) {
		if (!strncmp(p, name, len) && p[len] == ',') {
			const char *kind_end = strchr(p + len + 1, ',');

			return kind_end ? atol(kind_end + 1) : -1;
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return -1;
}

/*
 * Without a dictionary each operator's function carries the operator's
 * own samples: exactly those of the operator level with --kernel-apart,
 * which keeps in [kernel] what the function level keeps there -- the
 * kernel samples an operator entered the kernel from.  Against the CPU
 * time tw_ops measures, which includes that kernel time, the functions
 * fall short by it: interrupts taken in the scan loop under TCG were 14%
 * of scan's samples in one 6.12 run and 2% in a 6.1 run.
 */
TEST_F(recorded, functions_without_a_dictionary)
{
	static const char *const pairs[][2] = {
		{ "op_scan", "scan" }, { "ht_probe", "join" }, { "rt_combine", "agg" },
	};
	char ops[16384];
	size_t i;

	if (access(REC, F_OK))
		SKIP(return, "no recording");
	ASSERT_EQ(0, capture(TAILOR " report -f csv -l function -i " REC, self->out,
			     sizeof(self->out)));
	ASSERT_EQ(0, capture(TAILOR " report -f csv --kernel-apart -i " REC " -d " DICT, ops,
			     sizeof(ops)));
	TH_LOG("functions:\n%s\noperators, kernel apart:\n%s", self->out, ops);
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		long f = samples_of(self->out, pairs[i][0]), o = samples_of(ops, pairs[i][1]);

		/* A sample on one of the operator's lines outside its function, at most. */
		EXPECT_TRUE(f > 0 && labs(f - o) <= 5 + o / 100)
			TH_LOG("%s: %ld samples, %s: %ld", pairs[i][0], f, pairs[i][1], o);
	}
}

/*
 * tailor record stores the kernel functions its samples fell in: the
 * report names them from the recording (its header says so), exactly as
 * this host's /proc/kallsyms names them, and dump counts them.  Natively
 * (scripts/check.sh's golden tests) a seed recording's are read on
 * another kernel.
 */
TEST_F(recorded, kernel_functions_named_from_the_recording)
{
	static char stored[65536], host[65536];
	char dump[16384], *line, *save = NULL;
	long functions = -1, named = 0;

	if (access(REC, F_OK))
		SKIP(return, "no recording");
	ASSERT_EQ(0, capture(TAILOR " dump " REC, dump, sizeof(dump)));
	ASSERT_EQ(0, capture(TAILOR " report -f csv --top 0 -l function -i " REC, stored,
			     sizeof(stored)));
	ASSERT_EQ(0, capture(TAILOR " report -f csv --top 0 -l function --kallsyms /proc/kallsyms -i "
			     REC, host, sizeof(host)));
	ASSERT_EQ(0, capture(TAILOR " report -l function -i " REC " | head -3", self->out,
			     sizeof(self->out)));
	TH_LOG("dump:\n%s\nheader:\n%s\nfunctions:\n%.4000s", dump, self->out, stored);
	if (strstr(dump, "kernel_functions: "))
		functions = atol(strstr(dump, "kernel_functions: ") + 18);
	EXPECT_LT(0, functions);
	EXPECT_NE(NULL, strstr(self->out, "# kernel symbols: stored in the recording ("));
	for (line = strtok_r(stored, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, ",function,") && strstr(line, ",[kernel.kallsyms],"))
			named++;
	EXPECT_LT(0, named);
	/* strtok_r cut it: compare what the host names with a fresh copy. */
	ASSERT_EQ(0, capture(TAILOR " report -f csv --top 0 -l function -i " REC, stored,
			     sizeof(stored)));
	EXPECT_STREQ(host, stored);
}

/* Each operator's samples, by bucket: scan's all come before join's, join's before agg's. */
TEST_F(recorded, timeline_shows_the_operators_in_turn)
{
	char cmd[512];
	int last_scan = -1, first_join = -1, last_join = -1, first_agg = -1;
	char *line, *save = NULL;

	if (access(REC, F_OK))
		SKIP(return, "no recording");
	snprintf(cmd, sizeof(cmd), TAILOR " timeline -f csv -b 50ms -i %s -d %s", REC, DICT);
	ASSERT_EQ(0, capture(cmd, self->out, sizeof(self->out)));
	for (line = strtok_r(self->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int bucket, n;
		char name[64];

		if (sscanf(line, "%d,%*[^,],%63[^,],%d", &bucket, name, &n) != 3 || n < 5)
			continue;	/* the header, or a bucket's stray sample */
		if (!strcmp(name, "scan"))
			last_scan = bucket;
		if (!strcmp(name, "join") && first_join < 0)
			first_join = bucket;
		if (!strcmp(name, "join"))
			last_join = bucket;
		if (!strcmp(name, "agg") && first_agg < 0)
			first_agg = bucket;
	}
	ASSERT_GE(last_scan, 0);
	ASSERT_GE(first_join, 0);
	ASSERT_GE(first_agg, 0);
	EXPECT_LE(last_scan, first_join);
	EXPECT_LE(last_join, first_agg);
}

TEST_F(recorded, html_report_is_written)
{
	struct stat st;

	if (access(REC, F_OK))
		SKIP(return, "no recording");
	ASSERT_EQ(0, capture(TAILOR " report -i " REC " -d " DICT " --html /tmp/trt.html 2>&1",
			     self->out, sizeof(self->out)));
	ASSERT_EQ(0, stat("/tmp/trt.html", &st));
	EXPECT_LT(2000, st.st_size);
	unlink("/tmp/trt.html");
}

/* The samples column summed over a report's CSV rows. */
static double total_samples(const char *csv)
{
	const char *p = strchr(csv, '\n');
	double sum = 0;

	while (p && *++p) {
		const char *c = strchr(p, ',');

		if (c && (c = strchr(c + 1, ',')))
			sum += atof(c + 1);
		p = strchr(p, '\n');
	}
	return sum > 0 ? sum : 1;
}

/* perf report's share of symbol @sym ("  45.81%  [.] ht_probe"), or -1. */
static double perf_share(const char *out, const char *sym)
{
	const char *p = strstr(out, sym);

	while (p && p > out && p[-1] != '\n')
		p--;
	return p ? atof(p) : -1;
}

/*
 * perf's own recording gets a tailored report too, and it agrees with
 * perf: every function here is one operator, so each operator's share
 * must be perf report's share of its function (a fixed period makes
 * perf's period-weighted shares sample counts).
 */
TEST(perf_data_with_intr_regs)
{
	char out[16384], perf_out[16384];
	double tolerance;

	if (access(PERF, X_OK) || access(TAILOR, X_OK))
		SKIP(return, "needs %s and %s", PERF, TAILOR);
	ASSERT_EQ(0, capture(PERF " record -q -e cpu-clock -c 1000000 --intr-regs=r15 -o " PERF_DATA
			     " -- " TW_OPS " --dict " DICT ".perf --times " TIMES ".perf " WORK_SCAN " " WORK_JOIN " " WORK_AGG
			     " 2>&1", out, sizeof(out))) TH_LOG("%s", out);
	ASSERT_EQ(0, capture(TAILOR " report -f csv -i " PERF_DATA " -d " DICT ".perf", out,
			     sizeof(out)));
	ASSERT_EQ(0, capture(PERF " report -q --stdio --sort sym -i " PERF_DATA " 2>&1",
			     perf_out, sizeof(perf_out)));
	TH_LOG("tailor:\n%s\nperf report:\n%s", out, perf_out);
	expect_split(_metadata, out, TIMES ".perf");
	/*
	 * Within 3 samples: in the box perf report has counted
	 * one op_scan sample fewer than tailor read from the same file
	 * (cause not found: natively they are equal; perf's warnings are logged).
	 */
	tolerance = 300.0 / total_samples(out) + 0.01;
	EXPECT_TRUE(fabs(share_of(out, "scan") - perf_share(perf_out, "op_scan")) < tolerance);
	EXPECT_TRUE(fabs(share_of(out, "join") - perf_share(perf_out, "ht_probe")) < tolerance);
	EXPECT_TRUE(fabs(share_of(out, "agg") - perf_share(perf_out, "rt_combine")) < tolerance);
	unlink(PERF_DATA);
}

/* The value of "@key=" in tw_jitcode's key=value output, or 0. */
static double value_of(const char *out, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\n%s=", key);
	if (!strncmp(out, pat + 1, strlen(pat + 1)))
		return atof(out + strlen(pat + 1));
	p = strstr(out, pat);
	return p ? atof(p + strlen(pat)) : 0;
}

/*
 * JIT code named from the recording alone.  tw_jitcode JITs five
 * functions into anonymous memory (one moved, two at one address in
 * turn) and describes them in a jitdump -- with TSC times (-t), then
 * with CLOCK_MONOTONIC ones, which the report converts through the
 * META's pair of readings -- and a perf map.  tailor record keeps both
 * in the recording; with the files deleted, the report names every
 * function with the share of their CPU time tw_jitcode measured, within
 * 5 points, as the operators above: 'second' included, which only the
 * dump's times tell from 'first'.
 */
TEST(jit_code_named_from_the_recording)
{
	static const char *const clock_flags[] = { "-t", "" };
	static const char *const names[] = { "hot", "cold", "first", "second", "mover" };
	char out[16384], csv[16384], cmd[512];
	size_t c, i;
	double total;

	if (access(TAILOR, X_OK) || access(TW_JITCODE, X_OK))
		SKIP(return, "needs %s and %s", TAILOR, TW_JITCODE);
	for (c = 0; c < 2; c++) {
		double cpu[5], sum_cpu = 0, sum_share = 0, share[5], jit_samples = 0;
		int pid;

		/*
		 * -n 20: about 3000 JIT samples at the default rate, so that
		 * sampling's own error (binomial: 0.9 points for a third of them)
		 * stays well inside 5 points.  With -n 3 (about 450 samples, 2.2
		 * points) the debug box once saw 'hot' 5.2 points off.
		 */
		snprintf(cmd, sizeof(cmd), TAILOR " record -q -o " JIT_REC " -- " TW_JITCODE
			 " -d /tmp -n 20 -m -r %s 2>&1", clock_flags[c]);
		ASSERT_EQ(0, capture(cmd, out, sizeof(out))) TH_LOG("%s", out);
		pid = (int)value_of(out, "pid");
		ASSERT_GT(pid, 0) TH_LOG("%s", out);
		snprintf(cmd, sizeof(cmd), "rm /tmp/jit-%d.dump /tmp/perf-%d.map", pid, pid);
		ASSERT_EQ(0, system(cmd));
		ASSERT_EQ(0, capture(TAILOR " dump " JIT_REC, csv, sizeof(csv)));
		EXPECT_NE(NULL, strstr(csv, "carried: jitdump")) TH_LOG("%s", csv);
		EXPECT_NE(NULL, strstr(csv, "carried: perf-map")) TH_LOG("%s", csv);
		ASSERT_EQ(0, capture(TAILOR " report -l function -f csv -i " JIT_REC " 2>&1", csv,
				     sizeof(csv)));
		TH_LOG("timestamps %s; tw_jitcode said:\n%s\nreport:\n%s",
		       clock_flags[c][0] ? "tsc" : "mono", out, csv);
		total = total_samples(csv);
		for (i = 0; i < 5; i++) {
			snprintf(cmd, sizeof(cmd), "%s_cpu_ns", names[i]);
			cpu[i] = value_of(out, cmd);
			share[i] = share_of(csv, names[i]);
			sum_cpu += cpu[i];
			sum_share += share[i] > 0 ? share[i] : 0;
		}
		/*
		 * Enough JIT samples for 5 points (the debug kernel spends much
		 * of a run in itself: 59 % [kernel] there with -n 3).
		 */
		jit_samples = sum_share * total / 100;
		ASSERT_GT(jit_samples, 1500.0);
		TH_LOG("%.0f JIT samples of %.0f", jit_samples, total);
		for (i = 0; i < 5; i++) {
			double want = 100.0 * cpu[i] / sum_cpu;
			double got = 100.0 * share[i] / sum_share;

			TH_LOG("%s: %.1f%% of the JIT samples, %.1f%% of the CPU time", names[i], got,
			       want);
			EXPECT_SHARE_WITHIN(want, got, 5.0);
		}
	}
	unlink(JIT_REC);
}

TEST_HARNESS_MAIN

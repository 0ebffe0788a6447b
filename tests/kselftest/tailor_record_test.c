// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor record end to end, in the test box: launch, attach and all-CPU
 * modes on workloads with known threads; code dlopen'ed after start;
 * interrupted and killed recordings; exit statuses; every bad option and
 * environment failure with its message and exit code.  The recordings are
 * checked through 'tailor dump'.  Needs tailor.ko loaded and root.
 *
 * The same tests run against the BPF collector natively (tests/bpf/
 * bpf_record_test.sh): built with TAILOR_TEST_ROOT where tailor and the
 * workloads are, run with TAILOR_COLLECTOR=bpf, which tailor record takes
 * as its --collector.  Tests of the module itself, and those that change
 * the machine (a tmpfs mounted, a CPU taken offline), are the box's.
 */
#include <ctype.h>
#include <limits.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sched.h>
#include "tailor_util.h"
#include "kselftest_harness.h"

#ifndef TAILOR_TEST_ROOT
#define TAILOR_TEST_ROOT	"/tailor"
#endif
#define TAILOR		TAILOR_TEST_ROOT "/bin/tailor"
#define WL		TAILOR_TEST_ROOT "/workloads/"
/* Natively (TAILOR_TEST_ROOT given): not in the throwaway box. */
#define IN_BOX		(!strcmp(TAILOR_TEST_ROOT, "/tailor"))
#define OUT		"/tmp/tailor-record-test.rec"

struct run {
	int status;		/* exit code, or 128 + signal */
	char *out;		/* all of stdout (leaked: each test is a process) */
	char err[8192];
};

static char *slurp_all(const char *path)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) || !(buf = malloc(st.st_size + 1)))
		return strdup("");
	n = read(fd, buf, st.st_size);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	return buf;
}

static void slurp(const char *path, char *buf, size_t len)
{
	char *all = slurp_all(path);

	snprintf(buf, len, "%s", all);
	free(all);
}

/* Run @argv with output captured; @on_start (if any) runs with its pid. */
static void run_ex(struct run *r, char *const argv[],
		   void (*on_start)(pid_t pid, void *arg), void *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		int o = open("/tmp/trt.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open("/tmp/trt.err", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		dup2(e, 2);
		/*
		 * A shell's background job (CI's) ignores SIGINT, and an
		 * ignored signal stays ignored across exec: tailor and the
		 * command it launches get the defaults a terminal gives.
		 */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execv(argv[0], argv);
		_exit(126);
	}
	if (on_start)
		on_start(pid, arg);
	r->status = wait_exit_code(pid);
	r->out = slurp_all("/tmp/trt.out");
	slurp("/tmp/trt.err", r->err, sizeof(r->err));
}

static void run(struct run *r, char *const argv[])
{
	run_ex(r, argv, NULL, NULL);
}

/* The value of "key: value" in dump output, or NULL. */
static const char *field_or_null(const char *out, const char *key, char *buf,
				 size_t len)
{
	size_t klen = strlen(key);
	const char *p = out;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':' && p[klen + 1] == ' ') {
			size_t n = strcspn(p + klen + 2, "\n");

			snprintf(buf, len, "%.*s", (int)n, p + klen + 2);
			return buf;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

#define ABSENT	"(absent)"

static const char *field(const char *out, const char *key, char *buf,
			 size_t len)
{
	const char *v = field_or_null(out, key, buf, len);

	return v ? v : ABSENT;
}

static long long field_ll(const char *out, const char *key)
{
	char buf[256];

	return field_or_null(out, key, buf, sizeof(buf)) ? atoll(buf) : -1;
}

/* Run @argv as the unprivileged test user: its exit code and stderr. */
static void run_as_test_user_cmd(struct run *r, char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int e = open("/tmp/trt.user.err", O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (e < 0 || drop_root_to_test_user())
			_exit(100);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(126);
	}
	r->status = pid < 0 ? -1 : wait_exit_code(pid);
	slurp("/tmp/trt.user.err", r->err, sizeof(r->err));
}

static void dump(struct run *d, const char *extra)
{
	char *argv[] = { TAILOR, "dump", (char *)extra, OUT, NULL };

	if (!extra) {
		argv[2] = OUT;
		argv[3] = NULL;
	}
	run(d, argv);
}

/* SIGKILL every process called @comm (the box's busybox has no pkill). */
static void kill_by_name(const char *comm)
{
	struct dirent *e;
	DIR *dir = opendir("/proc");
	char path[300], name[64];

	while (dir && (e = readdir(dir)) != NULL) {
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			kill(atoi(e->d_name), SIGKILL);
		fclose(f);
	}
	if (dir)
		closedir(dir);
}

/* The BPF collector, as TAILOR_COLLECTOR=bpf has tailor record use. */
static bool bpf_collector(void)
{
	const char *c = getenv("TAILOR_COLLECTOR");

	return c && !strcmp(c, "bpf");
}

static void skip_unless_ready(struct __test_metadata *_metadata)
{
	if (access(TAILOR, X_OK) || (!bpf_collector() && access(TAILOR_DEVICE, F_OK)))
		SKIP(return, "needs %s and tailor.ko loaded (or TAILOR_COLLECTOR=bpf)", TAILOR);
}

/* A test of tailor.ko, or one that changes the machine: the box's only. */
#define SKIP_UNLESS_MODULE_IN_BOX()						\
	do {									\
		if (bpf_collector() || !IN_BOX)					\
			SKIP(return, "tailor.ko's, in the test box");		\
	} while (0)

TEST(launch_single_thread)
{
	char *argv[] = { TAILOR, "record", "-o", OUT, "-F", "1000", "--",
			 WL "tw_spin", "400", "1", "0", NULL };
	struct tailor_info info;
	struct run r, d;
	char buf[256];

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	/* The summary names what was recorded and what it cost. */
	ASSERT_NE(NULL, strstr(r.err, "samples in"));
	ASSERT_NE(NULL, strstr(r.err, "bytes per sample"));
	dump(&d, "--mmaps");
	ASSERT_EQ(0, d.status) TH_LOG("dump: %s", d.out);
	ASSERT_STREQ("complete", field(d.out, "status", buf, sizeof(buf)));
	ASSERT_STREQ("target-exited", field(d.out, "end.reason", buf, sizeof(buf)));
	ASSERT_STREQ("timer", field(d.out, "meta.source_used", buf, sizeof(buf)));
	/* r15, and rip where the module offers the entry IP (BPF does). */
	if (!bpf_collector())
		ASSERT_EQ(0, tailor_info(&info));
	ASSERT_STREQ(bpf_collector() || (info.caps & TAILOR_CAP_ENTRY_IP) ? "0x800100" : "0x800000",
		     field(d.out, "meta.regs_mask", buf, sizeof(buf)));
	ASSERT_STREQ(bpf_collector() ? "bpf" : "tailor.ko",
		     field(d.out, "meta.collector", buf, sizeof(buf)));
	ASSERT_STREQ(bpf_collector() ? "monotonic" : "tsc",
		     field(d.out, "meta.clock", buf, sizeof(buf)));
	ASSERT_STRNE(ABSENT, field(d.out, "meta.cpu_model", buf, sizeof(buf)));
	ASSERT_LT(0, field_ll(d.out, "meta.tsc_khz_measured"));
	ASSERT_LE(150, field_ll(d.out, "samples"));
	ASSERT_EQ(1, field_ll(d.out, "threads"));
	ASSERT_EQ(0, field_ll(d.out, "end.lost"));
	ASSERT_EQ(field_ll(d.out, "end.produced"), field_ll(d.out, "end.delivered"));
	/* Delivered: the samples, and tailor.ko's switch and wakeup records. */
	ASSERT_EQ(field_ll(d.out, "samples") + field_ll(d.out, "end.events"),
		  field_ll(d.out, "end.delivered"));
	/* The launched binary's own mapping, seen as it was exec'd. */
	ASSERT_NE(NULL, strstr(d.out, "path=" WL "tw_spin"));
}

TEST(launch_multi_thread_and_exit_status)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", WL "tw_spin",
			 "300", "4", "7", NULL };
	struct run r, d;

	skip_unless_ready(_metadata);
	run(&r, argv);
	/* tailor record returns the command's exit status. */
	ASSERT_EQ(7, r.status) TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, strlen(r.err)) TH_LOG("-q printed: %s", r.err);
	dump(&d, NULL);
	ASSERT_EQ(0, d.status);
	ASSERT_EQ(4, field_ll(d.out, "threads")) TH_LOG("%s", d.out);
	ASSERT_EQ(7, field_ll(d.out, "end.exit_status"));
	/*
	 * Four threads on two CPUs: the recorder marks rounds, and a report
	 * merging the CPUs' batches by them finds nothing out of order.
	 */
	ASSERT_LE(2, field_ll(d.out, "rounds")) TH_LOG("%s", d.out);
	{
		char *report[] = { TAILOR, "report", "-l", "function", "-f", "folded", OUT, NULL };
		struct run rep;

		run(&rep, report);
		ASSERT_EQ(0, rep.status) TH_LOG("report: %s", rep.err);
		ASSERT_EQ(NULL, strstr(rep.err, "came after later ones")) TH_LOG("%s", rep.err);
		ASSERT_NE(NULL, strstr(rep.out, "spin")) TH_LOG("%s", rep.out);
	}
}

TEST(command_not_found)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--",
			 "/nonexistent/engine", NULL };
	struct run r;

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(127, r.status);
	ASSERT_NE(NULL, strstr(r.err, "cannot run '/nonexistent/engine'")) TH_LOG("%s", r.err);
}

TEST(dlopen_after_start_is_mapped_and_sampled)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "-F", "1000", "--",
			 WL "tw_dlopen", WL "libtw_jit.so", "500", NULL };
	unsigned long long lo = 0, hi = 0, ip, rip;
	size_t inside = 0, total = 0, user = 0;
	char buf[256];
	bool with_rip;
	struct run r, dd, *d = &dd;
	const char *p;

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	{
		char *dargv[] = { TAILOR, "dump", "--mmaps", "--samples", "1000000",
				  OUT, NULL };

		run(d, dargv);
	}
	/* The mapping made 200 ms after start is in the recording... */
	for (p = strstr(d->out, "mmap: "); p; p = strstr(p + 1, "mmap: ")) {
		const char *nl = strchr(p, '\n');
		const char *path = strstr(p, "path=");

		if (path && (!nl || path < nl) && strstr(path, "libtw_jit.so") &&
		    (!nl || strstr(path, "libtw_jit.so") < nl) &&
		    sscanf(p, "mmap: pid=%*u start=%llx end=%llx", &lo, &hi) == 2)
			break;
	}
	ASSERT_LT(0, hi) TH_LOG("no mapping of libtw_jit.so in:\n%.4000s", d->out);
	/* ...and the samples of its code fall inside it. */
	/* rip where record asked for it (the software clock, kernel samples). */
	with_rip = strtoull(field(d->out, "meta.regs_mask", buf, sizeof(buf)), NULL, 16) >>
		   TAILOR_REG_IP & 1;
	for (p = strstr(d->out, "sample: "); p; p = strstr(p + 1, "sample: ")) {
		const char *nl = strchr(p, '\n'), *regs;
		unsigned int flags;

		if (sscanf(p, "sample: tsc=%*u ip=%llx pid=%*u tid=%*u cpu=%*u flags=%x",
			   &ip, &flags) != 2)
			continue;
		total++;
		inside += ip >= lo && ip < hi;
		/* Registers by name; a user sample's rip is its ip. */
		regs = strstr(p, " r15=0x");
		ASSERT_TRUE(regs && (!nl || regs < nl)) TH_LOG("no r15 in: %.200s", p);
		if (!with_rip || (flags & TAILOR_SF_KERNEL))
			continue;
		regs = strstr(p, " rip=0x");
		ASSERT_TRUE(regs && (!nl || regs < nl)) TH_LOG("no rip in: %.200s", p);
		ASSERT_EQ(1, sscanf(regs, " rip=%llx", &rip));
		ASSERT_EQ(ip, rip);
		user++;
	}
	if (with_rip)
		ASSERT_LE(100, user);
	TH_LOG("%zu of %zu samples inside libtw_jit.so [%llx, %llx)", inside,
	       total, lo, hi);
	ASSERT_LE(100, inside);
}

/*
 * Signal the recorder once its file holds samples, not after a fixed
 * delay: on the KASAN kernel under TCG, start-up alone can take longer
 * than any delay that keeps the test short elsewhere.  The live file is
 * read with 'tailor dump', which stops at the last complete record.
 */
static void send_once_sampled(pid_t pid, void *arg)
{
	uint64_t deadline = now_ns() + 30000000000ull;
	char line[256];

	while (now_ns() < deadline) {
		FILE *f = popen(TAILOR " dump " OUT " 2>/dev/null", "r");
		long long samples = 0;

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "samples: ", 9))
				samples = atoll(line + 9);
		if (f)
			pclose(f);
		if (samples > 0)
			break;
		usleep(100000);
	}
	kill(pid, *(int *)arg);
}

/* Stops the collector for 300 ms once it has written samples: its rings fill. */
static void stall_once_sampled(pid_t pid, void *arg)
{
	int sig = SIGSTOP;

	(void)arg;
	send_once_sampled(pid, &sig);
	usleep(300000);
	kill(pid, SIGCONT);
}

/*
 * A reader that falls behind: tailor record stopped for 300 ms with rings
 * of 64 records while a thread spins at 4 kHz.  The rings fill and the
 * rest is lost, every sample counted: produced = delivered + lost, and
 * delivered is what the recording holds.
 */
TEST(a_stalled_reader_loses_and_counts)
{
	char *argv[] = { TAILOR, "record", "-q", "--ring-records", "64", "--no-switches",
			 "-o", OUT, "--", WL "tw_spin", "1500", "1", "0", NULL };
	struct run r, d;

	skip_unless_ready(_metadata);
	unlink(OUT);
	run_ex(&r, argv, stall_once_sampled, NULL);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, NULL);
	ASSERT_EQ(0, d.status);
	TH_LOG("produced %lld, delivered %lld, lost %lld", field_ll(d.out, "end.produced"),
	       field_ll(d.out, "end.delivered"), field_ll(d.out, "end.lost"));
	/* 300 ms at 4 kHz against 64 slots: most of them lost. */
	EXPECT_LT(500, field_ll(d.out, "end.lost"));
	EXPECT_EQ(field_ll(d.out, "end.produced"),
		  field_ll(d.out, "end.delivered") + field_ll(d.out, "end.lost"));
	EXPECT_EQ(field_ll(d.out, "samples") + field_ll(d.out, "end.events"),
		  field_ll(d.out, "end.delivered"));
	/* The recording says how many were lost, and what to do. */
	EXPECT_NE(NULL, strstr(r.err, "records were lost")) TH_LOG("%s", r.err);
}

TEST(sigint_leaves_a_complete_file)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", WL "tw_spin",
			 "20000", "1", "0", NULL };
	int sig = SIGINT;
	struct run r, d;
	char buf[256];

	skip_unless_ready(_metadata);
	unlink(OUT);	/* an older file's samples must not count */
	run_ex(&r, argv, send_once_sampled, &sig);
	/* The signal went on to the command, whose status tailor returns. */
	ASSERT_EQ(128 + SIGINT, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, NULL);
	ASSERT_EQ(0, d.status) TH_LOG("%s", d.out);
	ASSERT_STREQ("signal SIGINT", field(d.out, "end.reason", buf, sizeof(buf)));
	ASSERT_LT(0, field_ll(d.out, "samples"));
}

/* The first child of @parent, from /proc/<pid>/stat; 0 if none. */
static pid_t child_of(pid_t parent)
{
	struct dirent *d;
	pid_t found = 0;
	DIR *dir = opendir("/proc");

	while (dir && !found && (d = readdir(dir))) {
		char path[300], line[512], *rp;
		int ppid, fd;
		ssize_t n;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, line, sizeof(line) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		line[n] = 0;
		/* pid (comm) state ppid: comm may hold spaces and ')' */
		rp = strrchr(line, ')');
		if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == parent)
			found = atoi(d->d_name);
	}
	if (dir)
		closedir(dir);
	return found;
}

static void kill_child_of(pid_t pid, void *arg)
{
	pid_t child = 0;
	int tries;

	(void)arg;
	for (tries = 0; tries < 100 && !child; tries++) {
		usleep(50000);
		child = child_of(pid);
	}
	usleep(500000);
	if (child > 0)
		kill(child, SIGKILL);
}

TEST(killed_target_is_said)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", WL "tw_spin",
			 "20000", "2", "0", NULL };
	struct run r, d;
	char buf[256];

	skip_unless_ready(_metadata);
	run_ex(&r, argv, kill_child_of, NULL);
	ASSERT_EQ(128 + SIGKILL, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, NULL);
	ASSERT_EQ(0, d.status) TH_LOG("%s", d.out);
	ASSERT_STREQ("target-exited", field(d.out, "end.reason", buf, sizeof(buf)));
	ASSERT_EQ(128 + SIGKILL, field_ll(d.out, "end.exit_status"));
	ASSERT_LT(0, field_ll(d.out, "samples"));
}

TEST(killed_collector_leaves_a_readable_cut_file)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", WL "tw_spin",
			 "3000", "1", "0", NULL };
	int sig = SIGKILL;
	struct run r, d;
	char buf[512];

	skip_unless_ready(_metadata);
	unlink(OUT);	/* an older file's samples must not count */
	run_ex(&r, argv, send_once_sampled, &sig);
	ASSERT_EQ(128 + SIGKILL, r.status);
	dump(&d, NULL);
	/* Readable up to the last complete record, and says it is cut. */
	ASSERT_EQ(3, d.status) TH_LOG("%s", d.out);
	ASSERT_STRNE(ABSENT, field(d.out, "status", buf, sizeof(buf)));
	ASSERT_EQ(0, strncmp(buf, "cut short", 9)) TH_LOG("status: %s", buf);
	ASSERT_LT(0, field_ll(d.out, "samples"));
	ASSERT_STRNE(ABSENT, field(d.out, "meta.event", buf, sizeof(buf)));
	/* The orphaned command is still burning CPU: stop it. */
	kill_by_name("tw_spin");
}

/*
 * --tag-word SYMBOL: the offset found in the executable's symbols is the
 * one the program sees, and every sample in its loop carries the query
 * id the thread stored, which the loop also holds in r15.
 */
TEST(tag_word_from_the_executables_symbol)
{
	char *argv[] = { TAILOR, "record", "-q", "--tag-word", "tailor_tag_word",
			 "-o", OUT, "--", WL "tw_tagword", "600", "2", NULL };
	char *dargv[] = { TAILOR, "dump", "--samples", "100000", OUT, NULL };
	char *bad[] = { TAILOR, "record", "-q", "--tag-word", "no_such_word",
			"-o", OUT, "--", WL "tw_tagword", "10", "1", NULL };
	struct run r, d;
	char buf[256], want[64];
	const char *p;
	long in_loop = 0, agree = 0;

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	/* What the program printed: its own view of the offset. */
	ASSERT_NE(NULL, strstr(r.out, "tag_word_offset=")) TH_LOG("%s", r.out);
	snprintf(want, sizeof(want), "%lld",
		 atoll(strstr(r.out, "tag_word_offset=") + 16));
	run(&d, dargv);
	ASSERT_EQ(0, d.status) TH_LOG("%s", d.err);
	ASSERT_STREQ(want, field(d.out, "meta.tag_word_offset", buf, sizeof(buf)));
	ASSERT_STREQ("symbol tailor_tag_word", field(d.out, "meta.tag_word_from", buf, sizeof(buf)));
	ASSERT_EQ(0, field_ll(d.out, "tag_word_unreadable"));
	for (p = d.out; (p = strstr(p, "\nsample: ")) != NULL; p++) {
		const char *r15 = strstr(p, " r15=0x"), *w = strstr(p, " tag_word=0x");
		const char *eol = strchr(p + 1, '\n');
		unsigned long long a, b;

		if (!r15 || !w || (eol && (r15 > eol || w > eol)))
			continue;
		a = strtoull(r15 + 7, NULL, 16);
		b = strtoull(w + 12, NULL, 16);
		/* tw_tagword's query ids; elsewhere r15 is libc's. */
		if (a < 0x7a9001 || a > 0x7a9003)
			continue;
		in_loop++;
		agree += a == b;
	}
	TH_LOG("%ld samples in query code, %ld with the right word", in_loop, agree);
	ASSERT_LE(200, in_loop);
	ASSERT_EQ(in_loop, agree);

	run(&r, bad);
	ASSERT_EQ(1, r.status);
	ASSERT_NE(NULL, strstr(r.err, "defines no thread-local symbol 'no_such_word'"))
		TH_LOG("%s", r.err);
}

/*
 * A recording's samples against tw_otel's truth: those in a span's phase
 * (VALID_CODE in r15) carry exactly their thread's trace id and the
 * phase's span id, those in a phase without a context none.  The
 * samples of each, in @in_span and @none[1..3].
 */
static void check_otel_samples(struct __test_metadata *_metadata, const char *out,
			       long *in_span, long none[4])
{
	long right = 0, wrong = 0, threads;
	bool thread_seen[2] = { false, false };
	const char *p;

	*in_span = 0;
	memset(none, 0, 4 * sizeof(*none));
	for (p = out; (p = strstr(p, "\nsample: ")) != NULL; p++) {
		const char *eol = strchr(p + 1, '\n'), *r15 = strstr(p, " r15=0x");
		const char *trace = strstr(p, " otel_trace="), *span = strstr(p, " otel_span=");
		const char *no = strstr(p, " otel=none");
		unsigned long long code, t, ph;
		char expect_trace[40], expect_span[24];

		if (!eol)
			eol = p + strlen(p);
		if (!r15 || r15 > eol)
			continue;
		if (trace > eol)
			trace = NULL;
		if (span > eol)
			span = NULL;
		if (no > eol)
			no = NULL;
		code = strtoull(r15 + 7, NULL, 16);
		if ((code >> 36) == 0x7e2 && (code & 0xfffffffffull) <= 3) {
			none[code & 3]++;
			wrong += !no;
			continue;
		}
		if ((code >> 36) != 0x7e1)
			continue;	/* outside the loop: libc's r15 */
		t = (code >> 24) & 0xff;
		ph = code & 0xffffff;
		if (t < 2)
			thread_seen[t] = true;
		(*in_span)++;
		snprintf(expect_trace, sizeof(expect_trace),
			 "4bf92f3577b34da6a3ce929d0e0e47%02llx", t + 1);
		snprintf(expect_span, sizeof(expect_span), "5370616e%02llx%06llx", t, ph);
		if (trace && span && !strncmp(trace + 12, expect_trace, 32) &&
		    !strncmp(span + 11, expect_span, 16))
			right++;
		else
			wrong++;
	}
	threads = thread_seen[0] + thread_seen[1];
	TH_LOG("%ld samples in spans, %ld with their span's ids; without a context: %ld NULL, %ld not valid, %ld unreadable; %ld wrong",
	       *in_span, right, none[1], none[2], none[3], wrong);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(*in_span, right);
	EXPECT_EQ(2, threads);
}

/*
 * OpenTelemetry's thread context (OTEP 4947): tw_otel publishes it in
 * four states, phase by phase, and holds a code for the state in r15.  A
 * sample in a span's phase must carry exactly that span's ids, from that
 * thread; one in a phase without a context (NULL pointer, a record not
 * valid, a pointer to a page no one may read) none at all.
 */
TEST(otel_thread_context_goes_with_each_sample)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", WL "tw_otel", "600", "2", NULL };
	char *dargv[] = { TAILOR, "dump", "--samples", "100000", OUT, NULL };
	struct run r, d;
	char buf[256], want[64];
	long in_span, none[4];

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	ASSERT_NE(NULL, strstr(r.out, "otel_ctx_offset=")) TH_LOG("%s", r.out);
	snprintf(want, sizeof(want), "%lld", atoll(strstr(r.out, "otel_ctx_offset=") + 16));
	run(&d, dargv);
	ASSERT_EQ(0, d.status) TH_LOG("%s", d.err);
	ASSERT_STREQ("symbol otel_thread_ctx_v1", field(d.out, "meta.otel_ctx", buf, sizeof(buf)));
	ASSERT_STREQ(want, field(d.out, "meta.otel_ctx_offset", buf, sizeof(buf)));
	check_otel_samples(_metadata, d.out, &in_span, none);
	ASSERT_LE(100, in_span);
	ASSERT_LE(50, none[1]);
	ASSERT_LE(50, none[2]);
	ASSERT_LE(50, none[3]);
	/* And a few outside the loop, where the span is still published. */
	ASSERT_LE(in_span, field_ll(d.out, "otel_context"));
}

/*
 * Process @path ("MS THREADS" 8000 2) started, its line "otel_ctx_offset=N"
 * read (so its library is loaded and its threads about to run): its pid,
 * the offset in @offset.
 */
static pid_t start_otel_workload(const char *path, long long *offset)
{
	char line[128];
	int fds[2];
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(path, path, "8000", "2", NULL);
		_exit(126);
	}
	close(fds[1]);
	n = pid > 0 ? read(fds[0], line, sizeof(line) - 1) : -1;
	close(fds[0]);
	line[n > 0 ? n : 0] = 0;
	*offset = strstr(line, "otel_ctx_offset=") ? atoll(strstr(line, "=") + 1) : 1;
	return pid;
}

/*
 * @path started (start_otel_workload()), recorded by @argv, whose "-p"
 * argument is @pidbuf, then killed: @r the recording's run.  -1 if the
 * workload did not start.
 */
static int record_otel_workload(const char *path, char *pidbuf, char **argv, struct run *r,
				long long *offset)
{
	pid_t victim = start_otel_workload(path, offset);

	if (victim <= 0)
		return -1;
	snprintf(pidbuf, 16, "%d", victim);
	run(r, argv);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	return 0;
}

/*
 * The pointer in a shared library, read through the GOT entry its code
 * reaches it by (TLSDESC: OTEP 4947's recommendation), in a running
 * process (-p); through __tls_get_addr it is named and not read, the
 * recording made all the same.
 */
TEST(otel_thread_context_in_a_library_of_a_running_process)
{
	char pidbuf[16];
	char *argv[] = { TAILOR, "record", "-o", OUT, "--duration", IN_BOX ? "3" : "1",
			 "-p", pidbuf, NULL };
	char *dargv[] = { TAILOR, "dump", "--samples", "1000000", OUT, NULL };
	struct run r, d;
	char buf[256], want[64];
	long long offset;
	long in_span, none[4];

	skip_unless_ready(_metadata);
	ASSERT_EQ(0, record_otel_workload(WL "tw_otel_lib", pidbuf, argv, &r, &offset));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	ASSERT_GT(0, offset);
	snprintf(want, sizeof(want), "%lld", offset);
	run(&d, dargv);
	ASSERT_EQ(0, d.status) TH_LOG("%s", d.err);
	ASSERT_STREQ("symbol otel_thread_ctx_v1", field(d.out, "meta.otel_ctx", buf, sizeof(buf)));
	ASSERT_STREQ(want, field(d.out, "meta.otel_ctx_offset", buf, sizeof(buf)));
	check_otel_samples(_metadata, d.out, &in_span, none);
	ASSERT_LE(100, in_span);
	ASSERT_LE(30, none[1] + none[2] + none[3]);

	ASSERT_EQ(0, record_otel_workload(WL "tw_otel_gnu", pidbuf, argv, &r, &offset));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	ASSERT_NE(NULL, strstr(r.err, "reads 'otel_thread_ctx_v1' through __tls_get_addr"))
		TH_LOG("%s", r.err);
	run(&d, dargv);
	ASSERT_STREQ("none", field(d.out, "meta.otel_ctx", buf, sizeof(buf)));
}

/*
 * tailor record in a pid namespace of its own (a container's): the
 * target's pid is that namespace's, and so must be every record's and
 * the processes followed.  tw_tagword there is sampled under its pid
 * there, its tag word read; a shell's child, tw_spin, is followed under
 * its own.  The BPF collector sampled nothing here before it took its
 * ids from the recorder's namespace.
 */
TEST(a_recorder_in_its_own_pid_namespace)
{
	char *argv[] = { "/usr/bin/unshare", "--pid", "--fork", "--mount-proc", TAILOR, "record", "-q",
			 "--tag-word", "tailor_tag_word", "-o", OUT, "--", WL "tw_tagword", "300", "2",
			 NULL };
	char *child[] = { "/usr/bin/unshare", "--pid", "--fork", "--mount-proc", TAILOR, "record", "-q",
			  "-o", OUT, "--", "sh", "-c", WL "tw_spin 300 1 0; true", NULL };
	struct run r, d;
	char buf[64];
	long long pid, samples, in_loop = 0, agree = 0, by_child = 0;
	const char *p;

	skip_unless_ready(_metadata);
	if (system("/usr/bin/unshare --pid --fork --mount-proc true 2>/dev/null"))
		SKIP(return, "no /usr/bin/unshare (util-linux) that makes a pid namespace here");
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, "--samples=1000000");
	ASSERT_EQ(0, d.status);
	pid = atoll(field(d.out, "meta.pid", buf, sizeof(buf)));
	samples = field_ll(d.out, "samples");
	/* The namespace's first processes: unshare's child, then the target. */
	EXPECT_GT(pid, 0);
	EXPECT_LT(pid, 100);
	EXPECT_EQ(0, field_ll(d.out, "tag_word_unreadable"));
	for (p = d.out; (p = strstr(p, "\nsample: ")) != NULL; p++) {
		const char *r15 = strstr(p, " r15=0x"), *w = strstr(p, " tag_word=0x");
		const char *eol = strchr(p + 1, '\n');
		unsigned long long a;

		if (!r15 || !w || (eol && (r15 > eol || w > eol)))
			continue;
		a = strtoull(r15 + 7, NULL, 16);
		if (a < 0x7a9001 || a > 0x7a9003)
			continue;
		in_loop++;
		agree += a == strtoull(w + 12, NULL, 16);
		snprintf(buf, sizeof(buf), " pid=%lld ", pid);
		EXPECT_EQ(0, strncmp(strstr(p, " pid="), buf, strlen(buf)));
	}
	TH_LOG("pid %lld: %lld samples, %lld in query code, %lld with the right word",
	       pid, samples, in_loop, agree);
	EXPECT_LE(200, in_loop);
	EXPECT_EQ(in_loop, agree);

	/* A child the shell forks: followed, under its own pid there. */
	run(&r, child);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, "--samples=1000000");
	ASSERT_EQ(0, d.status);
	pid = atoll(field(d.out, "meta.pid", buf, sizeof(buf)));
	for (p = d.out; (p = strstr(p, "\nsample: ")) != NULL; p++) {
		const char *at = strstr(p, " pid="), *r15 = strstr(p, " r15=0x1\n");
		const char *eol = strchr(p + 1, '\n');

		if (at && r15 && (!eol || r15 < eol) && atoll(at + 5) != pid &&
		    atoll(at + 5) < 100)
			by_child++;
	}
	TH_LOG("the shell %lld; %lld samples of its child in tw_spin's loop", pid, by_child);
	EXPECT_LE(100, by_child);
}

/*
 * A followed process whose main thread leaves first (pthread_exit) lives
 * on in its other threads, and so does its sampling: the BPF collector
 * once let go of a followed process at its leader's exit.
 */
TEST(a_child_whose_main_thread_leaves_first_is_still_sampled)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", "/bin/sh", "-c",
			 "TW_LEADER_EXITS=1 " WL "tw_spin 400 2 0; true", NULL };
	struct run r, d;
	const char *p;
	long spun = 0;

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, "--samples=1000000");
	ASSERT_EQ(0, d.status);
	/* tw_spin's second thread holds 2 in r15. */
	for (p = d.out; (p = strstr(p, " r15=0x2\n")) != NULL; p++)
		spun++;
	TH_LOG("%ld samples of the second thread, %lld in all", spun, field_ll(d.out, "samples"));
	/* 400 ms of its CPU time at the default 4 kHz: most of it sampled. */
	EXPECT_LE(IN_BOX ? 100 : 250, spun);
}

/* The first of the @n sorted @v at or after @t, or @n. */
static long first_at(const uint64_t *v, long n, uint64_t t)
{
	long lo = 0, hi = n;

	while (lo < hi) {
		long mid = (lo + hi) / 2;

		if (v[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Context switches: tw_switch sleeps 200 times, each sleep bracketed by
 * rdtscp before and after; the thread's switch out (blocked) and its
 * switch in must lie in the bracket, and no blocked out may lie between
 * brackets.  tailor.ko (ABI 5, meta sched_events_from=tailor.ko) stamps
 * a switch with the TSC in its scheduler probe, so every switch must lie
 * inside its bracket, with no slack at all.  Through perf's side-band
 * (an older module) on a stock kernel the switch times are perf times
 * converted to TSC (sideband_clock=perf); how far a switch falls outside
 * its bracket is the conversion error: goal under 5 us.  The tightest
 * brackets bound it from the other side; both are logged.  A sleep whose
 * timer fires before the thread is switched out has no switch at all.
 */
TEST(switches_fall_in_their_rdtsc_brackets)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", WL "tw_switch", "200", "300", NULL };
	char *dargv[] = { TAILOR, "dump", "--switches", OUT, NULL };
	struct run r, d;
	uint64_t b0[256], b1[256], outs[2048], ins[2048];
	long nb = 0, nout = 0, nin = 0, tid, k, i, found = 0, stray = 0;
	long long khz, slack, worst_out = LLONG_MAX, worst_in = LLONG_MAX;
	char buf[256];
	const char *p;
	bool exact;

	SKIP_UNLESS_MODULE_IN_BOX();
	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	ASSERT_NE(NULL, strstr(r.out, "tid=")) TH_LOG("%s", r.out);
	tid = atol(strstr(r.out, "tid=") + 4);
	for (p = r.out; (p = strstr(p, "bracket=")) != NULL && nb < 256; p++) {
		unsigned long long a, b;

		if (sscanf(p, "bracket=%llu,%llu", &a, &b) == 2) {
			b0[nb] = a;
			b1[nb++] = b;
		}
	}
	ASSERT_EQ(200, nb);
	run(&d, dargv);
	ASSERT_EQ(0, d.status) TH_LOG("%s", d.err);
	ASSERT_STREQ("recorded", field(d.out, "meta.switches", buf, sizeof(buf)));
	khz = field_ll(d.out, "meta.tsc_khz");
	ASSERT_LT(0, khz);
	slack = 5 * khz / 1000;		/* 5 us in TSC ticks */
	for (p = d.out; (p = strstr(p, "\nswitch: ")) != NULL; p++) {
		unsigned long long tsc;
		unsigned int pid, t, cpu;
		char how[32];

		if (sscanf(p, "\nswitch: tsc=%llu pid=%u tid=%u cpu=%u %31s", &tsc, &pid, &t,
			   &cpu, how) != 5 || (long)t != tid)
			continue;
		if (!strcmp(how, "out") && nout < 2048)
			outs[nout++] = tsc;
		else if (!strcmp(how, "in") && nin < 2048)
			ins[nin++] = tsc;
	}
	/* The file holds each CPU's records in turn. */
	qsort(outs, nout, sizeof(*outs), cmp_u64);
	qsort(ins, nin, sizeof(*ins), cmp_u64);
	exact = !strcmp(field(d.out, "meta.sched_events_from", buf, sizeof(buf)), "tailor.ko");
	TH_LOG("switches of tid %ld: %ld out blocked, %ld in; from %s", tid, nout, nin,
	       exact ? "tailor.ko" : field(d.out, "meta.sideband_clock", buf, sizeof(buf)));
	if (exact)
		slack = 0;
	/*
	 * Per bracket: its first blocked out (gap_out = out - t0) and the
	 * first in after that (gap_in = t1 - in); a negative gap is a switch
	 * outside its bracket.
	 */
	for (k = 0; k < nb; k++) {
		/* From the previous bracket's end: an early switch shows as a negative gap. */
		long o = first_at(outs, nout, k ? b1[k - 1] : 0), in;
		long long gap_out, gap_in;

		if (o == nout || outs[o] > b1[k] + slack)
			continue;
		in = first_at(ins, nin, outs[o]);
		ASSERT_LT(in, nin) TH_LOG("bracket %ld: no switch in after its out", k);
		gap_out = (long long)(outs[o] - b0[k]);
		gap_in = (long long)(b1[k] - ins[in]);
		if (gap_out < worst_out)
			worst_out = gap_out;
		if (gap_in < worst_in)
			worst_in = gap_in;
		found++;
	}
	/* A blocked out within the loop but in no bracket: far off, or not a sleep. */
	for (i = 0; i < nout; i++) {
		if (outs[i] < b0[0] || outs[i] > b1[nb - 1])
			continue;
		k = first_at(b0, nb, outs[i] + 1) - 1;
		if (k < 0 || outs[i] > b1[k] + slack)
			if (k + 1 >= nb || outs[i] + slack < b0[k + 1])
				stray++;
	}
	TH_LOG("%ld of %ld sleeps switched out (the others' timers fired first), %ld blocked outs between brackets",
	       found, nb, stray);
	ASSERT_LE(nb * 9 / 10, found);
	ASSERT_EQ(0, stray);
	/* A switch may be off by e with -worst_out <= e <= worst_in. */
	TH_LOG("%s bound: %.3f us <= e <= %.3f us (tightest brackets of %ld)",
	       exact ? "switch time error (none allowed outside the bracket)" : "conversion error",
	       -worst_out * 1000.0 / khz, worst_in * 1000.0 / khz, found);
	ASSERT_LE(-slack, worst_out);
	ASSERT_LE(-slack, worst_in);
}

/* The number after "@key=" in tw_lock's output, or -1. */
static long kv(const char *out, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", key);
	p = strstr(out, pat);
	return p ? atol(p + strlen(pat)) : -1;
}

/*
 * Wakeups: tw_lock's thread 1 blocks on the barrier or the mutex every
 * round and is woken by thread 0 (the unlock, the barrier's last
 * arrival).  The recording must hold WAKEUP records naming thread 1 and
 * its waker, on the switches' clock: each blocked stretch of thread 1 (a
 * switch out blocked to the next switch in) is ended by a wakeup after
 * the switch in before it, and most by one inside the stretch -- the
 * others were woken on their way to sleep, before the switch out (7 of
 * 77 in one run under TCG).  Wakeups on another clock would miss both.
 */
TEST(wakeups_fall_in_the_blocked_stretches_they_end)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--", WL "tw_lock", "-r", "40",
			 "-p", "2000", "-s", "2000", NULL };
	char *dargv[] = { TAILOR, "dump", "--switches", OUT, NULL };
	static uint64_t outs[4096], ins[4096], wakes[4096];
	long nout = 0, nin = 0, nwake = 0, by0 = 0, tid0, tid1, rounds, i, stretches = 0, ended = 0;
	long woken_before = 0;
	struct run r, d;
	char buf[256];
	const char *p;

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	tid0 = kv(r.out, "thread0_tid");
	tid1 = kv(r.out, "thread1_tid");
	rounds = kv(r.out, "rounds");
	ASSERT_LT(0, tid1) TH_LOG("%s", r.out);
	run(&d, dargv);
	ASSERT_EQ(0, d.status) TH_LOG("%s", d.err);
	ASSERT_STREQ("recorded", field(d.out, "meta.wakeups", buf, sizeof(buf)));
	for (p = d.out; (p = strchr(p, '\n')) != NULL; p++) {
		unsigned long long tsc;
		unsigned int pid, t, cpu, target;
		char how[32];

		if (sscanf(p, "\nswitch: tsc=%llu pid=%u tid=%u cpu=%u %31s", &tsc, &pid, &t,
			   &cpu, how) == 5 && (long)t == tid1) {
			if (!strcmp(how, "out") && nout < 4096)
				outs[nout++] = tsc;
			else if (!strcmp(how, "in") && nin < 4096)
				ins[nin++] = tsc;
		} else if (sscanf(p, "\nwakeup: tsc=%llu pid=%u tid=%u cpu=%u target_tid=%u",
				  &tsc, &pid, &t, &cpu, &target) == 5 && (long)target == tid1 &&
			   nwake < 4096) {
			wakes[nwake++] = tsc;
			by0 += (long)t == tid0;
		}
	}
	qsort(outs, nout, sizeof(*outs), cmp_u64);
	qsort(ins, nin, sizeof(*ins), cmp_u64);
	qsort(wakes, nwake, sizeof(*wakes), cmp_u64);
	/* Each blocked stretch: out, then the first in after it. */
	for (i = 0; i < nout; i++) {
		long in = first_at(ins, nin, outs[i]), w = first_at(wakes, nwake, outs[i]);
		/* The switch in before this out: the stretch of running it ends. */
		long prev_in = first_at(ins, nin, outs[i]) - 1;
		long w0 = prev_in >= 0 ? first_at(wakes, nwake, ins[prev_in] + 1) : 0;

		if (in == nin)
			continue;
		stretches++;
		if (w < nwake && wakes[w] <= ins[in])
			ended++;
		else if (w0 < nwake && wakes[w0] < outs[i])
			woken_before++;
	}
	TH_LOG("thread 1 (tid %ld): %ld wakeups (%ld by thread 0) in %ld rounds; of %ld blocked stretches %ld hold a wakeup, %ld were woken before the switch out; from %s",
	       tid1, nwake, by0, rounds, stretches, ended, woken_before,
	       field(d.out, "meta.sched_events_from", buf, sizeof(buf)));
	ASSERT_LE(rounds, nwake);
	ASSERT_LE(nwake * 9 / 10, by0);
	ASSERT_LE(rounds, stretches);
	ASSERT_LE(stretches * 2 / 3, ended);
	ASSERT_LE(stretches * 95 / 100, ended + woken_before);
}

/*
 * Packed, a 16-register sample of a spinning loop takes some 5 bytes:
 * 12000 of them (1.5 s, 2 threads, 4 kHz) overflow 16k, while the first
 * 100 ms (META, mappings, some 800 samples) fit, so samples come first.
 */
TEST(full_disk_cuts_cleanly_and_says_why)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", "/mnt/tiny/t.rec", "-F",
			 "4000", "--regs", "rax,rbx,rcx,rdx,rsi,rdi,rbp,rsp,r8,r9,r10,r11,r12,r13,r14,r15",
			 "--", WL "tw_spin", "1500", "2", "0", NULL };
	char *dargv[] = { TAILOR, "dump", "/mnt/tiny/t.rec", NULL };
	struct run r, d;
	char buf[512];

	SKIP_UNLESS_MODULE_IN_BOX();
	skip_unless_ready(_metadata);
	mkdir("/mnt", 0755);
	mkdir("/mnt/tiny", 0755);
	ASSERT_EQ(0, mount("tmpfs", "/mnt/tiny", "tmpfs", 0, "size=16k"));
	run(&r, argv);
	/* The command ran to its end; the recording reports the failure. */
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "No space left on device")) TH_LOG("%s", r.err);
	run(&d, dargv);
	umount("/mnt/tiny");
	ASSERT_NE(1, d.status) TH_LOG("%s", d.out);
	ASSERT_STRNE(ABSENT, field(d.out, "status", buf, sizeof(buf)));
	TH_LOG("status: %s; reason %s", buf, field(d.out, "end.reason", buf + 256, 256));
	ASSERT_LT(0, field_ll(d.out, "samples"));
	/* Either END made it (reason given) or the reader says cut short. */
	if (d.status == 0) {
		ASSERT_EQ(0, strncmp(buf + 256, "write-error No space left", 25));
	} else {
		ASSERT_EQ(0, strncmp(buf, "cut short", 9));
	}
}

TEST(attach_to_running_process)
{
	char pidbuf[16];
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--duration", "0.6",
			 "-p", pidbuf, NULL };
	struct run r, d;
	char buf[256];
	pid_t victim;

	skip_unless_ready(_metadata);
	victim = fork();
	ASSERT_LE(0, victim);
	if (victim == 0) {
		execl(WL "tw_spin", "tw_spin", "3000", "2", "0", NULL);
		_exit(126);
	}
	usleep(200000);
	snprintf(pidbuf, sizeof(pidbuf), "%d", victim);
	run(&r, argv);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, "--mmaps");
	ASSERT_EQ(0, d.status);
	ASSERT_STREQ("duration", field(d.out, "end.reason", buf, sizeof(buf)));
	ASSERT_STREQ("pid", field(d.out, "meta.target", buf, sizeof(buf)));
	ASSERT_EQ(2, field_ll(d.out, "threads")) TH_LOG("%s", d.out);
	/* Mappings that existed before attach come from /proc (time_kind 3). */
	ASSERT_NE(NULL, strstr(d.out, "time_kind=3 path=" WL "tw_spin"));
}

/*
 * A CPU that comes up while tailor record runs: tailor.ko gives the
 * session a ring there (ABI 8) and record maps it within a second.  CPU
 * 1 goes offline, the target spins on CPU 0 and, half a second into the
 * recording, CPU 1 comes back and the target moves there: its samples on
 * CPU 1 are in the recording and nothing is lost.
 */
TEST(a_cpu_that_comes_up_mid_recording_is_read)
{
	char pidbuf[16];
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "--duration", "2",
			 "-p", pidbuf, NULL };
	struct run r, d;
	cpu_set_t set;
	pid_t victim, mover;
	int err, status, on1;
	const char *p;

	/* It takes a CPU away: the box's only.  Both collectors. */
	if (!IN_BOX)
		SKIP(return, "takes CPU 1 offline: in the test box only");
	skip_unless_ready(_metadata);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU online: none to take away");
	err = set_cpu_online(1, false);
	if (err)
		SKIP(return, "cannot take CPU 1 offline: %s", strerror(-err));
	victim = fork();
	ASSERT_LE(0, victim);
	if (victim == 0) {
		execl(WL "tw_spin", "tw_spin", "4000", "1", "0", NULL);
		_exit(126);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", victim);
	unlink(OUT);
	mover = fork();
	ASSERT_LE(0, mover);
	if (mover == 0) {
		/* record creates its file once the rings it has are mapped. */
		for (int i = 0; i < 1000 && access(OUT, F_OK); i++)
			usleep(10000);
		usleep(300000);
		CPU_ZERO(&set);
		CPU_SET(1, &set);
		_exit(set_cpu_online(1, true) || sched_setaffinity(victim, sizeof(set), &set));
	}
	run(&r, argv);
	ASSERT_EQ(mover, waitpid(mover, &status, 0));
	EXPECT_EQ(0, set_cpu_online(1, true));
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, "--samples=1000000");
	ASSERT_EQ(0, d.status);
	for (on1 = 0, p = d.out; (p = strstr(p, " cpu=1 ")) != NULL; p++)
		on1++;
	/*
	 * Over a second on CPU 1 at 4 kHz; the box's timer gives fewer.
	 * tailor.ko makes the ring as the CPU comes up; the BPF collector
	 * at its next refresh, a second at most, the samples before it
	 * counted lost.
	 */
	EXPECT_LT(bpf_collector() ? 100 : 300, on1)
		TH_LOG("%lld samples, %d on CPU 1", field_ll(d.out, "samples"), on1);
	if (!bpf_collector())
		EXPECT_EQ(0, field_ll(d.out, "end.lost"));
	EXPECT_EQ(field_ll(d.out, "end.produced"),
		  field_ll(d.out, "end.delivered") + field_ll(d.out, "end.lost"));
	TH_LOG("lost %lld", field_ll(d.out, "end.lost"));
	TH_LOG("%lld samples, %d of them on CPU 1", field_ll(d.out, "samples"), on1);
}

/*
 * Every CPU, with a process that runs all along and never execs while
 * recorded: its samples are named by its name (the COMM records taken
 * from /proc at the start), as perf names a process it found running,
 * not ":PID".
 */
TEST(all_cpus)
{
	char *argv[] = { TAILOR, "record", "-q", "-a", "-o", OUT, "--duration",
			 "0.4", NULL };
	char *report[] = { TAILOR, "report", "-i", OUT, "-f", "csv", "--top", "0",
			   "-l", "function", NULL };
	char buf[256], unnamed[32];
	struct run r, d, rep;
	pid_t spinner;

	skip_unless_ready(_metadata);
	spinner = fork();
	ASSERT_LE(0, spinner);
	if (spinner == 0) {
		execl(WL "tw_spin", "tw_spin", "3000", "1", "0", NULL);
		_exit(126);
	}
	usleep(200000);
	run(&r, argv);
	run(&rep, report);
	kill(spinner, SIGKILL);
	waitpid(spinner, NULL, 0);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, NULL);
	ASSERT_EQ(0, d.status);
	ASSERT_STREQ("all-cpus", field(d.out, "meta.target", buf, sizeof(buf)));
	ASSERT_LT(0, field_ll(d.out, "samples"));
	ASSERT_LT(0, field_ll(d.out, "mmaps"));
	ASSERT_LT(0, field_ll(d.out, "comms"));
	ASSERT_EQ(0, rep.status) TH_LOG("stderr: %s", rep.err);
	snprintf(unnamed, sizeof(unnamed), ",:%d\n", spinner);
	EXPECT_NE(NULL, strstr(rep.out, ",tw_spin\n")) TH_LOG("%.4000s", rep.out);
	EXPECT_EQ(NULL, strstr(rep.out, unnamed)) TH_LOG("%.4000s", rep.out);
}

/*
 * tailor record stores its files' build-ids (a BUILD_IDS record): a report
 * made after the program was replaced by another build says so and leaves
 * its samples unnamed, one row [prog], instead of naming them from the
 * build now on disk (here tw_work's, copied over tw_spin's).
 */
TEST(a_program_replaced_since_is_said)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", OUT, "-F", "1000", "--",
			 "/tmp/tailor-record-bid/prog", "400", "1", "0", NULL };
	char *report[] = { TAILOR, "report", "-i", OUT, "-l", "function", "-f", "csv", NULL };
	struct run r, d, before, after;

	skip_unless_ready(_metadata);
	ASSERT_EQ(0, system("mkdir -p /tmp/tailor-record-bid && cp " WL "tw_spin /tmp/tailor-record-bid/prog"));
	run(&r, argv);
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	dump(&d, NULL);
	ASSERT_LE(1, field_ll(d.out, "build_ids")) TH_LOG("%s", d.out);
	run(&before, report);
	ASSERT_EQ(0, before.status) TH_LOG("stderr: %s", before.err);
	EXPECT_EQ(NULL, strstr(before.err, "another build"));
	EXPECT_EQ(NULL, strstr(before.out, "[prog],")) TH_LOG("%.2000s", before.out);
	ASSERT_EQ(0, system("cp " WL "tw_work /tmp/tailor-record-bid/prog"));
	run(&after, report);
	ASSERT_EQ(0, after.status) TH_LOG("stderr: %s", after.err);
	EXPECT_NE(NULL, strstr(after.err, "/tmp/tailor-record-bid/prog is another build now"))
		TH_LOG("%s", after.err);
	EXPECT_NE(NULL, strstr(after.out, "\n[prog],object,")) TH_LOG("%.2000s", after.out);
}

struct bad_run {
	const char *args[8];
	int status;
	const char *message;
};

static const struct bad_run bad_runs[] = {
	{ { "-c", "abc", "--", "true" }, 2, "invalid value 'abc' for -c/--period" },
	{ { "-F", "0", "--", "true" }, 2, "invalid value '0' for -F/--freq" },
	{ { "-F", "200000", "--", "true" }, 2, "-F/--freq" },
	{ { "-c", "5", "-F", "5", "--", "true" }, 2, "exclude each other" },
	{ { "--source", "gpu", "--", "true" }, 2, "'gpu' for --source" },
	{ { "--regs", "r99", "--", "true" }, 2, "unknown register 'r99'" },
	{ { "--filter", "some", "--", "true" }, 2, "'some' for --filter" },
	{ { "--precise", "4", "--", "true" }, 2, "'4' for --precise" },
	{ { "--duration", "-1", "--", "true" }, 2, "for --duration" },
	{ { "--bogus", "--", "true" }, 2, "unknown option '--bogus'" },
	{ { "-o" }, 2, "needs a value" },
	{ { "-q" }, 2, "say what to profile" },
	{ { "-p", "1", "-a" }, 2, "say what to profile" },
	{ { "-p", "0" }, 2, "-p/--pid" },
	{ { "-e", "INST_RETIRED.PREC_DIST", "--source", "pebs", "--", "true" }, 1,
	  "INST_RETIRED.PREC_DIST" },
	{ { "--source", "pebs", "--", "true" }, 1, "needs PEBS" },
	{ { "-o", "/nonexistent/dir/x.rec", "--", "true" }, 1,
	  "cannot create '/nonexistent/dir/x.rec'" },
	{ { "-p", "4194000" }, 1, "no process 4194000" },
	{ { "--source", "timer", "-c", "5000", "--", "true" }, 1,
	  "period is from 10000 ns (10 us) to 60000000000 ns (a minute), not 5000" },
	{ { "--source", "timer", "-c", "60000000001", "--", "true" }, 1, "not 60000000001" },
};

TEST(bad_options_and_failures_name_the_problem)
{
	size_t i, j;

	skip_unless_ready(_metadata);
	for (i = 0; i < sizeof(bad_runs) / sizeof(bad_runs[0]); i++) {
		char *argv[16] = { TAILOR, "record" };
		struct run r;

		for (j = 0; bad_runs[i].args[j]; j++)
			argv[2 + j] = (char *)bad_runs[i].args[j];
		run(&r, argv);
		EXPECT_EQ(bad_runs[i].status, r.status) {
			TH_LOG("case %zu (%s ...): stderr %s", i, bad_runs[i].args[0], r.err);
		}
		EXPECT_NE(NULL, strstr(r.err, bad_runs[i].message)) {
			TH_LOG("case %zu: expected '%s' in: %s", i, bad_runs[i].message, r.err);
		}
		/* One sentence: a single line. */
		EXPECT_EQ(strlen(r.err) - 1, strcspn(r.err, "\n")) {
			TH_LOG("case %zu: more than one line: %s", i, r.err);
		}
	}
}

TEST(help_documents_every_option)
{
	static const char *const opts[] = {
		"--event", "--period", "--freq", "--source", "--precise", "--regs",
		"--data-addr", "--filter", "--pid", "--all-cpus", "--output",
		"--duration", "--ring-records", "--quiet", "--help", "--call-graph",
	};
	char *argv[] = { TAILOR, "record", "--help", NULL };
	size_t i, missing = 0;
	struct run r;

	skip_unless_ready(_metadata);
	run(&r, argv);
	ASSERT_EQ(0, r.status);
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (!strstr(r.out, opts[i])) {
			TH_LOG("option %zu undocumented", i);
			missing++;
		}
	}
	ASSERT_EQ(0, missing);
}

TEST(no_permission_and_no_module)
{
	char *argv[] = { TAILOR, "record", "-q", "-o", "/tmp/x.rec", "--", "true", NULL };
	char *module_argv[] = { TAILOR, "record", "-q", "--collector", "module", "-o",
				"/tmp/x.rec", "--", "true", NULL };
	char *auto_argv[] = { TAILOR, "record", "-o", "/tmp/x.rec", "--", "true", NULL };
	struct run r, a;

	SKIP_UNLESS_MODULE_IN_BOX();
	skip_unless_ready(_metadata);
	/* Not root, no open_gid: the device refuses; tailor says what to do. */
	run_as_test_user_cmd(&r, argv);
	ASSERT_EQ(1, r.status);
	ASSERT_NE(NULL, strstr(r.err, "no permission to open /dev/tailor")) TH_LOG("%s", r.err);

	/*
	 * Module unloaded: asked for, tailor says how to load it; by default
	 * it records through the BPF collector instead (a kernel with BTF),
	 * and says so, or says why neither can be had.
	 */
	ASSERT_EQ(0, system("rmmod tailor"));
	run(&r, module_argv);
	run(&a, auto_argv);
	ASSERT_EQ(0, system("insmod /tailor/tailor.ko"));
	ASSERT_EQ(1, r.status);
	ASSERT_NE(NULL, strstr(r.err, "not loaded")) TH_LOG("%s", r.err);
	if (access("/sys/kernel/btf/vmlinux", F_OK)) {
		ASSERT_EQ(1, a.status);
		ASSERT_NE(NULL, strstr(a.err, "nothing to record with: tailor.ko is not loaded"))
			TH_LOG("%s", a.err);
	} else {
		ASSERT_EQ(0, a.status) TH_LOG("%s", a.err);
		ASSERT_NE(NULL, strstr(a.err, "recording with the BPF collector")) TH_LOG("%s", a.err);
	}
}

/* The BPF collector for a user without CAP_BPF and CAP_PERFMON: said. */
TEST(bpf_collector_refused_without_its_capabilities)
{
	char *argv[] = { TAILOR, "record", "-q", "--collector", "bpf", "-o", "/tmp/trt.user.rec",
			 "--", WL "tw_spin", "100", "1", "0", NULL };
	struct run r;

	if (access(TAILOR, X_OK) || access("/sys/kernel/btf/vmlinux", F_OK))
		SKIP(return, "needs %s and a kernel with BTF", TAILOR);
	run_as_test_user_cmd(&r, argv);
	ASSERT_EQ(1, r.status) TH_LOG("%s", r.err);
	ASSERT_NE(NULL, strstr(r.err, "CAP_BPF and CAP_PERFMON")) TH_LOG("%s", r.err);
}

/*
 * PEBS through the BPF collector is perf's precise event with the program
 * on it; a CPU without PEBS (every machine here) gets a message naming
 * what it lacks, not a software-clock recording in its place.
 */
TEST(bpf_pebs_where_the_cpu_has_none_is_refused_by_name)
{
	char out[4096];
	int rc;

	if (!bpf_collector() || access(TAILOR, X_OK))
		SKIP(return, "the BPF collector's (TAILOR_COLLECTOR=bpf), with %s", TAILOR);
	if (!system("grep -qw pebs /proc/cpuinfo"))
		SKIP(return, "this CPU has PEBS: tailor_pebs_test's to test");
	rc = capture(TAILOR " record -q --source pebs -e cycles -o /tmp/trt.pebs.rec -- "
		     WL "tw_spin 100 1 0 2>&1", out, sizeof(out));
	TH_LOG("%s", out);
	EXPECT_EQ(1, rc);
	EXPECT_NE(NULL, strstr(out, "needs PEBS, and this CPU has none"));
	EXPECT_NE(0, access("/tmp/trt.pebs.rec", F_OK));
}

TEST_HARNESS_MAIN

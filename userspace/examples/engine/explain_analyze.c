// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor-engine --explain-analyze: the plan with each operator's time from
 * samples and the rows the engine counted (seed 003; the paper's Figure 9).
 *
 * Why a second engine and a profiler rather than timers in the code: a
 * fused pipeline interleaves its operators tuple by tuple, so no operator
 * has a stretch of time of its own to clock; samples, attributed through
 * the Tagging Dictionary, are what splits the pipeline's time.  The child
 * engine runs the query as the user asked, with --count-rows, under
 * tailor record (tailor.ko or its BPF collector) or perf record; tailor
 * report's operator and query tables give each operator's share of the
 * query's samples, and the child's measured execution CPU time turns
 * shares into milliseconds.
 */
#include "explain_analyze.h"
#include "proc.h"
#include "times.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Sampling rate of both profilers: tailor record's default. */
#define EA_FREQ		"4000"
#define EA_MAX_ARGS	64

struct ea_files {
	char dir[PATH_MAX - 32];
	char rec[PATH_MAX], dict[PATH_MAX], times[PATH_MAX], log[PATH_MAX];
	char ops[PATH_MAX], queries[PATH_MAX], gen[PATH_MAX], report_log[PATH_MAX];
};

/* What the child measured and the profile says, per operator number. */
struct ea_figures {
	unsigned long long exec_cpu_ns, exec_wall_ns, compile_ns;
	unsigned long rows[PLAN_MAX_OPERATORS + 1];
	int have_rows;
	long long samples[PLAN_MAX_OPERATORS + 1];
	long long query_samples, all_samples;
};

static void ea_path(char *buf, const char *dir, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", dir, name);
}

/*
 * The tailor command: $TAILOR, else next to this program, @self (the
 * build tree's ../userspace/tailor, the test box's bin/tailor), else
 * tailor on the PATH.
 */
static void find_tailor(const char *self, char *buf, size_t size)
{
	static const char *const near[] = { "../userspace/tailor", "tailor" };
	const char *slash = strrchr(self, '/');
	size_t i;

	if (getenv("TAILOR") && *getenv("TAILOR")) {
		snprintf(buf, size, "%s", getenv("TAILOR"));
		return;
	}
	for (i = 0; slash && i < sizeof(near) / sizeof(near[0]); i++)
		if (snprintf(buf, size, "%.*s/%s", (int)(slash - self), self, near[i]) < (int)size &&
		    access(buf, X_OK) == 0)
			return;
	snprintf(buf, size, "tailor");
}

/*
 * Runs @argv with stdout to @out (NULL: ours) and stderr to @err.  Returns
 * its exit status, 128 + a signal, or 127 if it could not be run.
 */
static int run(char *const argv[], const char *out, const char *err)
{
	int status, ret = proc_run(argv, out, err, &status);

	if (ret) {
		fprintf(stderr, "tailor-engine: cannot run %s: %s\n", argv[0], strerror(ret));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Prints the last lines of @path to stderr, indented: a failed step's own words. */
static void show_log(const char *path)
{
	char line[1024];
	long lines = 0, skip;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		lines++;
	rewind(f);
	for (skip = lines > 30 ? lines - 30 : 0; fgets(line, sizeof(line), f);)
		if (skip-- <= 0)
			fprintf(stderr, "  | %s", line);
	fclose(f);
}

/*
 * Splits a CSV line (RFC 4180: fields with commas or quotes are quoted,
 * quotes doubled) into @fields, in place.  Returns the number of fields.
 */
static int csv_fields(char *line, char **fields, int max)
{
	char *r = line, *w = line;
	int n = 0;

	line[strcspn(line, "\r\n")] = 0;
	while (n < max) {
		fields[n++] = w;
		if (*r == '"') {
			r++;
			while (*r) {
				if (*r == '"' && r[1] == '"') {
					*w++ = '"';
					r += 2;
				} else if (*r == '"') {
					r++;
					break;
				} else {
					*w++ = *r++;
				}
			}
		}
		while (*r && *r != ',')
			*w++ = *r++;
		if (!*r) {
			*w = 0;
			break;
		}
		*w++ = 0;
		r++;
	}
	return n;
}

/*
 * tailor report's CSV table @path (name,kind,samples,share): calls @row
 * for every row.  0, or -1 if the file is not such a table.
 */
static int read_table(const char *path, void (*row)(const char *name, long long samples,
						       void *arg), void *arg)
{
	char line[4096], *f[8];
	FILE *in = fopen(path, "r");
	int ok;

	if (!in)
		return -1;
	ok = fgets(line, sizeof(line), in) && csv_fields(line, f, 8) >= 3 &&
	     !strcmp(f[0], "name") && !strcmp(f[2], "samples");
	while (ok && fgets(line, sizeof(line), in)) {
		char *end;
		long long samples;

		if (csv_fields(line, f, 8) < 3)
			continue;
		samples = strtoll(f[2], &end, 10);
		if (*end || samples < 0) {
			ok = 0;
			break;
		}
		row(f[0], samples, arg);
	}
	fclose(in);
	return ok ? 0 : -1;
}

struct ea_match {
	const struct plan *plan;
	struct ea_figures *fig;
};

static void operator_row(const char *name, long long samples, void *arg)
{
	struct ea_match *m = arg;
	int i;

	m->fig->all_samples += samples;
	for (i = 0; i < m->plan->nr_ops; i++)
		if (!strcmp(name, m->plan->ops[i].name))
			m->fig->samples[m->plan->ops[i].number] += samples;
}

static void query_row(const char *name, long long samples, void *arg)
{
	struct ea_match *m = arg;

	if (!strcmp(name, m->plan->query))
		m->fig->query_samples += samples;
}

/* The child's --times line: its CPU and wall time, compile time and rows. */
static int read_times(const char *path, const struct plan *plan, struct ea_figures *fig)
{
	static const unsigned long long huge = 1ULL << 62;
	char line[4096], v[2048], rows[PLAN_MAX_OPERATORS][TIMES_VALUE_MAX];
	unsigned long long n;
	FILE *in = fopen(path, "r");
	int i, nr_rows;

	if (!in)
		return -1;
	if (!fgets(line, sizeof(line), in))
		line[0] = 0;
	fclose(in);
	if (!times_field(line, "exec_cpu_ns", v, sizeof(v)) ||
	    times_number(v, huge, &fig->exec_cpu_ns) ||
	    !times_field(line, "exec_wall_ns", v, sizeof(v)) ||
	    times_number(v, huge, &fig->exec_wall_ns) ||
	    !times_field(line, "compile_ns", v, sizeof(v)) ||
	    times_number(v, huge, &fig->compile_ns))
		return -1;
	/* op_rows=1:rows,2:rows,...: rows out of each operator, by number. */
	if (!times_field(line, "op_rows", v, sizeof(v)))
		return 0;
	nr_rows = times_list(v, rows, plan->nr_ops);
	if (nr_rows != plan->nr_ops)
		return -1;
	for (i = 0; i < nr_rows; i++) {
		if (times_number(rows[i], ULONG_MAX, &n))
			return -1;
		fig->rows[i + 1] = (unsigned long)n;
	}
	fig->have_rows = 1;
	return 0;
}

static void print_op(const struct ea_figures *fig, const struct op *o, int depth,
		     double ms_per_sample)
{
	long long s = fig->samples[o->number];
	int width = 52 - 2 * depth;

	printf("%*s%-*.*s %9.2f ms %6.1f%% %8lld %12lu\n", 2 * depth, "", width > 8 ? width : 8,
	       width > 8 ? width : 8, o->name, (double)s * ms_per_sample,
	       fig->query_samples ? 100.0 * (double)s / (double)fig->query_samples : 0.0, s,
	       fig->rows[o->number]);
	if (o->build)
		print_op(fig, o->build, depth + 1, ms_per_sample);
	if (o->input)
		print_op(fig, o->input, depth + 1, ms_per_sample);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

static int profiler_is_tailor(enum ea_profiler p)
{
	int fd;

	if (p != EA_AUTO)
		return p == EA_TAILOR;
	fd = open("/dev/tailor", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int make_files(struct ea_files *fl, const char *keep_dir)
{
	if (keep_dir) {
		if (strlen(keep_dir) >= sizeof(fl->dir)) {
			fprintf(stderr, "tailor-engine: %s: path too long\n", keep_dir);
			return -1;
		}
		if (mkdir(keep_dir, 0755) && errno != EEXIST) {
			fprintf(stderr, "tailor-engine: cannot create %s: %m\n", keep_dir);
			return -1;
		}
		snprintf(fl->dir, sizeof(fl->dir), "%s", keep_dir);
	} else {
		const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

		snprintf(fl->dir, sizeof(fl->dir), "%.*s/tailor-explain.XXXXXX",
			 (int)sizeof(fl->dir) - 32, tmp);
		if (!mkdtemp(fl->dir)) {
			fprintf(stderr, "tailor-engine: cannot create %s: %m\n", fl->dir);
			return -1;
		}
	}
	ea_path(fl->rec, fl->dir, "profile.data");
	ea_path(fl->dict, fl->dir, "query.dict");
	ea_path(fl->times, fl->dir, "times");
	ea_path(fl->log, fl->dir, "run.log");
	ea_path(fl->ops, fl->dir, "operators.csv");
	ea_path(fl->queries, fl->dir, "queries.csv");
	ea_path(fl->gen, fl->dir, "generated");
	ea_path(fl->report_log, fl->dir, "report.log");
	return 0;
}

/* Records the child engine; 0, or 1 after saying why. */
static int record(const struct ea_request *req, const struct ea_files *fl, int use_tailor,
		  const char *tailor, char self[PATH_MAX])
{
	const char *argv[EA_MAX_ARGS + 32];
	int n = 0, i, status;

	if (req->nr_args > EA_MAX_ARGS) {
		fprintf(stderr, "tailor-engine: --explain-analyze: %d arguments for the run, at "
			"most %d\n", req->nr_args, EA_MAX_ARGS);
		return 1;
	}
	if (use_tailor) {
		argv[n++] = tailor;
		argv[n++] = "record";
		argv[n++] = "-q";
		argv[n++] = "-F";
		argv[n++] = EA_FREQ;
		/*
		 * The word names the query run, and under the LLVM backend
		 * the task of a runtime call.
		 */
		argv[n++] = "--tag-word";
		argv[n++] = "tailor_tag_word";
	} else {
		argv[n++] = "perf";
		argv[n++] = "record";
		argv[n++] = "-q";
		argv[n++] = "-e";
		argv[n++] = "cpu-clock";
		argv[n++] = "-F";
		argv[n++] = EA_FREQ;
		/*
		 * The tag register, and the user registers of kernel samples.
		 * Not under LLVM, whose code uses r15 for its own values: a
		 * small one would read as a task.
		 */
		if (!req->llvm) {
			argv[n++] = "--intr-regs=r15";
			argv[n++] = "--user-regs=ip,r15";
		}
	}
	argv[n++] = "-o";
	argv[n++] = fl->rec;
	argv[n++] = "--";
	argv[n++] = self;
	for (i = 0; i < req->nr_args; i++)
		argv[n++] = req->args[i];
	argv[n++] = "--count-rows";
	argv[n++] = "-r";
	argv[n++] = "0";
	argv[n++] = "-d";
	argv[n++] = fl->dict;
	argv[n++] = "-t";
	argv[n++] = fl->times;
	argv[n++] = "-w";
	argv[n++] = fl->gen;
	argv[n++] = req->plan->query;
	argv[n] = NULL;
	status = run((char *const *)argv, fl->log, fl->log);
	if (status) {
		/* The profiler passes on the engine's status; 127: it did not run. */
		fprintf(stderr, "tailor-engine: --explain-analyze: the profiled run (%s record) "
			"failed (exit %d)%s:\n", use_tailor ? tailor : "perf", status,
			status == 127 && !use_tailor ?
			" -- is perf installed? (or load tailor.ko)" : "");
		show_log(fl->log);
		return 1;
	}
	return 0;
}

/* tailor report's operator and query tables of the recording; 0 or 1. */
static int report(const struct ea_files *fl, const char *tailor, const struct plan *plan,
		  struct ea_figures *fig)
{
	static const char *const levels[] = { "operator", "query" };
	const char *const outs[] = { fl->ops, fl->queries };
	struct ea_match match = { plan, fig };
	int i, status;

	unlink(fl->report_log);
	for (i = 0; i < 2; i++) {
		const char *argv[] = { tailor, "report", "-i", fl->rec, "-d", fl->dict,
				       "--level", levels[i], "-f", "csv", "--top", "0", NULL };

		status = run((char *const *)argv, outs[i], fl->report_log);
		if (status) {
			fprintf(stderr, "tailor-engine: --explain-analyze: %s report failed "
				"(exit %d):\n", tailor, status);
			show_log(fl->report_log);
			return 1;
		}
	}
	if (read_table(fl->ops, operator_row, &match) ||
	    read_table(fl->queries, query_row, &match)) {
		fprintf(stderr, "tailor-engine: --explain-analyze: %s or %s is not a table of "
			"tailor report's CSV\n", fl->ops, fl->queries);
		return 1;
	}
	return 0;
}

static void print_analysis(const struct ea_request *req, const struct ea_figures *fig,
			   int use_tailor)
{
	const struct plan *plan = req->plan;
	double cpu_ms = (double)fig->exec_cpu_ns / 1e6 / (double)req->repeat;
	double ms_per_sample = fig->query_samples ? cpu_ms / (double)fig->query_samples : 0;
	long long on_ops = 0;
	int i;

	for (i = 1; i <= plan->nr_ops; i++)
		on_ops += fig->samples[i];
	printf("EXPLAIN ANALYZE %s: %s\n%s\n\n", plan->query, req->summary, plan->sql);
	printf("execution: %.2f ms CPU, %.2f ms wall a run (%ld run%s); compiled in %.1f ms\n",
	       cpu_ms, (double)fig->exec_wall_ns / 1e6 / (double)req->repeat, req->repeat,
	       req->repeat > 1 ? "s" : "", (double)fig->compile_ns / 1e6);
	printf("profile: %s at " EA_FREQ " Hz: %lld samples of the query, %lld in the whole "
	       "run\n(time: the operator's share of the query's samples times the query's CPU "
	       "time; rows: a run's, counted by the generated code)\n\n",
	       use_tailor ? "tailor record" :
	       req->llvm ? "perf record -e cpu-clock (no tag register: LLVM's code uses r15)" :
	       "perf record -e cpu-clock --intr-regs=r15", fig->query_samples, fig->all_samples);
	printf("%-52s %12s %7s %8s %12s\n", "operator", "time", "share", "samples", "rows");
	print_op(fig, plan->root, 0, ms_per_sample);
	printf("%-52s %9.2f ms %6.1f%% %8lld\n", "(the query's runtime outside its operators)",
	       (double)(fig->query_samples - on_ops) * ms_per_sample,
	       fig->query_samples ? 100.0 * (double)(fig->query_samples - on_ops) /
				    (double)fig->query_samples : 0.0,
	       fig->query_samples - on_ops);
	if (!use_tailor && req->llvm)
		printf("\nperf reads neither the tag word, which names the LLVM backend's runtime "
		       "calls, nor (under LLVM) a tag register: the runtime's samples reach no "
		       "query, so the shares are of the generated code's samples and the times "
		       "overstate it by the runtime's part (tailor record reads the word)\n");
	if (fig->query_samples < 100)
		printf("\nfew samples (%lld): shares are rough; run the query more often "
		       "(-n) or on more data (-s)\n", fig->query_samples);
}

int explain_analyze(const struct ea_request *req)
{
	struct ea_figures fig;
	struct ea_files fl;
	char tailor[PATH_MAX], self[PATH_MAX];
	ssize_t n;
	int use_tailor, ret = 1;

	memset(&fig, 0, sizeof(fig));
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "tailor-engine: /proc/self/exe: %m\n");
		return 1;
	}
	self[n] = 0;
	find_tailor(self, tailor, sizeof(tailor));
	use_tailor = profiler_is_tailor(req->profiler);
	if (make_files(&fl, req->keep_dir))
		return 1;
	fprintf(stderr, "tailor-engine: --explain-analyze: running %s under %s\n",
		req->plan->query, use_tailor ? "tailor record" : "perf record");
	if (record(req, &fl, use_tailor, tailor, self) || report(&fl, tailor, req->plan, &fig))
		goto out;
	if (read_times(fl.times, req->plan, &fig) || !fig.have_rows) {
		fprintf(stderr, "tailor-engine: --explain-analyze: the run's times (%s) are "
			"missing or malformed\n", fl.times);
		goto out;
	}
	if (!fig.query_samples) {
		fprintf(stderr, "tailor-engine: --explain-analyze: the profile has no sample of "
			"query %s (%lld samples in all)\n", req->plan->query, fig.all_samples);
		goto out;
	}
	print_analysis(req, &fig, use_tailor);
	if (req->keep_dir)
		printf("\nfiles (recording, dictionary, times, generated code): %s\n", fl.dir);
	ret = 0;
out:
	if (!req->keep_dir)
		nftw(fl.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	else if (ret)
		fprintf(stderr, "tailor-engine: the run's files are in %s\n", fl.dir);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor-engine: a small compiling query engine, the example system that
 * tailor profiles.  It generates TPC-H-like tables, lowers fixed query
 * plans to pipelines of tasks and those to C, compiles the C with the
 * system compiler into a shared object, runs it, and checks each result
 * against an independent evaluation.  Along the way it writes a Tagging
 * Dictionary and sets the tag register around shared runtime calls.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "database.h"
#include "explain_analyze.h"
#include "feedback.h"
#include "jit.h"
#include "lower.h"
#include "plan.h"
#include "reference.h"
#include "runtime.h"
#include "scheduler.h"
#include "tailor/dictionary.h"
#include "tailor/tag.h"
#include "tailor/tag_word.h"

/* The word tailor.ko reads at every sample: tailor record --tag-word tailor_tag_word. */
TAILOR_TAG_WORD_DEFINE;

#define MAX_QUERIES	16
#define MAX_EXTRA	16

static const char usage_text[] =
"usage: tailor-engine [options] [QUERY...]\n"
"\n"
"Run queries of a small compiling engine over TPC-H-like data: each plan\n"
"is lowered to pipelines of tasks, then to C, compiled with the system C\n"
"compiler (-g, r15 reserved as the tag register) into a shared object,\n"
"or with --backend llvm in this process by LLVM's ORC JIT into anonymous\n"
"memory, and run morsel by morsel on a pool of worker threads.  Each result\n"
"is printed and checked against a second, independent evaluation; a\n"
"difference is an error (exit 1).\n"
"\n"
"With --clients N, N client threads each run every query (client c starting\n"
"at the c-th, so different queries overlap; with one query, the same\n"
"compiled code runs for every client at once), all on the same workers.\n"
"Each client's run of a query is a component of the dictionary's query\n"
"level; the thread's tag word (tailor/tag_word.h) holds the one running,\n"
"so record with --tag-word tailor_tag_word to tell them apart.\n"
"\n"
"queries (default fig3; 'all' for every one):\n"
"%s"
"\n"
"options:\n"
"  -s, --scale SF        TPC-H scale factor of the data (default 0.02:\n"
"                        about 120k lineitems)\n"
"  -d, --dict FILE       write the Tagging Dictionary for tailor report\n"
"  -w, --work-dir DIR    where generated C and shared objects go (kept;\n"
"                        default: a new directory under $TMPDIR or /tmp)\n"
"      --backend B       'c' (default): the system C compiler makes a shared\n"
"                        object (-g, -ffixed-r15), loaded with dlopen;\n"
"                        'llvm': clang makes bitcode (-g) and LLVM's ORC JIT\n"
"                        compiles it in this process into anonymous memory;\n"
"                        LLVM's perf listener writes jit-PID.dump (under\n"
"                        $JITDUMPDIR, default the work directory) for\n"
"                        profilers.  Runtime calls carry their task in the\n"
"                        tag word's bits 16-31 instead of r15, which clang\n"
"                        cannot reserve: record with --tag-word.\n"
"      --cc CC           the C compiler (default: $CC, else cc; with\n"
"                        --backend llvm, the clang of the LLVM linked in)\n"
"  -x, --extra OP=N      add N units of known work (a dependent multiply\n"
"                        chain) per tuple to operator OP of each query that\n"
"                        has it: its number (3), name (HashJoin#3) or kind\n"
"                        when unique (join).  The accuracy oracle's knob.\n"
"  -t, --times FILE      write measured times: a line per query with its\n"
"                        execution CPU and wall time in ns, and the\n"
"                        --extra work done (units, and their CPU time\n"
"                        from a calibration run of the same loop), the\n"
"                        --merge mode and the wall time of its group-by\n"
"                        merges (merge_wall_ns)\n"
"  -n, --repeat N        execute each compiled query N times (default 1);\n"
"                        times are the sum, the result the last run's\n"
"  -j, --threads N       worker threads (default: the online CPUs, %ld)\n"
"  -c, --clients N       clients running the queries at once (default 1,\n"
"                        at most 16)\n"
"      --merge MODE      how a group-by folds its workers' tables into\n"
"                        one, on the workers: 'locked' (default), each\n"
"                        worker's table into the shared one under one\n"
"                        mutex, so the folds serialize and the other\n"
"                        workers wait -- a real serialization point, for\n"
"                        tailor report --view parallelism to find; or\n"
"                        'partitioned', the fix: each worker's table\n"
"                        is scattered by hash partition, then a task\n"
"                        per partition folds that partition of every\n"
"                        worker's table, in parallel, with no lock\n"
"  -e, --explain         print each plan and its pipelines\n"
"      --explain-analyze run the query (one, one client) again under a\n"
"                        sampling profiler and print its plan with each\n"
"                        operator's CPU time and share of the query's\n"
"                        samples beside the rows it produced (counted, as\n"
"                        with --count-rows): EXPLAIN ANALYZE from samples.\n"
"                        Shares come from tailor report over a recording of\n"
"                        tailor record (tailor.ko, or BPF) or perf record -e\n"
"                        cpu-clock --intr-regs=r15, at 4000 Hz; times are\n"
"                        shares of the measured execution CPU time.  Its\n"
"                        files go to a temporary directory, removed after,\n"
"                        or stay in -w DIR.  tailor is $TAILOR, else next\n"
"                        to this program, else on the PATH\n"
"      --profiler P      for --explain-analyze: 'auto' (default: tailor\n"
"                        where /dev/tailor opens, else perf), 'tailor' or\n"
"                        'perf'\n"
"      --count-rows      count the rows each operator produces (a local\n"
"                        increment per row, added up once a morsel), print\n"
"                        them, check them against the tables' sizes and the\n"
"                        result's count(*), and add them to --times\n"
"                        (op_rows=OP:ROWS,...)\n"
"      --feedback PROFILE  compile each pipeline at the GCC level (-O0 to\n"
"                        -O3 -march=native) that minimizes its expected\n"
"                        compile time plus execution time, from a previous\n"
"                        run's profile: tailor report --level task\n"
"                        --by-query --format json (docs/exports.md; or\n"
"                        --level pipeline).  Pipelines and tasks are found\n"
"                        by name; one the profile does not name had no\n"
"                        samples.  A profile by task also orders each\n"
"                        filter's terms (AND) for the least work: each\n"
"                        term's CPU time a row that reached it, and the\n"
"                        rows that pass each, counted on the data.  Prints\n"
"                        each choice and why; --times then says\n"
"                        opt=PIPELINE:LEVEL,... and terms=FILTER:T.T...\n"
"                        C backend only.  Given again, for the runs that\n"
"                        followed (oldest first, up to 16), a level some\n"
"                        run measured is judged by what it measured, the\n"
"                        others by priors; a term's cost is the runs' mean\n"
"      --feedback-times FILE  the --times of the run profiled by the\n"
"                        --feedback before it: the levels it ran at\n"
"                        (default -O2) and the order of the terms (default\n"
"                        as written), its executions and its compile\n"
"                        time, which scales the compile-cost model to this\n"
"                        host.  Feeding back each new run's profile and\n"
"                        times with the earlier ones converges\n"
"                        (bench/feedback.sh)\n"
"  -r, --rows N          result rows to print per query (default 10)\n"
"  -h, --help            this text\n"
"\n"
"Profile it:  tailor record --tag-word tailor_tag_word -o q.rec -- \\\n"
"                 tailor-engine -d q.dict fig3\n"
"             tailor report -i q.rec -d q.dict --view plan\n";

struct options {
	double scale;
	const char *dict, *work_dir, *cc, *times;
	int cc_given;			/* --cc, not $CC: the LLVM backend takes only that */
	enum lower_backend backend;
	const char *extra_op[MAX_EXTRA];
	uint64_t extra_n[MAX_EXTRA];
	int nr_extra, explain, rows, threads, clients;
	int count_rows;			/* --count-rows */
	int explain_analyze;		/* --explain-analyze */
	enum ea_profiler profiler;	/* --profiler */
	int dict_or_times_given;	/* -d or -t: not with --explain-analyze */
	enum merge_mode merge;
	/* --feedback and the --feedback-times that followed each, oldest first. */
	const char *feedback[FB_MAX_INPUTS], *feedback_times[FB_MAX_INPUTS];
	int nr_feedback;
	long repeat;
	const char *queries[MAX_QUERIES];
	int nr_queries;
};

/* A query, compiled once, whatever number of clients run it. */
struct query_run {
	struct plan plan;
	struct lowered low;
	struct jit_module module;
	char c_path[PATH_MAX], so_path[PATH_MAX];
	uint64_t compile_ns;
	double unit_ns;			/* CPU time of one oracle work unit, measured */
	struct result reference;	/* the reference evaluation's, once computed */
	int reference_error;		/* 0, or reference_evaluate()'s error */
	int reference_done;
};

/* One client's run of a query: the query level's component query_id. */
struct execution {
	struct query_run *q;
	int client;
	uint64_t query_id;		/* also its tag word */
	uint64_t cpu_ns, wall_ns;	/* CPU: the client's and the workers' */
	uint64_t merge_wall_ns;		/* of its group-by merges */
	unsigned long extra_units;	/* oracle work units executed */
	/* --count-rows: rows each operator produced, summed over the repeats */
	unsigned long rows_out[PLAN_MAX_OPERATORS + 1];
	struct result result;
};

/* A client thread and the executions it runs, in order. */
struct client {
	pthread_t thread;
	struct execution *execs;
	int nr_execs;
	struct pool *pool;
	long repeat;
	uint64_t engine_tag;
};

/* The engine's own phases, named runtime parts in the dictionary. */
enum { PART_ENGINE, PART_DATAGEN, PART_CODEGEN, PART_CHECK, PART_CALIBRATE, PART_POOL,
       NR_PARTS };
static const char *const part_names[NR_PARTS] = {
	[PART_ENGINE] = "[runtime] engine: setup, output, teardown",
	[PART_DATAGEN] = "[runtime] data generation",
	[PART_CODEGEN] = "[runtime] code generation",
	[PART_CHECK] = "[runtime] result check",
	[PART_CALIBRATE] = "[runtime] calibration of --extra work",
	[PART_POOL] = "[runtime] worker pool: taking morsels, idle",
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > POOL_MAX_WORKERS ? POOL_MAX_WORKERS : (int)n;
}

static void usage(FILE *out)
{
	char list[2048];
	size_t n = 0;
	const struct query_def *q;

	for (q = queries; q->name; q++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "  %-10s %s\n", q->name,
				      q->summary);
	fprintf(out, usage_text, list, (long)online_cpus());
}

__attribute__((format(printf, 1, 0)))
static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "tailor-engine: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(tailor-engine --help for usage)\n");
	return 2;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ "dict", required_argument, NULL, 'd' },
		{ "work-dir", required_argument, NULL, 'w' },
		{ "cc", required_argument, NULL, 'C' },
		{ "backend", required_argument, NULL, 'B' },
		{ "extra", required_argument, NULL, 'x' },
		{ "times", required_argument, NULL, 't' },
		{ "explain", no_argument, NULL, 'e' },
		{ "rows", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 'j' },
		{ "clients", required_argument, NULL, 'c' },
		{ "merge", required_argument, NULL, 'M' },
		{ "count-rows", no_argument, NULL, 'R' },
		{ "explain-analyze", no_argument, NULL, 'A' },
		{ "profiler", required_argument, NULL, 'P' },
		{ "feedback", required_argument, NULL, 'F' },
		{ "feedback-times", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c, i;

	memset(o, 0, sizeof(*o));
	o->scale = 0.02;
	o->rows = 10;
	o->repeat = 1;
	o->threads = online_cpus();
	o->clients = 1;
	o->cc = getenv("CC");
	while ((c = getopt_long(argc, argv, "s:d:w:x:t:er:n:j:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			o->scale = strtod(optarg, &end);
			if (errno || *end || !(o->scale > 0) || o->scale > 10)
				return usage_error("invalid --scale '%s': expected a number in (0, 10]", optarg);
			break;
		case 'd':
			o->dict = optarg;
			o->dict_or_times_given = 1;
			break;
		case 'w':
			o->work_dir = optarg;
			break;
		case 'C':
			o->cc = optarg;
			o->cc_given = 1;
			break;
		case 'B':
			if (!strcmp(optarg, "c"))
				o->backend = LOWER_BACKEND_C;
			else if (!strcmp(optarg, "llvm"))
				o->backend = LOWER_BACKEND_LLVM;
			else
				return usage_error("invalid --backend '%s': expected c or llvm", optarg);
			if (o->backend == LOWER_BACKEND_LLVM && !jit_llvm_available())
				return usage_error("--backend llvm: %s", jit_llvm_why_not());
			break;
		case 'x': {
			char *eq = strchr(optarg, '=');

			if (o->nr_extra == MAX_EXTRA)
				return usage_error("too many --extra options (at most 16; '%s')", optarg);
			if (!eq || eq == optarg)
				return usage_error("invalid --extra '%s': expected OP=N, e.g. join=200", optarg);
			errno = 0;
			o->extra_n[o->nr_extra] = strtoull(eq + 1, &end, 10);
			if (errno || *end || end == eq + 1 || o->extra_n[o->nr_extra] > 1000000)
				return usage_error("invalid --extra '%s': N must be 0..1000000", optarg);
			*eq = 0;
			o->extra_op[o->nr_extra++] = optarg;
			break;
		}
		case 't':
			o->times = optarg;
			o->dict_or_times_given = 1;
			break;
		case 'e':
			o->explain = 1;
			break;
		case 'R':
			o->count_rows = 1;
			break;
		case 'F':
			if (o->nr_feedback == FB_MAX_INPUTS)
				return usage_error("--feedback %s: given more than 16 times",
						   optarg);
			o->feedback[o->nr_feedback++] = optarg;
			break;
		case 'T':
			if (!o->nr_feedback)
				return usage_error("--feedback-times %s needs --feedback PROFILE "
						   "before it", optarg);
			if (o->feedback_times[o->nr_feedback - 1])
				return usage_error("--feedback-times %s: the --feedback before it "
						   "has its times already", optarg);
			o->feedback_times[o->nr_feedback - 1] = optarg;
			break;
		case 'A':
			o->explain_analyze = 1;
			break;
		case 'P':
			if (!strcmp(optarg, "auto"))
				o->profiler = EA_AUTO;
			else if (!strcmp(optarg, "tailor"))
				o->profiler = EA_TAILOR;
			else if (!strcmp(optarg, "perf"))
				o->profiler = EA_PERF;
			else
				return usage_error("invalid --profiler '%s': expected auto, tailor "
						   "or perf", optarg);
			break;
		case 'r':
			o->rows = (int)strtol(optarg, &end, 10);
			if (*end || o->rows < 0)
				return usage_error("invalid --rows '%s': expected a count", optarg);
			break;
		case 'n':
			o->repeat = strtol(optarg, &end, 10);
			if (*end || o->repeat < 1 || o->repeat > 100000)
				return usage_error("invalid --repeat '%s': expected 1..100000", optarg);
			break;
		case 'j':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > POOL_MAX_WORKERS)
				return usage_error("invalid --threads '%s': expected 1..64", optarg);
			o->threads = (int)v;
			break;
		case 'c':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > LOWER_MAX_CLIENTS)
				return usage_error("invalid --clients '%s': expected 1..16", optarg);
			o->clients = (int)v;
			break;
		case 'M':
			if (!strcmp(optarg, "locked"))
				o->merge = MERGE_LOCKED;
			else if (!strcmp(optarg, "partitioned"))
				o->merge = MERGE_PARTITIONED;
			else
				return usage_error("invalid --merge '%s': expected locked or partitioned",
						   optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "(tailor-engine --help for usage)\n");
			return 2;
		}
	}
	for (i = optind; i < argc; i++) {
		const struct query_def *q;

		if (!strcmp(argv[i], "all")) {
			for (q = queries; q->name && o->nr_queries < MAX_QUERIES; q++)
				o->queries[o->nr_queries++] = q->name;
			continue;
		}
		if (!query_find(argv[i]))
			return usage_error("no query '%s' (tailor-engine --help lists them)", argv[i]);
		if (o->nr_queries == MAX_QUERIES)
			return usage_error("too many queries ('%s')", argv[i]);
		o->queries[o->nr_queries++] = argv[i];
	}
	if (!o->nr_queries)
		o->queries[o->nr_queries++] = "fig3";
	if (o->nr_feedback && o->backend == LOWER_BACKEND_LLVM)
		return usage_error("--feedback chooses GCC's optimization level per pipeline: "
				   "%s", "not with --backend llvm");
	if (o->explain_analyze) {
		if (o->nr_queries != 1)
			return usage_error("--explain-analyze takes one query, not %s", "several");
		if (o->clients != 1)
			return usage_error("--explain-analyze runs one client, not --clients %s",
					   "N");
		if (o->dict_or_times_given)
			return usage_error("--explain-analyze writes its own dictionary and times; "
					   "%s", "drop -d and -t");
	}
	return 0;
}

/*
 * --explain-analyze: the same run again in a child engine under a
 * profiler; this process only builds the plan to print.
 */
static int run_explain_analyze(const struct options *o)
{
	static char scale[32], repeat[32], threads[32], extra[MAX_EXTRA][128];
	const char *args[16 + 2 * MAX_EXTRA + 4 * FB_MAX_INPUTS];
	struct plan plan;
	struct ea_request req;
	const struct query_def *def = query_find(o->queries[0]);
	int n = 0, i;

	memset(&plan, 0, sizeof(plan));
	plan.query = def->name;
	def->build(&plan);
	for (i = 0; i < o->nr_extra; i++)
		if (!plan_find_op(&plan, o->extra_op[i]))
			return usage_error("--extra: no operator '%s' in the query, or several "
					   "(--explain shows them)", o->extra_op[i]);
	snprintf(scale, sizeof(scale), "%.17g", o->scale);
	snprintf(repeat, sizeof(repeat), "%ld", o->repeat);
	snprintf(threads, sizeof(threads), "%d", o->threads);
	args[n++] = "-s";
	args[n++] = scale;
	args[n++] = "-n";
	args[n++] = repeat;
	args[n++] = "-j";
	args[n++] = threads;
	args[n++] = "--backend";
	args[n++] = o->backend == LOWER_BACKEND_LLVM ? "llvm" : "c";
	if (o->cc_given) {
		args[n++] = "--cc";
		args[n++] = o->cc;
	}
	args[n++] = "--merge";
	args[n++] = merge_mode_name(o->merge);
	for (i = 0; i < o->nr_feedback; i++) {
		args[n++] = "--feedback";
		args[n++] = o->feedback[i];
		if (o->feedback_times[i]) {
			args[n++] = "--feedback-times";
			args[n++] = o->feedback_times[i];
		}
	}
	for (i = 0; i < o->nr_extra; i++) {
		snprintf(extra[i], sizeof(extra[i]), "%s=%llu", o->extra_op[i],
			 (unsigned long long)o->extra_n[i]);
		args[n++] = "-x";
		args[n++] = extra[i];
	}
	req = (struct ea_request){
		.plan = &plan, .summary = def->summary, .profiler = o->profiler,
		.keep_dir = o->work_dir, .repeat = o->repeat,
		.llvm = o->backend == LOWER_BACKEND_LLVM, .args = args, .nr_args = n,
	};
	return explain_analyze(&req);
}

static int make_work_dir(const struct options *o, char *dir, size_t size)
{
	if (o->work_dir) {
		if (mkdir(o->work_dir, 0755) && errno != EEXIST) {
			fprintf(stderr, "tailor-engine: cannot create %s: %m\n", o->work_dir);
			return -1;
		}
		/* DWARF and the dictionary must name generated files alike: absolute. */
		if (!realpath(o->work_dir, dir)) {
			fprintf(stderr, "tailor-engine: %s: %m\n", o->work_dir);
			return -1;
		}
		return 0;
	}
	snprintf(dir, size, "%s/tailor-engine.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "tailor-engine: cannot create %s: %m\n", dir);
		return -1;
	}
	return 0;
}

static int dict_setup(struct dict_levels *lv, const struct options *o, uint64_t part_task[])
{
	uint64_t engine_query;
	int i, ret = 0;

	memset(lv, 0, sizeof(*lv));
	lv->next_task = lv->next_op = lv->next_pipeline = lv->next_query = 1;
	lv->prefix_names = o->nr_queries > 1;
	lv->nr_clients = o->clients;
	for (i = 0; i < NR_PARTS; i++)
		part_task[i] = lv->next_task++;
	if (!o->dict)
		return 0;
	lv->dict = tailor_dict_new();
	if (!lv->dict)
		return -1;
	lv->task = tailor_dict_level(lv->dict, "task");
	lv->op = tailor_dict_level(lv->dict, "operator");
	lv->pipeline = tailor_dict_level(lv->dict, "pipeline");
	lv->query = tailor_dict_level(lv->dict, "query");
	engine_query = lv->next_query++;
	ret |= tailor_dict_component(lv->dict, lv->query, engine_query, "[engine]");
	for (i = 0; i < NR_PARTS; i++) {
		uint64_t op = lv->next_op++, pipeline = lv->next_pipeline++;

		ret |= tailor_dict_component(lv->dict, lv->task, part_task[i], part_names[i]);
		ret |= tailor_dict_component(lv->dict, lv->op, op, part_names[i]);
		ret |= tailor_dict_component(lv->dict, lv->pipeline, pipeline, part_names[i]);
		ret |= tailor_dict_link(lv->dict, lv->task, part_task[i], lv->op, op);
		ret |= tailor_dict_link(lv->dict, lv->task, part_task[i], lv->pipeline, pipeline);
		ret |= tailor_dict_link(lv->dict, lv->op, op, lv->query, engine_query);
		ret |= tailor_dict_link(lv->dict, lv->pipeline, pipeline, lv->query, engine_query);
	}
	/*
	 * Tags name tasks; reports climb from there to any level.  The word
	 * names the query execution, which the code alone cannot tell when
	 * clients run the same compiled query.
	 */
	ret |= tailor_dict_tag_field(lv->dict, lv->task, 0, 16);
	ret |= tailor_dict_tag_word_field(lv->dict, lv->query, 0, LOWER_WORD_QUERY_BITS);
	/* LLVM's runtime calls: the word carries the task (lower_write_c()). */
	ret |= tailor_dict_tag_word_field(lv->dict, lv->task, LOWER_WORD_TASK_SHIFT,
					  LOWER_WORD_TASK_BITS);
	if (lv->task < 0 || lv->op < 0 || lv->pipeline < 0 || lv->query < 0 || ret < 0) {
		fprintf(stderr, "tailor-engine: cannot set up the Tagging Dictionary\n");
		return -1;
	}
	return 0;
}

static void explain(const struct query_run *q)
{
	int k, i;

	printf("plan:\n");
	plan_print(&q->plan, stdout);
	printf("pipelines (in execution order):\n");
	for (k = 0; k < q->low.nr_done; k++) {
		int p = q->low.order[k];

		printf("  %d:", k + 1);
		for (i = 0; i < q->low.nr_tasks; i++)
			if (q->low.tasks[i].pipeline == p)
				printf(" [%s]", q->low.tasks[i].name);
		printf("\n");
	}
}

/* The plan of @name, with the --extra work on the operators it has. */
static void build_plan(struct query_run *q, const char *name, const struct options *o)
{
	const struct query_def *def = query_find(name);
	int i;

	memset(q, 0, sizeof(*q));
	q->plan.query = def->name;
	def->build(&q->plan);
	for (i = 0; i < o->nr_extra; i++) {
		struct op *op = plan_find_op(&q->plan, o->extra_op[i]);

		if (op)
			op->extra_work = o->extra_n[i];
	}
}

_Static_assert(FB_MAX_INPUTS == 16, "--feedback's usage message says 16");

/* --feedback's inputs, read once for every query; released at exit. */
static struct fb_input feedback[FB_MAX_INPUTS];
static int nr_feedback;

static void feedback_release(void)
{
	int i;

	for (i = 0; i < nr_feedback; i++) {
		fb_profile_free(&feedback[i].profile);
		fb_times_free(&feedback[i].times);
	}
}

/*
 * Lower, write, compile and load the plan built by build_plan(), at the
 * levels the profiled runs @fb[0..@nr_fb) lead to.
 */
static int prepare_query(struct query_run *q, const char *name, const struct options *o,
			 const struct database *db, struct dict_levels *lv, const char *dir,
			 const struct fb_input *fb, int nr_fb)
{
	bool native = false;
	uint64_t t0;
	int k;

	struct fb_run run = { .executions = (long)o->clients * o->repeat,
			      .threads = o->threads, .prefixed = lv->prefix_names };

	/* The terms' order changes the lines, so it comes before lowering. */
	if (nr_fb)
		fb_order_terms(&q->plan, db, fb, nr_fb, &run, stdout);
	if (lower_plan(&q->low, &q->plan, db, lv, o->count_rows))
		return -1;
	if (nr_fb) {
		fb_choose(&q->low, fb, nr_fb, &run, stdout);
		for (k = 0; k < q->low.nr_done; k++)
			native |= q->low.pipelines[q->low.order[k]].opt == FB_NR_LEVELS - 1;
	}
	if (strlen(dir) > PATH_MAX - 64) {
		fprintf(stderr, "tailor-engine: the work directory's path is too long\n");
		return -1;
	}
	snprintf(q->c_path, sizeof(q->c_path), "%.*s/%.32s.c", PATH_MAX - 64, dir, name);
	snprintf(q->so_path, sizeof(q->so_path), "%.*s/%.32s.%s", PATH_MAX - 64, dir, name,
		 o->backend == LOWER_BACKEND_LLVM ? "bc" : "so");
	if (lower_write_c(&q->low, q->c_path, o->backend))
		return -1;
	/* Compiling and loading: LLVM's JIT compiles at the first lookup. */
	t0 = now_ns(CLOCK_MONOTONIC);
	if (o->backend == LOWER_BACKEND_LLVM) {
		if (jit_llvm_compile(o->cc_given ? o->cc : NULL, q->c_path, q->so_path) ||
		    jit_llvm_load(&q->module, q->so_path))
			return -1;
	} else if (jit_compile(o->cc, q->c_path, q->so_path, native) ||
		   jit_load(&q->module, q->so_path)) {
		return -1;
	}
	q->compile_ns = now_ns(CLOCK_MONOTONIC) - t0;
	return 0;
}

static void *must_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "tailor-engine: out of memory\n");
		exit(1);
	}
	return p;
}

/*
 * One run of the compiled pipelines over fresh hash tables: each
 * pipeline's morsels on the pool, then its finish function (the breakers'
 * merge) here, once the last morsel is done.
 */
static void run_pipelines(struct execution *e, struct pool *pool)
{
	const struct query_run *q = e->q;
	const long *columns[LOWER_MAX_SLOTS];
	long rows[LOWER_MAX_SLOTS];
	void *hts[PLAN_MAX_OPERATORS];
	int workers = pool_workers(pool), i;
	unsigned long *extra = must_calloc((size_t)workers * RT_EXTRA_STRIDE, sizeof(*extra));
	unsigned long *tuples = NULL;
	struct query_ctx ctx;

	for (i = 0; i < q->low.nr_columns; i++)
		columns[i] = (const long *)q->low.columns[i]->values;
	for (i = 0; i < q->low.nr_tables; i++)
		rows[i] = (long)q->low.tables[i]->rows;
	for (i = 0; i < q->low.nr_hts; i++)
		hts[i] = q->low.hts[i].kind == HT_JOIN ?
			 join_table_new(q->low.hts[i].width, workers) :
			 group_table_new(q->low.hts[i].width, workers, e->query_id);
	result_free(&e->result);
	result_init(&e->result, q->low.result_width);
	if (q->low.count_rows)
		tuples = must_calloc((size_t)workers * RT_TUPLE_SLOTS, sizeof(*tuples));
	ctx = (struct query_ctx){ &runtime_api, columns, rows, hts, &e->result, extra, tuples };
	for (i = 0; i < q->module.nr_pipelines; i++) {
		int source = q->module.sources[i];
		struct job job = {
			.fn = q->module.pipelines[i], .ctx = &ctx, .tag_word = e->query_id,
			.rows = source >= 0 && source < q->low.nr_tables ? rows[source] : -1,
		};
		uint64_t saved;

		pool_run(pool, &job);
		e->cpu_ns += job.cpu_ns;
		/*
		 * Generated lines are attributed through their links, whatever
		 * the tag; without one, kernel work they cause stays [kernel]
		 * instead of going to the query's runtime part.
		 */
		saved = tailor_tag_set(0);
		q->module.finishes[i](&ctx);
		tailor_tag_restore(saved);
	}
	for (i = 0; i < workers; i++)
		e->extra_units += extra[i * RT_EXTRA_STRIDE];
	free(extra);
	for (i = 0; tuples && i < workers * RT_TUPLE_SLOTS; i++)
		e->rows_out[i % RT_TUPLE_SLOTS] += tuples[i];
	free(tuples);
	for (i = 0; i < q->low.nr_hts; i++) {
		if (q->low.hts[i].kind == HT_JOIN) {
			join_table_free(hts[i]);
			continue;
		}
		/* The merge ran on the workers, outside any pipeline's job. */
		e->cpu_ns += group_table_merge_cpu_ns(hts[i]);
		e->merge_wall_ns += group_table_merge_wall_ns(hts[i]);
		group_table_free(hts[i]);
	}
}

/*
 * The CPU time of one unit of the oracle's work, from the very loop the
 * generated code runs, timed alone: the known amount of work a variant
 * adds is then units x this.  Best of five, against preemption.
 */
static double calibrate_work(const struct jit_module *m)
{
	const unsigned long n = 20000000;
	double best = 0;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		double ns;

		m->work_calibrate(n);
		ns = (double)(now_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / (double)n;
		if (!i || ns < best)
			best = ns;
	}
	return best;
}

/*
 * The engine's own work in between runs under the query's runtime tag,
 * and the thread's tag word names the execution throughout.
 */
static void execute(struct execution *e, struct pool *pool, long repeat)
{
	uint64_t saved_word, saved_tag, cpu0, wall0;
	long r;

	saved_word = tailor_tag_word_set(e->query_id);
	saved_tag = tailor_tag_set(e->q->low.runtime_task);
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	wall0 = now_ns(CLOCK_MONOTONIC);
	for (r = 0; r < repeat; r++)
		run_pipelines(e, pool);
	e->cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	e->wall_ns = now_ns(CLOCK_MONOTONIC) - wall0;
	tailor_tag_restore(saved_tag);
	tailor_tag_word_restore(saved_word);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	char name[16];
	int i;

	/* A new thread's r15 is whatever libc left in it. */
	tailor_tag_set(c->engine_tag);
	snprintf(name, sizeof(name), "client %d", (c->execs[0].client + 1) % 1000);
	pthread_setname_np(pthread_self(), name);
	for (i = 0; i < c->nr_execs; i++)
		execute(&c->execs[i], c->pool, c->repeat);
	return NULL;
}

/* Every client's executions, the clients at once; 0 or -1. */
static int run_clients(struct client *clients, int n)
{
	int i, ret, started = 0, failed = 0;

	if (n == 1) {
		for (i = 0; i < clients[0].nr_execs; i++)
			execute(&clients[0].execs[i], clients[0].pool, clients[0].repeat);
		return 0;
	}
	for (i = 0; i < n; i++) {
		ret = pthread_create(&clients[i].thread, NULL, client_main, &clients[i]);
		if (ret) {
			fprintf(stderr, "tailor-engine: cannot start client %d: %s\n", i + 1,
				strerror(ret));
			failed = 1;
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(clients[i].thread, NULL);
	return failed ? -1 : 0;
}

static void print_result(const struct execution *e, int max_rows)
{
	const struct query_run *q = e->q;
	const struct result *res = &e->result;
	const struct op *g = q->plan.root;
	char text[256];
	long r;
	int i;

	expr_format(g->group_key, text, sizeof(text), 1);
	printf("  %18.18s", text);
	for (i = 0; i < g->nr_aggregates; i++) {
		if (g->aggregates[i].fn == AGG_COUNT)
			snprintf(text, sizeof(text), "count(*)");
		else
			expr_format(g->aggregates[i].arg, text, sizeof(text), 1);
		printf(" %18.18s", text);
	}
	printf("\n");
	for (r = 0; r < res->rows && r < max_rows; r++) {
		for (i = 0; i < res->width; i++)
			printf(i ? " %18ld" : "  %18ld", res->values[r * res->width + i]);
		printf("\n");
	}
	if (res->rows > max_rows)
		printf("  ... (%ld rows in all)\n", res->rows);
}

/* 0 if the result equals the reference evaluation's (computed once a query). */
static int check_result(struct execution *e, const struct database *db)
{
	struct query_run *q = e->q;
	const struct result *ref = &q->reference, *got = &e->result;
	long r;
	int i, ret = 0;

	if (!q->reference_done) {
		q->reference_error = reference_evaluate(q->plan.query, db, &q->reference);
		q->reference_done = 1;
	}
	if (q->reference_error) {
		printf("check: FAILED: %s for %s\n", q->reference_error == -2 ?
		       "out of memory in the reference evaluation" : "no reference evaluation",
		       q->plan.query);
		return -1;
	}
	if (ref->width != got->width || ref->rows != got->rows) {
		printf("check: FAILED: %ld rows of %ld values, the reference has %ld of %ld\n",
		       got->rows, got->width, ref->rows, ref->width);
		ret = -1;
	}
	for (r = 0; !ret && r < ref->rows; r++)
		for (i = 0; i < ref->width; i++) {
			long have = got->values[r * ref->width + i];
			long want = ref->values[r * ref->width + i];

			if (have != want) {
				printf("check: FAILED: row %ld value %d is %ld, the reference says %ld\n",
				       r + 1, i + 1, have, want);
				ret = -1;
				break;
			}
		}
	if (!ret)
		printf("check: ok, all %ld rows equal the reference evaluation "
		       "(direct loops over the columns, no hash tables, no generated code)\n",
		       ref->rows);
	return ret;
}

/*
 * --count-rows: the rows each operator produced in a run, printed and
 * checked against what is known without the counters: a scan produces its
 * table's rows, the root group-by its result's, and the root's input the
 * sum of the result's count(*), which the reference evaluation checked.
 * 0, or -1 after a "check: FAILED" line.
 */
static int print_row_counts(const struct execution *e, const struct database *db, long repeat)
{
	const struct plan *plan = &e->q->plan;
	const struct op *root = plan->root;
	const struct result *res = &e->result;
	int i, ret = 0;

	printf("rows produced a run:");
	for (i = 0; i < plan->nr_ops; i++)
		printf("%s %s %lu", i ? "," : "", plan->ops[i].name,
		       e->rows_out[plan->ops[i].number] / (unsigned long)repeat);
	printf("\n");
	for (i = 0; i < plan->nr_ops; i++) {
		const struct op *op = &plan->ops[i];
		unsigned long got = e->rows_out[op->number] / (unsigned long)repeat;
		unsigned long want;

		if (op->kind == OP_SCAN)
			want = database_table(db, op->table)->rows;
		else if (op == root)
			want = (unsigned long)res->rows;
		else
			continue;
		if (got != want || e->rows_out[op->number] % (unsigned long)repeat) {
			printf("check: FAILED: %s produced %lu rows a run, not %lu\n", op->name,
			       got, want);
			ret = -1;
		}
	}
	for (i = 0; i < root->nr_aggregates; i++) {
		unsigned long want = 0;
		long r;

		if (root->aggregates[i].fn != AGG_COUNT)
			continue;
		for (r = 0; r < res->rows; r++)
			want += (unsigned long)res->values[r * res->width + 1 + i];
		if (e->rows_out[root->input->number] != want * (unsigned long)repeat) {
			printf("check: FAILED: %s produced %lu rows a run; the result counts %lu\n",
			       root->input->name,
			       e->rows_out[root->input->number] / (unsigned long)repeat, want);
			ret = -1;
		}
		break;
	}
	if (!ret)
		printf("check: row counts ok (scans, the group-by's input against count(*), "
		       "its output)\n");
	return ret;
}

static int write_times(const char *path, const struct execution *execs, int n,
		       enum merge_mode merge, long repeat)
{
	FILE *f = fopen(path, "w");
	const char *sep;
	int i, j, k;

	if (!f) {
		fprintf(stderr, "tailor-engine: cannot write %s: %m\n", path);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct execution *e = &execs[i];

		fprintf(f, "query=%s client=%d query_id=%" PRIu64 " pid=%d exec_cpu_ns=%" PRIu64
			" exec_wall_ns=%" PRIu64 " compile_ns=%" PRIu64
			" rows=%ld extra_units=%lu extra_ns=%.0f merge=%s merge_wall_ns=%" PRIu64
			" repeat=%ld opt=",
			e->q->plan.query, e->client + 1, e->query_id, (int)getpid(), e->cpu_ns,
			e->wall_ns, e->q->compile_ns, e->result.rows, e->extra_units,
			(double)e->extra_units * e->q->unit_ns, merge_mode_name(merge),
			e->merge_wall_ns, repeat);
		/* Each pipeline's optimization level, in execution order: --feedback-times. */
		for (k = 0; k < e->q->low.nr_done; k++) {
			int opt = e->q->low.pipelines[e->q->low.order[k]].opt;

			fprintf(f, "%s%d:%s", k ? "," : "", k + 1,
				fb_level_name(opt < 0 ? FB_DEFAULT_LEVEL : opt));
		}
		/* The order each filter of several terms tested them in: --feedback-times. */
		for (k = 0, sep = " terms="; k < e->q->plan.nr_ops; k++) {
			const struct op *flt = &e->q->plan.ops[k];

			if (flt->kind != OP_FILTER || flt->nr_conjuncts < 2)
				continue;
			fprintf(f, "%s%d:", sep, flt->number);
			for (j = 0; j < flt->nr_conjuncts; j++)
				fprintf(f, "%s%d", j ? "." : "", flt->conjunct_order[j]);
			sep = ",";
		}
		if (e->q->low.count_rows) {
			/* Rows a run, by operator number: 1:rows,2:rows,... */
			fprintf(f, " op_rows=");
			for (k = 1; k <= e->q->plan.nr_ops; k++)
				fprintf(f, "%s%d:%lu", k > 1 ? "," : "", k,
					e->rows_out[k] / (unsigned long)repeat);
		}
		fputc('\n', f);
	}
	if (fclose(f)) {
		fprintf(stderr, "tailor-engine: cannot write %s: %m\n", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct query_run runs[MAX_QUERIES];
	uint64_t part_task[NR_PARTS], saved, saved_word, t0, engine_tag, wall0, wall;
	struct execution *execs;
	struct client *clients;
	struct dict_levels levels;
	struct database db;
	struct pool *pool;
	struct options o;
	char dir[PATH_MAX];
	int ret, i, j, c, nr_execs, failed = 0;

	/*
	 * Hash tables are built and freed at every execution; glibc would
	 * hand their large blocks back to the kernel each time and fault
	 * them in again, so that page faults, not the query, took the time.
	 * Keep freed memory for reuse, as an engine's own allocator would.
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 30);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	if (o.explain_analyze)
		return run_explain_analyze(&o);
	for (i = 0; i < o.nr_queries; i++)
		build_plan(&runs[i], o.queries[i], &o);
	for (i = 0; i < o.nr_extra; i++) {
		int found = 0;

		for (j = 0; j < o.nr_queries && !found; j++)
			found = !!plan_find_op(&runs[j].plan, o.extra_op[i]);
		if (!found)
			return usage_error("--extra: no operator '%s' in the queries run, or "
					   "several (--explain shows them)", o.extra_op[i]);
	}
	atexit(feedback_release);
	for (; nr_feedback < o.nr_feedback; nr_feedback++) {
		struct fb_input *in = &feedback[nr_feedback];

		if (fb_profile_read(&in->profile, o.feedback[nr_feedback]))
			return 1;
		in->times_path = o.feedback_times[nr_feedback];
		if (in->times_path) {
			if (fb_times_read(&in->times, in->times_path)) {
				nr_feedback++;	/* released at exit with the others */
				return 1;
			}
			in->have_times = 1;
		}
	}
	if (make_work_dir(&o, dir, sizeof(dir)) || dict_setup(&levels, &o, part_task))
		return 1;
	/* LLVM's perf listener writes under $JITDUMPDIR/.debug/jit/, else under $HOME. */
	if (o.backend == LOWER_BACKEND_LLVM && setenv("JITDUMPDIR", dir, 0)) {
		fprintf(stderr, "tailor-engine: setenv: %m\n");
		return 1;
	}
	/* Everything below runs under a runtime part's tag, down to the frees. */
	engine_tag = tailor_tag_set(part_task[PART_ENGINE]);

	saved = tailor_tag_set(part_task[PART_DATAGEN]);
	t0 = now_ns(CLOCK_MONOTONIC);
	ret = database_generate(&db, o.scale);
	tailor_tag_restore(saved);
	if (ret)
		return 1;
	printf("data: TPC-H-like at scale %g: %zu lineitem, %zu orders, %zu part, %zu customer, "
	       "%zu supplier rows (%.0f ms)\n", o.scale, db.tables[T_LINEITEM].rows,
	       db.tables[T_ORDERS].rows, db.tables[T_PART].rows, db.tables[T_CUSTOMER].rows,
	       db.tables[T_SUPPLIER].rows, (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	printf("generated code: %s\n", dir);

	/*
	 * The word names code generation too: LLVM compiles in this process,
	 * and its code, built without -ffixed-r15, uses r15 for its own values.
	 */
	saved = tailor_tag_set(part_task[PART_CODEGEN]);
	saved_word = tailor_tag_word_set(part_task[PART_CODEGEN] << LOWER_WORD_TASK_SHIFT);
	for (i = 0; i < o.nr_queries; i++)
		if (prepare_query(&runs[i], o.queries[i], &o, &db, &levels, dir,
				  feedback, nr_feedback)) {
			tailor_tag_word_restore(saved_word);
			tailor_tag_restore(saved);
			return 1;
		}
	tailor_tag_word_restore(saved_word);
	tailor_tag_restore(saved);
	if (levels.dict) {
		/*
		 * The code it describes: this program (the runtime's shared
		 * lines), and each query's library from the C backend (LLVM's
		 * code is in anonymous memory, named through the jitdump).
		 */
		tailor_dict_module_of(levels.dict, (const void *)database_generate);
		for (i = 0; i < o.nr_queries; i++)
			if (o.backend != LOWER_BACKEND_LLVM && runs[i].module.nr_pipelines)
				tailor_dict_module_of(levels.dict,
						      (const void *)runs[i].module.pipelines[0]);
		ret = tailor_dict_write(levels.dict, o.dict);
		if (ret < 0) {
			fprintf(stderr, "tailor-engine: cannot write the dictionary %s: %s\n",
				o.dict, strerror(-ret));
			return 1;
		}
	}

	if (o.explain)
		for (i = 0; i < o.nr_queries; i++) {
			printf("\n== query %s\n", runs[i].plan.query);
			explain(&runs[i]);
		}

	/* Client c runs every query, starting at the c-th: different queries overlap. */
	nr_execs = o.clients * o.nr_queries;
	execs = calloc((size_t)nr_execs, sizeof(*execs));
	clients = calloc((size_t)o.clients, sizeof(*clients));
	pool = execs && clients ? pool_start(o.threads, part_task[PART_POOL]) : NULL;
	if (!pool) {
		if (!execs || !clients)
			fprintf(stderr, "tailor-engine: out of memory\n");
		free(execs);
		free(clients);
		return 1;
	}
	runtime_set_merge(pool, o.merge);
	for (c = 0; c < o.clients; c++) {
		clients[c] = (struct client){ .execs = execs + c * o.nr_queries,
					      .nr_execs = o.nr_queries, .pool = pool,
					      .repeat = o.repeat,
					      .engine_tag = part_task[PART_ENGINE] };
		for (i = 0; i < o.nr_queries; i++) {
			struct query_run *q = &runs[(c + i) % o.nr_queries];

			clients[c].execs[i] = (struct execution){
				.q = q, .client = c, .query_id = q->low.query_ids[c] };
		}
	}
	wall0 = now_ns(CLOCK_MONOTONIC);
	if (run_clients(clients, o.clients))
		failed = 1;
	wall = now_ns(CLOCK_MONOTONIC) - wall0;
	pool_stop(pool);

	for (i = 0; i < nr_execs; i++) {
		struct execution *e = &execs[i];
		struct query_run *q = e->q;

		if (o.clients > 1)
			printf("\n== query %s, client %d: %s\n%s\n", q->plan.query, e->client + 1,
			       query_find(q->plan.query)->summary, q->plan.sql);
		else
			printf("\n== query %s: %s\n%s\n", q->plan.query,
			       query_find(q->plan.query)->summary, q->plan.sql);
		if (e->extra_units) {
			if (!q->unit_ns) {
				saved = tailor_tag_set(part_task[PART_CALIBRATE]);
				q->unit_ns = calibrate_work(&q->module);
				tailor_tag_restore(saved);
			}
			printf("extra work: %lu units of %.3f ns = %.1f ms CPU (calibrated)\n",
			       e->extra_units, q->unit_ns,
			       (double)e->extra_units * q->unit_ns / 1e6);
		}
		printf("compiled in %.1f ms (%s), executed %ld time%s in %.1f ms CPU, %.1f ms wall\n",
		       (double)q->compile_ns / 1e6, q->so_path, o.repeat, o.repeat > 1 ? "s" : "",
		       (double)e->cpu_ns / 1e6, (double)e->wall_ns / 1e6);
		saved = tailor_tag_set(part_task[PART_CHECK]);
		result_sort(&e->result);
		print_result(e, o.rows);
		failed |= check_result(e, &db) != 0;
		if (o.count_rows)
			failed |= print_row_counts(e, &db, o.repeat) != 0;
		tailor_tag_restore(saved);
	}
	printf("\n%d execution%s by %d client%s on %d worker thread%s in %.1f ms wall (--merge %s)\n",
	       nr_execs, nr_execs > 1 ? "s" : "", o.clients, o.clients > 1 ? "s" : "",
	       o.threads, o.threads > 1 ? "s" : "", (double)wall / 1e6, merge_mode_name(o.merge));
	if (o.times && write_times(o.times, execs, nr_execs, o.merge, o.repeat))
		failed = 1;
	for (i = 0; i < nr_execs; i++)
		result_free(&execs[i].result);
	free(execs);
	free(clients);
	for (i = 0; i < o.nr_queries; i++) {
		result_free(&runs[i].reference);
		lower_free(&runs[i].low);
		jit_unload(&runs[i].module);
	}
	if (levels.dict)
		tailor_dict_free(levels.dict);
	database_free(&db);
	tailor_tag_restore(engine_tag);
	return failed;
}

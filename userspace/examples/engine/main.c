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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "database.h"
#include "jit.h"
#include "lower.h"
#include "plan.h"
#include "reference.h"
#include "runtime.h"
#include "tailor/dictionary.h"
#include "tailor/tag.h"

#define MAX_QUERIES	16
#define MAX_EXTRA	16

static const char usage_text[] =
"usage: tailor-engine [options] [QUERY...]\n"
"\n"
"Run queries of a small compiling engine over TPC-H-like data: each plan\n"
"is lowered to pipelines of tasks, then to C, compiled with the system C\n"
"compiler (-g, r15 reserved as the tag register) into a shared object,\n"
"loaded and run.  Each result is printed and checked against a second,\n"
"independent evaluation; a difference is an error (exit 1).\n"
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
"      --cc CC           the C compiler (default: $CC, else cc)\n"
"  -x, --extra OP=N      add N units of known work (a dependent multiply\n"
"                        chain) per tuple to operator OP of each query that\n"
"                        has it: its number (3), name (HashJoin#3) or kind\n"
"                        when unique (join).  The accuracy oracle's knob.\n"
"  -t, --times FILE      write measured times: a line per query with its\n"
"                        execution CPU and wall time in ns, and the\n"
"                        --extra work done (units, and their CPU time\n"
"                        from a calibration run of the same loop)\n"
"  -n, --repeat N        execute each compiled query N times (default 1);\n"
"                        times are the sum, the result the last run's\n"
"  -e, --explain         print each plan and its pipelines\n"
"  -r, --rows N          result rows to print per query (default 10)\n"
"  -h, --help            this text\n"
"\n"
"Profile it:  tailor record -o q.rec -- tailor-engine -d q.dict fig3\n"
"             tailor report -i q.rec -d q.dict --view plan\n";

struct options {
	double scale;
	const char *dict, *work_dir, *cc, *times;
	const char *extra_op[MAX_EXTRA];
	uint64_t extra_n[MAX_EXTRA];
	int nr_extra, explain, rows;
	long repeat;
	const char *queries[MAX_QUERIES];
	int nr_queries;
};

struct query_run {
	struct plan plan;
	struct lowered low;
	struct jit_module module;
	char c_path[PATH_MAX], so_path[PATH_MAX];
	uint64_t compile_ns, cpu_ns, wall_ns;
	unsigned long extra_units;	/* oracle work units executed */
	double unit_ns;			/* CPU time of one, measured */
	struct result result;
};

/* The engine's own phases, named runtime parts in the dictionary. */
enum { PART_ENGINE, PART_DATAGEN, PART_CODEGEN, PART_CHECK, PART_CALIBRATE, NR_PARTS };
static const char *const part_names[NR_PARTS] = {
	[PART_ENGINE] = "[runtime] engine: setup, output, teardown",
	[PART_DATAGEN] = "[runtime] data generation",
	[PART_CODEGEN] = "[runtime] code generation",
	[PART_CHECK] = "[runtime] result check",
	[PART_CALIBRATE] = "[runtime] calibration of --extra work",
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *out)
{
	char list[2048];
	size_t n = 0;
	const struct query_def *q;

	for (q = queries; q->name; q++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "  %-10s %s\n", q->name,
				      q->summary);
	fprintf(out, usage_text, list);
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
		{ "extra", required_argument, NULL, 'x' },
		{ "times", required_argument, NULL, 't' },
		{ "explain", no_argument, NULL, 'e' },
		{ "rows", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c, i;

	memset(o, 0, sizeof(*o));
	o->scale = 0.02;
	o->rows = 10;
	o->repeat = 1;
	o->cc = getenv("CC");
	while ((c = getopt_long(argc, argv, "s:d:w:x:t:er:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			o->scale = strtod(optarg, &end);
			if (errno || *end || !(o->scale > 0) || o->scale > 10)
				return usage_error("invalid --scale '%s': expected a number in (0, 10]", optarg);
			break;
		case 'd':
			o->dict = optarg;
			break;
		case 'w':
			o->work_dir = optarg;
			break;
		case 'C':
			o->cc = optarg;
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
			break;
		case 'e':
			o->explain = 1;
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
	return 0;
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
	/* Tags name tasks; reports climb from there to any level. */
	ret |= tailor_dict_tag_field(lv->dict, lv->task, 0, 16);
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

/* Lower, write, compile and load the plan built by build_plan(). */
static int prepare_query(struct query_run *q, const char *name, const struct options *o,
			 const struct database *db, struct dict_levels *lv, const char *dir)
{
	uint64_t t0;

	if (lower_plan(&q->low, &q->plan, db, lv))
		return -1;
	if (strlen(dir) > PATH_MAX - 64) {
		fprintf(stderr, "tailor-engine: the work directory's path is too long\n");
		return -1;
	}
	snprintf(q->c_path, sizeof(q->c_path), "%.*s/%.32s.c", PATH_MAX - 64, dir, name);
	snprintf(q->so_path, sizeof(q->so_path), "%.*s/%.32s.so", PATH_MAX - 64, dir, name);
	if (lower_write_c(&q->low, q->c_path))
		return -1;
	t0 = now_ns(CLOCK_MONOTONIC);
	if (jit_compile(o->cc, q->c_path, q->so_path))
		return -1;
	q->compile_ns = now_ns(CLOCK_MONOTONIC) - t0;
	return jit_load(&q->module, q->so_path);
}

/* One run of the compiled pipelines over fresh hash tables. */
static void run_pipelines(struct query_run *q)
{
	const long *columns[LOWER_MAX_SLOTS];
	long rows[LOWER_MAX_SLOTS];
	void *hts[PLAN_MAX_OPERATORS];
	struct query_ctx ctx;
	int i;

	for (i = 0; i < q->low.nr_columns; i++)
		columns[i] = (const long *)q->low.columns[i]->values;
	for (i = 0; i < q->low.nr_tables; i++)
		rows[i] = (long)q->low.tables[i]->rows;
	for (i = 0; i < q->low.nr_hts; i++)
		hts[i] = q->low.hts[i].kind == HT_JOIN ? join_table_new(q->low.hts[i].width) :
							  group_table_new(q->low.hts[i].width);
	result_free(&q->result);
	result_init(&q->result, q->low.result_width);
	ctx = (struct query_ctx){ &runtime_api, columns, rows, hts, &q->result, &q->extra_units };
	/*
	 * Generated lines are attributed through their links, whatever the
	 * tag; without one, kernel work they cause stays [kernel] instead of
	 * going to the query's runtime part.
	 */
	for (i = 0; i < q->module.nr_pipelines; i++) {
		uint64_t saved = tailor_tag_set(0);

		q->module.pipelines[i](&ctx);
		tailor_tag_restore(saved);
	}
	for (i = 0; i < q->low.nr_hts; i++) {
		if (q->low.hts[i].kind == HT_JOIN)
			join_table_free(hts[i]);
		else
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

/* The engine's own work in between runs under the query's runtime tag. */
static void execute_query(struct query_run *q, long repeat)
{
	uint64_t saved_tag, cpu0, wall0;
	long r;

	saved_tag = tailor_tag_set(q->low.runtime_task);
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	wall0 = now_ns(CLOCK_MONOTONIC);
	for (r = 0; r < repeat; r++)
		run_pipelines(q);
	q->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	q->wall_ns = now_ns(CLOCK_MONOTONIC) - wall0;
	tailor_tag_restore(saved_tag);
}

static void print_result(const struct query_run *q, int max_rows)
{
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
	for (r = 0; r < q->result.rows && r < max_rows; r++) {
		for (i = 0; i < q->result.width; i++)
			printf(i ? " %18ld" : "  %18ld", q->result.values[r * q->result.width + i]);
		printf("\n");
	}
	if (q->result.rows > max_rows)
		printf("  ... (%ld rows in all)\n", q->result.rows);
}

/* 0 if the result equals the reference evaluation's. */
static int check_result(struct query_run *q, const struct database *db)
{
	struct result ref;
	long r;
	int i, ret = 0;

	ret = reference_evaluate(q->plan.query, db, &ref);
	if (ret) {
		printf("check: FAILED: %s for %s\n", ret == -2 ? "out of memory in the reference "
		       "evaluation" : "no reference evaluation", q->plan.query);
		return -1;
	}
	if (ref.width != q->result.width || ref.rows != q->result.rows) {
		printf("check: FAILED: %ld rows of %ld values, the reference has %ld of %ld\n",
		       q->result.rows, q->result.width, ref.rows, ref.width);
		ret = -1;
	}
	for (r = 0; !ret && r < ref.rows; r++)
		for (i = 0; i < ref.width; i++) {
			long got = q->result.values[r * ref.width + i];
			long want = ref.values[r * ref.width + i];

			if (got != want) {
				printf("check: FAILED: row %ld value %d is %ld, the reference says %ld\n",
				       r + 1, i + 1, got, want);
				ret = -1;
				break;
			}
		}
	if (!ret)
		printf("check: ok, all %ld rows equal the reference evaluation "
		       "(direct loops over the columns, no hash tables, no generated code)\n",
		       ref.rows);
	result_free(&ref);
	return ret;
}

static int write_times(const char *path, struct query_run *runs, int n)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		fprintf(stderr, "tailor-engine: cannot write %s: %m\n", path);
		return -1;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "query=%s pid=%d exec_cpu_ns=%" PRIu64
			" exec_wall_ns=%" PRIu64 " compile_ns=%" PRIu64
			" rows=%ld extra_units=%lu extra_ns=%.0f\n",
			runs[i].plan.query, (int)getpid(), runs[i].cpu_ns,
			runs[i].wall_ns,
			runs[i].compile_ns, runs[i].result.rows, runs[i].extra_units,
			(double)runs[i].extra_units * runs[i].unit_ns);
	if (fclose(f)) {
		fprintf(stderr, "tailor-engine: cannot write %s: %m\n", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct query_run runs[MAX_QUERIES];
	uint64_t part_task[NR_PARTS], saved, t0, engine_tag;
	struct dict_levels levels;
	struct database db;
	struct options o;
	char dir[PATH_MAX];
	int ret, i, j, failed = 0;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
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
	if (make_work_dir(&o, dir, sizeof(dir)) || dict_setup(&levels, &o, part_task))
		return 1;
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

	saved = tailor_tag_set(part_task[PART_CODEGEN]);
	for (i = 0; i < o.nr_queries; i++)
		if (prepare_query(&runs[i], o.queries[i], &o, &db, &levels, dir)) {
			tailor_tag_restore(saved);
			return 1;
		}
	tailor_tag_restore(saved);
	if (levels.dict) {
		ret = tailor_dict_write(levels.dict, o.dict);
		if (ret < 0) {
			fprintf(stderr, "tailor-engine: cannot write the dictionary %s: %s\n",
				o.dict, strerror(-ret));
			return 1;
		}
	}

	for (i = 0; i < o.nr_queries; i++) {
		struct query_run *q = &runs[i];

		printf("\n== query %s: %s\n%s\n", q->plan.query, query_find(q->plan.query)->summary,
		       q->plan.sql);
		if (o.explain)
			explain(q);
		execute_query(q, o.repeat);
		if (q->extra_units) {
			saved = tailor_tag_set(part_task[PART_CALIBRATE]);
			q->unit_ns = calibrate_work(&q->module);
			tailor_tag_restore(saved);
			printf("extra work: %lu units of %.3f ns = %.1f ms CPU (calibrated)\n",
			       q->extra_units, q->unit_ns,
			       (double)q->extra_units * q->unit_ns / 1e6);
		}
		printf("compiled in %.1f ms (%s), executed %ld time%s in %.1f ms CPU, %.1f ms wall\n",
		       (double)q->compile_ns / 1e6, q->so_path, o.repeat, o.repeat > 1 ? "s" : "",
		       (double)q->cpu_ns / 1e6, (double)q->wall_ns / 1e6);
		saved = tailor_tag_set(part_task[PART_CHECK]);
		result_sort(&q->result);
		print_result(q, o.rows);
		failed |= check_result(q, &db) != 0;
		tailor_tag_restore(saved);
	}
	if (o.times && write_times(o.times, runs, o.nr_queries))
		failed = 1;
	for (i = 0; i < o.nr_queries; i++) {
		result_free(&runs[i].result);
		lower_free(&runs[i].low);
		jit_unload(&runs[i].module);
	}
	if (levels.dict)
		tailor_dict_free(levels.dict);
	database_free(&db);
	tailor_tag_restore(engine_tag);
	return failed;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor report / tailor timeline: options, inputs, the one aggregation
 * pass, and where its view or profile goes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "report.h"
#include <sys/stat.h>
#include <sys/utsname.h>
#include "tailor/dictionary_reader.h"
#include "tailor/kallsyms.h"
#include "tailor/symbols.h"
#include "tailor/x86_regs.h"
#include "util/path.h"

#define MAX_DICTS	64
#define MAX_STACK	16
#define MAX_QUERIES	256
#define MAX_LANE_COLUMNS	1000
#define PROGRESS_SAMPLES	(4u << 20)

const struct view *const views[] = {
	&view_table, &view_plan, &view_source, &view_timeline, &view_memory, &view_lanes,
	&view_parallelism, NULL,
};

/* The --view and --format values, from their tables. */
static const char *const *view_names(void)
{
	static const char *names[16];
	int i;

	for (i = 0; views[i] && i < 15; i++)
		names[i] = views[i]->name;
	return names;
}

static const char *const *format_names(void)
{
	static const char *names[16];
	int i;

	for (i = 0; exporters[i] && i < 15; i++)
		names[i] = exporters[i]->name;
	return names;
}

enum {
	OPT_TOP = OPT_LONG_ONLY, OPT_SOURCE_FILE, OPT_HTML, OPT_SVG, OPT_TIME, OPT_TID,
	OPT_PID, OPT_TSC_KHZ, OPT_TAG_REGISTER, OPT_KERNEL_APART, OPT_STACK, OPT_QUERY,
	OPT_NO_DEMANGLE, OPT_EVENT, OPT_CHILDREN, OPT_KALLSYMS, OPT_DEBUG_DIR,
	OPT_BY_QUERY, OPT_CRITICAL,
};

static const struct cli_option report_options[] = {
	{ .id = 'i', .name = "input", .arg = "FILE",
	  .help = "a tailor recording, or a perf.data written by\n"
		  "perf record --intr-regs=r15 (default tailor.rec)",
	  .complete = "@file",
	  .section = "input" },
	{ .id = 'e', .name = "event", .arg = "NAME",
	  .help = "the sampling event whose profile to show, by perf's\n"
		  "name for it (cpu-clock, page-faults; modifiers such\n"
		  "as :u may be left out).  A perf.data of several\n"
		  "events (perf record -e A,B) holds a profile per\n"
		  "event, never mixed: the first by default, the\n"
		  "others named in the header" },
	{ .id = 'd', .name = "dict", .arg = "FILE",
	  .help = "a Tagging Dictionary (repeatable: one per query)",
	  .complete = "@file" },
	{ .id = OPT_TAG_REGISTER, .name = "tag-register", .arg = "R",
	  .help = "the register holding tags (default: the\n"
		  "dictionary's tag-register line, else r15)",
	  .complete = "r15 r14 r13 r12 rbx rbp" },
	{ .id = OPT_KALLSYMS, .name = "kallsyms", .arg = "FILE",
	  .help = "kernel function names from this copy of the\n"
		  "recording kernel's /proc/kallsyms (as root:\n"
		  "addresses are hidden otherwise).  By default, a\n"
		  "tailor recording's own (tailor record stores the\n"
		  "functions its samples fell in); for a perf.data,\n"
		  "/proc/kallsyms, only where the file was recorded\n"
		  "on this host with this kernel release; the header\n"
		  "says which was used, or why none",
	  .complete = "@file" },
	{ .id = OPT_KERNEL_APART, .name = "kernel-apart",
	  .help = "keep every kernel sample in [kernel].  By default\n"
		  "a kernel sample of the software clock, which holds\n"
		  "the user registers at kernel entry, goes to the\n"
		  "component linked to the code the thread entered\n"
		  "from (with rip recorded), else to the one its tag\n"
		  "names: kernel work on their behalf, such as page\n"
		  "faults in a hash table" },
	{ .id = OPT_TSC_KHZ, .name = "tsc-khz", .arg = "N|module",
	  .help = "TSC frequency in kHz for a file whose times are raw\n"
		  "TSC ticks and that carries none (a perf.data of\n"
		  "perf record -k 12); 'module' reads the one tailor.ko\n"
		  "measured on this host.  A recording carries its own;\n"
		  "nothing is read from the host unless asked.",
	  .complete = "module" },
	{ .id = 'l', .name = "level", .arg = "L",
	  .help = "operator, pipeline, ... (a dictionary level),\n"
		  "function, line or instruction (default: operator\n"
		  "if a dictionary has it, else its highest level,\n"
		  "else function)",
	  .complete = "operator pipeline query task function line instruction",
	  .section = "what to show" },
	{ .id = OPT_DEBUG_DIR, .name = "debug-dir", .arg = "DIR",
	  .help = "look for objects' separate debug files (symbols\n"
		  "and DWARF split off a stripped file) under DIR as\n"
		  "well: by build-id (DIR/.build-id/xx/rest.debug),\n"
		  "then by .gnu_debuglink; by default they are looked\n"
		  "for beside the file, in its .debug/ and under\n"
		  "/usr/lib/debug, as gdb and libdw do",
	  .complete = "@file" },
	{ .id = OPT_NO_DEMANGLE, .name = "no-demangle",
	  .help = "C++, Rust and D functions by their symbols'\n"
		  "names (_ZN3eng4JoinImE5probeEm); by default they\n"
		  "are demangled as perf report shows them, without\n"
		  "parameters (eng::Join<unsigned long>::probe)" },
	{ .id = 'v', .name = "view", .arg = "V",
	  .help = "table (default): cost per component;\n"
		  "plan: the plan tree with each component's share;\n"
		  "source: the source annotated per line with its\n"
		  "share and owner; timeline: activity over time;\n"
		  "memory: data addresses over time per component;\n"
		  "lanes: per thread (pid, tid, comm), the query and\n"
		  "the component it ran over time -- in text a line\n"
		  "per thread, a character per column of time (see\n"
		  "--bucket) with a legend, '.' where it ran nothing;\n"
		  "in CSV and JSON its runs: pid, tid, begin_ns,\n"
		  "end_ns, query, component, samples.  With context\n"
		  "switches, a second line per thread: '=' running,\n"
		  "'~' runnable, '_' blocked (JSON: its states);\n"
		  "parallelism: where the run was serial, from the\n"
		  "context switches of one process's threads (--pid,\n"
		  "else the recorded one): GAPP's CMetric, each\n"
		  "interval between switches weighted by 1 / the\n"
		  "threads able to run in it; per thread, and per\n"
		  "query, component, function and line, ranked by\n"
		  "the CMetric of the critical slices (see\n"
		  "--critical), with the time N threads could run.\n"
		  "Kernel time by the function that entered it.\n"
		  "CSV: the code table; JSON: also threads, slices,\n"
		  "active, timeline and summary.  Needs switches:\n"
		  "tailor record (by default) or perf record\n"
		  "--switch-events; with -e sched:sched_waking too,\n"
		  "a woken thread can run from its wakeup, and each\n"
		  "thread's most frequent waker is shown",
	  .choices = view_names },
	{ .id = OPT_CHILDREN, .name = "children",
	  .help = "table view at the function level: each function's\n"
		  "total beside its self, as perf report --children:\n"
		  "the samples with it anywhere on their call stack\n"
		  "(perf record -g), most total first; functions\n"
		  "only ever callers have self 0" },
	{ .id = OPT_CRITICAL, .name = "critical", .arg = "N",
	  .help = "parallelism view: a thread's timeslice is critical\n"
		  "when the average number of threads able to run\n"
		  "during it is at most N (default: half the\n"
		  "process's threads that ran, as GAPP), e.g. 1 or 1.5" },
	{ .id = OPT_BY_QUERY, .name = "by-query",
	  .help = "table and plan views: a section per query (the\n"
		  "dictionary level 'query', one execution of a query\n"
		  "each), most samples first, headed by the query's\n"
		  "samples and share of all; the rows' shares are\n"
		  "within their query.  CSV and JSON: one table with\n"
		  "a query column (and query_samples, query_share);\n"
		  "JSON also a table of the queries.  Samples no query\n"
		  "reached form sections of their own ([kernel] ...).\n"
		  "Needs a dictionary that declares 'query'; other\n"
		  "views and the profile formats refuse it" },
	{ .id = 'f', .name = "format", .arg = "F",
	  .help = "text (default), csv or json: the view;\n"
		  "pprof (gzip'd profile.proto, for go tool pprof),\n"
		  "folded (stacks for flame graphs) or chrome (trace\n"
		  "JSON for ui.perfetto.dev and speedscope): the\n"
		  "whole profile, whatever the view",
	  .choices = format_names },
	{ .id = 'o', .name = "output", .arg = "FILE",
	  .help = "write there instead of to stdout (pprof needs it)",
	  .complete = "@file" },
	{ .id = OPT_STACK, .name = "stack", .arg = "LEVELS",
	  .help = "the frames of pprof, folded and chrome stacks, root\n"
		  "first, comma-separated (default: query, where a\n"
		  "dictionary declares it, then the dictionary's\n"
		  "levels from the top down to --level, then function\n"
		  "and, but for chrome, line).  pprof labels every\n"
		  "sample with its query whatever the stack",
	  .complete = "query,pipeline,operator,function,line operator,function function,line" },
	{ .id = 'b', .name = "bucket", .arg = "T",
	  .help = "timeline bucket width, e.g. 500us, 1ms (default:\n"
		  "about 40 buckets over the window); the lanes\n"
		  "view's column width (default: about 64 columns;\n"
		  "at most 1000)" },
	{ .id = OPT_TOP, .name = "top", .arg = "N",
	  .help = "rows in text tables (default 25; 0: all), per\n"
		  "section with --by-query; files of the source view,\n"
		  "costliest first" },
	{ .id = OPT_SOURCE_FILE, .name = "source-file", .arg = "S",
	  .help = "source view: only files whose path contains S" },
	{ .id = OPT_HTML, .name = "html", .arg = "FILE",
	  .help = "also write a self-contained HTML report (table,\n"
		  "plan, timeline and memory plots, annotated source;\n"
		  "per query where a dictionary declares queries, and\n"
		  "the threads' lanes where more than one ran)",
	  .complete = "@file" },
	{ .id = OPT_SVG, .name = "svg", .arg = "FILE",
	  .help = "also write the timeline plot as SVG (with --view\n"
		  "lanes: the lanes plot)",
	  .complete = "@file" },
	{ .id = OPT_TIME, .name = "time", .arg = "FROM:TO",
	  .help = "only samples in this window since the first sample\n"
		  "(e.g. 10ms:250ms, :1s, 2s:)",
	  .complete = NULL,
	  .section = "filters" },
	{ .id = OPT_TID, .name = "tid", .arg = "LIST",
	  .help = "only these threads (comma-separated)" },
	{ .id = OPT_PID, .name = "pid", .arg = "LIST",
	  .help = "only these processes" },
	{ .id = OPT_QUERY, .name = "query", .arg = "Q[,Q...]",
	  .help = "only the samples whose component at the dictionary\n"
		  "level 'query' is Q: its name as reports show it\n"
		  "(or without the dictionary's label), or its\n"
		  "numeric id; every component so named or numbered.\n"
		  "Repeatable.  Every view and format; the samples of\n"
		  "other queries count as filtered out and end the\n"
		  "runs of their thread (lanes, trace slices).  A name\n"
		  "with a comma: give its id" },
	{ .id = 'h', .name = "help",
	  .help = "this text" },
	{ 0 }
};

/*
 * A jitdump's time on the profile's clock: the same clock, or
 * CLOCK_MONOTONIC in a recording on the TSC, through the pair of
 * readings tailor record took together and the TSC's frequency.
 */
static int jit_time(void *ctx, bool tsc, uint64_t *time)
{
	const struct session_info *info = ctx;
	__int128 ticks;

	if (info->time_unit == SESSION_TIME_NS)
		return !tsc && info->clock_monotonic ? 0 : -1;
	if (tsc)
		return 0;
	if (!info->ref_mono_ns || !info->mult)
		return -1;
	/* ns = ticks * mult >> shift, so ticks = ns << shift / mult. */
	ticks = ((__int128)*time - (__int128)info->ref_mono_ns) * ((__int128)1 << info->shift) /
		info->mult;
	if (ticks < -(__int128)info->ref_tsc)
		return -1;
	*time = (uint64_t)((__int128)info->ref_tsc + ticks);
	return 0;
}

static int embedded_file(void *ctx, const char *path, const void **data, size_t *len)
{
	return session_file(ctx, path, data, len);
}

/*
 * JIT files the recording carries come first, then those beside the
 * input (copied with it), then their paths.
 */
static int setup_jit(struct symbolizer *sym, const char *input, struct session *s)
{
	const struct session_info *info = session_info(s);
	char dir[4096];
	const char *slash = strrchr(input, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - input) : 1,
		 slash ? input : ".");
	if (slash == input)
		snprintf(dir, sizeof(dir), "/");
	return sym_set_jit_files(sym, embedded_file, s) ||
	       sym_set_jit_dir(sym, dir) ||
	       sym_set_jit_not_before(sym, info->start_wall_ns) ||
	       sym_set_jit_clock(sym, jit_time, (void *)info);
}

static int run_report(const struct cli_command *cmd, int argc, char **argv);

#define REPORT_DESCRIPTION \
	"Attribute the samples of a recording to the components of an abstraction\n" \
	"level -- operators, pipelines, or any level a Tagging Dictionary declares\n" \
	"-- and print a view of them, or export the profile.  Each sample's IP is\n" \
	"symbolized through the recorded mappings and DWARF to a source line; the\n" \
	"dictionary's links lead from the line up to the level; samples in shared\n" \
	"code are attributed by the tag register they captured.  What neither\n" \
	"reaches is reported as such: [kernel], the object it ran in\n" \
	"([libc.so.6]), [unknown], with the reason counted in the notes.\n" \
	"\n" \
	"Code a JIT put in anonymous memory is named as perf names it: through\n" \
	"its jitdump (jit-PID.dump, found by the JIT's mapping of it; functions,\n" \
	"source lines that go through the dictionary as DWARF's do, moves and\n" \
	"reused addresses by time) or its perf map (/tmp/perf-PID.map, names).\n" \
	"Each is read from the directory of the input first (a profile copied\n" \
	"with them), then from where the JIT wrote it; what is missing or\n" \
	"corrupt is said, with the samples it leaves unnamed.  A jitdump's times\n" \
	"count on the profile's clock: TSC, or CLOCK_MONOTONIC for a perf.data\n" \
	"recorded with -k mono.\n" \
	"\n" \
	"Where a dictionary declares the level 'query', each of its components is\n" \
	"one execution of a query (a client's run of a plan others run too), and\n" \
	"the thread's tag word tells executions of the same code apart:\n" \
	"--query keeps one or some, --by-query gives the table and plan a section\n" \
	"each, --view lanes shows what each thread ran when, and pprof labels\n" \
	"every sample with its query."

#define REPORT_EPILOGUE \
	"Durations take ns, us, ms or s.  Exit status: 0 done, 1 input unreadable\n" \
	"or output unwritable, 2 bad options, 3 done but the recording was cut\n" \
	"short (what it holds is reported).\n"

const struct cli_command cmd_report = {
	.name = "report",
	.summary = "attribute samples to operators, pipelines, functions, lines:\n"
		   "             cost table, plan tree, annotated source, timeline, memory,\n"
		   "             per-thread lanes; per query execution;\n"
		   "             export to pprof, folded stacks, Chrome trace",
	.synopsis = "usage: tailor report [options] [-i FILE]\n"
		    "       tailor timeline [options] [-i FILE]     (report --view timeline)",
	.description = REPORT_DESCRIPTION,
	.options = report_options,
	.epilogue = REPORT_EPILOGUE,
	.run = run_report,
};

const struct cli_command cmd_timeline = {
	.name = "timeline",
	.summary = "operator activity over time (report --view timeline)",
	.synopsis = "usage: tailor timeline [options] [-i FILE]     (report --view timeline)",
	.description = REPORT_DESCRIPTION,
	.options = report_options,
	.epilogue = REPORT_EPILOGUE,
	.run = run_report,
};

struct report_opts {
	const char *input, *level, *html, *svg, *tag_register, *output, *event, *kallsyms;
	const char *debug_dir;
	const struct view *view;
	const struct exporter *format;
	const char *dict_paths[MAX_DICTS];
	int nr_dicts;
	const char *stack[MAX_STACK];
	int nr_stack;
	char stack_buf[512];
	uint32_t tsc_khz;
	bool tsc_from_module, kernel_apart, bucket_given, critical_given, no_demangle, children;
	struct agg_options agg;
	uint32_t *tids, *pids;
	int top;
	const char *source_filter;
	char *queries[MAX_QUERIES];	/* --query, each its own copy */
	int nr_queries;
	char query_text[512];		/* the same, for the header */
	bool by_query;
	struct kallsyms *ksyms;		/* kernel functions' names, or NULL */
	uint64_t kernel_delta;		/* the profile's kernel addresses less the file's */
};

/* --query Q[,Q...]: each into o->queries. */
static int parse_queries(const struct cli_command *cmd, const char *val, struct report_opts *o)
{
	char *copy = strdup(val), *tok, *save = NULL;
	int before = o->nr_queries;
	size_t n;

	if (!copy)
		return cmd_fail(cmd, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_queries == MAX_QUERIES) {
			free(copy);
			return usage_error(cmd, "--query: at most %d queries", MAX_QUERIES);
		}
		o->queries[o->nr_queries] = strdup(tok);
		if (!o->queries[o->nr_queries]) {
			free(copy);
			return cmd_fail(cmd, "out of memory");
		}
		n = strlen(o->query_text);
		snprintf(o->query_text + n, sizeof(o->query_text) - n, "%s%s",
			 o->nr_queries ? ", " : "", tok);
		o->nr_queries++;
	}
	free(copy);
	if (o->nr_queries == before)
		return usage_error(cmd, "invalid value '%s' for --query: expected query names or ids separated by commas",
				   val);
	return 0;
}

static int parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0 || v > 1.8e19)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit) && v * units[i].mult < 1.8e19) {
			*ns = (uint64_t)(v * units[i].mult + 0.5);
			return 0;
		}
	}
	return -1;
}

static int parse_list(const char *s, uint32_t **list, int *n)
{
	char *copy = strdup(s), *tok, *save = NULL, *end;
	uint32_t *l;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v = strtoul(tok, &end, 10);

		if (*end || end == tok || v > UINT32_MAX || *tok == '-') {
			free(copy);
			return -1;
		}
		l = realloc(*list, (*n + 1) * sizeof(*l));
		if (!l) {
			free(copy);
			return -1;
		}
		*list = l;
		l[(*n)++] = (uint32_t)v;
	}
	free(copy);
	return *n ? 0 : -1;
}

static int parse_window(const struct cli_command *cmd, const char *val, struct agg_options *a)
{
	const char *colon = strchr(val, ':');
	char from[64];

	if (!colon)
		return usage_error(cmd, "invalid value '%s' for --time: expected FROM:TO, e.g. 10ms:20ms",
				   val);
	snprintf(from, sizeof(from), "%.*s", (int)(colon - val), val);
	a->from_ns = 0;
	a->to_ns = UINT64_MAX;
	if ((*from && parse_duration(from, &a->from_ns)) ||
	    (colon[1] && parse_duration(colon + 1, &a->to_ns)))
		return usage_error(cmd, "invalid value '%s' for --time: expected FROM:TO with durations like 10ms",
				   val);
	if (a->to_ns <= a->from_ns)
		return usage_error(cmd, "invalid value '%s' for --time: the window ends before it starts",
				   val);
	a->windowed = true;
	return 0;
}

static int parse_stack(const struct cli_command *cmd, const char *val, struct report_opts *o)
{
	char *tok, *save = NULL;

	snprintf(o->stack_buf, sizeof(o->stack_buf), "%s", val);
	o->nr_stack = 0;
	for (tok = strtok_r(o->stack_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_stack == MAX_STACK)
			return usage_error(cmd, "--stack: at most %d levels", MAX_STACK);
		o->stack[o->nr_stack++] = tok;
	}
	if (!o->nr_stack)
		return usage_error(cmd, "invalid value '%s' for --stack: expected levels separated by commas",
				   val);
	return 0;
}

static const struct view *view_find(const char *name)
{
	const struct view *const *v;

	for (v = views; *v; v++)
		if (!strcmp((*v)->name, name))
			return *v;
	return NULL;
}

/* 0 to go on, -1 after --help, or an exit code. */
static int parse_options(const struct cli_command *cmd, int argc, char **argv,
			 struct report_opts *o)
{
	const char *val;
	char choices[256];
	unsigned long v;
	char *end;
	int c, ret;

	while ((c = usage_next(cmd, argc, argv, &val)) != OPT_END) {
		switch (c) {
		case 'i':
			if (o->input)
				return usage_error(cmd, "one recording at a time (-i %s, then -i %s)",
						   o->input, val);
			o->input = val;
			break;
		case 'd':
			if (o->nr_dicts == MAX_DICTS)
				return usage_error(cmd, "at most %d dictionaries", MAX_DICTS);
			o->dict_paths[o->nr_dicts++] = val;
			break;
		case 'l':
			o->level = val;
			break;
		case 'v':
			o->view = view_find(val);
			if (!o->view)
				return usage_error(cmd, "invalid value '%s' for --view: expected %s", val,
						   usage_choices_text(view_names(), choices, sizeof(choices)));
			break;
		case 'f':
			o->format = exporter_find(val);
			if (!o->format)
				return usage_error(cmd, "invalid value '%s' for --format: expected %s", val,
						   usage_choices_text(format_names(), choices, sizeof(choices)));
			break;
		case 'o':
			if (!*val)
				return usage_error(cmd, "invalid value '' for -o/--output: expected a file name");
			o->output = val;
			break;
		case OPT_STACK:
			ret = parse_stack(cmd, val, o);
			if (ret)
				return ret;
			break;
		case OPT_QUERY:
			ret = parse_queries(cmd, val, o);
			if (ret)
				return ret;
			break;
		case OPT_BY_QUERY:
			o->by_query = true;
			break;
		case OPT_CRITICAL:
			o->agg.critical_threshold = strtod(val, &end);
			if (*end || end == val || !(o->agg.critical_threshold > 0) ||
			    o->agg.critical_threshold > 1e6)
				return usage_error(cmd, "invalid value '%s' for --critical: expected a number of threads above 0, like 1 or 1.5",
						   val);
			o->critical_given = true;
			break;
		case 'b':
			if (parse_duration(val, &o->agg.bucket_ns) || !o->agg.bucket_ns)
				return usage_error(cmd, "invalid value '%s' for --bucket: expected a duration like 500us or 1ms",
						   val);
			o->bucket_given = true;
			break;
		case OPT_TOP:
			errno = 0;
			v = strtoul(val, &end, 10);
			if (*end || end == val || *val == '-')
				return usage_error(cmd, "invalid value '%s' for --top: expected a number", val);
			if (v > 1000000 || errno == ERANGE)
				return usage_error(cmd, "--top %s is out of range: at most 1000000 rows (0: all)",
						   val);
			o->top = (int)v;
			break;
		case OPT_SOURCE_FILE:
			o->source_filter = val;
			break;
		case OPT_HTML:
			o->html = val;
			break;
		case OPT_SVG:
			o->svg = val;
			break;
		case OPT_TIME:
			ret = parse_window(cmd, val, &o->agg);
			if (ret)
				return ret;
			break;
		case OPT_TID:
			if (parse_list(val, &o->tids, &o->agg.nr_tids))
				return usage_error(cmd, "invalid value '%s' for --tid: expected thread ids separated by commas",
						   val);
			break;
		case OPT_PID:
			if (parse_list(val, &o->pids, &o->agg.nr_pids))
				return usage_error(cmd, "invalid value '%s' for --pid: expected process ids separated by commas",
						   val);
			break;
		case OPT_TSC_KHZ:
			if (!strcmp(val, "module")) {
				o->tsc_from_module = true;
				break;
			}
			v = strtoul(val, &end, 10);
			if (*end || end == val || !v || v > UINT32_MAX || *val == '-')
				return usage_error(cmd, "invalid value '%s' for --tsc-khz: expected a frequency in kHz, or 'module'",
						   val);
			o->tsc_khz = (uint32_t)v;
			break;
		case 'e':
			o->event = val;
			break;
		case OPT_KALLSYMS:
			o->kallsyms = val;
			break;
		case OPT_CHILDREN:
			o->children = true;
			break;
		case OPT_NO_DEMANGLE:
			o->no_demangle = true;
			break;
		case OPT_DEBUG_DIR:
			o->debug_dir = val;
			break;
		case OPT_KERNEL_APART:
			o->kernel_apart = true;
			break;
		case OPT_TAG_REGISTER:
			if (x86_register_number(val) < 0)
				return usage_error(cmd, "invalid value '%s' for --tag-register: expected an x86-64 register such as r15",
						   val);
			o->tag_register = val;
			break;
		case 'h':
			usage_print(cmd, stdout);
			return -1;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc && !o->input)
		o->input = argv[optind++];
	if (optind < argc)
		return usage_error(cmd, "one recording at a time ('%s' is extra)", argv[optind]);
	o->agg.tids = o->tids;
	o->agg.pids = o->pids;
	return 0;
}

/* tailor.ko's own measurement of this host's TSC, only when asked for. */
static int module_tsc_khz(const struct cli_command *cmd, uint32_t *khz)
{
	static const char path[] = "/sys/class/misc/tailor/tsc_khz_measured";
	unsigned int v = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return cmd_fail(cmd, "--tsc-khz module: cannot read %s (%m): is tailor.ko loaded?",
				path);
	if (fscanf(f, "%u", &v) != 1 || !v) {
		fclose(f);
		return cmd_fail(cmd, "--tsc-khz module: %s holds no frequency", path);
	}
	fclose(f);
	*khz = v;
	return 0;
}

static const char *default_level(struct tdict *const *dicts, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (tdict_level(dicts[i], "operator") > 0)
			return "operator";
	if (n && dicts[0]->nr_levels > 1)
		return dicts[0]->levels[dicts[0]->nr_levels - 1];
	return "function";
}

/*
 * The default frames of a stack: the dictionary's levels from the top
 * down to the report's level, then function and (but for traces, where a
 * slice per source line would drown the rest) line.
 */
static void default_stack(struct report_opts *o, struct tdict *const *dicts, bool line)
{
	bool query_first = false;
	int i, at = -1, query = -1;

	o->nr_stack = 0;
	/*
	 * The query outermost: the first dictionary's top level in the
	 * engine's (task < operator < pipeline < query); in front where the
	 * stack would not hold it otherwise (another dictionary declares it,
	 * or the level is not a dictionary's).
	 */
	for (i = 0; i < o->nr_dicts && query < 0; i++)
		query = tdict_level(dicts[i], ATTR_QUERY_LEVEL);
	if (o->nr_dicts) {
		at = tdict_level(dicts[0], o->level);
		if (query > 0 && strcmp(o->level, ATTR_QUERY_LEVEL) &&
		    (at <= 0 || tdict_level(dicts[0], ATTR_QUERY_LEVEL) < 0)) {
			o->stack[o->nr_stack++] = ATTR_QUERY_LEVEL;
			query_first = true;
		}
		if (at > 0)
			for (i = dicts[0]->nr_levels - 1; i >= at && o->nr_stack < MAX_STACK - 2; i--)
				if (!query_first || strcmp(dicts[0]->levels[i], ATTR_QUERY_LEVEL))
					o->stack[o->nr_stack++] = dicts[0]->levels[i];
	}
	o->stack[o->nr_stack++] = "function";
	if (line)
		o->stack[o->nr_stack++] = "line";
}

static void dict_label(const char *path, char *buf, size_t len)
{
	char *dot;

	snprintf(buf, len, "%s", path_base(path));
	dot = strrchr(buf, '.');
	if (dot && dot != buf)
		*dot = '\0';
}

/* A file that is another build now than the one the profile recorded. */
static void print_changed(void *arg, const char *path, const char *recorded, const char *now,
			  const char *copy)
{
	const struct cli_command *cmd = arg;
	char then[24], was[24];

	snprintf(then, sizeof(then), "%.12s", recorded);
	snprintf(was, sizeof(was), "%.12s", now);
	if (copy)
		fprintf(stderr, "tailor: %s: %s is %s now (build-id %s... then%s%s%s): named from the recorded build's copy %s\n",
			cmd->name, path, now[0] ? "another build" : "gone", then,
			now[0] ? ", " : "", now[0] ? was : "", now[0] ? "... now" : "", copy);
	else
		fprintf(stderr, "tailor: %s: %s is %s now (build-id %s... then%s%s%s) and no copy of the recorded build was found (perf's build-id cache ~/.debug/.build-id, /usr/lib/debug/.build-id, --debug-dir): its samples are left unnamed, as [%s]\n",
			cmd->name, path, now[0] ? "another build" : "gone", then,
			now[0] ? ", " : "", now[0] ? was : "", now[0] ? "... now" : "",
			path_base(path));
}

/* What came of the JIT files looked for: only those that matter. */
static void print_jit_problems(const struct cli_command *cmd, const struct symbolizer *sym)
{
	size_t i, n = sym_jit_nr_sources(sym);

	for (i = 0; i < n; i++) {
		const struct sym_jit_source *j = sym_jit_source(sym, i);
		const char *what = j->perf_map ? "perf map" : "jitdump";

		if (j->problem[0] && (j->unnamed || !j->perf_map))
			fprintf(stderr, "tailor: %s: %s %s: %s; %" PRIu64 " samples in process %" PRIu32 "'s anonymous memory unnamed\n",
				cmd->name, what, j->read_from ? j->read_from : j->path, j->problem,
				j->unnamed, j->pid);
		if (j->bad_lines)
			fprintf(stderr, "tailor: %s: perf map %s: %" PRIu64 " lines that are not START SIZE NAME skipped\n",
				cmd->name, j->read_from, j->bad_lines);
		if (j->bad_line_entries)
			fprintf(stderr, "tailor: %s: jitdump %s: %" PRIu64 " line entries whose file name is not text dropped\n",
				cmd->name, j->read_from, j->bad_line_entries);
		if (j->times_dropped && j->moves)
			fprintf(stderr, "tailor: %s: jitdump %s: its times (%s) are not on the profile's clock%s; its %" PRIu64 " code moves were taken in file order\n",
				cmd->name, j->read_from, j->tsc ? "TSC" : "CLOCK_MONOTONIC",
				j->tsc ? "" : " (perf record -k mono puts them there)", j->moves);
		if (j->moves_unknown)
			fprintf(stderr, "tailor: %s: jitdump %s: %" PRIu64 " moves of code it never loaded ignored\n",
				cmd->name, j->read_from, j->moves_unknown);
	}
}

static void print_input_problems(const struct cli_command *cmd, const struct report *r)
{
	int i;

	if (!r->info->complete)
		fprintf(stderr, "tailor: %s: %s: %s; reporting the %" PRIu64 " samples before that\n",
			cmd->name, r->input, r->info->problem, r->info->nr_samples);
	if (r->info->lost)
		fprintf(stderr, "tailor: %s: %s: the kernel dropped %" PRIu64 " samples while recording\n",
			cmd->name, r->input, r->info->lost);
	if (r->info->out_of_order)
		fprintf(stderr, "tailor: %s: %s: %" PRIu64 " events came after later ones (the recorder's rounds did not hold); they were counted where they fell\n",
			cmd->name, r->input, r->info->out_of_order);
	/* With --query, a dictionary of other queries rightly attributes nothing. */
	for (i = 0; i < r->nr_dicts && attr_level_is_dict(r->attr) && !r->query_filter; i++)
		if (!attr_dict_hits(r->attr, i) && r->agg.total)
			fprintf(stderr, "tailor: %s: dictionary %s attributed no sample: does it belong to this run?\n",
				cmd->name, r->dict_paths[i]);
}

static int write_svg_file(const struct cli_command *cmd, const struct report *r,
			  const char *path)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return cmd_fail(cmd, "cannot write %s: %m", path);
	ret = r->view == &view_lanes ? svg_lanes(&r->agg, f) : svg_timeline(&r->agg, f);
	if (fclose(f) || ret)
		return cmd_fail(cmd, "writing %s failed", path);
	return 0;
}

/* Where the output goes: -o FILE, or stdout where the format allows. */
static FILE *open_output(const struct cli_command *cmd, const struct report_opts *o)
{
	FILE *f;

	if (!o->output) {
		if (o->format->binary && isatty(STDOUT_FILENO)) {
			cmd_fail(cmd, "--format %s is binary: give a file with -o FILE", o->format->name);
			return NULL;
		}
		return stdout;
	}
	f = fopen(o->output, "w");
	if (!f)
		cmd_fail(cmd, "cannot write %s: %m", o->output);
	return f;
}

static int close_output(const struct cli_command *cmd, const struct report_opts *o,
			FILE *f, int ret)
{
	const char *what = o->output ? o->output : "the report";

	if (f == stdout) {
		if ((fflush(stdout) || ferror(stdout)) && !ret)
			return cmd_fail(cmd, "writing %s failed: %m", what);
		return ret;
	}
	if (fclose(f) && !ret)
		return cmd_fail(cmd, "writing %s failed: %m", what);
	if (ret)
		unlink(o->output);	/* no half-written profile left behind */
	return ret;
}

static int write_output(const struct cli_command *cmd, const struct report_opts *o,
			const struct report *r, struct symbolizer *sym)
{
	struct export_profile p = { r->input, r->info, &r->agg, r->attr, sym };
	FILE *out = open_output(cmd, o);
	struct doc *d;
	int ret;

	if (!out)
		return EXIT_FAIL;
	if (o->format->write_profile) {
		ret = o->format->write_profile(&p, out) ? EXIT_FAIL : 0;
	} else {
		d = doc_new();
		ret = !d || o->view->build(r, d) || o->format->write_doc(d, out) ? EXIT_FAIL : 0;
		doc_free(d);
	}
	if (ret)
		cmd_fail(cmd, "writing %s failed", o->output ? o->output : "the report");
	return close_output(cmd, o, out, ret);
}

/*
 * The kernel symbols for a perf.data's kernel samples: --kallsyms FILE,
 * else this host's /proc/kallsyms where the file was recorded here with
 * this kernel (KASLR moved since: corrected by _text).  NULL, with the
 * reason in r->kernel_symbols, where there are none; an exit code in *rc
 * for a --kallsyms that cannot be read.
 */
static struct kallsyms *kernel_symbols(const struct cli_command *cmd, const struct report_opts *o,
				       struct report *r, uint64_t *delta, int *rc)
{
	const struct session_info *info = r->info;
	char host[256] = "", err[512];
	struct kallsyms *k;
	struct utsname u;
	const char *path = o->kallsyms;

	*rc = 0;
	*delta = 0;
	/*
	 * A tailor recording stores the kernel functions its samples fell in
	 * (taken from the recording host's /proc/kallsyms as it ended), so
	 * nothing of this host's is read.  --kallsyms FILE overrides them; a
	 * recording without them (no kernel samples, addresses hidden from
	 * the recorder) gets no line about them.
	 */
	if (strcmp(info->format, "perf.data") && !path) {
		if (!info->kallsyms)
			return NULL;
		k = kallsyms_parse(info->kallsyms, info->kallsyms_len, "its KALLSYMS record", err,
				   sizeof(err));
		if (!k) {
			snprintf(r->kernel_symbols, sizeof(r->kernel_symbols), "none: %.240s", err);
			return NULL;
		}
		snprintf(r->kernel_symbols, sizeof(r->kernel_symbols),
			 "stored in the recording (%zu symbol%s)", kallsyms_count(k),
			 kallsyms_count(k) == 1 ? "" : "s");
		return k;
	}
	/*
	 * No kernel sample to name (perf record -e ...:u): nothing is read,
	 * nor said -- /proc/kallsyms costs tens of milliseconds to parse.
	 */
	if (!path && info->kernel_samples_counted && !info->nr_kernel_samples)
		return NULL;
	if (!path) {
		gethostname(host, sizeof(host) - 1);
		if (uname(&u) || !info->hostname[0] || strcmp(info->hostname, host) ||
		    strcmp(info->os_release, u.release)) {
			snprintf(r->kernel_symbols, sizeof(r->kernel_symbols),
				 "none: recorded on %s (kernel %s), not on this host's kernel: --kallsyms FILE names them",
				 info->hostname[0] ? info->hostname : "an unknown host",
				 info->os_release[0] ? info->os_release : "unknown");
			return NULL;
		}
		path = "/proc/kallsyms";
	}
	k = kallsyms_load(path, err, sizeof(err));
	if (!k) {
		if (o->kallsyms)
			*rc = cmd_fail(cmd, "--kallsyms %s", err);
		snprintf(r->kernel_symbols, sizeof(r->kernel_symbols), "none: %.240s", err);
		return NULL;
	}
	/* perf.data's kernel map gives the recording boot's _text (KASLR). */
	if (info->kernel_text && kallsyms_text(k))
		*delta = info->kernel_text - kallsyms_text(k);
	snprintf(r->kernel_symbols, sizeof(r->kernel_symbols), "%s%s%s", path,
		 o->kallsyms ? "" : " (recorded on this host, kernel ",
		 o->kallsyms ? "" : info->os_release);
	if (!o->kallsyms)
		strncat(r->kernel_symbols, ")", sizeof(r->kernel_symbols) - strlen(r->kernel_symbols) - 1);
	return k;
}

/* Set up the attributor and the pass's options; an exit code on failure. */
static int prepare(const struct cli_command *cmd, struct report_opts *o, struct report *r,
		   struct tdict **dicts, const char **labels)
{
	unsigned int needs = o->view->needs;
	struct attr_options ao = {
		.dicts = dicts, .labels = labels, .nr_dicts = o->nr_dicts,
		.kernel_apart = o->kernel_apart,
		.tag_pid = r->info->target_pid,
		/* Who reads the query: its filter, its sections, lanes, pprof's label, the page. */
		.queries = o->nr_queries || o->by_query || o->view == &view_lanes || o->html ||
			   o->format == &export_pprof || (needs & VIEW_NEEDS_STACK),
	};
	char err[1024], t1[32], t2[32];
	uint64_t columns;

	if (!o->level)
		o->level = default_level(dicts, o->nr_dicts);
	if (o->format->write_profile) {
		needs = 0;	/* a profile format exports the profile, not a view */
		if (!o->nr_stack)
			default_stack(o, dicts, !(o->format->needs & EXPORT_NEEDS_SLICES));
		ao.stack = o->stack;
		ao.nr_stack = o->nr_stack;
	} else if ((needs & VIEW_NEEDS_STACK) || (o->html && r->info->nr_switches)) {
		if (!o->nr_stack)
			default_stack(o, dicts, true);
		ao.stack = o->stack;
		ao.nr_stack = o->nr_stack;
	}
	ao.level = o->level;
	ao.kallsyms = o->ksyms;
	ao.kernel_delta = o->kernel_delta;
	r->attr = attr_new(&ao, err, sizeof(err));
	if (!r->attr)
		return usage_error(cmd, "--%s %s: %s", o->nr_stack ? "level/--stack" : "level",
				   o->level, err);
	if (o->nr_queries && attr_select_queries(r->attr, (const char *const *)o->queries,
						 o->nr_queries, err, sizeof(err)))
		return usage_error(cmd, "--query: %s", err);
	if (o->by_query && !attr_has_queries(r->attr))
		return usage_error(cmd, o->nr_dicts ?
				   "--by-query: no dictionary declares the level '%s'" :
				   "--by-query needs a Tagging Dictionary that declares the level '%s' (--dict)",
				   ATTR_QUERY_LEVEL);
	if ((needs & VIEW_NEEDS_DICT_LEVEL) && !attr_level_is_dict(r->attr))
		return usage_error(cmd, "the %s view needs a dictionary level (--level operator, with --dict)",
				   o->view->name);
	if ((needs & VIEW_NEEDS_ADDRESSES) && !r->info->has_addr)
		return cmd_fail(cmd, "%s has no data addresses (record PEBS memory events with --data-addr)",
				r->input);
	if (needs & VIEW_NEEDS_SWITCHES) {
		if (!r->info->nr_switches)
			return cmd_fail(cmd, "%s has no context switches: record with tailor record (without --no-switches) or perf record --switch-events",
					r->input);
		if (o->agg.windowed)
			return usage_error(cmd, "--time: the %s view covers the whole run", o->view->name);
		if (o->agg.nr_pids > 1)
			return usage_error(cmd, "--pid: the %s view is of one process's threads at a time",
					   o->view->name);
	}
	/*
	 * The page shows the parallelism, and the lanes and the Chrome trace
	 * the threads' states, wherever the input has switches (of one
	 * process, over the whole run).
	 */
	o->agg.parallelism = (needs & VIEW_NEEDS_SWITCHES) ||
			     ((o->html || (needs & VIEW_NEEDS_STATES) ||
			       (o->format->needs & EXPORT_NEEDS_STATES)) &&
			      r->info->nr_switches && o->agg.nr_pids <= 1 && !o->agg.windowed);
	o->agg.lines = (needs & VIEW_NEEDS_LINES) || o->html;
	o->agg.buckets = (needs & (VIEW_NEEDS_BUCKETS | VIEW_NEEDS_MEMORY)) || o->html ||
			 (o->svg && o->view != &view_lanes) ||
			 (o->format->needs & EXPORT_NEEDS_BUCKETS);
	o->agg.memory = (needs & VIEW_NEEDS_MEMORY) || o->html;
	o->agg.stacks = (o->format->needs & EXPORT_NEEDS_STACKS) || o->children;
	o->agg.slices = o->format->needs & EXPORT_NEEDS_SLICES;
	o->agg.sample_stacks = o->format->needs & EXPORT_NEEDS_SAMPLE_STACKS;
	o->agg.by_query = o->by_query || (o->html && attr_has_queries(r->attr));
	o->agg.lanes = (needs & VIEW_NEEDS_LANES) || o->html || (o->svg && o->view == &view_lanes);
	o->agg.processes = o->view == &view_table && !o->format->write_profile && !o->by_query &&
			   !o->children && table_by_code(r);
	o->agg.progress = isatty(STDERR_FILENO) && r->info->nr_samples >= PROGRESS_SAMPLES;
	if (agg_prepare(&r->agg, r->info, r->attr, &o->agg, err, sizeof(err)))
		return strstr(err, "TSC") ? cmd_fail(cmd, "%s: %s", r->input, err) :
		       usage_error(cmd, "%s", err);
	if ((needs & VIEW_NEEDS_LANES) && o->bucket_given) {
		columns = r->agg.span_ns / o->agg.bucket_ns + (r->agg.span_ns % o->agg.bucket_ns != 0);
		if (columns > MAX_LANE_COLUMNS)
			return usage_error(cmd, "--bucket %s makes %" PRIu64 " columns of lanes over %s; at most %d",
					   fmt_ns(o->agg.bucket_ns, t1, sizeof(t1)), columns,
					   fmt_ns(r->agg.span_ns, t2, sizeof(t2)), MAX_LANE_COLUMNS);
	}
	return 0;
}

/*
 * A dictionary belongs to a program: one that names its modules is
 * refused for a profile that maps none of them (another program's, whose
 * r15 holds values of its own), or maps one only as another build (its
 * lines may have moved).  A version 1 dictionary names none: applied as
 * it is.
 */
static int check_dict_modules(const struct cli_command *cmd, const struct report_opts *o,
			      struct symbolizer *sym, struct tdict **dicts)
{
	char id[SYM_BUILD_ID_HEX], names[2048];
	const char *mapped;
	size_t m, at;
	int i;

	for (i = 0; i < o->nr_dicts; i++) {
		const struct tdict *d = dicts[i];
		bool found = false;

		if (!d->nr_modules)
			continue;
		for (m = 0; m < d->nr_modules && !found; m++) {
			const struct tdict_module *mod = &d->modules[m];

			switch (sym_find_module(sym, mod->path, mod->build_id, &mapped, id,
						sizeof(id))) {
			case SYM_MODULE_MAPPED:
				found = true;
				break;
			case SYM_MODULE_OTHER_BUILD:
				return cmd_fail(cmd, "%s describes %s of build-id %s, but %s maps it as build-id %s: the dictionary of another build (write it again with this one)",
						o->dict_paths[i], mod->path, mod->build_id, o->input, id);
			case SYM_MODULE_NONE:
				break;
			}
		}
		if (found)
			continue;
		for (m = 0, at = 0; m < d->nr_modules && at < sizeof(names); m++)
			at += snprintf(names + at, sizeof(names) - at, "%s%s (build-id %s)",
				       m ? ", " : "", d->modules[m].path,
				       d->modules[m].build_id ? d->modules[m].build_id : "none");
		return cmd_fail(cmd, "%s describes %s; %s maps none of them: the dictionary of another program",
				o->dict_paths[i], names, o->input);
	}
	return 0;
}

static int run_report(const struct cli_command *cmd, int argc, char **argv)
{
	struct report_opts o = { .top = 25 };
	struct report r = { 0 };
	struct tdict *dicts[MAX_DICTS] = { 0 };
	char labels_buf[MAX_DICTS][64], err[1024];
	const char *labels[MAX_DICTS];
	struct symbolizer *sym = NULL;
	struct session *s = NULL;
	struct session_options so = { 0 };
	int i, ret;

	ret = parse_options(cmd, argc, argv, &o);
	if (ret)
		goto out_opts;
	ret = EXIT_FAIL;
	if (!o.input) {
		/* As perf reads perf.data: tailor's own file first, and say which. */
		o.input = access("tailor.rec", F_OK) && !access("perf.data", F_OK) ?
			  "perf.data" : "tailor.rec";
		if (!strcmp(o.input, "perf.data"))
			fprintf(stderr, "tailor: %s: no -i and no tailor.rec here: reading perf.data\n",
				cmd->name);
	}
	if (o.source_filter && o.view != &view_source) {
		ret = usage_error(cmd, "--source-file chooses the files of the source view (--view source), not of the %s view",
				  o.view ? o.view->name : cmd == &cmd_timeline ? "timeline" : "table");
		goto out;
	}
	if (!o.view)
		o.view = cmd == &cmd_timeline ? &view_timeline : &view_table;
	if (!o.format)
		o.format = &export_text;
	if (o.by_query && o.format->write_profile) {
		ret = usage_error(cmd, "--by-query groups the table and plan views; --format %s carries each sample's query in %s",
				  o.format->name, o.format == &export_pprof ?
				  "its label 'query' and its stack" : "its stack");
		goto out;
	}
	if (o.by_query && !(o.view->needs & VIEW_BY_QUERY)) {
		ret = usage_error(cmd, "--by-query groups the table and plan views, not the %s view%s",
				  o.view->name, o.view == &view_lanes ?
				  " (its runs name their query already)" :
				  "; select one query with --query");
		goto out;
	}
	if (o.children && (o.view != &view_table || o.by_query || o.format->write_profile)) {
		ret = usage_error(cmd, "--children is a column of the table view (without --by-query), not of %s",
				  o.view != &view_table ? o.view->name : o.by_query ? "--by-query's sections" :
				  o.format->name);
		goto out;
	}
	if (o.critical_given && !(o.view->needs & VIEW_NEEDS_SWITCHES)) {
		ret = usage_error(cmd, "--critical sets the parallelism view's threshold, not the %s view's",
				  o.view->name);
		goto out;
	}
	if (cmd == &cmd_timeline && o.view != &view_timeline) {
		ret = usage_error(cmd, "timeline shows the timeline view; use 'tailor report --view %s'",
				  o.view->name);
		goto out;
	}
	for (i = 0; i < o.nr_dicts; i++) {
		dicts[i] = tdict_load(o.dict_paths[i], err, sizeof(err));
		if (!dicts[i]) {
			ret = cmd_fail(cmd, "%s", err);
			goto out;
		}
		dict_label(o.dict_paths[i], labels_buf[i], sizeof(labels_buf[i]));
		labels[i] = labels_buf[i];
	}
	if (!o.tag_register && o.nr_dicts && dicts[0]->tag_register[0])
		o.tag_register = dicts[0]->tag_register;
	so.tag_reg = x86_register_number(o.tag_register ? o.tag_register : "r15");
	if (so.tag_reg < 0) {
		ret = usage_error(cmd, "%s: unknown tag register '%s'", o.dict_paths[0], o.tag_register);
		goto out;
	}
	if (o.tsc_from_module && module_tsc_khz(cmd, &o.tsc_khz))
		goto out;
	so.tsc_khz = o.tsc_khz;
	so.event = o.event;
	sym = sym_new();
	if (!sym)
		goto out;
	sym_set_demangle(sym, !o.no_demangle);
	if (o.debug_dir) {
		char *dir = realpath(o.debug_dir, NULL);
		struct stat st;

		int bad = !dir || stat(dir, &st) ? errno : 0;

		if (bad || !S_ISDIR(st.st_mode) || strchr(dir, ':')) {
			ret = usage_error(cmd, "--debug-dir %s: %s", o.debug_dir,
					  bad ? strerror(bad) : !S_ISDIR(st.st_mode) ?
					  "not a directory" :
					  "its path has a ':', libdw's separator of directories");
			free(dir);
			goto out;
		}
		if (sym_set_debug_dir(sym, dir)) {
			ret = cmd_fail(cmd, "out of memory");
			free(dir);
			goto out;
		}
		free(dir);
	}
	s = session_open(o.input, &so, err, sizeof(err));
	if (!s) {
		ret = cmd_fail(cmd, "%s: %s", o.input, err);
		goto out;
	}
	if (setup_jit(sym, o.input, s) ||
	    (session_info(s)->build_ids &&
	     sym_set_recorded_build_ids(sym, session_info(s)->build_ids,
					session_info(s)->build_ids_len))) {
		ret = cmd_fail(cmd, "out of memory");
		goto out;
	}
	r.input = o.input;
	r.info = session_info(s);
	r.dict_paths = o.dict_paths;
	r.nr_dicts = o.nr_dicts;
	r.top = o.top;
	r.source_filter = o.source_filter;
	r.by_query = o.by_query;
	r.children = o.children;
	r.view = o.view;
	r.bucket_ns = o.bucket_given ? o.agg.bucket_ns : 0;
	r.query_filter = o.nr_queries ? o.query_text : NULL;
	o.ksyms = kernel_symbols(cmd, &o, &r, &o.kernel_delta, &ret);
	if (ret)
		goto out;
	ret = prepare(cmd, &o, &r, dicts, labels);
	if (ret)
		goto out;
	if (o.children && strcmp(attr_level_name(r.attr), "function")) {
		ret = usage_error(cmd, "--children totals functions over their call stacks: it needs --level function, not %s",
				  attr_level_name(r.attr));
		goto out;
	}
	ret = agg_run(&r.agg, s, sym);
	if (ret) {
		ret = cmd_fail(cmd, "out of memory after %" PRIu64 " samples", r.agg.total);
		goto out;
	}
	if (o.children && r.agg.nr_chains < 2 && r.agg.total) {
		ret = cmd_fail(cmd, "%s has no call stacks for --children: record with perf record -g (or --call-graph)",
			       o.input);
		goto out;
	}
	ret = check_dict_modules(cmd, &o, sym, dicts);
	if (ret)
		goto out;
	print_input_problems(cmd, &r);
	print_jit_problems(cmd, sym);
	sym_each_changed(sym, print_changed, (void *)cmd);
	ret = write_output(cmd, &o, &r, sym);
	if (!ret && o.svg)
		ret = write_svg_file(cmd, &r, o.svg);
	if (!ret && o.html) {
		ret = write_html(&r, o.html) ? EXIT_FAIL : 0;
		if (!ret)
			fprintf(stderr, "tailor: %s: wrote %s\n", cmd->name, o.html);
	}
	if (!ret && o.output && o.format->write_profile)
		fprintf(stderr, "tailor: %s: wrote %s (%s, %" PRIu64 " samples)\n", cmd->name,
			o.output, o.format->name, r.agg.total);
	if (!ret && !r.info->complete)
		ret = EXIT_CUT;
out:
	session_close(s);
	sym_free(sym);
	agg_free(&r.agg);
	kallsyms_free(o.ksyms);
	attr_free(r.attr);
	for (i = 0; i < o.nr_dicts; i++)
		tdict_free(dicts[i]);
out_opts:
	free(o.tids);
	free(o.pids);
	for (i = 0; i < o.nr_queries; i++)
		free(o.queries[i]);
	return ret < 0 ? EXIT_OK : ret;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor report / tailor timeline: options, inputs, and the one pass over
 * the samples that feeds every view.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "report.h"
#include "../lib/grow.h"
#include "tailor/dictionary_reader.h"
#include "tailor/symbols.h"

#define MAX_DICTS	64

static const char report_usage[] =
"usage: tailor report [options] [-i FILE]\n"
"       tailor timeline [options] [-i FILE]     (report --view timeline)\n"
"\n"
"Attribute the samples of a recording to the components of an abstraction\n"
"level -- operators, pipelines, or any level a Tagging Dictionary declares\n"
"-- and print a view of them.  Each sample's IP is symbolized through the\n"
"recorded mappings and DWARF to a source line; the dictionary's links lead\n"
"from the line up to the level; samples in shared code are attributed by\n"
"the tag register they captured.  What neither reaches is reported as\n"
"such: [kernel], the object it ran in ([libc.so.6]), [unknown], with the\n"
"reason counted in the notes.\n"
"\n"
"input:\n"
"  -i, --input FILE      a tailor recording, or a perf.data written by\n"
"                        perf record --intr-regs=r15 (default tailor.rec)\n"
"  -d, --dict FILE       a Tagging Dictionary (repeatable: one per query)\n"
"      --tag-register R  the register holding tags (default: the\n"
"                        dictionary's tag-register line, else r15)\n"
"      --kernel-apart    keep every kernel sample in [kernel].  By default\n"
"                        a kernel sample of the software clock, which holds\n"
"                        the user registers at kernel entry, goes to the\n"
"                        component linked to the code the thread entered\n"
"                        from (with rip recorded), else to the one its tag\n"
"                        names: kernel work on their behalf, such as page\n"
"                        faults in a hash table\n"
"      --tsc-khz N       TSC frequency for a perf.data on the raw-TSC clock\n"
"                        (default: tailor.ko's measurement, if loaded)\n"
"\n"
"what to show:\n"
"  -l, --level L         operator, pipeline, ... (a dictionary level),\n"
"                        function, line or instruction (default: operator\n"
"                        if a dictionary has it, else its highest level,\n"
"                        else function)\n"
"  -v, --view V          table (default): cost per component;\n"
"                        plan: the plan tree with each component's share;\n"
"                        source: the source annotated per line with its\n"
"                        share and owner; timeline: activity over time;\n"
"                        memory: data addresses over time per component\n"
"  -f, --format F        text (default), csv or json\n"
"  -b, --bucket T        timeline bucket width, e.g. 500us, 1ms (default:\n"
"                        about 40 buckets over the window)\n"
"      --top N           rows in text tables (default 25; 0: all)\n"
"      --source-file S   source view: only files whose path contains S\n"
"      --html FILE       also write a self-contained HTML report (table,\n"
"                        plan, timeline and memory plots, annotated source)\n"
"      --svg FILE        also write the timeline plot as SVG\n"
"\n"
"filters:\n"
"      --time FROM:TO    only samples in this window since the first sample\n"
"                        (e.g. 10ms:250ms, :1s, 2s:)\n"
"      --tid LIST        only these threads (comma-separated)\n"
"      --pid LIST        only these processes\n"
"  -h, --help            this text\n"
"\n"
"Durations take ns, us, ms or s.  Exit status: 0 done, 1 input unreadable,\n"
"2 bad options, 3 done but the recording was cut short.\n";

double report_share(const struct report *r, uint64_t samples)
{
	return r->total ? 100.0 * (double)samples / (double)r->total : 0.0;
}

uint64_t report_attributed(const struct report *r)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < attr_nr_rows(r->attr); i++)
		if (attr_row_attributed(attr_row(r->attr, i)))
			n += report_row_samples(r, i);
	return n;
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
	if (end == s || errno || v < 0)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
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

		if (*end || end == tok || v > UINT32_MAX) {
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

static bool in_list(const uint32_t *l, int n, uint32_t v)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

struct pass {
	struct report *r;
	struct symbolizer *sym;
	uint64_t seen;
	bool progress;
	int error;
};

static int count_line(struct report *r, uint32_t line, uint32_t row)
{
	uint32_t idx;

	if (pair_map_get(&r->line_index, line, row, &idx)) {
		r->lines[idx].samples++;
		return 0;
	}
	if (array_grow((void **)&r->lines, &r->cap_lines, r->nr_lines + 1, sizeof(*r->lines)) ||
	    pair_map_put(&r->line_index, line, row, (uint32_t)r->nr_lines))
		return -ENOMEM;
	r->lines[r->nr_lines++] = (struct line_count){ line, row, 1 };
	return 0;
}

static int count_bucket(struct report *r, uint64_t bucket, uint32_t row)
{
	uint32_t idx;

	if (pair_map_get(&r->bucket_index, bucket, row, &idx)) {
		r->buckets[idx].samples++;
		return 0;
	}
	if (array_grow((void **)&r->buckets, &r->cap_bucket_counts, r->nr_bucket_counts + 1,
		 sizeof(*r->buckets)) ||
	    pair_map_put(&r->bucket_index, bucket, row, (uint32_t)r->nr_bucket_counts))
		return -ENOMEM;
	r->buckets[r->nr_bucket_counts++] = (struct bucket_count){ bucket, row, 1 };
	return 0;
}

static int take_sample(void *ctx, const struct prof_sample *s)
{
	struct pass *p = ctx;
	struct report *r = p->r;
	struct attr_result res;
	uint64_t ns = 0;

	if (p->progress && !(++p->seen & 0xfffff))
		fprintf(stderr, "\rtailor: report: %" PRIu64 "M of %" PRIu64 "M samples",
			p->seen >> 20, r->info->nr_samples >> 20);
	if ((r->nr_tids && !in_list(r->tids, r->nr_tids, s->tid)) ||
	    (r->nr_pids && !in_list(r->pids, r->nr_pids, s->pid))) {
		r->filtered_out++;
		return 0;
	}
	if (r->windowed || r->want_timeline || r->want_memory) {
		ns = prof_time_to_ns(r->info, s->time - r->info->first_time);
		if (r->windowed && (ns < r->from_ns || ns >= r->to_ns)) {
			r->filtered_out++;
			return 0;
		}
	}
	p->error = attr_sample(r->attr, p->sym, s, &res);
	if (p->error ||
	    array_grow((void **)&r->row_samples, &r->cap_rows, res.row + 1, sizeof(uint64_t)))
		return p->error = -ENOMEM;
	r->row_samples[res.row]++;
	r->total++;
	if (res.line != ATTR_NO_LINE && count_line(r, res.line, res.row))
		return p->error = -ENOMEM;
	if (r->want_timeline &&
	    count_bucket(r, (ns - r->from_ns) / r->bucket_ns, res.row))
		return p->error = -ENOMEM;
	if (r->want_memory && (s->flags & PROF_HAS_ADDR)) {
		if (array_grow((void **)&r->mem, &r->cap_mem, r->nr_mem + 1, sizeof(*r->mem)))
			return p->error = -ENOMEM;
		r->mem[r->nr_mem++] = (struct mem_point){ ns, s->data_addr, res.row };
	}
	return 0;
}

/* 1, 2 or 5 times a power of ten: about 40 buckets over @span. */
static uint64_t nice_bucket(uint64_t span)
{
	uint64_t b = 1;

	for (;;) {
		if (span / b <= 40)
			return b;
		if (span / (2 * b) <= 40)
			return 2 * b;
		if (span / (5 * b) <= 40)
			return 5 * b;
		b *= 10;
	}
}

static uint32_t module_tsc_khz(void)
{
	unsigned int khz = 0;
	FILE *f = fopen("/sys/class/misc/tailor/tsc_khz_measured", "r");

	if (f) {
		if (fscanf(f, "%u", &khz) != 1)
			khz = 0;
		fclose(f);
	}
	return khz;
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

static void dict_label(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *dot;

	snprintf(buf, len, "%s", base);
	dot = strrchr(buf, '.');
	if (dot && dot != buf)
		*dot = '\0';
}

struct report_opts {
	const char *input, *level, *view, *html, *svg, *tag_register;
	const char *dict_paths[MAX_DICTS];
	int nr_dicts;
	enum report_format fmt;
	uint32_t tsc_khz;
	bool bucket_given, kernel_apart;
};

static int usage_error(const char *fmt, const char *arg)
{
	fputs("tailor: report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static int parse_options(int argc, char **argv, struct report_opts *o,
			 struct report *r)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "dict", required_argument, NULL, 'd' },
		{ "level", required_argument, NULL, 'l' },
		{ "view", required_argument, NULL, 'v' },
		{ "format", required_argument, NULL, 'f' },
		{ "bucket", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 'T' },
		{ "source-file", required_argument, NULL, 'S' },
		{ "html", required_argument, NULL, 'H' },
		{ "svg", required_argument, NULL, 'G' },
		{ "time", required_argument, NULL, 'w' },
		{ "tid", required_argument, NULL, 't' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tsc-khz", required_argument, NULL, 'k' },
		{ "tag-register", required_argument, NULL, 'R' },
		{ "kernel-apart", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *end, *colon;
	unsigned long v;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:d:l:v:f:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 'd':
			if (o->nr_dicts == MAX_DICTS)
				return usage_error("at most %s dictionaries", "64");
			o->dict_paths[o->nr_dicts++] = optarg;
			break;
		case 'l':
			o->level = optarg;
			break;
		case 'v':
			if (strcmp(optarg, "table") && strcmp(optarg, "plan") &&
			    strcmp(optarg, "source") && strcmp(optarg, "timeline") &&
			    strcmp(optarg, "memory"))
				return usage_error("invalid value '%s' for --view: expected table, plan, source, timeline or memory", optarg);
			o->view = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o->fmt = FMT_TEXT;
			else if (!strcmp(optarg, "csv"))
				o->fmt = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				o->fmt = FMT_JSON;
			else
				return usage_error("invalid value '%s' for --format: expected text, csv or json", optarg);
			break;
		case 'b':
			if (parse_duration(optarg, &r->bucket_ns) || !r->bucket_ns)
				return usage_error("invalid value '%s' for --bucket: expected a duration like 500us or 1ms", optarg);
			o->bucket_given = true;
			break;
		case 'T':
			v = strtoul(optarg, &end, 10);
			if (*end || end == optarg || v > 1000000)
				return usage_error("invalid value '%s' for --top: expected a number", optarg);
			r->top = (int)v;
			break;
		case 'S':
			r->source_filter = optarg;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 'G':
			o->svg = optarg;
			break;
		case 'w':
			colon = strchr(optarg, ':');
			if (!colon)
				return usage_error("invalid value '%s' for --time: expected FROM:TO, e.g. 10ms:20ms", optarg);
			*colon = '\0';
			r->from_ns = 0;
			r->to_ns = UINT64_MAX;
			if ((*optarg && parse_duration(optarg, &r->from_ns)) ||
			    (colon[1] && parse_duration(colon + 1, &r->to_ns))) {
				*colon = ':';
				return usage_error("invalid value '%s' for --time: expected FROM:TO with durations like 10ms", optarg);
			}
			*colon = ':';
			if (r->to_ns <= r->from_ns)
				return usage_error("invalid value '%s' for --time: the window ends before it starts", optarg);
			r->windowed = true;
			break;
		case 't':
			if (parse_list(optarg, &r->tids, &r->nr_tids))
				return usage_error("invalid value '%s' for --tid: expected thread ids separated by commas", optarg);
			break;
		case 'p':
			if (parse_list(optarg, &r->pids, &r->nr_pids))
				return usage_error("invalid value '%s' for --pid: expected process ids separated by commas", optarg);
			break;
		case 'k':
			v = strtoul(optarg, &end, 10);
			if (*end || end == optarg || !v || v > UINT32_MAX)
				return usage_error("invalid value '%s' for --tsc-khz: expected a frequency in kHz", optarg);
			o->tsc_khz = (uint32_t)v;
			break;
		case 'K':
			o->kernel_apart = true;
			break;
		case 'R':
			if (prof_register_number(optarg) < 0)
				return usage_error("invalid value '%s' for --tag-register: expected an x86-64 register such as r15", optarg);
			o->tag_register = optarg;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return -1;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'; see 'tailor report --help'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc && !o->input)
		o->input = argv[optind++];
	if (optind < argc)
		return usage_error("one recording at a time ('%s' is extra)", argv[optind]);
	return 0;
}

static void print_inputs_problems(const struct report *r)
{
	int i;

	if (!r->info->complete)
		fprintf(stderr, "tailor: report: %s: %s; reporting the %" PRIu64 " samples before that\n",
			r->input, r->info->problem, r->info->nr_samples);
	if (r->info->lost)
		fprintf(stderr, "tailor: report: %s: the kernel dropped %" PRIu64 " samples while recording\n",
			r->input, r->info->lost);
	for (i = 0; i < r->nr_dicts && attr_level_is_dict(r->attr); i++)
		if (!attr_dict_hits(r->attr, i) && r->total)
			fprintf(stderr, "tailor: report: dictionary %s attributed no sample: does it belong to this run?\n",
				r->dict_paths[i]);
}

static int run_view(const struct report *r, const char *view, enum report_format fmt)
{
	if (!strcmp(view, "plan"))
		return view_plan(r, stdout, fmt);
	if (!strcmp(view, "source"))
		return view_source(r, stdout, fmt);
	if (!strcmp(view, "timeline"))
		return view_timeline(r, stdout, fmt);
	if (!strcmp(view, "memory"))
		return view_memory(r, stdout, fmt);
	return view_table(r, stdout, fmt);
}

static int write_svg_file(const struct report *r, const char *path)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f) {
		err_msg("report: cannot write %s: %m", path);
		return -1;
	}
	ret = write_timeline_svg(r, f);
	if (fclose(f) || ret) {
		err_msg("report: writing %s failed", path);
		return -1;
	}
	return 0;
}

static int cmp_mem(const void *a, const void *b)
{
	const struct mem_point *x = a, *y = b;

	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int report_main(int argc, char **argv, const char *fixed_view)
{
	struct report_opts o = { .input = NULL, .view = fixed_view };
	struct report r = { .top = 25 };
	struct tdict *dicts[MAX_DICTS] = {};
	char labels_buf[MAX_DICTS][64];
	const char *labels[MAX_DICTS];
	struct symbolizer *sym = NULL;
	struct prof_input *in = NULL;
	struct pass pass = {};
	char err[1024];
	int i, ret = 1, tag_reg;

	ret = parse_options(argc, argv, &o, &r);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = 1;
	if (!o.input)
		o.input = "tailor.rec";
	if (!o.view)
		o.view = "table";
	for (i = 0; i < o.nr_dicts; i++) {
		dicts[i] = tdict_load(o.dict_paths[i], err, sizeof(err));
		if (!dicts[i]) {
			err_msg("report: %s", err);
			goto out;
		}
		dict_label(o.dict_paths[i], labels_buf[i], sizeof(labels_buf[i]));
		labels[i] = labels_buf[i];
	}
	if (!o.tag_register && o.nr_dicts && dicts[0]->tag_register[0])
		o.tag_register = dicts[0]->tag_register;
	tag_reg = prof_register_number(o.tag_register ? o.tag_register : "r15");
	if (tag_reg < 0) {
		err_msg("report: %s: unknown tag register '%s'", o.dict_paths[0], o.tag_register);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!o.level)
		o.level = default_level(dicts, o.nr_dicts);
	r.attr = attr_new(dicts, labels, o.nr_dicts, o.level, err, sizeof(err));
	if (!r.attr) {
		err_msg("report: --level %s: %s", o.level, err);
		ret = EXIT_USAGE;
		goto out;
	}
	attr_set_kernel_by_entry(r.attr, !o.kernel_apart);
	sym = sym_new();
	if (!sym)
		goto out;
	in = prof_open(o.input, sym, tag_reg, o.tsc_khz ? o.tsc_khz : module_tsc_khz(),
		       err, sizeof(err));
	if (!in) {
		err_msg("report: %s: %s", o.input, err);
		goto out;
	}
	r.input = o.input;
	r.info = prof_info(in);
	r.dict_paths = o.dict_paths;
	r.nr_dicts = o.nr_dicts;
	r.want_timeline = !strcmp(o.view, "timeline") || o.html || o.svg;
	r.want_memory = !strcmp(o.view, "memory") || o.html;
	if (!strcmp(o.view, "plan") && !attr_level_is_dict(r.attr)) {
		err_msg("report: the plan view needs a dictionary level (--level operator, with --dict)");
		ret = EXIT_USAGE;
		goto out;
	}
	if (!strcmp(o.view, "memory") && !r.info->has_addr) {
		err_msg("report: %s has no data addresses (record PEBS memory events with --data-addr)", o.input);
		goto out;
	}
	if ((r.want_timeline || r.windowed) && !r.info->mult) {
		err_msg("report: %s: times are raw TSC ticks and the TSC frequency is unknown; pass --tsc-khz",
			o.input);
		goto out;
	}
	if (r.want_timeline || r.want_memory) {
		uint64_t span = prof_time_to_ns(r.info, r.info->last_time - r.info->first_time) + 1;

		if (!r.windowed)
			r.to_ns = span;
		if (r.to_ns > span)
			r.to_ns = span;
		r.span_ns = r.to_ns > r.from_ns ? r.to_ns - r.from_ns : 1;
		if (!o.bucket_given)
			r.bucket_ns = nice_bucket(r.span_ns);
		r.nr_buckets = (r.span_ns + r.bucket_ns - 1) / r.bucket_ns;
		if (r.nr_buckets > 1000000) {
			err_msg("report: --bucket %" PRIu64 "ns makes %" PRIu64 " buckets of a %" PRIu64 "ns window; at most 1000000",
				r.bucket_ns, r.nr_buckets, r.span_ns);
			ret = EXIT_USAGE;
			goto out;
		}
	}
	pass.r = &r;
	pass.sym = sym;
	pass.progress = isatty(STDERR_FILENO) && r.info->nr_samples >= (4u << 20);
	prof_foreach(in, take_sample, &pass);
	if (pass.progress)
		fputs("\r\033[K", stderr);
	if (pass.error) {
		err_msg("report: out of memory after %" PRIu64 " samples", r.total);
		goto out;
	}
	if (r.nr_mem)
		qsort(r.mem, r.nr_mem, sizeof(*r.mem), cmp_mem);
	print_inputs_problems(&r);
	ret = run_view(&r, o.view, o.fmt);
	if (!ret && o.svg)
		ret = write_svg_file(&r, o.svg);
	if (!ret && o.html) {
		ret = write_html(&r, o.html);
		if (!ret)
			fprintf(stderr, "tailor: report: wrote %s\n", o.html);
	}
	if (fflush(stdout) || ferror(stdout)) {
		err_msg("report: writing the report failed");
		ret = 1;
	}
	if (!ret && !r.info->complete)
		ret = 3;
out:
	prof_close(in);
	sym_free(sym);
	attr_free(r.attr);
	for (i = 0; i < o.nr_dicts; i++)
		tdict_free(dicts[i]);
	free(r.row_samples);
	free(r.lines);
	free(r.buckets);
	free(r.mem);
	free(r.tids);
	free(r.pids);
	pair_map_free(&r.line_index);
	pair_map_free(&r.bucket_index);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	return report_main(argc, argv, NULL);
}

int cmd_timeline(int argc, char **argv)
{
	return report_main(argc, argv, "timeline");
}

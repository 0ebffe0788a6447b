// SPDX-License-Identifier: GPL-2.0-only
/*
 * Chrome trace JSON (the Trace Event Format), which ui.perfetto.dev,
 * chrome://tracing and speedscope open: a track per thread, named after
 * its process and comm; complete events ("ph":"X") for the runs of
 * consecutive samples of one component at each stack level, a pipeline's
 * enclosing its operators' (the pass makes them nest); and a counter
 * track per component of the level with its samples per time bucket.
 * Where the input has context switches, each thread of the process also
 * gets a track of its states: running, runnable (preempted, or forked and
 * not yet run) and blocked.
 *
 * Where the input has call stacks (perf record -g), each sample is also a
 * sampled stack, as the format's "Global Samples" are: "samples" (pid,
 * tid, ts, the event's name, "sf": its leaf frame, weight 1) in time
 * order, and a "stackFrames" dictionary of the frames they point into
 * ({name, category, parent}), each frame once per (parent, name,
 * category), ids from 1.  A sample's frames are its folded stack's: the
 * dictionary's components (category: their level), its callers, then its
 * code (category: the object, [kernel] or [unknown]).  chrome://tracing
 * shows them on the thread's track; speedscope reads them, not the slices,
 * as a sampled profile per thread.
 *
 * Times are whole microseconds since the first sample (or since the
 * recorded command's exec, where the threads' states begin before it),
 * each rounded to the nearest: the same rounding of the same instants keeps runs that
 * touch touching and children inside their parents, where a reader's
 * own rounding of fractions might not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/export.h"
#include "tailor/session.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define MAX_FRAMES	32
/* A sample's line: its numbers take at most 100 bytes, the event's name the rest. */
#define MAX_SAMPLE_LINE	512
#define SAMPLES_BUF	65536

static uint64_t us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

/* @a + @b, UINT64_MAX where that overflows (times saturate there). */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * How long before the first sample the trace starts: the threads' states
 * begin at the recorded command's exec, before any sample.  Every ts is
 * this much later than the time since the first sample.
 */
static uint64_t lead_ns(const struct agg *g)
{
	if (!g->opt.parallelism || !g->par.nr_runs || g->par.begin_ns >= 0 ||
	    g->par.begin_ns == INT64_MIN)
		return 0;
	return (uint64_t)-g->par.begin_ns;
}

/* A time since the first sample (maybe before it) as a trace ts. */
static uint64_t ts_of(const struct agg *g, int64_t ns)
{
	uint64_t lead = lead_ns(g);

	if (ns < 0 && (uint64_t)-(ns + 1) >= lead)
		return 0;
	return us(ns < 0 ? lead - (uint64_t)-(ns + 1) - 1 : add_sat((uint64_t)ns, lead));
}

static const struct agg_thread *thread_of(const struct agg *g, uint32_t pid, uint32_t tid)
{
	size_t i;

	for (i = 0; i < g->nr_threads; i++)
		if (g->threads[i].pid == pid && g->threads[i].tid == tid)
			return &g->threads[i];
	return NULL;
}

/*
 * A thread's states go on a track of their own: a component run spans its
 * samples and may reach across a switch out, so states and runs would not
 * nest on one track.  The state track's tid is the thread's with this bit
 * set, which no Linux tid has (PID_MAX_LIMIT is 2^22).
 */
#define STATE_TRACK_BIT	(1u << 30)

static void thread_track(FILE *out, const char **sep, uint32_t pid, uint32_t tid,
			 const char *name, const char *suffix, uint64_t sort_index)
{
	fprintf(out, "%s\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
		*sep, pid, tid);
	if (name[0] && !suffix[0]) {
		json_str(out, name);
	} else {
		char label[128];

		if (name[0])
			snprintf(label, sizeof(label), "%s%s", name, suffix);
		else
			snprintf(label, sizeof(label), "tid %u%s", tid & ~STATE_TRACK_BIT, suffix);
		json_str(out, label);
	}
	fprintf(out, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,"
		"\"args\":{\"sort_index\":%" PRIu64 "}}", pid, tid, sort_index);
	*sep = ",";
}

static void names(const struct export_profile *p, FILE *out, const char **sep)
{
	const struct agg *g = p->agg;
	const struct agg_parallelism *par = &g->par;
	size_t i, j;

	for (i = 0; i < g->nr_threads; i++) {
		const struct agg_thread *t = &g->threads[i], *main;
		bool first = true;

		for (j = 0; j < i; j++)
			if (g->threads[j].pid == t->pid)
				first = false;
		if (first) {
			main = thread_of(g, t->pid, t->pid);
			fprintf(out, "%s\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":",
				*sep, t->pid);
			if (main && main->name[0]) {
				json_str(out, main->name);
			} else {
				fprintf(out, "\"pid %u\"", t->pid);
			}
			fputs("}}", out);
			*sep = ",";
		}
		thread_track(out, sep, t->pid, t->tid, t->name, "", 2 * (uint64_t)i);
		if (g->opt.parallelism && par_thread_index(&g->par, t->pid, t->tid) >= 0)
			thread_track(out, sep, t->pid, t->tid | STATE_TRACK_BIT, t->name, " (states)",
				     2 * (uint64_t)i + 1);
	}
	/* Threads that ran or waited without a sample: their states alone. */
	for (i = 0; g->opt.parallelism && i < par->nr_threads; i++) {
		const struct par_thread *t = &par->threads[i];

		if (!thread_of(g, t->pid, t->tid))
			thread_track(out, sep, t->pid, t->tid | STATE_TRACK_BIT, t->name, " (states)",
				     2 * (uint64_t)(g->nr_threads + i) + 1);
	}
}

/* The parallelism pass's runs: a complete event per state, on the state tracks. */
static void states(const struct export_profile *p, FILE *out, const char **sep)
{
	const struct agg *g = p->agg;
	size_t i;

	for (i = 0; g->opt.parallelism && i < g->par.nr_runs; i++) {
		const struct par_run *r = &g->par.runs[i];
		const struct par_thread *t = &g->par.threads[r->thread];
		uint64_t b = ts_of(g, r->begin_ns), e = ts_of(g, r->end_ns);

		if (e <= b || r->state == PAR_UNSEEN)
			continue;
		fprintf(out, "%s\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"state\",\"ts\":%" PRIu64
			",\"dur\":%" PRIu64 ",\"pid\":%u,\"tid\":%u}", *sep,
			par_state_name((enum par_state)r->state), b, e - b, t->pid,
			t->tid | STATE_TRACK_BIT);
		*sep = ",";
	}
}

static void slices(const struct export_profile *p, FILE *out, const char **sep)
{
	const struct agg *g = p->agg;
	size_t i;

	for (i = 0; i < g->nr_slices; i++) {
		const struct agg_slice *s = &g->slices[i];
		uint64_t b = us(add_sat(s->begin_ns, lead_ns(g))), e = us(add_sat(s->end_ns, lead_ns(g)));

		fprintf(out, "%s\n{\"ph\":\"X\",\"name\":", *sep);
		json_str(out, attr_row(p->attr, s->row)->name);
		fputs(",\"cat\":", out);
		json_str(out, attr_stack_level_name(p->attr, s->level));
		fprintf(out, ",\"ts\":%" PRIu64 ",\"dur\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"samples\":%" PRIu64 "}}", b, e - b, s->pid, s->tid, s->samples);
		*sep = ",";
	}
}

/* Per component of the level, its samples in each bucket, 0 where it had none. */
static int counters(const struct export_profile *p, FILE *out, const char **sep)
{
	const struct agg *g = p->agg;
	size_t nr = attr_nr_rows(p->attr), i = 0, r;
	struct agg_bucket_count *b = agg_sorted_buckets(g);
	uint64_t *in_bucket = calloc(nr + 1, sizeof(*in_bucket)), bucket;
	bool *seen = calloc(nr + 1, sizeof(*seen));
	uint32_t pid = g->nr_threads ? g->threads[0].pid : 0;
	char name[128];

	if (!b || !in_bucket || !seen) {
		free(b);
		free(in_bucket);
		free(seen);
		return -1;
	}
	for (i = 0; i < g->nr_bucket_counts; i++)
		seen[b[i].row] = true;
	snprintf(name, sizeof(name), "%s samples", attr_level_name(p->attr));
	for (i = 0, bucket = 0; bucket < g->nr_buckets; bucket++) {
		const char *asep = "";

		memset(in_bucket, 0, (nr + 1) * sizeof(*in_bucket));
		for (; i < g->nr_bucket_counts && b[i].bucket == bucket; i++)
			in_bucket[b[i].row] += b[i].samples;
		fprintf(out, "%s\n{\"ph\":\"C\",\"name\":", *sep);
		json_str(out, name);
		fprintf(out, ",\"pid\":%u,\"ts\":%" PRIu64 ",\"args\":{", pid,
			us(add_sat(g->opt.from_ns + bucket * g->opt.bucket_ns, lead_ns(g))));
		for (r = 0; r < nr; r++) {
			if (!seen[r])
				continue;
			fputs(asep, out);
			json_str(out, attr_row(p->attr, r)->name);
			fprintf(out, ":%" PRIu64, in_bucket[r]);
			asep = ",";
		}
		fputs("}}", out);
		*sep = ",";
	}
	free(b);
	free(in_bucket);
	free(seen);
	return 0;
}

/* ---- sampled call stacks ---- */

struct stack_frame {
	const char *name, *category;	/* borrowed from the aggregate and attributor */
	uint32_t parent;		/* 0: a root */
};

/* The frames of the samples' stacks, each (parent, name, category) once. */
struct frame_tree {
	struct str_map names;		/* "name\x1fcategory" -> its number */
	struct pair_map children;	/* (parent, name's number) -> frame id */
	struct stack_frame *frames;	/* frames[id - 1] */
	size_t nr_frames, cap_frames;
	uint32_t *leaf;			/* per stack count: its leaf frame, 0 not yet */
};

/* The frame @name (in @category) under @parent, made on first sight; 0 without memory. */
static uint32_t frame_id(struct frame_tree *t, uint32_t parent, const char *name,
			 const char *category)
{
	char key[8192];
	uint32_t nr, id;

	snprintf(key, sizeof(key), "%s\x1f%s", name, category);
	if (!str_map_get(&t->names, key, &nr)) {
		nr = (uint32_t)t->names.used;
		if (str_map_put(&t->names, key, nr))
			return 0;
	}
	if (pair_map_get(&t->children, parent, nr, &id))
		return id;
	if (t->nr_frames >= UINT32_MAX - 1 ||
	    array_grow((void **)&t->frames, &t->cap_frames, t->nr_frames + 1, sizeof(*t->frames)))
		return 0;
	id = (uint32_t)t->nr_frames + 1;
	if (pair_map_put(&t->children, parent, nr, id))
		return 0;
	t->frames[t->nr_frames++] = (struct stack_frame){ name, category, parent };
	return id;
}

/*
 * A row's category: the object its code is in where one is known, else
 * the stack level whose row it is (a dictionary's component: "operator").
 */
static const char *row_category(const struct export_profile *p, uint32_t outcome, uint32_t row)
{
	const struct attr_row *r = attr_row(p->attr, row);
	const uint32_t *rows = attr_outcome_rows(p->attr, outcome);
	int l;

	if (r->object)
		return r->object;
	if (r->kind == ROW_KERNEL)
		return "[kernel]";
	for (l = 0; l < attr_nr_stack_levels(p->attr); l++)
		if (rows[l] == row)
			return attr_stack_level_name(p->attr, l);
	return "";
}

static const char *caller_category(const struct agg_frame *f)
{
	return f->object ? f->object : f->kernel ? "[kernel]" : "[unknown]";
}

/*
 * The leaf frame of stack count @sc, its frames made on first sight, root
 * first as in folded.c: the components, the callers, the code.  0 without
 * memory.
 */
static uint32_t stack_leaf(const struct export_profile *p, struct frame_tree *t,
			   const struct agg_stack_count *sc)
{
	const struct agg *g = p->agg;
	const struct agg_chain *ch = sc->chain ? &g->chains[sc->chain] : NULL;
	uint32_t frames[MAX_FRAMES], id = 0, k;
	int f, nf, code;

	nf = attr_outcome_frames(p->attr, sc->outcome, frames, MAX_FRAMES);
	code = ch ? attr_code_frame(p->attr, frames, nf) : nf;
	for (f = 0; f <= nf; f++) {
		if (f == code) {
			for (k = 0; ch && k < ch->n; k++) {
				const struct agg_frame *fr = &g->frames[ch->first + k];

				id = frame_id(t, id, fr->function, caller_category(fr));
				if (!id)
					return 0;
			}
		}
		if (f == nf)
			break;
		id = frame_id(t, id, attr_row(p->attr, frames[f])->name,
			      row_category(p, sc->outcome, frames[f]));
		if (!id)
			return 0;
	}
	return id;
}

/* Digits of @v, for the one line a sample takes (fprintf's parsing would dominate it). */
static char *put_u64(char *at, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*at++ = tmp[--n];
	return at;
}

static int sampled_stacks(const struct export_profile *p, FILE *out)
{
	const struct agg *g = p->agg;
	struct frame_tree t = { 0 };
	char *event = NULL, *buf = NULL, *at;
	size_t len = 0, i;
	FILE *name;
	int ret = -ENOMEM;

	if (!g->nr_stack_samples)
		return 0;
	/* The event's name, escaped once: every sample bears it. */
	name = open_memstream(&event, &len);
	if (!name)
		return -ENOMEM;
	json_str(name, p->info->event);
	if (fclose(name) || len > MAX_SAMPLE_LINE - 128)
		goto out;
	t.leaf = calloc(g->nr_stacks + 1, sizeof(*t.leaf));
	buf = malloc(SAMPLES_BUF);
	if (!t.leaf || !buf)
		goto out;
	/* Stacks first, so that the frames' dictionary comes before the samples. */
	for (i = 0; i < g->nr_stack_samples; i++) {
		uint32_t s = g->stack_samples[i].stack;

		if (!t.leaf[s] && !(t.leaf[s] = stack_leaf(p, &t, &g->stacks[s])))
			goto out;
	}
	fputs(",\n\"stackFrames\":{", out);
	for (i = 0; i < t.nr_frames; i++) {
		const struct stack_frame *f = &t.frames[i];

		fprintf(out, "%s\n\"%zu\":{\"name\":", i ? "," : "", i + 1);
		json_str(out, f->name);
		fputs(",\"category\":", out);
		json_str(out, f->category);
		if (f->parent)
			fprintf(out, ",\"parent\":%u", f->parent);
		fputc('}', out);
	}
	fputs("},\n\"samples\":[", out);
	/* A line a sample, 80 bytes or so: written a buffer at a time. */
	for (i = 0, at = buf; i < g->nr_stack_samples; i++) {
		const struct agg_stack_sample *ss = &g->stack_samples[i];
		const struct agg_stack_count *sc = &g->stacks[ss->stack];

		if (at - buf > SAMPLES_BUF - MAX_SAMPLE_LINE) {
			fwrite(buf, 1, (size_t)(at - buf), out);
			at = buf;
		}
		at = stpcpy(at, i ? ",\n{\"pid\":" : "\n{\"pid\":");
		at = put_u64(at, sc->pid);
		at = stpcpy(at, ",\"tid\":");
		at = put_u64(at, sc->tid);
		at = stpcpy(at, ",\"ts\":");
		at = put_u64(at, us(add_sat(ss->ns, lead_ns(g))));
		at = stpcpy(at, ",\"name\":");
		at = stpcpy(at, event);
		at = stpcpy(at, ",\"sf\":");
		at = put_u64(at, t.leaf[ss->stack]);
		at = stpcpy(at, ",\"weight\":1}");
	}
	fwrite(buf, 1, (size_t)(at - buf), out);
	fputs("\n]", out);
	ret = 0;
out:
	free(event);
	free(buf);
	free(t.leaf);
	free(t.frames);
	str_map_free(&t.names);
	pair_map_free(&t.children);
	return ret;
}

static int write_chrome(const struct export_profile *p, FILE *out)
{
	const struct session_info *info = p->info;
	const char *sep = "";
	char t[32];

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tailor\",\"input\":", out);
	json_str(out, p->input);
	fprintf(out, ",\"format\":\"%s\",\"complete\":%s,\"problem\":", info->format,
		info->complete ? "true" : "false");
	json_str(out, info->problem);
	fputs(",\"event\":", out);
	json_str(out, info->event);
	fputs(",\"level\":", out);
	json_str(out, attr_level_name(p->attr));
	fprintf(out, ",\"samples\":%" PRIu64 ",\"bucket\":\"%s\"},\"traceEvents\":[",
		p->agg->total, fmt_ns(p->agg->opt.bucket_ns, t, sizeof(t)));
	names(p, out, &sep);
	slices(p, out, &sep);
	states(p, out, &sep);
	if (counters(p, out, &sep))
		return -1;
	fputs("\n]", out);
	if (sampled_stacks(p, out))
		return -1;
	fputs("}\n", out);
	return ferror(out) ? -1 : 0;
}

const struct exporter export_chrome = {
	.name = "chrome",
	.help = "Chrome trace JSON: thread tracks of nested component runs and states, counters, sampled call stacks",
	.needs = EXPORT_NEEDS_SLICES | EXPORT_NEEDS_BUCKETS | EXPORT_NEEDS_STATES |
		 EXPORT_NEEDS_SAMPLE_STACKS,
	.write_profile = write_chrome,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof: a gzip'd profile.proto (github.com/google/pprof, proto/profile.proto),
 * encoded here -- the format is a handful of small messages.
 *
 * Each frame of a stack (query, pipeline, operator, function, source
 * line) is a Location with one Line whose Function bears the frame's
 * name, so pprof's flame graph shows the plan.  Samples carry the dictionary
 * levels of their stack as string labels (pipeline, operator), the query
 * they ran for whenever a dictionary declares that level (whatever the
 * stack: the query execution's name, or where no query was reached the
 * bucket, such as "[kernel]"), and tid, pid and tag as numbers, each with a num_unit: Go's reader drops a
 * numeric label of 0 that has none.  Values: samples/count and
 * cpu/nanoseconds (the samples' periods where the event is a clock, else
 * the samples times their mean spacing).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/export.h"
#include "tailor/session.h"
#include "util/grow.h"
#include "util/hashmap.h"

#define MAX_FRAMES	32
/* A call stack's frames beyond this many, the outermost, are left out. */
#define MAX_CALLERS	480

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
	LOCATION_ID = 1, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

enum { WIRE_VARINT = 0, WIRE_BYTES = 2 };

/* A protobuf message being encoded; out of memory is sticky. */
struct pb {
	uint8_t *buf;
	size_t len, cap;
	int err;
};

static void pb_raw(struct pb *b, const void *p, size_t n)
{
	if (b->err || array_grow((void **)&b->buf, &b->cap, b->len + n, 1)) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_raw(b, tmp, n);
}

/* proto3: a field at its default (0) is left out. */
static void pb_uint(struct pb *b, int field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, int field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | WIRE_BYTES);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

/* Append @sub as field @field of @b, and empty @sub for reuse. */
static void pb_message(struct pb *b, int field, struct pb *sub)
{
	if (sub->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->buf, sub->len);
	sub->len = 0;
	sub->err = 0;
}

/* A packed repeated varint field. */
static void pb_packed(struct pb *b, int field, const uint64_t *v, size_t n, struct pb *tmp)
{
	size_t i;

	for (i = 0; i < n; i++)
		pb_varint(tmp, v[i]);
	pb_message(b, field, tmp);
}

struct pprof {
	struct pb profile, msg, sub;
	struct str_map strings;
	uint64_t nr_strings;
	const struct export_profile *p;
	uint64_t *location_of_row;	/* row -> location id (= function id), 0: none yet */
	struct str_map location_of_frame;	/* a caller's frame -> location id - 1 */
	uint64_t nr_locations;
	int label_level[MAX_FRAMES];	/* stack levels that label samples */
	int nr_label_levels;
};

/* The string table index of @s, added on first use. */
static uint64_t str(struct pprof *pp, const char *s)
{
	uint32_t idx;

	if (str_map_get(&pp->strings, s, &idx))
		return idx;
	if (str_map_put(&pp->strings, s, (uint32_t)pp->nr_strings)) {
		pp->profile.err = -ENOMEM;
		return 0;
	}
	pb_bytes(&pp->profile, PROFILE_STRING_TABLE, s, strlen(s));
	return pp->nr_strings++;
}

static void value_type(struct pprof *pp, int field, const char *type, const char *unit)
{
	pb_uint(&pp->msg, VALUE_TYPE_TYPE, str(pp, type));
	pb_uint(&pp->msg, VALUE_TYPE_UNIT, str(pp, unit));
	pb_message(&pp->profile, field, &pp->msg);
}

/* The Location (and its Function, of the same id) of a frame row. */
static uint64_t location(struct pprof *pp, uint32_t row)
{
	const struct attr_row *r = attr_row(pp->p->attr, row);
	const char *colon = r->kind == ROW_LINE ? strrchr(r->name, ':') : NULL;
	uint64_t id, line = 0;
	char file[4096];

	if (pp->location_of_row[row])
		return pp->location_of_row[row];
	id = ++pp->nr_locations;
	pp->location_of_row[row] = id;
	pb_uint(&pp->msg, FUNCTION_ID, id);
	pb_uint(&pp->msg, FUNCTION_NAME, str(pp, r->name));
	pb_uint(&pp->msg, FUNCTION_SYSTEM_NAME, str(pp, r->name));
	/* A source line frame: its file and number, as pprof's -lines shows them. */
	if (colon) {
		snprintf(file, sizeof(file), "%.*s", (int)(colon - r->name), r->name);
		line = strtoull(colon + 1, NULL, 10);
		pb_uint(&pp->msg, FUNCTION_FILENAME, str(pp, file));
	} else if (r->object) {
		pb_uint(&pp->msg, FUNCTION_FILENAME, str(pp, r->object));
	}
	pb_message(&pp->profile, PROFILE_FUNCTION, &pp->msg);
	pb_uint(&pp->sub, LINE_FUNCTION_ID, id);
	pb_uint(&pp->sub, LINE_LINE, line);
	pb_uint(&pp->msg, LOCATION_ID, id);
	pb_message(&pp->msg, LOCATION_LINE, &pp->sub);
	pb_message(&pp->profile, PROFILE_LOCATION, &pp->msg);
	return id;
}

/*
 * The Location (and its Function, of the same id) of a caller's frame
 * (perf record -g): its function, and its line where known.
 */
static uint64_t frame_location(struct pprof *pp, const struct agg_frame *f)
{
	uint32_t idx;
	char key[8192];
	uint64_t id;

	snprintf(key, sizeof(key), "%s\x1f%s\x1f%u\x1f%s", f->function, f->file ? f->file : "",
		 f->line, f->object ? f->object : "");
	if (str_map_get(&pp->location_of_frame, key, &idx))
		return (uint64_t)idx + 1;
	id = ++pp->nr_locations;
	if (id > UINT32_MAX || str_map_put(&pp->location_of_frame, key, (uint32_t)(id - 1))) {
		pp->profile.err = -ENOMEM;
		return id;
	}
	pb_uint(&pp->msg, FUNCTION_ID, id);
	pb_uint(&pp->msg, FUNCTION_NAME, str(pp, f->function));
	pb_uint(&pp->msg, FUNCTION_SYSTEM_NAME, str(pp, f->function));
	if (f->file || f->object)
		pb_uint(&pp->msg, FUNCTION_FILENAME, str(pp, f->file ? f->file : f->object));
	pb_message(&pp->profile, PROFILE_FUNCTION, &pp->msg);
	pb_uint(&pp->sub, LINE_FUNCTION_ID, id);
	pb_uint(&pp->sub, LINE_LINE, f->line);
	pb_uint(&pp->msg, LOCATION_ID, id);
	pb_message(&pp->msg, LOCATION_LINE, &pp->sub);
	pb_message(&pp->profile, PROFILE_LOCATION, &pp->msg);
	return id;
}

static void num_label(struct pprof *pp, const char *key, uint64_t num, const char *unit)
{
	pb_uint(&pp->sub, LABEL_KEY, str(pp, key));
	pb_uint(&pp->sub, LABEL_NUM, num);
	pb_uint(&pp->sub, LABEL_NUM_UNIT, str(pp, unit));
	pb_message(&pp->msg, SAMPLE_LABEL, &pp->sub);
}

static void sample(struct pprof *pp, const struct agg_stack_count *sc, bool ns_periods)
{
	const struct attributor *attr = pp->p->attr;
	const uint32_t *rows = attr_outcome_rows(attr, sc->outcome);
	const struct agg *g = pp->p->agg;
	const struct agg_chain *ch = sc->chain ? &g->chains[sc->chain] : NULL;
	uint32_t frames[MAX_FRAMES], callers = ch ? ch->n : 0, k;
	uint64_t ids[MAX_FRAMES + MAX_CALLERS], values[2];
	size_t at = 0;
	int n, i, code;

	n = attr_outcome_frames(attr, sc->outcome, frames, MAX_FRAMES);
	code = ch ? attr_code_frame(attr, frames, n) : n;
	if (callers > MAX_CALLERS)
		callers = MAX_CALLERS;
	/* Leaf first: the code's frames, its callers, the components above. */
	for (i = n - 1; i >= code; i--)
		ids[at++] = location(pp, frames[i]);
	for (k = 0; k < callers; k++)
		ids[at++] = frame_location(pp, &g->frames[ch->first + ch->n - 1 - k]);
	for (i = code - 1; i >= 0; i--)
		ids[at++] = location(pp, frames[i]);
	pb_packed(&pp->msg, SAMPLE_LOCATION_ID, ids, at, &pp->sub);
	values[0] = sc->samples;
	values[1] = ns_periods && sc->period ? sc->period : sc->samples * pp->p->agg->sample_ns;
	pb_packed(&pp->msg, SAMPLE_VALUE, values, 2, &pp->sub);
	for (i = 0; i < pp->nr_label_levels; i++) {
		const struct attr_row *r = attr_row(attr, rows[pp->label_level[i]]);

		if (r->kind != ROW_COMPONENT)
			continue;
		pb_uint(&pp->sub, LABEL_KEY, str(pp, attr_stack_level_name(attr, pp->label_level[i])));
		pb_uint(&pp->sub, LABEL_STR, str(pp, r->name));
		pb_message(&pp->msg, SAMPLE_LABEL, &pp->sub);
	}
	if (attr_has_queries(attr)) {
		uint32_t q = attr_outcome_query(attr, sc->outcome);

		pb_uint(&pp->sub, LABEL_KEY, str(pp, ATTR_QUERY_LEVEL));
		pb_uint(&pp->sub, LABEL_STR, str(pp, q != ATTR_NONE ? attr_row(attr, q)->name : ""));
		pb_message(&pp->msg, SAMPLE_LABEL, &pp->sub);
	}
	num_label(pp, "tid", sc->tid, "id");
	num_label(pp, "pid", sc->pid, "id");
	if (sc->has_tag)
		num_label(pp, "tag", sc->tag, "value");
	pb_message(&pp->profile, PROFILE_SAMPLE, &pp->msg);
}

/* The whole encoded profile, gzip'd onto @out. */
static int gzip_to(const struct pb *b, FILE *out)
{
	uint8_t chunk[65536];
	z_stream z = { 0 };
	int ret;

	/* 16 + 15: a gzip header and trailer around deflate's stream. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = b->buf;
	z.avail_in = (uInt)b->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			break;
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out)
			ret = Z_ERRNO;
	} while (ret == Z_OK);
	deflateEnd(&z);
	return ret == Z_STREAM_END && !ferror(out) ? 0 : -EIO;
}

static int write_pprof(const struct export_profile *p, FILE *out)
{
	const struct session_info *info = p->info;
	const struct agg *g = p->agg;
	struct pprof pp = { .p = p };
	bool ns_periods = info->period_is_ns && info->period;
	char comment[1024];
	size_t i;
	int ret, l;

	pp.location_of_row = calloc(attr_nr_rows(p->attr) + 1, sizeof(*pp.location_of_row));
	if (!pp.location_of_row)
		return -ENOMEM;
	for (l = 0; l < attr_nr_stack_levels(p->attr) && l < MAX_FRAMES; l++) {
		const char *name = attr_stack_level_name(p->attr, l);

		if (strcmp(name, "function") && strcmp(name, "line") && strcmp(name, "instruction") &&
		    !(attr_has_queries(p->attr) && !strcmp(name, ATTR_QUERY_LEVEL)))
			pp.label_level[pp.nr_label_levels++] = l;
	}
	str(&pp, "");	/* string 0 is the empty string */
	value_type(&pp, PROFILE_SAMPLE_TYPE, "samples", "count");
	value_type(&pp, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	for (i = 0; i < g->nr_stacks; i++)
		sample(&pp, &g->stacks[i], ns_periods);
	pb_uint(&pp.profile, PROFILE_TIME_NANOS, info->start_wall_ns);
	pb_uint(&pp.profile, PROFILE_DURATION_NANOS,
		session_time_to_ns(info, info->last_time - info->first_time));
	value_type(&pp, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
	pb_uint(&pp.profile, PROFILE_PERIOD, ns_periods ? info->period : g->sample_ns);
	snprintf(comment, sizeof(comment), "tailor: %s (%s, %s), event %s, level %s",
		 p->input, info->format, info->complete ? "complete" : info->problem,
		 info->event[0] ? info->event : "?", attr_level_name(p->attr));
	pb_uint(&pp.profile, PROFILE_COMMENT, str(&pp, comment));
	pb_uint(&pp.profile, PROFILE_DEFAULT_SAMPLE_TYPE, str(&pp, "cpu"));
	ret = pp.profile.err ? pp.profile.err : gzip_to(&pp.profile, out);
	free(pp.profile.buf);
	free(pp.msg.buf);
	free(pp.sub.buf);
	free(pp.location_of_row);
	str_map_free(&pp.location_of_frame);
	str_map_free(&pp.strings);
	return ret;
}

const struct exporter export_pprof = {
	.name = "pprof",
	.help = "gzip'd profile.proto for go tool pprof (needs -o)",
	.binary = true,
	.needs = EXPORT_NEEDS_STACKS,
	.write_profile = write_pprof,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof: a gzip'd profile.proto (github.com/google/pprof, proto/profile.proto),
 * encoded here -- the format is a handful of small messages.
 *
 * Each frame of a stack (query, pipeline, operator, function, source
 * line) is a Location, so pprof's flame graph shows the plan.  A function
 * frame of user code is that code as a CPU profiler's pprof has it: its
 * Lines the function at the sample's source line, and where that is code
 * a compiler inlined, the inlined functions first (inline_frames.c); its
 * Mapping the object, with its build-id.  Other frames are a Location of
 * one Line whose Function bears the frame's name.  Samples carry the
 * dictionary levels of their stack as string labels (pipeline, operator),
 * the query they ran for whenever a dictionary declares that level
 * (whatever the stack: the query execution's name, or where no query was
 * reached the bucket, such as "[kernel]"), and tid, pid and tag as
 * numbers, each with a num_unit: Go's reader drops a numeric label of 0
 * that has none; and where the thread had one, its OpenTelemetry
 * context's trace_id and span_id (otel_labels()).  Values: samples/count and
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
#include "tailor/symbols.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/path.h"

#define MAX_FRAMES	32
/* A chain of inlined calls deeper than this keeps its innermost functions. */
#define MAX_INLINE	32
/* A call stack's frames beyond this many, the outermost, are left out. */
#define MAX_CALLERS	480

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
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

/* A Mapping: an object frames fell in. */
struct pp_mapping {
	const char *path;
	uint64_t samples;		/* whose leaf is in it: the main one has most */
	struct sym_object info;		/* valid if known */
	bool known;
	/* What its Locations carry (pprof's symbolization skips it then). */
	bool functions, filenames, line_numbers, inline_frames;
	uint64_t id;			/* its Mapping.id, once they are ordered */
};

/* A Location, written after the samples: only then is its address settled. */
struct pp_location {
	uint32_t mapping;		/* index + 1 into mappings; 0: none */
	uint64_t address;		/* the one address it stands for, if several 0 */
	bool has_address, several;
	uint32_t first_line, nr_lines;	/* into lines: (function id, line) pairs */
};

struct pprof {
	struct pb profile, msg, sub;
	struct str_map strings;
	uint64_t nr_strings;
	const struct export_profile *p;
	struct str_map function_of;	/* name, filename -> function id - 1 */
	uint64_t nr_functions;
	struct str_map location_of;	/* what a Location stands for -> index */
	struct pp_location *locations;
	size_t nr_locations, cap_locations;
	uint64_t *lines;		/* function id, line; pairs */
	size_t nr_lines, cap_lines;
	struct str_map mapping_of;	/* object path -> index */
	struct pp_mapping *mappings;
	size_t nr_mappings, cap_mappings;
	uint64_t *location_of_row;	/* row -> location index + 1 (rows with no code) */
	uint64_t *location_of_outcome;	/* outcome -> its function frame's location index + 1 */
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

/*
 * The Function named @name whose lines are in source file @file (NULL:
 * none known), made on first use: one per (name, file), whichever frames
 * -- the sample's own code or its callers' -- name it.  Never the object:
 * pprof's -list reads Function.filename as source.
 */
static uint64_t function(struct pprof *pp, const char *name, const char *file)
{
	char key[8192];
	uint32_t idx;

	snprintf(key, sizeof(key), "%s\x1f%s", name, file ? file : "");
	if (str_map_get(&pp->function_of, key, &idx))
		return (uint64_t)idx + 1;
	if (pp->nr_functions >= UINT32_MAX ||
	    str_map_put(&pp->function_of, key, (uint32_t)pp->nr_functions)) {
		pp->profile.err = -ENOMEM;
		return 0;
	}
	pp->nr_functions++;
	pb_uint(&pp->msg, FUNCTION_ID, pp->nr_functions);
	pb_uint(&pp->msg, FUNCTION_NAME, str(pp, name));
	pb_uint(&pp->msg, FUNCTION_SYSTEM_NAME, str(pp, name));
	if (file)
		pb_uint(&pp->msg, FUNCTION_FILENAME, str(pp, file));
	pb_message(&pp->profile, PROFILE_FUNCTION, &pp->msg);
	return pp->nr_functions;
}

/* The Mapping of object @path (NULL: none, 0), made on first use; index + 1. */
static uint32_t mapping(struct pprof *pp, const char *path)
{
	struct pp_mapping *m;
	uint32_t idx;

	if (!path)
		return 0;
	if (str_map_get(&pp->mapping_of, path, &idx))
		return idx + 1;
	if (pp->nr_mappings >= UINT32_MAX - 1 ||
	    array_grow((void **)&pp->mappings, &pp->cap_mappings, pp->nr_mappings + 1,
		       sizeof(*pp->mappings)) ||
	    str_map_put(&pp->mapping_of, path, (uint32_t)pp->nr_mappings)) {
		pp->profile.err = -ENOMEM;
		return 0;
	}
	m = &pp->mappings[pp->nr_mappings];
	m->path = path;
	m->known = pp->p->sym && !sym_object_info(pp->p->sym, path, &m->info);
	return (uint32_t)++pp->nr_mappings;
}

/*
 * The Location that @key stands for, made on first use with the
 * (function id, line) pairs @lines (innermost first) in @mapping: index.
 * A code address in it (@has_address) is its address while it is the
 * only one.
 */
static size_t location(struct pprof *pp, const char *key, const uint64_t *lines, size_t nr,
		       uint32_t mapping_idx, bool has_address, uint64_t address)
{
	struct pp_location *l;
	struct pp_mapping *m;
	uint32_t idx;

	if (!str_map_get(&pp->location_of, key, &idx)) {
		if (pp->nr_locations >= UINT32_MAX - 1 ||
		    array_grow((void **)&pp->locations, &pp->cap_locations, pp->nr_locations + 1,
			       sizeof(*pp->locations)) ||
		    array_grow((void **)&pp->lines, &pp->cap_lines, pp->nr_lines + 2 * nr,
			       sizeof(*pp->lines)) ||
		    str_map_put(&pp->location_of, key, (uint32_t)pp->nr_locations)) {
			pp->profile.err = -ENOMEM;
			return 0;
		}
		idx = (uint32_t)pp->nr_locations++;
		l = &pp->locations[idx];
		l->mapping = mapping_idx;
		l->first_line = (uint32_t)pp->nr_lines;
		l->nr_lines = (uint32_t)nr;
		if (nr)
			memcpy(pp->lines + pp->nr_lines, lines, 2 * nr * sizeof(*lines));
		pp->nr_lines += 2 * nr;
		if (mapping_idx) {
			m = &pp->mappings[mapping_idx - 1];
			m->line_numbers |= nr && lines[1];
			m->inline_frames |= nr > 1;
		}
	}
	l = &pp->locations[idx];
	if (has_address && (!l->has_address || l->address != address)) {
		l->several = l->has_address;
		l->has_address = true;
		l->address = address;
	}
	return idx;
}

/* A Location with one Line of a Function of its own name (components, buckets). */
static size_t named_location(struct pprof *pp, const char *key, const char *name,
			     const char *file, unsigned int line, uint32_t mapping_idx)
{
	uint64_t lines[2] = { function(pp, name, file), line };

	return location(pp, key, lines, 1, mapping_idx, false, 0);
}

/*
 * The Location of a sample's function frame (@row) in user code: the
 * function at the site's source line, and where that line is in code
 * inlined there, the inlined functions first, each at its own line, then
 * their callers at the lines that called them, out to @row's function
 * (as addr2line -i, and perf's srcline --inline, give them).  One per
 * (function row, object, those lines): pprof's -list and -lines see the
 * lines; -top sees the function, and each inlined one (-noinlines: the
 * function alone).
 */
static size_t code_location(struct pprof *pp, uint32_t row, const struct attr_site *site)
{
	const struct attr_row *r = attr_row(pp->p->attr, row);
	const struct attr_line *own = site->line != ATTR_NONE ?
				      attr_line(pp->p->attr, site->line) : NULL;
	struct sym_inline_frame chain[MAX_INLINE];
	uint64_t lines[2 * MAX_INLINE];
	const char *file = own ? own->file : NULL;
	unsigned int line = own ? own->line : 0;
	uint32_t map = mapping(pp, site->path);
	char key[16384];
	size_t at;
	int n = 0, i;

	/*
	 * Without an address the line table had none to ask; without the
	 * site's line, no inlined function has a line to show.
	 */
	if (pp->p->sym && site->address && own)
		n = sym_inline_frames(pp->p->sym, site->path, site->address, chain, MAX_INLINE);
	if (n < 0) {
		pp->profile.err = n;
		return 0;
	}
	if (n > MAX_INLINE)
		n = MAX_INLINE;	/* the innermost ones, and the row's function */
	at = (size_t)snprintf(key, sizeof(key), "c\x1f%u\x1f%s", row, site->path);
	/* Inlined functions, innermost first; the last frame is the row's own function. */
	for (i = 0; i < n - 1; i++) {
		lines[2 * i] = function(pp, chain[i].function, file);
		lines[2 * i + 1] = line;
		if (at < sizeof(key))
			at += (size_t)snprintf(key + at, sizeof(key) - at, "\x1f%s\x1f%s\x1f%u",
					       chain[i].function, file ? file : "", line);
		file = chain[i + 1].file;
		line = chain[i + 1].line;
	}
	i = n > 1 ? n - 1 : 0;
	lines[2 * i] = function(pp, r->name, file);
	lines[2 * i + 1] = line;
	if (at < sizeof(key))
		snprintf(key + at, sizeof(key) - at, "\x1f%s\x1f%u", file ? file : "", line);
	if (map) {
		pp->mappings[map - 1].functions = true;
		pp->mappings[map - 1].filenames |= file != NULL;
		/* Looked for in its DWARF: a Location of one Line is no inlined code. */
		pp->mappings[map - 1].inline_frames |= pp->p->sym && pp->mappings[map - 1].known &&
						       pp->mappings[map - 1].info.has_dwarf;
	}
	return location(pp, key, lines, (size_t)i + 1, map, site->address != 0, site->address);
}

/* The Location of a frame of the sample's own (@row, of @outcome): index. */
static size_t frame_location(struct pprof *pp, uint32_t row, uint32_t outcome)
{
	const struct attr_row *r = attr_row(pp->p->attr, row);
	struct attr_site site;
	bool has_site = attr_outcome_site(pp->p->attr, outcome, &site);
	const char *colon;
	char key[64], file[4096];
	uint32_t map;
	size_t idx;

	if (r->kind == ROW_FUNCTION && has_site) {
		if (!pp->location_of_outcome[outcome])
			pp->location_of_outcome[outcome] = code_location(pp, row, &site) + 1;
		return pp->location_of_outcome[outcome] - 1;
	}
	snprintf(key, sizeof(key), "r\x1f%u", row);
	if (!pp->location_of_row[row]) {
		map = mapping(pp, r->kind == ROW_COMPONENT ? NULL : has_site ? site.path : r->object);
		colon = r->kind == ROW_LINE ? strrchr(r->name, ':') : NULL;
		if (colon) {
			/* A source line frame (--stack ...,line): its file and number. */
			snprintf(file, sizeof(file), "%.*s", (int)(colon - r->name), r->name);
			idx = named_location(pp, key, r->name, file,
					     (unsigned int)strtoul(colon + 1, NULL, 10), map);
		} else {
			idx = named_location(pp, key, r->name, NULL, 0, map);
		}
		/*
		 * Named by a symbol (an instruction's name holds its function's);
		 * a line's is its file and line, and buckets name none.
		 */
		if (map && (r->kind == ROW_FUNCTION || r->kind == ROW_INSTRUCTION))
			pp->mappings[map - 1].functions = true;
		if (map && colon)
			pp->mappings[map - 1].filenames = true;
		pp->location_of_row[row] = idx + 1;
	}
	idx = pp->location_of_row[row] - 1;
	/* An instruction is one address: pprof's -addresses shows it. */
	if (r->kind == ROW_INSTRUCTION && has_site && site.address)
		location(pp, key, NULL, 0, 0, true, site.address);
	return idx;
}

/*
 * The Location of a caller's frame (perf record -g): its function at its
 * line where known, in the object it ran in.  No address: the frame keeps
 * none (agg_frame), so several calls in a function at one line are one.
 */
static size_t caller_location(struct pprof *pp, const struct agg_frame *f)
{
	uint32_t map = mapping(pp, f->object);
	char key[8192];

	snprintf(key, sizeof(key), "f\x1f%s\x1f%s\x1f%u\x1f%s", f->function, f->file ? f->file : "",
		 f->line, f->object ? f->object : "");
	/* A bucket ([libc.so.6]) names no function. */
	if (map && f->function[0] != '[')
		pp->mappings[map - 1].functions = true;
	if (map && f->file)
		pp->mappings[map - 1].filenames = true;
	return named_location(pp, key, f->function, f->file, f->line, map);
}

static void num_label(struct pprof *pp, const char *key, uint64_t num, const char *unit)
{
	pb_uint(&pp->sub, LABEL_KEY, str(pp, key));
	pb_uint(&pp->sub, LABEL_NUM, num);
	pb_uint(&pp->sub, LABEL_NUM_UNIT, str(pp, unit));
	pb_message(&pp->msg, SAMPLE_LABEL, &pp->sub);
}

/*
 * OpenTelemetry's context as string labels trace_id and span_id, in the
 * ids' W3C hex (as traceparent headers and trace back ends print them),
 * so that a profile's samples join the traces of the same requests.
 */
static void otel_labels(struct pprof *pp, const struct agg_otel_ids *o)
{
	static const char hex[] = "0123456789abcdef";
	char trace[33], span[17];
	size_t i;

	for (i = 0; i < 16; i++) {
		trace[2 * i] = hex[o->trace_id[i] >> 4];
		trace[2 * i + 1] = hex[o->trace_id[i] & 15];
	}
	trace[32] = 0;
	for (i = 0; i < 8; i++) {
		span[2 * i] = hex[o->span_id[i] >> 4];
		span[2 * i + 1] = hex[o->span_id[i] & 15];
	}
	span[16] = 0;
	pb_uint(&pp->sub, LABEL_KEY, str(pp, "trace_id"));
	pb_uint(&pp->sub, LABEL_STR, str(pp, trace));
	pb_message(&pp->msg, SAMPLE_LABEL, &pp->sub);
	pb_uint(&pp->sub, LABEL_KEY, str(pp, "span_id"));
	pb_uint(&pp->sub, LABEL_STR, str(pp, span));
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
		ids[at++] = frame_location(pp, frames[i], sc->outcome) + 1;
	for (k = 0; k < callers; k++)
		ids[at++] = caller_location(pp, &g->frames[ch->first + ch->n - 1 - k]) + 1;
	for (i = code - 1; i >= 0; i--)
		ids[at++] = frame_location(pp, frames[i], sc->outcome) + 1;
	/* The object with the most samples' code is the main one, among programs. */
	if (at && !pp->profile.err && pp->locations[ids[0] - 1].mapping)
		pp->mappings[pp->locations[ids[0] - 1].mapping - 1].samples += sc->samples;
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
	if (sc->otel)
		otel_labels(pp, &g->otel_ids[sc->otel]);
	pb_message(&pp->profile, PROFILE_SAMPLE, &pp->msg);
}

/*
 * How surely @m is the program, not a library: its ELF says so (ET_EXEC,
 * or a PIE's PT_INTERP); failing that, a name that is no library's nor
 * a bucket's; else neither.
 */
static int program_rank(const struct pp_mapping *m)
{
	const char *base = path_base(m->path);

	if (m->known)
		return m->info.executable ? 2 : 0;
	return base[0] != '[' && !strstr(base, ".so") ? 1 : 0;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct pp_mapping *x = *(const struct pp_mapping *const *)a;
	const struct pp_mapping *y = *(const struct pp_mapping *const *)b;

	if (program_rank(x) != program_rank(y))
		return program_rank(y) - program_rank(x);
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->path, y->path);
}

/*
 * The Mapping table, the program first: pprof takes mapping[0] for the
 * main binary.  Addresses are the objects' own (ELF virtual addresses, as
 * addr2line takes them), not a process's: tailor knows code by (file,
 * address), whichever process mapped it wherever.  So a Mapping spans its
 * object's executable segment at the segment's own addresses and file
 * offset, and pprof's file address of a Location (address - start +
 * offset, less the segment's offset - vaddr) is its address again.  Where
 * tailor cannot read the object (gone, the kernel, the vDSO, a JIT's
 * memory), start, limit and offset are 0: it has no address there.
 */
static void mappings(struct pprof *pp)
{
	struct pp_mapping **order = calloc(pp->nr_mappings + 1, sizeof(*order));
	size_t i;

	if (!order) {
		pp->profile.err = -ENOMEM;
		return;
	}
	for (i = 0; i < pp->nr_mappings; i++)
		order[i] = &pp->mappings[i];
	qsort(order, pp->nr_mappings, sizeof(*order), cmp_mapping);
	for (i = 0; i < pp->nr_mappings; i++) {
		struct pp_mapping *m = order[i];

		m->id = i + 1;
		pb_uint(&pp->msg, MAPPING_ID, m->id);
		if (m->known) {
			pb_uint(&pp->msg, MAPPING_MEMORY_START, m->info.text_start);
			pb_uint(&pp->msg, MAPPING_MEMORY_LIMIT, m->info.text_end);
			pb_uint(&pp->msg, MAPPING_FILE_OFFSET, m->info.text_offset);
		}
		pb_uint(&pp->msg, MAPPING_FILENAME, str(pp, m->path));
		if (m->known && m->info.build_id[0])
			pb_uint(&pp->msg, MAPPING_BUILD_ID, str(pp, m->info.build_id));
		/*
		 * What its Locations carry.  Any of the first three keeps pprof
		 * from symbolizing them again from the file; a mapping of
		 * buckets alone ([libc.so.6]) has none, and pprof may name its
		 * code where it finds the file and the address is one.
		 */
		pb_uint(&pp->msg, MAPPING_HAS_FUNCTIONS, m->functions);
		pb_uint(&pp->msg, MAPPING_HAS_FILENAMES, m->filenames);
		pb_uint(&pp->msg, MAPPING_HAS_LINE_NUMBERS, m->line_numbers);
		pb_uint(&pp->msg, MAPPING_HAS_INLINE_FRAMES, m->inline_frames);
		pb_message(&pp->profile, PROFILE_MAPPING, &pp->msg);
	}
	free(order);
}

static void locations(struct pprof *pp)
{
	size_t i, k;

	for (i = 0; i < pp->nr_locations; i++) {
		const struct pp_location *l = &pp->locations[i];

		pb_uint(&pp->msg, LOCATION_ID, i + 1);
		if (l->mapping)
			pb_uint(&pp->msg, LOCATION_MAPPING_ID, pp->mappings[l->mapping - 1].id);
		if (l->has_address && !l->several)
			pb_uint(&pp->msg, LOCATION_ADDRESS, l->address);
		for (k = 0; k < l->nr_lines; k++) {
			pb_uint(&pp->sub, LINE_FUNCTION_ID, pp->lines[l->first_line + 2 * k]);
			pb_uint(&pp->sub, LINE_LINE, pp->lines[l->first_line + 2 * k + 1]);
			pb_message(&pp->msg, LOCATION_LINE, &pp->sub);
		}
		pb_message(&pp->profile, PROFILE_LOCATION, &pp->msg);
	}
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
	pp.location_of_outcome = calloc(attr_nr_outcomes(p->attr) + 1,
					sizeof(*pp.location_of_outcome));
	if (!pp.location_of_row || !pp.location_of_outcome) {
		free(pp.location_of_row);
		free(pp.location_of_outcome);
		return -ENOMEM;
	}
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
	if (!pp.profile.err) {
		mappings(&pp);
		locations(&pp);
	}
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
	free(pp.location_of_outcome);
	free(pp.locations);
	free(pp.lines);
	free(pp.mappings);
	str_map_free(&pp.location_of);
	str_map_free(&pp.function_of);
	str_map_free(&pp.mapping_of);
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

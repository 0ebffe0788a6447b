// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code in anonymous memory, the way perf's JIT interface names it: a
 * JIT that writes a jitdump maps the file (jit-PID.dump) executable, so
 * a profile's mapping events name it and its code loads and moves are
 * read then, each a range of the process's addresses from the load's
 * time on; a JIT that writes a perf map (/tmp/perf-PID.map) leaves no
 * trace in the profile, so the map is looked for at the first sample of
 * a process in memory no file backs.  A jitdump's ranges come before a
 * perf map's, and both before the anonymous mapping they lie in.
 *
 * A JIT reuses addresses (freed code, V8's moving collector): ranges
 * keep their times, and the newest in force at a sample names it.  When
 * the dump's clock is not the profile's (sym_set_jit_clock() cannot
 * convert), times are dropped and the newest load in file order wins,
 * which is right for code that never moves.  A perf map has no times at
 * all: its last line for an address wins.
 *
 * Files are read, in this order, from what the profile embeds
 * (sym_set_jit_files()), from the directory given by sym_set_jit_dir()
 * under their own name (a profile copied to another host with them),
 * and from the path the JIT wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbols/internal.h"
#include "symbols/jit_sources.h"
#include "util/grow.h"
#include "util/path.h"

/* A source line of JIT code, by offset from the code's start. */
struct jit_code_line {
	uint64_t offset;
	uint32_t line;
	const char *file;
};

struct jit_code {
	const char *name;
	uint64_t size;
	struct jit_code_line *lines;	/* sorted by offset */
	size_t nr_lines;
	struct jit_source *source;
};

struct jit_source {
	struct sym_jit_source info;	/* first: sym_jit_source() hands it out */
	char problem[1024];
	char *path, *read_from;
};

struct sym_jit {
	struct sym_map_list dumped;	/* ranges of jitdump loads and moves */
	struct sym_map_list mapped;	/* ranges of perf map lines */
	struct jit_source **sources;
	size_t nr_sources;
	struct jit_code **codes;
	size_t nr_codes, cap_codes;
	uint32_t *map_tried;		/* pids whose perf map was looked for */
	size_t nr_map_tried, cap_map_tried;
	int (*embedded)(void *ctx, const char *path, const void **data, size_t *len);
	void *embedded_ctx;
	char *dir;
	uint64_t not_before;		/* wall ns: files older are not this run's */
	int (*clock)(void *ctx, bool tsc, uint64_t *time);
	void *clock_ctx;
	const char *last_file;		/* the file name kept last (lines repeat it) */
};

static struct sym_jit *jit_of(struct symbolizer *s)
{
	if (!s->jit)
		s->jit = calloc(1, sizeof(*s->jit));
	return s->jit;
}

void jit_free(struct symbolizer *s)
{
	struct sym_jit *j = s->jit;
	size_t i;

	if (!j)
		return;
	for (i = 0; i < j->nr_codes; i++) {
		free(j->codes[i]->lines);
		free(j->codes[i]);
	}
	for (i = 0; i < j->nr_sources; i++) {
		free(j->sources[i]->path);
		free(j->sources[i]->read_from);
		free(j->sources[i]);
	}
	free(j->codes);
	free(j->sources);
	free(j->map_tried);
	free(j->dumped.maps);
	free(j->mapped.maps);
	free(j->dir);
	free(j);
	s->jit = NULL;
}

int sym_set_jit_files(struct symbolizer *s,
		      int (*embedded)(void *ctx, const char *path, const void **data, size_t *len),
		      void *ctx)
{
	struct sym_jit *j = jit_of(s);

	if (!j)
		return -ENOMEM;
	j->embedded = embedded;
	j->embedded_ctx = ctx;
	return 0;
}

int sym_set_jit_dir(struct symbolizer *s, const char *dir)
{
	struct sym_jit *j = jit_of(s);

	if (!j || !(dir = strdup(dir)))
		return -ENOMEM;
	free(j->dir);
	j->dir = (char *)dir;
	return 0;
}

int sym_set_jit_not_before(struct symbolizer *s, uint64_t wall_ns)
{
	struct sym_jit *j = jit_of(s);

	if (!j)
		return -ENOMEM;
	j->not_before = wall_ns;
	return 0;
}

int sym_set_jit_clock(struct symbolizer *s, int (*convert)(void *ctx, bool tsc, uint64_t *time),
		      void *ctx)
{
	struct sym_jit *j = jit_of(s);

	if (!j)
		return -ENOMEM;
	j->clock = convert;
	j->clock_ctx = ctx;
	return 0;
}

size_t sym_jit_nr_sources(const struct symbolizer *s)
{
	return s->jit ? s->jit->nr_sources : 0;
}

const struct sym_jit_source *sym_jit_source(const struct symbolizer *s, size_t i)
{
	return &s->jit->sources[i]->info;
}

static struct jit_source *new_source(struct sym_jit *j, const char *path, uint32_t pid,
				     bool perf_map)
{
	struct jit_source *src = calloc(1, sizeof(*src)), **sources;

	sources = realloc(j->sources, (j->nr_sources + 1) * sizeof(*sources));
	if (sources)
		j->sources = sources;
	if (!src || !sources || !(src->path = strdup(path))) {
		free(src);
		return NULL;
	}
	src->info.path = src->path;
	src->info.pid = pid;
	src->info.perf_map = perf_map;
	src->info.problem = src->problem;
	j->sources[j->nr_sources++] = src;
	return src;
}

/*
 * The bytes of @path, mapped (NULL when empty).  O_NONBLOCK: a FIFO
 * planted in /tmp under a JIT file's name must not hang the report.  A
 * perf map older than the profile (@not_before, wall ns) is some earlier
 * process's that had the same pid: -ESTALE.
 */
static int map_file(const char *path, uint64_t not_before, void **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err = 0;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if (not_before &&
		 (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec < not_before)
		err = -ESTALE;
	if (!err) {
		*len = (size_t)st.st_size;
		*data = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
		if (*data == MAP_FAILED)
			err = -errno;
	}
	close(fd);
	return err;
}

/*
 * Reads @src's file where sym_jit says, calls @parse on its bytes, and
 * says in src->problem what went wrong; -ENOMEM only is an error.
 */
static int read_source(struct symbolizer *s, struct jit_source *src,
		       int (*parse)(struct symbolizer *s, struct jit_source *src,
				    const void *data, size_t len, char *err, size_t errlen))
{
	struct sym_jit *j = s->jit;
	/* A perf map is found by pid alone; a jitdump by its process's mapping. */
	uint64_t not_before = src->info.perf_map ? j->not_before : 0;
	const char *base = path_base(src->path);
	char at[4096], err[256] = "";
	const void *embedded;
	void *data = NULL;
	size_t len = 0;
	int ret = -ENOENT;

	if (j->embedded && !j->embedded(j->embedded_ctx, src->path, &embedded, &len)) {
		snprintf(at, sizeof(at), "the profile");
		ret = parse(s, src, embedded, len, err, sizeof(err));
		goto done;
	}
	if (j->dir) {
		snprintf(at, sizeof(at), "%s/%s", j->dir, base);
		ret = map_file(at, not_before, &data, &len);
	}
	if (ret == -ENOENT) {
		snprintf(at, sizeof(at), "%s", src->path);
		ret = map_file(at, not_before, &data, &len);
	}
	if (ret == -ESTALE) {
		snprintf(src->problem, sizeof(src->problem),
			 "%.400s is older than the profile: another process's", at);
		return 0;
	}
	if (ret) {
		if (j->dir)
			snprintf(src->problem, sizeof(src->problem), "%s (looked in %.400s too)",
				 strerror(-ret), j->dir);
		else
			snprintf(src->problem, sizeof(src->problem), "%s", strerror(-ret));
		return 0;
	}
	ret = parse(s, src, data, len, err, sizeof(err));
	if (data)
		munmap(data, len);
done:
	src->read_from = strdup(at);
	src->info.read_from = src->read_from ? src->read_from : src->path;
	if (ret == -ENOMEM || !src->read_from)
		return -ENOMEM;
	if (err[0])
		snprintf(src->problem, sizeof(src->problem), "%s", err);
	return 0;
}

static struct jit_code *new_code(struct symbolizer *s, struct jit_source *src,
				 const char *name, size_t name_len)
{
	struct sym_jit *j = s->jit;
	struct jit_code *c;

	if (array_grow((void **)&j->codes, &j->cap_codes, j->nr_codes + 1, sizeof(*j->codes)))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = sym_keep_n(s, name, name_len);
	c->source = src;
	if (!c->name) {
		free(c);
		return NULL;
	}
	j->codes[j->nr_codes++] = c;
	return c;
}

#define LLVM_LINE_BIAS	0x40	/* see finish_lines() */

struct dump_reading {
	struct symbolizer *s;
	struct jit_source *src;
	size_t first_code;	/* the dump's codes: j->codes[first_code..] */
	bool tsc;
	bool lines_in_head;	/* a line in a code's first 0x40 bytes */
	bool lines_kept;	/* a line kept in any code */
};

/*
 * A file name a report can print: UTF-8 without control characters.
 * node 20's V8 writes a user script's line entries with bytes of a
 * pointer for the name (and garbage after): those are dropped, counted.
 */
static bool readable_name(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	if (!*p)
		return false;
	while (*p) {
		int more = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 :
			   (*p & 0xf8) == 0xf0 ? 3 : -1;

		if (more < 0 || *p < 0x20 || *p == 0x7f)
			return false;
		for (p++; more > 0; more--, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static int cmp_line(const void *a, const void *b)
{
	const struct jit_code_line *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/*
 * A load's lines, by offset from the code's start as the dump says them
 * (some may lie past the code: see finish_lines()).
 */
static int set_lines(struct symbolizer *s, struct jit_code *c, const struct jit_load *l,
		     struct dump_reading *r)
{
	struct sym_jit *j = s->jit;
	size_t i;

	c->size = l->code_size;
	if (!l->nr_lines)
		return 0;
	c->lines = calloc(l->nr_lines, sizeof(*c->lines));
	if (!c->lines)
		return -ENOMEM;
	for (i = 0; i < l->nr_lines; i++) {
		const struct jit_line *in = &l->lines[i];
		uint64_t offset = in->addr - l->code_addr;

		if (!readable_name(in->file)) {
			r->src->info.bad_line_entries++;
			continue;
		}
		/* Kept: lines in the code, or less than a bias past it. */
		if (in->addr < l->code_addr || !in->line ||
		    (offset >= l->code_size && offset - l->code_size >= LLVM_LINE_BIAS))
			continue;
		/* Lines repeat their file: keep one copy while they do. */
		if (!j->last_file || strcmp(j->last_file, in->file))
			j->last_file = sym_keep(s, in->file);
		if (!j->last_file)
			return -ENOMEM;
		if (offset < LLVM_LINE_BIAS)
			r->lines_in_head = true;
		r->lines_kept = true;
		c->lines[c->nr_lines++] = (struct jit_code_line){ offset, in->line, j->last_file };
	}
	return 0;
}

/*
 * LLVM's PerfJITEventListener (every version to date) and V8 write each
 * line's address 0x40 past the code it describes: they make up for an
 * old perf that put the line table 0x40 short of the code in the ELF
 * file perf inject makes (fixed in 2020).  Such a dump has no line in the
 * first 0x40 bytes of any code, where a dump that tells the truth has the
 * functions' first lines: its lines are taken back by 0x40.  (Lines past
 * the end of their code often say it too, but not always: a function
 * long enough after its last line has none; the test box's lli made such
 * code.)  Then lines outside their code are dropped.
 */
static void finish_lines(struct symbolizer *s, struct dump_reading *r)
{
	struct sym_jit *j = s->jit;
	uint64_t bias = r->lines_kept && !r->lines_in_head ? LLVM_LINE_BIAS : 0;
	size_t i, k, n;

	if (bias)
		r->src->info.lines_shifted = true;
	for (i = r->first_code; i < j->nr_codes; i++) {
		struct jit_code *c = j->codes[i];

		for (k = n = 0; k < c->nr_lines; k++) {
			uint64_t offset = c->lines[k].offset - bias;

			if (c->lines[k].offset < bias || offset >= c->size)
				continue;
			c->lines[n] = c->lines[k];
			c->lines[n++].offset = offset;
		}
		c->nr_lines = n;
		if (n)
			qsort(c->lines, n, sizeof(*c->lines), cmp_line);
	}
}

/* A record's time on the profile's clock; 0 for every one if it cannot be. */
static uint64_t dump_time(struct dump_reading *r, uint64_t t)
{
	struct sym_jit *j = r->s->jit;

	if (r->src->info.times_dropped)
		return 0;
	if (j->clock && !j->clock(j->clock_ctx, r->tsc, &t))
		return t;
	r->src->info.times_dropped = true;
	return 0;
}

/*
 * The process is the one that mapped the dump: the pids in its records
 * are the JIT's own view, another number inside a PID namespace.
 */
static int on_load(void *ctx, const struct jit_load *l)
{
	struct dump_reading *r = ctx;
	struct jit_code *c = new_code(r->s, r->src, l->name, strlen(l->name));
	struct sym_map m = { .pid = r->src->info.pid, .until = UINT64_MAX,
			     .start = l->code_addr, .end = l->code_addr + l->code_size };

	if (!c || set_lines(r->s, c, l, r))
		return -ENOMEM;
	m.time = dump_time(r, l->time);
	m.code = c;
	r->src->info.loads++;
	return sym_list_append(&r->s->jit->dumped, &m);
}

/* The code at @old_addr ends at the move and goes on at @new_addr. */
static int on_move(void *ctx, const struct jit_move *mv)
{
	struct dump_reading *r = ctx;
	struct sym_map_list *l = &r->s->jit->dumped;
	uint64_t time = dump_time(r, mv->time), from, to;
	const struct sym_map *old;
	struct sym_map m;

	r->src->info.moves++;
	sym_list_sort(l);
	old = sym_list_search(l, r->src->info.pid, mv->old_addr, time, &from, &to);
	if (!old || old->start != mv->old_addr || old->time > time) {
		r->src->info.moves_unknown++;
		return 0;
	}
	m = *old;
	if (!r->src->info.times_dropped)
		((struct sym_map *)old)->until = time;
	m.time = time;
	m.until = UINT64_MAX;
	m.start = mv->new_addr;
	m.end = mv->new_addr + mv->code_size;
	return sym_list_append(l, &m);
}

static int parse_dump(struct symbolizer *s, struct jit_source *src, const void *data,
		      size_t len, char *err, size_t errlen)
{
	struct jitdump_header hdr;
	const struct jitdump_handler h = { .load = on_load, .move = on_move };
	struct dump_reading r = { .s = s, .src = src, .first_code = s->jit->nr_codes };
	int ret;

	/* The header says which clock before the first record is read. */
	if (len >= JITDUMP_HEADER_SIZE) {
		uint64_t flags;

		memcpy(&flags, (const uint8_t *)data + 32, sizeof(flags));
		r.tsc = flags & JITDUMP_FLAG_TSC;
	}
	ret = jitdump_read(data, len, &hdr, &h, &r, err, errlen);
	src->info.tsc = hdr.tsc;
	finish_lines(s, &r);
	return ret == -EINVAL ? 0 : ret;
}

int jit_on_mmap(struct symbolizer *s, uint32_t pid, const char *path)
{
	struct jit_source *src;
	struct sym_jit *j;
	size_t i;

	if (!jitdump_is_path(path))
		return 0;
	j = jit_of(s);
	if (!j)
		return -ENOMEM;
	/* Mapped again; two containers' /tmp/jit-1.dump are two files. */
	for (i = 0; i < j->nr_sources; i++)
		if (j->sources[i]->info.pid == pid && !strcmp(j->sources[i]->path, path))
			return 0;
	src = new_source(j, path, pid, false);
	if (!src)
		return -ENOMEM;
	return read_source(s, src, parse_dump);
}

struct map_reading {
	struct symbolizer *s;
	struct jit_source *src;
};

static int on_map_entry(void *ctx, const struct perfmap_entry *e)
{
	struct map_reading *r = ctx;
	struct jit_code *c = new_code(r->s, r->src, e->name, e->name_len);
	struct sym_map m = { .pid = r->src->info.pid, .until = UINT64_MAX,
			     .start = e->start, .end = e->start + e->size, .code = c };

	if (!c)
		return -ENOMEM;
	r->src->info.loads++;
	return sym_list_append(&r->s->jit->mapped, &m);
}

static int parse_map(struct symbolizer *s, struct jit_source *src, const void *data,
		     size_t len, char *err, size_t errlen)
{
	struct map_reading r = { .s = s, .src = src };
	size_t bad;
	int ret = perfmap_read(data, len, on_map_entry, &r, &bad, err, errlen);

	src->info.bad_lines = bad;
	return ret;
}

/* The perf map of @pid, looked for once: 0, or -ENOMEM. */
static int try_perf_map(struct symbolizer *s, uint32_t pid)
{
	struct sym_jit *j = jit_of(s);
	char path[64];
	struct jit_source *src;
	size_t i;

	if (!j)
		return -ENOMEM;
	for (i = 0; i < j->nr_map_tried; i++)
		if (j->map_tried[i] == pid)
			return 0;
	if (array_grow((void **)&j->map_tried, &j->cap_map_tried, j->nr_map_tried + 1,
		       sizeof(*j->map_tried)))
		return -ENOMEM;
	j->map_tried[j->nr_map_tried++] = pid;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	src = new_source(j, path, pid, true);
	if (!src)
		return -ENOMEM;
	return read_source(s, src, parse_map);
}

/* Memory no file backs, where a JIT puts code (perf's is_anon_memory, and more). */
bool jit_anonymous_path(const char *path)
{
	static const char *const prefixes[] = {
		"//anon", "/dev/zero", "/anon_hugepage", "[anon", "/memfd:", "[heap]",
	};
	size_t i;

	if (!path[0])
		return true;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* A forked child runs its parent's JIT code until it loads its own. */
int jit_fork(struct symbolizer *s, uint32_t parent, uint32_t child, uint64_t time)
{
	if (!s->jit)
		return 0;
	return sym_list_fork(&s->jit->dumped, parent, child, time) ?:
	       sym_list_fork(&s->jit->mapped, parent, child, time);
}

/*
 * An exec ends the old image's JIT code, as its mappings.  But a perf map
 * has no times and is found by pid: the one the process wrote itself names
 * its last image's code, so where it was read before this exec (for a
 * sample of the child between fork and exec), its code starts here
 * instead.  Copies of a parent's map, made at a fork, end.
 */
void jit_exec(struct symbolizer *s, uint32_t pid, uint64_t time)
{
	struct sym_map_list *l;
	size_t i;

	if (!s->jit)
		return;
	sym_list_end(&s->jit->dumped, pid, time);
	l = &s->jit->mapped;
	for (i = 0; i < l->nr; i++) {
		struct sym_map *m = &l->maps[i];

		if (m->pid != pid || m->time > time || m->until <= time)
			continue;
		if (m->code->source->info.pid == pid) {
			m->time = time;
			l->unsorted = true;
		} else {
			m->until = time;
		}
	}
}

static void resolve_code(const struct jit_code *c, uint64_t offset, struct sym_result *r)
{
	size_t lo = 0, hi = c->nr_lines;

	r->function = c->name;
	/* The last line starting at or before @offset. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->lines[mid].offset <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		r->file = c->lines[lo - 1].file;
		r->line = c->lines[lo - 1].line;
		r->status = SYM_OK;
	} else {
		r->status = SYM_NO_LINE;
	}
}

/* The sources that could have named @pid's code, told they did not. */
static void count_unnamed(struct sym_jit *j, uint32_t pid)
{
	size_t i;

	for (i = 0; i < j->nr_sources; i++)
		if (j->sources[i]->info.pid == pid)
			j->sources[i]->info.unnamed++;
}

int jit_lookup(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t time,
	       const struct sym_map *file_map, struct sym_result *out)
{
	const struct sym_map *m = NULL;
	struct cache_entry *e;
	struct jit_code *c;
	uint64_t from, to;
	bool fresh;

	/* JITs name memory no file backs, and only that. */
	if (file_map && !file_map->file->anonymous)
		return 0;
	if (s->jit) {
		sym_list_sort(&s->jit->dumped);
		m = sym_list_search(&s->jit->dumped, pid, ip, time, &from, &to);
	}
	if (!m) {
		if (try_perf_map(s, pid))
			return 0;	/* out of memory: answered as unnamed */
		sym_list_sort(&s->jit->mapped);
		m = sym_list_search(&s->jit->mapped, pid, ip, time, &from, &to);
	}
	/*
	 * Unnamed code in an anonymous mapping is a JIT's whose files are
	 * missing; outside every mapping, it may be anything, and the
	 * report says so already.
	 */
	if (!m) {
		if (file_map)
			count_unnamed(s->jit, pid);
		return 0;
	}
	c = (struct jit_code *)m->code;
	c->source->info.samples++;
	out->path = c->source->path;
	out->address = ip;
	e = sym_cache_slot(s, c, ip - m->start, &fresh);
	if (!e) {
		resolve_code(c, ip - m->start, out);
		return 1;
	}
	if (fresh) {
		uint32_t id = e->result.id;

		e->result = *out;
		e->result.id = id;
		resolve_code(c, ip - m->start, &e->result);
	}
	*out = e->result;
	out->address = ip;
	return 1;
}

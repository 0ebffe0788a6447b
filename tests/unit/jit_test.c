// SPDX-License-Identifier: GPL-2.0-only
/*
 * The JIT symbol sources: the jitdump and perf map readers on files built
 * here byte by byte (whole, cut at every length, corrupted), and the
 * symbolizer naming code in anonymous memory through them -- loads,
 * moves and reused addresses by time, a dump on another clock, perf maps
 * found at the first sample, and files that are missing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "symbols/jit_sources.h"
#include "tailor/symbols.h"

/*
 * Processes whose perf maps are looked for: above PID_MAX_LIMIT, so that
 * no /tmp/perf-PID.map of a real process can answer for them.
 */
#define PID_A	4200007u
#define PID_B	4200008u

/* ---- a jitdump, built by hand ---- */

static uint8_t dump[4096];
static size_t dump_len;

static void put(const void *p, size_t n)
{
	memcpy(dump + dump_len, p, n);
	dump_len += n;
}

static void put32(uint32_t v) { put(&v, 4); }
static void put64(uint64_t v) { put(&v, 8); }

static void header(uint64_t flags)
{
	dump_len = 0;
	put32(JITDUMP_MAGIC);
	put32(1);
	put32(JITDUMP_HEADER_SIZE);
	put32(62);		/* EM_X86_64 */
	put32(0);
	put32(7);		/* pid */
	put64(1000);
	put64(flags);
}

static void prefix(uint32_t id, uint32_t size, uint64_t time)
{
	put32(id);
	put32(size);
	put64(time);
}

static void load(uint64_t time, uint32_t pid, uint64_t addr, uint64_t size, const char *name)
{
	static const uint8_t code[256];

	prefix(JITDUMP_CODE_LOAD, (uint32_t)(16 + 40 + strlen(name) + 1 + size), time);
	put32(pid);
	put32(pid + 1);
	put64(addr);
	put64(addr);
	put64(size);
	put64(1);
	put(name, strlen(name) + 1);
	put(code, size);
}

static void move(uint64_t time, uint64_t from, uint64_t to, uint64_t size)
{
	prefix(JITDUMP_CODE_MOVE, 16 + 48, time);
	put32(7);
	put32(8);
	put64(to);
	put64(from);
	put64(to);
	put64(size);
	put64(1);
}

struct entry { uint64_t addr; int line; const char *file; };

static void debug_info(uint64_t time, uint64_t addr, const struct entry *e, size_t n)
{
	size_t i, size = 16 + 16;

	for (i = 0; i < n; i++)
		size += 16 + strlen(e[i].file) + 1;
	prefix(JITDUMP_CODE_DEBUG_INFO, (uint32_t)size, time);
	put64(addr);
	put64(n);
	for (i = 0; i < n; i++) {
		put64(e[i].addr);
		put32((uint32_t)e[i].line);
		put32(0);
		put(e[i].file, strlen(e[i].file) + 1);
	}
}

/*
 * The test dump: "scan" at 0x1000 (lines 10 and 12, the second entry
 * repeating the file with "\xff"), an unknown record, "probe" at 0x2000
 * without lines, "probe" moved to 0x5000 at 3000, "agg" loaded where
 * "scan" was at 4000, then CLOSE and bytes that must not be read.
 */
static const struct entry scan_lines[] = {
	{ 0x1000, 10, "q.sql" }, { 0x1010, 12, "\xff" }, { 0x9000, 99, "outside" },
};

static void build_dump(uint64_t flags)
{
	header(flags);
	debug_info(1500, 0x1000, scan_lines, 3);
	load(1500, 7, 0x1000, 0x40, "scan");
	prefix(77, 24, 1600);	/* a record kind of some later version */
	put64(0);
	load(2000, 7, 0x2000, 0x20, "probe");
	move(3000, 0x2000, 0x5000, 0x20);
	load(4000, 7, 0x1000, 0x30, "agg");
	prefix(JITDUMP_CODE_CLOSE, 16, 5000);
	put32(0xdeadbeef);	/* after CLOSE: never read */
}

struct seen {
	int loads, moves;
	char names[8][16];
	size_t lines[8];
	uint64_t times[8];
};

static int on_load(void *ctx, const struct jit_load *l)
{
	struct seen *s = ctx;

	if (s->loads < 8) {
		snprintf(s->names[s->loads], sizeof(s->names[0]), "%s", l->name);
		s->lines[s->loads] = l->nr_lines;
		s->times[s->loads] = l->time;
	}
	s->loads++;
	return 0;
}

static int on_move(void *ctx, const struct jit_move *m)
{
	struct seen *s = ctx;

	check_uint(m->old_addr, ==, 0x2000);
	check_uint(m->new_addr, ==, 0x5000);
	s->moves++;
	return 0;
}

static const struct jitdump_handler handler = { .load = on_load, .move = on_move };

static void reads_a_dump(void)
{
	struct jitdump_header h;
	struct seen s = { 0 };
	char err[256];

	build_dump(JITDUMP_FLAG_TSC);
	check_int(jitdump_read(dump, dump_len, &h, &handler, &s, err, sizeof(err)), ==, 0);
	check_str(err, "");
	check_uint(h.pid, ==, 7);
	check(h.tsc);
	check_int(s.loads, ==, 3);
	check_int(s.moves, ==, 1);
	check_str(s.names[0], "scan");
	check_uint(s.lines[0], ==, 3);
	check_str(s.names[1], "probe");
	check_uint(s.lines[1], ==, 0);
	check_str(s.names[2], "agg");
	check_uint(s.times[2], ==, 4000);
}

/* Every cut: no crash, only whole records, and a cut inside one named. */
static void every_cut(void)
{
	size_t len, boundaries = 0;

	build_dump(0);
	for (len = 0; len < dump_len; len++) {
		struct jitdump_header h;
		struct seen s = { 0 };
		uint8_t *copy = malloc(len ? len : 1);
		char err[256];
		int ret;

		memcpy(copy, dump, len);
		ret = jitdump_read(copy, len, &h, &handler, &s, err, sizeof(err));
		free(copy);
		if (!ret) {
			boundaries++;
			continue;
		}
		check_int(ret, ==, -EINVAL);
		check(strstr(err, "offset ") == err);
		check(s.loads <= 3);
	}
	/*
	 * Whole records end after the header and each of the 6 records; a cut
	 * in the 4 bytes after CLOSE is no cut (they are never read).
	 */
	check_uint(boundaries, ==, 7 + 4);
}

static void corrupt_dumps(void)
{
	struct jitdump_header h;
	struct seen s = { 0 };
	char err[256];

	build_dump(0);
	dump[0] ^= 1;
	check_int(jitdump_read(dump, dump_len, &h, &handler, &s, err, sizeof(err)), ==, -EINVAL);
	check_str(err, "offset 0: not a jitdump (no JiTD magic)");

	build_dump(0);
	*(uint32_t *)dump = __builtin_bswap32(JITDUMP_MAGIC);
	check_int(jitdump_read(dump, dump_len, &h, &handler, &s, err, sizeof(err)), ==, -EINVAL);
	check_str(err, "offset 0: a jitdump of the other byte order");

	build_dump(0);
	dump[12] = 183;	/* EM_AARCH64 */
	check_int(jitdump_read(dump, dump_len, &h, &handler, &s, err, sizeof(err)), ==, -EINVAL);
	check_str(err, "offset 12: code for ELF machine 183, not x86-64");

	/* A record size below its own header. */
	build_dump(0);
	dump[JITDUMP_HEADER_SIZE + 4] = 8;
	dump[JITDUMP_HEADER_SIZE + 5] = 0;
	check_int(jitdump_read(dump, dump_len, &h, &handler, &s, err, sizeof(err)), ==, -EINVAL);
	check_str(err, "offset 40: record size smaller than its header");

	/* More debug entries than the record holds. */
	build_dump(0);
	dump[JITDUMP_HEADER_SIZE + 24] = 0xff;
	check_int(jitdump_read(dump, dump_len, &h, &handler, &s, err, sizeof(err)), ==, -EINVAL);
	check_str(err, "offset 40: DEBUG_INFO: more entries than the record holds");

	/* A load whose name has no end within the record. */
	header(0);
	load(1, 7, 0x1000, 0, "x");
	dump[dump_len - 1] = 'y';
	s.loads = 0;
	check_int(jitdump_read(dump, dump_len, &h, &handler, &s, err, sizeof(err)), ==, -EINVAL);
	check_str(err, "offset 40: CODE_LOAD: the function name runs past the record");
	check_int(s.loads, ==, 0);
}

/* ---- perf maps ---- */

struct map_seen {
	int n;
	uint64_t start[8], size[8];
	char name[8][32];
};

static int on_entry(void *ctx, const struct perfmap_entry *e)
{
	struct map_seen *m = ctx;

	if (m->n < 8) {
		m->start[m->n] = e->start;
		m->size[m->n] = e->size;
		snprintf(m->name[m->n], sizeof(m->name[0]), "%.*s", (int)e->name_len, e->name);
	}
	m->n++;
	return 0;
}

static void perf_maps(void)
{
	static const char text[] =
		"3ef414c0 398 LazyCompile:~foo /tmp/a.js:1\n"
		"0x7f0000001000 0x20 stub\r\n"
		"\n"
		"garbage line\n"
		"1000 0 zero-size\n"
		"ffffffffffffffff 10 wraps\n"
		"2000 10\n"
		"10000000000000000 10 seventeen-digits\n"
		"4000 8 last without newline";
	struct map_seen m = { 0 };
	char err[256], want[256];
	size_t bad;

	check_int(perfmap_read(text, strlen(text), on_entry, &m, &bad, err, sizeof(err)), ==, 0);
	check_int(m.n, ==, 3);
	check_uint(m.start[0], ==, 0x3ef414c0);
	check_uint(m.size[0], ==, 0x398);
	check_str(m.name[0], "LazyCompile:~foo /tmp/a.js:1");
	check_uint(m.start[1], ==, 0x7f0000001000);
	check_str(m.name[1], "stub");
	check_str(m.name[2], "last without newline");
	check_uint(bad, ==, 5);
	snprintf(want, sizeof(want), "line 4 (offset %zu): not START SIZE NAME in hex",
		 (size_t)(strstr(text, "garbage") - text));
	check_str(err, want);

	m.n = 0;
	check_int(perfmap_read("10 20 cut", 9 - 4, on_entry, &m, &bad, err, sizeof(err)), ==, 0);
	check_int(m.n, ==, 0);
	check_str(err, "line 1 (offset 0): cut short (the JIT still writing?)");
}

/* ---- the symbolizer ---- */

static const char *map_text;

/* Every file the symbolizer asks for: the dump, or the map text. */
static int embedded(void *ctx, const char *path, const void **data, size_t *len)
{
	(void)ctx;
	if (strstr(path, ".dump")) {
		*data = dump;
		*len = dump_len;
		return 0;
	}
	if (map_text && strstr(path, "perf-4200007.map")) {
		*data = map_text;
		*len = strlen(map_text);
		return 0;
	}
	return -ENOENT;
}

static int same_clock(void *ctx, bool tsc, uint64_t *time)
{
	(void)ctx;
	(void)time;
	return tsc ? 0 : -1;
}

static struct symbolizer *jit_symbolizer(uint64_t flags)
{
	struct symbolizer *s = sym_new();
	struct tev_consumer *c = sym_consumer(s);
	struct tev_mmap anon = { .time = 100, .start = 0x1000, .len = 0x8000, .path = "//anon",
				 .pid = PID_A, .tid = PID_A };
	struct tev_mmap marker = { .time = 200, .start = 0x100000, .len = 0x1000,
				   .path = "/tmp/jit-7.dump", .pid = PID_A, .tid = PID_A };

	build_dump(flags);
	check_int(sym_set_jit_files(s, embedded, NULL), ==, 0);
	check_int(sym_set_jit_clock(s, same_clock, NULL), ==, 0);
	check_int(c->mmap(c, &anon), ==, 0);
	check_int(c->mmap(c, &marker), ==, 0);
	return s;
}

static void names_jit_code(void)
{
	struct symbolizer *s = jit_symbolizer(JITDUMP_FLAG_TSC);
	const struct sym_jit_source *src;
	struct sym_result r;
	uint32_t id;

	sym_lookup(s, PID_A, 0x1004, 1600, &r);
	check_int(r.status, ==, SYM_OK);
	check_str(r.function, "scan");
	check_str(r.file, "q.sql");
	check_uint(r.line, ==, 10);
	check_str(r.path, "/tmp/jit-7.dump");
	id = r.id;
	sym_lookup(s, PID_A, 0x1012, 1600, &r);
	check_str(r.file, "q.sql");	/* "\xff": the file before */
	check_uint(r.line, ==, 12);
	check(r.id != id);
	sym_lookup(s, PID_A, 0x1004, 1700, &r);
	check_uint(r.id, ==, id);	/* cached */

	/* "probe" before and after its move. */
	sym_lookup(s, PID_A, 0x2008, 2500, &r);
	check_str(r.function, "probe");
	check_int(r.status, ==, SYM_NO_LINE);
	sym_lookup(s, PID_A, 0x5008, 3500, &r);
	check_str(r.function, "probe");
	sym_lookup(s, PID_A, 0x2008, 3500, &r);
	check(r.function == NULL || strcmp(r.function, "probe"));

	/* 0x1000 is "scan" until 4000, "agg" after. */
	sym_lookup(s, PID_A, 0x1008, 3999, &r);
	check_str(r.function, "scan");
	sym_lookup(s, PID_A, 0x1008, 4001, &r);
	check_str(r.function, "agg");
	check_int(r.status, ==, SYM_NO_LINE);

	/* The old place of "probe" sent the symbolizer to a perf map, missing. */
	check_uint(sym_jit_nr_sources(s), ==, 2);
	check(sym_jit_source(s, 1)->perf_map);
	check_uint(sym_jit_source(s, 1)->unnamed, ==, 1);
	src = sym_jit_source(s, 0);
	check_str(src->path, "/tmp/jit-7.dump");
	check_str(src->read_from, "the profile");
	check_str(src->problem, "");
	check_uint(src->loads, ==, 3);
	check_uint(src->moves, ==, 1);
	check(!src->times_dropped);
	check_uint(src->samples, ==, 7);
	check_uint(src->unnamed, ==, 1);
	sym_free(s);
}

/* On another clock, the last load in file order names an address. */
static void other_clock(void)
{
	struct symbolizer *s = jit_symbolizer(0);
	struct sym_result r;

	sym_lookup(s, PID_A, 0x1008, 1600, &r);
	check_str(r.function, "agg");
	sym_lookup(s, PID_A, 0x5008, 1600, &r);
	check_str(r.function, "probe");
	check(sym_jit_source(s, 0)->times_dropped);
	sym_free(s);
}

static void perf_map_at_first_sample(void)
{
	struct symbolizer *s = sym_new();
	const struct sym_jit_source *src;
	struct sym_result r;

	map_text = "7000 100 Builtin:Add\n7100 10 Stub\nnot a line\n";
	check_int(sym_set_jit_files(s, embedded, NULL), ==, 0);
	/* No mapping covers it: the perf map is looked for. */
	sym_lookup(s, PID_A, 0x7050, 10, &r);
	check_str(r.function, "Builtin:Add");
	check_str(r.path, "/tmp/perf-4200007.map");
	check_int(r.status, ==, SYM_NO_LINE);
	sym_lookup(s, PID_A, 0x9000, 10, &r);
	check_int(r.status, ==, SYM_NO_MAPPING);
	/*
	 * Process 8 has no map: its samples stay unnamed, and are counted
	 * where they fall in anonymous memory (a JIT's, its files missing).
	 */
	check_int(sym_add_mapping(s, PID_B, 0, 0x7000, 0x1000, 0, "//anon"), ==, 0);
	sym_lookup(s, PID_B, 0x7050, 10, &r);
	check_int(r.status, ==, SYM_NO_FILE);
	sym_lookup(s, PID_B, 0x7060, 10, &r);
	sym_lookup(s, PID_B, 0x9060, 10, &r);
	check_int(r.status, ==, SYM_NO_MAPPING);
	check_uint(sym_jit_nr_sources(s), ==, 2);
	src = sym_jit_source(s, 0);
	check(src->perf_map);
	check_uint(src->loads, ==, 2);
	check_uint(src->bad_lines, ==, 1);
	check_uint(src->samples, ==, 1);
	check_uint(src->unnamed, ==, 0);	/* outside every mapping: not a JIT's for sure */
	src = sym_jit_source(s, 1);
	check_str(src->path, "/tmp/perf-4200008.map");
	check(src->read_from == NULL);
	check(strstr(src->problem, "No such file") != NULL);
	check_uint(src->unnamed, ==, 2);
	sym_free(s);
	map_text = NULL;
}

/*
 * A perf map has no times: the one a process wrote names its last image's
 * code.  Read for a sample between fork and exec (tailor record's child
 * before it runs the JIT), it still names the code after the exec; the
 * copy a child got of its parent's map at a fork ends at the child's exec.
 */
static void perf_map_read_before_exec(void)
{
	struct symbolizer *s = sym_new();
	struct tev_consumer *c = sym_consumer(s);
	struct tev_task fork = { .time = 30, .pid = PID_B, .tid = PID_B, .ppid = PID_A,
				 .ptid = PID_A };
	struct sym_result r;

	map_text = "7000 100 JS:*hot\n";
	check_int(sym_set_jit_files(s, embedded, NULL), ==, 0);
	sym_lookup(s, PID_A, 0x7050, 10, &r);
	check_str(r.function, "JS:*hot");
	sym_exec(s, PID_A, 20);
	check_int(c->fork(c, &fork), ==, 0);
	sym_lookup(s, PID_A, 0x7050, 40, &r);
	check_str(r.function, "JS:*hot");
	check_int(r.status, ==, SYM_NO_LINE);
	/* Process 8, forked after the exec, runs the copy until its own exec. */
	sym_lookup(s, PID_B, 0x7050, 40, &r);
	check_str(r.function, "JS:*hot");
	sym_exec(s, PID_B, 50);
	sym_lookup(s, PID_B, 0x7050, 60, &r);
	check(r.function == NULL);
	sym_free(s);
	map_text = NULL;
}

/*
 * A dump of one function "main" at 0x1000, @code_size bytes, whose lines
 * @lines come first; read through the mapping of process 7's dump file.
 */
static struct symbolizer *one_load_symbolizer(const struct entry *lines, size_t n,
					      uint64_t code_size)
{
	struct symbolizer *s = sym_new();
	struct tev_consumer *c = sym_consumer(s);
	struct tev_mmap marker = { .time = 200, .start = 0x100000, .len = 0x1000,
				   .path = "/tmp/jit-7.dump", .pid = PID_A, .tid = PID_A };

	header(JITDUMP_FLAG_TSC);
	debug_info(1500, 0x1000, lines, n);
	load(1500, 7, 0x1000, code_size, "main");
	check_int(sym_set_jit_files(s, embedded, NULL), ==, 0);
	check_int(sym_set_jit_clock(s, same_clock, NULL), ==, 0);
	check_int(c->mmap(c, &marker), ==, 0);
	return s;
}

/* LLVM's line tables sit 0x40 past their code: taken back. */
static void llvm_line_bias(void)
{
	static const struct entry llvm[] = {
		{ 0x1040, 4, "t.c" }, { 0x1063, 2, "t.c" }, { 0x1078, 3, "t.c" }, { 0x10d5, 5, "t.c" },
		{ 0x1050, 9, "K\xbf" },	/* node 20's V8: a pointer's bytes for a name */
	};
	struct symbolizer *s = one_load_symbolizer(llvm, 5, 64);
	struct sym_result r;

	sym_lookup(s, PID_A, 0x1000, 1600, &r);
	check_uint(r.line, ==, 4);
	sym_lookup(s, PID_A, 0x1025, 1600, &r);
	check_uint(r.line, ==, 2);
	sym_lookup(s, PID_A, 0x103f, 1600, &r);
	check_uint(r.line, ==, 3);
	check(sym_jit_source(s, 0)->lines_shifted);
	check_uint(sym_jit_source(s, 0)->bad_line_entries, ==, 1);
	sym_free(s);
}

/*
 * The same, where no line falls past its code (a function long enough
 * after its last line, as the test box's lli made): no line in the first
 * 0x40 bytes of any code says it.
 */
static void llvm_line_bias_inside(void)
{
	static const struct entry llvm[] = {
		{ 0x1040, 4, "t.c" }, { 0x1080, 2, "t.c" }, { 0x10c0, 3, "t.c" },
	};
	struct symbolizer *s = one_load_symbolizer(llvm, 3, 0x100);
	struct sym_result r;

	sym_lookup(s, PID_A, 0x1000, 1600, &r);
	check_uint(r.line, ==, 4);
	sym_lookup(s, PID_A, 0x1045, 1600, &r);
	check_uint(r.line, ==, 2);
	sym_lookup(s, PID_A, 0x10f0, 1600, &r);
	check_uint(r.line, ==, 3);
	check(sym_jit_source(s, 0)->lines_shifted);
	sym_free(s);
}

/* Of overlapping perf map lines, the later names an address. */
static void later_line_wins(void)
{
	struct symbolizer *s = sym_new();
	struct sym_result r;

	map_text = "1080 80 old\n1000 100 new\n2000 10 a\n2000 10 b\n";
	check_int(sym_set_jit_files(s, embedded, NULL), ==, 0);
	sym_lookup(s, PID_A, 0x1090, 10, &r);
	check_str(r.function, "new");
	sym_lookup(s, PID_A, 0x2004, 10, &r);
	check_str(r.function, "b");
	sym_free(s);
	map_text = NULL;
}

/*
 * The dump's records carry the JIT's own pid (here 7, as inside a PID
 * namespace); its code is the mapping process's.  A fork's child runs
 * its parent's code.
 */
static void pids_and_forks(void)
{
	struct symbolizer *s = jit_symbolizer(JITDUMP_FLAG_TSC);
	struct tev_consumer *c = sym_consumer(s);
	struct tev_task fork = { .time = 2500, .pid = PID_B, .tid = PID_B, .ppid = PID_A,
				 .ptid = PID_A };
	struct sym_result r;

	check_int(c->fork(c, &fork), ==, 0);
	sym_lookup(s, PID_B, 0x1004, 2600, &r);
	check_str(r.function, "scan");
	sym_free(s);
}

/* A file mapping is the file's code, whatever a JIT file says. */
static void files_come_first(void)
{
	struct symbolizer *s = sym_new();
	struct sym_result r;

	map_text = "7000 100 Builtin:Add\n";
	check_int(sym_set_jit_files(s, embedded, NULL), ==, 0);
	check_int(sym_add_mapping(s, PID_A, 0, 0x7000, 0x1000, 0, "/nonexistent/lib.so"), ==, 0);
	sym_lookup(s, PID_A, 0x7050, 10, &r);
	check_int(r.status, ==, SYM_NO_FILE);
	check_str(r.path, "/nonexistent/lib.so");
	check_uint(sym_jit_nr_sources(s), ==, 0);
	sym_free(s);
	map_text = NULL;
}

int main(void)
{
	TEST(reads_a_dump(), "a jitdump's loads, lines, moves; unknown kinds skipped, nothing after CLOSE");
	TEST(every_cut(), "a jitdump cut at every length: whole records only, the cut named by offset");
	TEST(corrupt_dumps(), "corrupt jitdumps are named with the offset of the problem");
	TEST(perf_maps(), "perf map lines: names with spaces, 0x, CRLF; bad lines skipped and counted");
	TEST(names_jit_code(), "JIT code named by function and line, through moves and reuse, by time");
	TEST(other_clock(), "a dump on another clock: the last load in file order names an address");
	TEST(perf_map_at_first_sample(), "a perf map read at a process's first sample in unmapped memory; a missing one counted");
	TEST(perf_map_read_before_exec(),
	     "a perf map read before its process's exec names the code after it; a fork's copy ends");
	TEST(llvm_line_bias(), "a line table 0x40 past its code (LLVM's, V8's) is taken back; names that are not text dropped");
	TEST(llvm_line_bias_inside(), "the same where no line lies past its code");
	TEST(later_line_wins(), "of overlapping perf map lines the later names an address");
	TEST(pids_and_forks(), "a dump's code is its mapping process's, and a forked child's");
	TEST(files_come_first(), "a file mapping is never renamed by a JIT file");
	return test_done();
}

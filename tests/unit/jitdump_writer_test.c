// SPDX-License-Identifier: GPL-2.0-only
/*
 * libtailor's jitdump writer (tailor/jitdump.h) against the format as
 * the perf JIT interface specifies it: the test decodes the file by hand,
 * offset by offset, rather than through any reader of ours, so that a
 * layout mistake cannot cancel out.  Also: the file is mapped executable
 * while open (how profilers find it), loads from several threads stay
 * whole and ordered, a move names the right code index, a short write
 * leaves no torn record, and the perf map's line format.  Built with
 * ASan and UBSan.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "tailor/jitdump.h"

#define MAGIC		0x4A695444u
#define EM_X86_64_	62
#define HEADER_SIZE	40
#define PREFIX_SIZE	16
#define LOAD_FIXED	56	/* prefix, pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_SIZE	64
#define DEBUG_FIXED	32	/* prefix, code_addr, nr_entry */
#define ENTRY_FIXED	16	/* addr, lineno, discrim */

enum { REC_LOAD = 0, REC_MOVE = 1, REC_DEBUG = 2, REC_CLOSE = 3 };

static char tmp_dir[64];

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

struct rec {
	uint32_t id, size;
	uint64_t ts;
	const unsigned char *p;		/* the record, prefix included */
};

struct dump {
	unsigned char *buf;
	size_t len;
	struct rec *recs;
	size_t nr;
	bool torn;			/* bytes after the last whole record */
};

static void dump_free(struct dump *d)
{
	free(d->buf);
	free(d->recs);
	memset(d, 0, sizeof(*d));
}

/* Read @path and split it into records; false if there is no header. */
static bool dump_read(const char *path, struct dump *d)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, off;
	long n;

	memset(d, 0, sizeof(*d));
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	d->buf = malloc(n > 0 ? n : 1);
	d->len = fread(d->buf, 1, n, f);
	fclose(f);
	if (d->len < HEADER_SIZE)
		return false;
	for (off = rd32(d->buf + 8); off + PREFIX_SIZE <= d->len; ) {
		uint32_t size = rd32(d->buf + off + 4);

		if (size < PREFIX_SIZE || size > d->len - off)
			break;
		if (d->nr == cap) {
			cap = cap ? cap * 2 : 16;
			d->recs = realloc(d->recs, cap * sizeof(*d->recs));
		}
		d->recs[d->nr].id = rd32(d->buf + off);
		d->recs[d->nr].size = size;
		d->recs[d->nr].ts = rd64(d->buf + off + 8);
		d->recs[d->nr].p = d->buf + off;
		d->nr++;
		off += size;
	}
	d->torn = off != d->len;
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The permissions of the mapping of @path in /proc/self/maps, or "". */
static const char *mapped_perms(const char *path)
{
	static char perms[8];
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n, plen = strlen(path);

	perms[0] = 0;
	if (!f)
		return perms;
	while (fgets(line, sizeof(line), f)) {
		n = strcspn(line, "\n");
		line[n] = 0;
		if (n >= plen && !strcmp(line + n - plen, path) &&
		    sscanf(line, "%*x-%*x %7s", perms) == 1)
			break;
		perms[0] = 0;
	}
	fclose(f);
	return perms;
}

static void check_timestamps(const struct dump *d, uint64_t lo, uint64_t hi)
{
	uint64_t prev = rd64(d->buf + 24);	/* the header's */
	size_t i;

	check_uint(prev, >=, lo);
	for (i = 0; i < d->nr; i++) {
		if (d->recs[i].ts < prev)
			printf("# record %zu goes back in time\n", i);
		check_uint(d->recs[i].ts, >=, prev);
		prev = d->recs[i].ts;
	}
	check_uint(prev, <=, hi);
}

/* Code bytes need not run to be described: any buffer has an address. */
static const unsigned char alpha_code[] = {
	0x31, 0xc0, 0x90, 0x90, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3, 0xcc, 0xcc,
};

static const unsigned char beta_code[] = { 0x48, 0x89, 0xf8, 0xc3 };

static void test_roundtrip(void)
{
	const uint64_t alpha = (uintptr_t)alpha_code, beta = (uintptr_t)beta_code;
	const struct tailor_jit_line lines[] = {
		{ alpha, 10, "q.src" },
		{ alpha + 4, 11, "q.src" },
		{ alpha + 9, 7, "other.src" },
	};
	struct tailor_jitdump *j;
	char path[128];
	const unsigned char *p;
	struct dump d;
	uint64_t t0, t1;
	int err = 1;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", tmp_dir, (int)getpid());
	t0 = mono_ns();
	j = tailor_jitdump_open(tmp_dir, 0, &err);
	check(j != NULL);
	if (!j) {
		printf("# open: %s\n", strerror(-err));
		return;
	}
	check_str(tailor_jitdump_path(j), path);
	check_str(mapped_perms(path), "r-xp");
	check_int(tailor_jitdump_load(j, "alpha", alpha_code, sizeof(alpha_code),
				      lines, 3), ==, 0);
	check_int(tailor_jitdump_load(j, "beta", beta_code, sizeof(beta_code),
				      NULL, 0), ==, 0);
	check_int(tailor_jitdump_move(j, alpha, 0x10000, sizeof(alpha_code)), ==, 0);
	check_int(tailor_jitdump_close(j), ==, 0);
	t1 = mono_ns();
	check_str(mapped_perms(path), "");

	check(dump_read(path, &d));
	if (d.len < HEADER_SIZE)
		goto out;
	check_uint(rd32(d.buf + 0), ==, MAGIC);
	check_uint(rd32(d.buf + 4), ==, 1);
	check_uint(rd32(d.buf + 8), ==, HEADER_SIZE);
	check_uint(rd32(d.buf + 12), ==, EM_X86_64_);
	check_uint(rd32(d.buf + 16), ==, 0);		/* pad1 */
	check_uint(rd32(d.buf + 20), ==, getpid());
	check_uint(rd64(d.buf + 32), ==, 0);		/* flags */
	check(!d.torn);
	check_uint(d.nr, ==, 5);
	if (d.nr != 5)
		goto out;
	check_uint(rd64(d.buf + 24), >=, t0);
	check_uint(rd64(d.buf + 24), <=, t1);

	/* The line table comes first, for the code load that follows it. */
	check_uint(d.recs[0].id, ==, REC_DEBUG);
	p = d.recs[0].p;
	check_uint(d.recs[0].size, ==, DEBUG_FIXED + 3 * ENTRY_FIXED + 6 + 6 + 10);
	check_uint(rd64(p + 16), ==, alpha);
	check_uint(rd64(p + 24), ==, 3);
	p += DEBUG_FIXED;
	check_uint(rd64(p), ==, alpha);
	check_uint(rd32(p + 8), ==, 10);
	check_uint(rd32(p + 12), ==, 0);
	check_str((const char *)p + 16, "q.src");
	p += ENTRY_FIXED + 6;
	check_uint(rd64(p), ==, alpha + 4);
	check_uint(rd32(p + 8), ==, 11);
	check_str((const char *)p + 16, "q.src");
	p += ENTRY_FIXED + 6;
	check_uint(rd64(p), ==, alpha + 9);
	check_uint(rd32(p + 8), ==, 7);
	check_str((const char *)p + 16, "other.src");

	check_uint(d.recs[1].id, ==, REC_LOAD);
	p = d.recs[1].p;
	check_uint(d.recs[1].size, ==, LOAD_FIXED + 6 + sizeof(alpha_code));
	check_uint(rd32(p + 16), ==, getpid());
	check_uint(rd32(p + 20), ==, gettid());
	check_uint(rd64(p + 24), ==, alpha);		/* vma */
	check_uint(rd64(p + 32), ==, alpha);		/* code_addr */
	check_uint(rd64(p + 40), ==, sizeof(alpha_code));
	check_uint(rd64(p + 48), ==, 0);		/* code_index */
	check_str((const char *)p + LOAD_FIXED, "alpha");
	check(!memcmp(p + LOAD_FIXED + 6, alpha_code, sizeof(alpha_code)));

	/* No line table: the load follows the last load directly. */
	check_uint(d.recs[2].id, ==, REC_LOAD);
	p = d.recs[2].p;
	check_uint(d.recs[2].size, ==, LOAD_FIXED + 5 + sizeof(beta_code));
	check_uint(rd64(p + 32), ==, beta);
	check_uint(rd64(p + 40), ==, sizeof(beta_code));
	check_uint(rd64(p + 48), ==, 1);
	check_str((const char *)p + LOAD_FIXED, "beta");
	check(!memcmp(p + LOAD_FIXED + 5, beta_code, sizeof(beta_code)));

	check_uint(d.recs[3].id, ==, REC_MOVE);
	p = d.recs[3].p;
	check_uint(d.recs[3].size, ==, MOVE_SIZE);
	check_uint(rd32(p + 16), ==, getpid());
	check_uint(rd32(p + 20), ==, gettid());
	check_uint(rd64(p + 24), ==, 0x10000);		/* vma */
	check_uint(rd64(p + 32), ==, alpha);		/* old_code_addr */
	check_uint(rd64(p + 40), ==, 0x10000);		/* new_code_addr */
	check_uint(rd64(p + 48), ==, sizeof(alpha_code));
	check_uint(rd64(p + 56), ==, 0);		/* alpha's code_index */

	check_uint(d.recs[4].id, ==, REC_CLOSE);
	check_uint(d.recs[4].size, ==, PREFIX_SIZE);
	check_timestamps(&d, t0, t1);
out:
	unlink(path);
	dump_free(&d);
}

static void test_tsc(void)
{
	struct tailor_jitdump *j;
	uint64_t t0, t1;
	cpu_set_t all, one;
	char path[128];
	struct dump d;
	int err = 0, cpu = sched_getcpu();

	/* One CPU: the test must not depend on how well TSCs are synchronised. */
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
	t0 = __builtin_ia32_rdtsc();
	j = tailor_jitdump_open(tmp_dir, TAILOR_JITDUMP_TSC, &err);
	check(j != NULL);
	if (!j) {
		sched_setaffinity(0, sizeof(all), &all);
		return;
	}
	check_int(tailor_jitdump_load(j, "alpha", alpha_code, sizeof(alpha_code),
				      NULL, 0), ==, 0);
	check_int(tailor_jitdump_load(j, "beta", beta_code, sizeof(beta_code),
				      NULL, 0), ==, 0);
	snprintf(path, sizeof(path), "%s", tailor_jitdump_path(j));
	check_int(tailor_jitdump_close(j), ==, 0);
	t1 = __builtin_ia32_rdtsc();
	sched_setaffinity(0, sizeof(all), &all);
	check(dump_read(path, &d));
	unlink(path);
	if (d.len >= HEADER_SIZE) {
		check_uint(rd64(d.buf + 32), ==, 1);	/* ARCH_TIMESTAMP */
		check_uint(d.nr, ==, 3);
		check_timestamps(&d, t0, t1);
	}
	dump_free(&d);
}

/* Several compiler threads: each load whole, with its own line table. */
#define THREADS		4
#define PER_THREAD	64

static unsigned char thread_code[THREADS][PER_THREAD][8];
static struct tailor_jitdump *shared_j;

static void *compile_thread(void *arg)
{
	int t = (int)(intptr_t)arg, i, *failed = calloc(1, sizeof(int));
	char name[32];

	for (i = 0; i < PER_THREAD; i++) {
		const unsigned char *c = thread_code[t][i];
		struct tailor_jit_line lines[] = {
			{ (uintptr_t)c, 100 * t + i + 1, "threads.src" },
			{ (uintptr_t)c + 4, 100 * t + i + 2, "threads.src" },
		};

		snprintf(name, sizeof(name), "f_%d_%d", t, i);
		if (tailor_jitdump_load(shared_j, name, c, 8, lines, 2))
			(*failed)++;
	}
	return failed;
}

static void test_threads(void)
{
	pthread_t th[THREADS];
	bool seen[THREADS * PER_THREAD] = { false };
	char path[128], name[32];
	struct dump d;
	size_t i, loads = 0;
	int t, err, n, nt, ni;
	void *failed;

	shared_j = tailor_jitdump_open(tmp_dir, 0, &err);
	check(shared_j != NULL);
	if (!shared_j)
		return;
	snprintf(path, sizeof(path), "%s", tailor_jitdump_path(shared_j));
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, compile_thread, (void *)(intptr_t)t);
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], &failed);
		check_int(*(int *)failed, ==, 0);
		free(failed);
	}
	check_int(tailor_jitdump_close(shared_j), ==, 0);

	check(dump_read(path, &d));
	unlink(path);
	check(!d.torn);
	check_uint(d.nr, ==, 2 * THREADS * PER_THREAD + 1);
	for (i = 0; i + 1 < d.nr; i += 2) {
		const struct rec *di = &d.recs[i], *ld = &d.recs[i + 1];
		uint64_t addr, index;

		if (di->id != REC_DEBUG || ld->id != REC_LOAD) {
			check_uint(di->id, ==, REC_DEBUG);
			check_uint(ld->id, ==, REC_LOAD);
			break;
		}
		addr = rd64(ld->p + 32);
		index = rd64(ld->p + 48);
		check_uint(rd64(di->p + 16), ==, addr);
		check_uint(rd64(di->p + DEBUG_FIXED), ==, addr);
		check_uint(index, <, THREADS * PER_THREAD);
		if (index < THREADS * PER_THREAD) {
			check(!seen[index]);
			seen[index] = true;
		}
		/* The name and line table belong to the code at addr. */
		n = sscanf((const char *)ld->p + LOAD_FIXED, "f_%d_%d", &nt, &ni);
		check_int(n, ==, 2);
		if (n == 2 && nt >= 0 && nt < THREADS && ni >= 0 && ni < PER_THREAD) {
			check_uint(addr, ==, (uintptr_t)thread_code[nt][ni]);
			check_uint(rd32(di->p + DEBUG_FIXED + 8), ==, 100 * nt + ni + 1);
			snprintf(name, sizeof(name), "f_%d_%d", nt, ni);
			check_str((const char *)ld->p + LOAD_FIXED, name);
		}
		loads++;
	}
	check_uint(loads, ==, THREADS * PER_THREAD);
	if (d.nr)
		check_uint(d.recs[d.nr - 1].id, ==, REC_CLOSE);
	check_timestamps(&d, 0, UINT64_MAX);
	dump_free(&d);
}

/* The code index a move names is that of the code at old_addr now. */
static void test_move_index(void)
{
	static unsigned char x[4], y[4];
	const uint64_t X = (uintptr_t)x, Y = (uintptr_t)y;
	static const uint64_t want[] = { 0, 0, 2, 0, 0 };
	const size_t nr_want = sizeof(want) / sizeof(want[0]);
	struct tailor_jitdump *j;
	struct dump d;
	char path[128];
	size_t i, m = 0;
	int err;

	j = tailor_jitdump_open(tmp_dir, 0, &err);
	check(j != NULL);
	if (!j)
		return;
	snprintf(path, sizeof(path), "%s", tailor_jitdump_path(j));
	check_int(tailor_jitdump_load(j, "a", y, 4, NULL, 0), ==, 0);	/* 0 at Y */
	check_int(tailor_jitdump_load(j, "b", x, 4, NULL, 0), ==, 0);	/* 1 at X */
	/* a moves over b, which was loaded later but is gone now. */
	check_int(tailor_jitdump_move(j, Y, X, 4), ==, 0);		/* 0 */
	check_int(tailor_jitdump_move(j, X, 0x5000, 4), ==, 0);		/* 0, not 1 */
	check_int(tailor_jitdump_load(j, "c", x, 4, NULL, 0), ==, 0);	/* 2 at X */
	check_int(tailor_jitdump_move(j, X, 0x6000, 4), ==, 0);		/* 2 */
	check_int(tailor_jitdump_move(j, 0x5000, 0x7000, 4), ==, 0);	/* 0 */
	check_int(tailor_jitdump_move(j, 0x9000, 0xa000, 4), ==, 0);	/* unknown: 0 */
	check_int(tailor_jitdump_close(j), ==, 0);

	check(dump_read(path, &d));
	unlink(path);
	for (i = 0; i < d.nr; i++) {
		if (d.recs[i].id != REC_MOVE)
			continue;
		if (m < nr_want) {
			if (rd64(d.recs[i].p + 56) != want[m])
				printf("# move %zu\n", m);
			check_uint(rd64(d.recs[i].p + 56), ==, want[m]);
		}
		m++;
	}
	check_uint(m, ==, nr_want);
	dump_free(&d);
}

static void test_refusals(void)
{
	static const unsigned char code[16];
	const struct tailor_jit_line outside = { (uintptr_t)code + 16, 1, "x" };
	const struct tailor_jit_line no_file = { (uintptr_t)code, 1, NULL };
	struct tailor_jitdump *j;
	char path[128];
	struct dump d;
	int err = 0;

	check(tailor_jitdump_open("/nonexistent/tailor", 0, &err) == NULL);
	check_int(err, ==, -ENOENT);
	check(tailor_jitdump_open(tmp_dir, 0x80, &err) == NULL);
	check_int(err, ==, -EINVAL);
	j = tailor_jitdump_open(tmp_dir, 0, &err);
	check(j != NULL);
	if (!j)
		return;
	snprintf(path, sizeof(path), "%s", tailor_jitdump_path(j));
	check_int(tailor_jitdump_load(j, NULL, code, 16, NULL, 0), ==, -EINVAL);
	check_int(tailor_jitdump_load(j, "f", NULL, 16, NULL, 0), ==, -EINVAL);
	check_int(tailor_jitdump_load(j, "f", code, 16, NULL, 1), ==, -EINVAL);
	check_int(tailor_jitdump_load(j, "f", code, 16, &outside, 1), ==, -EINVAL);
	check_int(tailor_jitdump_load(j, "f", code, 16, &no_file, 1), ==, -EINVAL);
	check_int(tailor_jitdump_load(j, "f", code, 1ull << 33, NULL, 0), ==, -E2BIG);
	/* An empty function is allowed; refused loads took no code index. */
	check_int(tailor_jitdump_load(j, "empty", code, 0, NULL, 0), ==, 0);
	check_int(tailor_jitdump_close(j), ==, 0);
	check(dump_read(path, &d));
	unlink(path);
	check_uint(d.nr, ==, 2);
	if (d.nr == 2) {
		check_uint(d.recs[0].size, ==, LOAD_FIXED + 6);
		check_uint(rd64(d.recs[0].p + 48), ==, 0);
	}
	dump_free(&d);
	check_int(tailor_jitdump_close(NULL), ==, -EINVAL);
}

/* A write the file system cuts short leaves the file at a record boundary. */
static void test_short_write(void)
{
	static unsigned char big[8192];
	struct rlimit old, lim;
	struct tailor_jitdump *j;
	char path[128];
	struct dump d;
	int err, ret;

	j = tailor_jitdump_open(tmp_dir, 0, &err);
	check(j != NULL);
	if (!j)
		return;
	snprintf(path, sizeof(path), "%s", tailor_jitdump_path(j));
	check_int(tailor_jitdump_load(j, "first", big, 100, NULL, 0), ==, 0);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 4096;
	signal(SIGXFSZ, SIG_IGN);
	check_int(setrlimit(RLIMIT_FSIZE, &lim), ==, 0);
	ret = tailor_jitdump_load(j, "too_big", big, sizeof(big), NULL, 0);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	check_int(ret, ==, -EFBIG);
	check_int(tailor_jitdump_load(j, "after", big, 100, NULL, 0), ==, 0);
	check_int(tailor_jitdump_close(j), ==, 0);

	check(dump_read(path, &d));
	unlink(path);
	check(!d.torn);
	check_uint(d.nr, ==, 3);
	if (d.nr == 3) {
		check_str((const char *)d.recs[0].p + LOAD_FIXED, "first");
		check_str((const char *)d.recs[1].p + LOAD_FIXED, "after");
		check_uint(rd64(d.recs[1].p + 48), ==, 1);
		check_uint(d.recs[2].id, ==, REC_CLOSE);
	}
	dump_free(&d);
}

static void test_perfmap(void)
{
	char path[64], text[256] = "";
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	check_int(tailor_perfmap_append(getpid(), 0x1000, 0x20, "alpha"), ==, 0);
	check_int(tailor_perfmap_append(getpid(), 0x7fff00001234ull, 8,
					"beta (gamma)"), ==, 0);
	check_int(tailor_perfmap_append(getpid(), 0x1000, 1, "two\nlines"), ==, -EINVAL);
	check_int(tailor_perfmap_append(getpid(), 0x1000, 1, ""), ==, -EINVAL);
	check_int(tailor_perfmap_append(getpid(), 0x1000, 1, NULL), ==, -EINVAL);
	f = fopen(path, "r");
	check(f != NULL);
	if (f) {
		n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = 0;
		fclose(f);
	}
	check_str(text, "1000 20 alpha\n7fff00001234 8 beta (gamma)\n");
	unlink(path);
}

int main(void)
{
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/tailor-jitdump-test.XXXXXX");
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	TEST(test_roundtrip(), "header, line table before its load, load, move, close");
	TEST(test_tsc(), "TSC timestamps are flagged and rise");
	TEST(test_threads(), "loads from several threads stay whole and ordered");
	TEST(test_move_index(), "a move names the code index now at its old address");
	TEST(test_refusals(), "bad arguments are refused and write nothing");
	TEST(test_short_write(), "a short write leaves no torn record");
	TEST(test_perfmap(), "perf map lines: hex start, hex size, name");
	rmdir(tmp_dir);
	return test_done();
}

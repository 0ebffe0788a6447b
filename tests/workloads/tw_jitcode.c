// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_jitcode [-d DIR] [-t] [-n N] [-m] [-r]: a JIT by hand, with known
 * work, for profiling code that no ELF file describes.  It writes x86-64
 * loops into anonymous memory, makes them executable, describes each
 * through libtailor's jitdump writer (DIR/jit-PID.dump, DIR default /tmp)
 * and perf map (/tmp/perf-PID.map), and runs them:
 *
 *   cold    N million iterations
 *   hot     3N million: three times cold's samples
 *   first   (-r) N million; then unloaded, and second loaded at the very
 *   second  same address, N million: only time tells them apart
 *   mover   (-m) N million at its first address, then moved (copied, a
 *           move record, the old copy unmapped) and N million more there
 *
 * Every function is the same loop, so time ~ iterations; *_cpu_ns gives
 * the thread CPU time each run took, the truth under emulation.  -t: TSC
 * timestamps in the dump, else CLOCK_MONOTONIC (record with -k mono).
 *
 * The line table points into a pseudo source file, jitcode.q, in which
 * each function takes seven lines from its base line B:
 *
 *	B    fn NAME(n) {
 *	B+1    x = 0               xor
 *	B+2    repeat n {          test/jz on entry, dec/jnz each iteration
 *	B+3      x = x * S + D     BODY_OPS dependent leas: most of the time
 *	B+4    }
 *	B+5    return x            ret
 *	B+6  }
 *
 * Samples fall on B+3 and B+2 (how they split between the two depends
 * on the CPU's skid), almost never elsewhere.  stdout: key=value lines.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "tailor/jitdump.h"

#define SOURCE		"jitcode.q"
#define BODY_OPS	4
#define MILLION		1000000ull

struct fn {
	const char *name;
	unsigned char *code;		/* a page of its own */
	size_t size;
	unsigned int base;		/* its first line in jitcode.q */
	struct tailor_jit_line lines[5];
};

static struct tailor_jitdump *dump;
static size_t page;
static volatile uint64_t sink;	/* keeps the results, so the calls stay */

static void die(const char *what, int err)
{
	fprintf(stderr, "tw_jitcode: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

#define EMIT(...) do {							\
	const unsigned char b_[] = { __VA_ARGS__ };			\
	memcpy(p + n, b_, sizeof(b_));					\
	n += sizeof(b_);						\
} while (0)

/*
 * uint64_t f(uint64_t n): x = 0; if (n) do x = x * S + D (BODY_OPS
 * times) while (--n); return x.  @sib picks S (0x40: 3, 0x80: 5), @disp
 * is D; all variants cost the same.  Fills @f's line table.
 */
static void emit_loop(struct fn *f, uint8_t sib, uint8_t disp)
{
	unsigned char *p = f->code;
	uint64_t a = (uintptr_t)p;
	size_t n = 0, test, top, head, ret;
	int i;

	EMIT(0x31, 0xc0);				/* xor %eax,%eax */
	test = n;
	EMIT(0x48, 0x85, 0xff);				/* test %rdi,%rdi */
	EMIT(0x74, 0);					/* jz ret */
	top = n;
	for (i = 0; i < BODY_OPS; i++)
		EMIT(0x48, 0x8d, 0x44, sib, disp);	/* lea D(%rax,%rax,S-1),%rax */
	head = n;
	EMIT(0x48, 0xff, 0xcf);				/* dec %rdi */
	EMIT(0x75, (uint8_t)(top - (n + 2)));		/* jnz top */
	ret = n;
	EMIT(0xc3);					/* ret */
	p[test + 4] = ret - (test + 5);	/* jz's rel8 */
	f->size = n;

	f->lines[0] = (struct tailor_jit_line){ a, f->base + 1, SOURCE };
	f->lines[1] = (struct tailor_jit_line){ a + test, f->base + 2, SOURCE };
	f->lines[2] = (struct tailor_jit_line){ a + top, f->base + 3, SOURCE };
	f->lines[3] = (struct tailor_jit_line){ a + head, f->base + 2, SOURCE };
	f->lines[4] = (struct tailor_jit_line){ a + ret, f->base + 5, SOURCE };
}

/* Describe @f, now executable at f->code, to both interfaces. */
static void announce(const struct fn *f)
{
	int ret;

	ret = tailor_jitdump_load(dump, f->name, f->code, f->size, f->lines, 5);
	if (ret)
		die("jitdump load", ret);
	ret = tailor_perfmap_append(getpid(), (uintptr_t)f->code, f->size, f->name);
	if (ret)
		die("perf map", ret);
}

static void protect(void *code, int prot)
{
	if (mprotect(code, page, prot))
		die("mprotect", errno);
}

/* Compile @f into a fresh page: written while writable, run only once not. */
static void jit(struct fn *f, uint8_t sib, uint8_t disp)
{
	f->code = mmap(NULL, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->code == MAP_FAILED)
		die("mmap", errno);
	emit_loop(f, sib, disp);
	protect(f->code, PROT_READ | PROT_EXEC);
	announce(f);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Run @f for @iters iterations; returns the thread CPU time it took. */
static uint64_t run(const struct fn *f, uint64_t iters)
{
	uint64_t (*call)(uint64_t) = (uint64_t (*)(uint64_t))(uintptr_t)f->code;
	uint64_t t0 = cpu_ns();

	sink += call(iters);
	return cpu_ns() - t0;
}

static void print_fn(const struct fn *f, uint64_t iters, uint64_t ns)
{
	printf("%s_addr=0x%lx\n%s_size=%zu\n%s_iterations=%llu\n%s_cpu_ns=%llu\n",
	       f->name, (unsigned long)(uintptr_t)f->code, f->name, f->size,
	       f->name, (unsigned long long)iters, f->name, (unsigned long long)ns);
	printf("%s_line_entry=%u\n%s_line_head=%u\n%s_line_body=%u\n%s_line_return=%u\n",
	       f->name, f->base + 1, f->name, f->base + 2, f->name, f->base + 3,
	       f->name, f->base + 5);
}

int main(int argc, char **argv)
{
	struct fn cold = { .name = "cold", .base = 1 };
	struct fn hot = { .name = "hot", .base = 11 };
	struct fn mover = { .name = "mover", .base = 21 };
	struct fn first = { .name = "first", .base = 31 };
	struct fn second = { .name = "second", .base = 41 };
	const char *dir = NULL;
	unsigned int flags = 0;
	uint64_t unit = 100 * MILLION, ns, old_ns;
	int opt, move = 0, reuse = 0, err = 0;
	unsigned char *old;

	while ((opt = getopt(argc, argv, "d:tn:mr")) != -1) {
		switch (opt) {
		case 'd':
			dir = optarg;
			break;
		case 't':
			flags |= TAILOR_JITDUMP_TSC;
			break;
		case 'n':
			unit = strtoull(optarg, NULL, 0) * MILLION;
			break;
		case 'm':
			move = 1;
			break;
		case 'r':
			reuse = 1;
			break;
		default:
			fprintf(stderr, "usage: tw_jitcode [-d DIR] [-t] [-n N] [-m] [-r]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	/* Before any code runs: the dump's mapping is what profilers look for. */
	dump = tailor_jitdump_open(dir, flags, &err);
	if (!dump)
		die("jitdump open", err);
	printf("pid=%d\njitdump=%s\nperfmap=/tmp/perf-%d.map\nsource=%s\n",
	       (int)getpid(), tailor_jitdump_path(dump), (int)getpid(), SOURCE);
	printf("timestamps=%s\nfunctions=cold,hot%s%s\nsplit_hot_cold=3\n",
	       flags & TAILOR_JITDUMP_TSC ? "tsc" : "mono",
	       reuse ? ",first,second" : "", move ? ",mover" : "");

	jit(&cold, 0x40, 1);
	jit(&hot, 0x40, 1);
	print_fn(&cold, unit, run(&cold, unit));
	print_fn(&hot, 3 * unit, run(&hot, 3 * unit));

	/* Before the move frees a page that first could land on by chance. */
	if (reuse) {
		jit(&first, 0x40, 1);
		print_fn(&first, unit, run(&first, unit));
		/* Unload first; second is other code at the same address. */
		protect(first.code, PROT_READ | PROT_WRITE);
		memset(first.code, 0xcc, page);		/* int3 */
		second.code = first.code;
		emit_loop(&second, 0x80, 3);
		protect(second.code, PROT_READ | PROT_EXEC);
		announce(&second);
		print_fn(&second, unit, run(&second, unit));
	}

	if (move) {
		jit(&mover, 0x40, 1);
		old = mover.code;
		old_ns = run(&mover, unit);
		mover.code = mmap(NULL, page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mover.code == MAP_FAILED)
			die("mmap", errno);
		memcpy(mover.code, old, mover.size);
		protect(mover.code, PROT_READ | PROT_EXEC);
		err = tailor_jitdump_move(dump, (uintptr_t)old,
					  (uintptr_t)mover.code, mover.size);
		if (err)
			die("jitdump move", err);
		/* The perf map has no moves: a second line names the new place. */
		err = tailor_perfmap_append(getpid(), (uintptr_t)mover.code,
					    mover.size, mover.name);
		if (err)
			die("perf map", err);
		munmap(old, page);
		ns = run(&mover, unit);
		print_fn(&mover, 2 * unit, old_ns + ns);
		printf("mover_old_addr=0x%lx\nmover_old_iterations=%llu\n"
		       "mover_new_iterations=%llu\n",
		       (unsigned long)(uintptr_t)old, (unsigned long long)unit,
		       (unsigned long long)unit);
	}

	err = tailor_jitdump_close(dump);
	if (err)
		die("jitdump close", err);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization against the truth this very program knows about itself:
 * the address and source line of its own functions, its own mappings from
 * /proc/self/maps.  Covers time-versioned mappings (code replaced at the
 * same address), unmapped IPs and unreadable files.  ASan and UBSan.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "tailor/symbols.h"

static int known_line;

static __attribute__((noinline)) int known_function(int x)
{
	known_line = __LINE__; return x * 3 + 1;
}

/* Our executable's mappings, as tailor record would have them. */
static int add_own_mappings(struct symbolizer *s, uint32_t pid, char *exe,
			    size_t len)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	ssize_t got = readlink("/proc/self/exe", exe, len - 1);

	if (!f || got <= 0)
		return -1;
	exe[got] = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], path[4096];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end,
			   perms, &pgoff, path) != 5 || strcmp(path, exe))
			continue;
		if (!sym_add_mapping(s, pid, 0, start, end - start, pgoff, path))
			n++;
	}
	fclose(f);
	return n;
}

static struct symbolizer *sym;
static char exe[4096];
static uint64_t ip;
static struct sym_result first;

static void maps_own_code(void)
{
	sym_lookup(sym, 42, ip, 100, &first);
	check_int(first.status, ==, SYM_OK);
	check_str(first.function, "known_function");
	check_contains(first.file, "symbols_test.c");
	check_uint(first.line, ==, (unsigned int)known_line);
	check_str(first.path, exe);
}

static void caches(void)
{
	struct sym_result again;

	sym_lookup(sym, 42, ip, 200, &again);
	check(again.function == first.function);
	check_uint(again.line, ==, first.line);
	check_uint(again.address, ==, first.address);
	check_uint(again.id, ==, first.id);
}

static void outside(void)
{
	struct sym_result r;

	sym_lookup(sym, 43, ip, 100, &r);
	check_int(r.status, ==, SYM_NO_MAPPING);
	sym_lookup(sym, 42, 0x10, 100, &r);
	check_int(r.status, ==, SYM_NO_MAPPING);
}

/* Code replaced at the same address: the time decides. */
static void replaced(void)
{
	struct sym_result r;

	check_int(sym_add_mapping(sym, 42, 1000, (uintptr_t)known_function & ~0xfffull,
				  0x1000, 0, "/nonexistent/generated-q2.so"), ==, 0);
	sym_lookup(sym, 42, ip, 999, &r);
	check_int(r.status, ==, SYM_OK);
	sym_lookup(sym, 42, ip, 1000, &r);
	check_int(r.status, ==, SYM_NO_FILE);
	check_str(r.path, "/nonexistent/generated-q2.so");
	/* Earlier times still see the first mapping: the cache keeps time apart. */
	sym_lookup(sym, 42, ip, 500, &r);
	check_int(r.status, ==, SYM_OK);
}

/* A forked process has its parent's mappings from the fork on; an exec ends them. */
static void fork_and_exec(void)
{
	struct sym_result r;

	check_int(sym_fork(sym, 42, 7, 300), ==, 0);
	sym_lookup(sym, 7, ip, 299, &r);
	check_int(r.status, ==, SYM_OK);	/* began later: taken as a late side-band time */
	sym_lookup(sym, 7, ip, 400, &r);
	check_int(r.status, ==, SYM_OK);
	check_str(r.function, "known_function");
	/* What the parent mapped after the fork is not the child's. */
	sym_lookup(sym, 7, ip, 1500, &r);
	check_int(r.status, ==, SYM_OK);
	sym_exec(sym, 7, 2000);
	sym_lookup(sym, 7, ip, 2500, &r);
	check_int(r.status, ==, SYM_NO_MAPPING);
	sym_lookup(sym, 7, ip, 1999, &r);
	check_int(r.status, ==, SYM_OK);
	sym_lookup(sym, 42, ip, 2500, &r);
	check_int(r.status, ==, SYM_NO_FILE);	/* the parent kept its own */
}

/* The symbolizer takes its mappings as events. */
static void from_events(void)
{
	struct tev_consumer *c = sym_consumer(sym);
	struct tev_mmap m = { .time = 50, .start = first.address ? (uintptr_t)known_function & ~0xfffull : 0,
			      .len = 0x1000, .path = "/nonexistent/other.so", .pid = 99 };
	struct tev_comm exec = { .time = 60, .name = "x", .pid = 99, .tid = 99, .exec = true };
	struct sym_result r;

	check_int(c->mmap(c, &m), ==, 0);
	sym_lookup(sym, 99, ip, 55, &r);
	check_int(r.status, ==, SYM_NO_FILE);
	check_int(c->comm(c, &exec), ==, 0);
	sym_lookup(sym, 99, ip, 65, &r);
	check_int(r.status, ==, SYM_NO_MAPPING);
}

/*
 * The offset tailor record gives tailor.ko for a thread-local word is
 * where this very executable's threads have it.
 */
__thread uint64_t tls_probe_word __attribute__((tls_model("initial-exec"))) = 5;
__thread char tls_probe_pad[24];

static int64_t tls_probe_runtime_offset(void)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (int64_t)((uintptr_t)&tls_probe_word - tp);
}

static void tls_offsets(void)
{
	char err[512] = "";
	int64_t off = 1;

	tls_probe_pad[0] = 1;
	check_int(tls_symbol_offset("/proc/self/exe", "tls_probe_word", &off, err,
				    sizeof(err)), ==, 0);
	check_int(off, ==, tls_probe_runtime_offset());
	check_int(tls_symbol_offset("/proc/self/exe", "no_such_word", &off, err,
				    sizeof(err)), ==, -ENOENT);
	check_contains(err, "defines no thread-local symbol 'no_such_word'");
	/* A function is not a thread-local variable. */
	check_int(tls_symbol_offset("/proc/self/exe", "main", &off, err, sizeof(err)), ==, -ENOENT);
	check_int(tls_symbol_offset("/nonexistent", "x", &off, err, sizeof(err)), <, 0);
	check_contains(err, "cannot open '/nonexistent'");
	check_int(tls_symbol_offset("/etc/hostname", "x", &off, err, sizeof(err)), ==, -EINVAL);
	check_contains(err, "not an x86-64 ELF executable");
}

int main(void)
{
	sym = sym_new();
	ip = (uintptr_t)known_function + 4;
	known_function(1);
	TEST(check_int(add_own_mappings(sym, 42, exe, sizeof(exe)), >, 0), "own mappings found");
	TEST(maps_own_code(), "an IP maps to its function and source line");
	TEST(caches(), "a second lookup is the cached answer, with the same id");
	TEST(outside(), "IPs outside every mapping of the process are said so");
	TEST(replaced(), "the mapping in force at the sample's time is used");
	TEST(fork_and_exec(), "a fork copies the parent's mappings, an exec ends them");
	TEST(from_events(), "mmap and exec events drive the mappings");
	TEST(tls_offsets(), "a thread-local symbol's offset from the thread pointer, or why not");
	sym_free(sym);
	return test_done();
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization against the truth this very program knows about itself:
 * the address and source line of its own functions, its own mappings from
 * /proc/self/maps.  Covers time-versioned mappings (code replaced at the
 * same address), unmapped IPs and unreadable files.  ASan and UBSan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tailor/symbols.h"

static int nr_tests, nr_failed;

static void check(int ok, const char *name)
{
	nr_tests++;
	nr_failed += !ok;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", nr_tests, name);
}

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

int main(void)
{
	struct symbolizer *s = sym_new();
	uint64_t ip = (uintptr_t)known_function + 4;
	struct sym_result r, again;
	char exe[4096];
	int ok;

	printf("TAP version 13\n1..5\n");
	known_function(1);
	check(s && add_own_mappings(s, 42, exe, sizeof(exe)) > 0,
	      "own mappings found");

	sym_lookup(s, 42, ip, 100, &r);
	ok = r.status == SYM_OK && r.function && !strcmp(r.function, "known_function") &&
	     r.file && strstr(r.file, "symbols_test.c") && r.line == (unsigned int)known_line &&
	     r.path && !strcmp(r.path, exe);
	if (!ok)
		printf("# status %d function %s file %s line %u (want %d)\n", r.status,
		       r.function ? r.function : "-", r.file ? r.file : "-", r.line,
		       known_line);
	check(ok, "an IP maps to its function and source line");

	sym_lookup(s, 42, ip, 200, &again);
	check(again.function == r.function && again.line == r.line &&
	      again.address == r.address, "a second lookup is the cached answer");

	sym_lookup(s, 43, ip, 100, &r);
	ok = r.status == SYM_NO_MAPPING;
	sym_lookup(s, 42, 0x10, 100, &r);
	ok &= r.status == SYM_NO_MAPPING;
	check(ok, "IPs outside every mapping of the process are said so");

	/* Code replaced at the same address: the time decides. */
	sym_add_mapping(s, 42, 1000, (uintptr_t)known_function & ~0xfffull,
			0x1000, 0, "/nonexistent/generated-q2.so");
	sym_lookup(s, 42, ip, 999, &r);
	ok = r.status == SYM_OK;
	sym_lookup(s, 42, ip, 1000, &r);
	ok &= r.status == SYM_NO_FILE && !strcmp(r.path, "/nonexistent/generated-q2.so");
	check(ok, "the mapping in force at the sample's time is used");

	sym_free(s);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       nr_tests - nr_failed, nr_failed);
	return nr_failed ? 1 : 0;
}

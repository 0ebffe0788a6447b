// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization against the truth this very program knows about itself:
 * the address and source line of its own functions, its own mappings from
 * /proc/self/maps.  Covers time-versioned mappings (code replaced at the
 * same address), unmapped IPs and unreadable files; and every function
 * name against libdwfl's own answer, at and around each symbol of the C
 * library.  ASan and UBSan.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
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

	/* Asked before the new mapping is known: the answer then, kept... */
	sym_lookup(sym, 42, ip, 1500, &r);
	check_int(r.status, ==, SYM_OK);
	check_int(sym_add_mapping(sym, 42, 1000, (uintptr_t)known_function & ~0xfffull,
				  0x1000, 0, "/nonexistent/generated-q2.so"), ==, 0);
	/* ... until a mapping is added: then asked again. */
	sym_lookup(sym, 42, ip, 1500, &r);
	check_int(r.status, ==, SYM_NO_FILE);
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

/* The path of a library this process has mapped, by a part of its name. */
static int mapped_library(const char *part, char *path, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char p[4096];

		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", p) == 1 && strstr(p, part) &&
		    strlen(p) < len) {
			strcpy(path, p);
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * Assembly labels as libdwfl weighs them: a global and a local label at
 * one address with no sized symbol holding it (the global wins and keeps
 * the locals out), then a sized local function.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl symtab_case_global_label\n"
	"symtab_case_local_label:\n"
	"symtab_case_global_label:\n"
	"	nop; nop; nop; nop\n"
	".type symtab_case_sized, @function\n"
	"symtab_case_sized:\n"
	"	ret\n"
	".size symtab_case_sized, .-symtab_case_sized\n");

/* Where a synthesized mapping of a library's text starts in the test's pid. */
#define TEXT_BASE 0x7f1000000000ull

/* Whether @vaddr lies in @elf's .plt or .plt.sec. */
static bool in_plt(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec")) &&
		    vaddr >= sh.sh_addr && vaddr - sh.sh_addr < sh.sh_size)
			return true;
	}
	return false;
}

/*
 * The symbolizer names each interval between symbol and section bounds
 * from its own sorted copy of the symbol table (symtab_index.c): at each
 * symbol's start, end, middle and the addresses next to them, and in the
 * gaps before them, its name must be the one libdwfl gives for that very
 * address (aliases, sizeless assembly labels, locals and globals, stripped
 * libraries' unnamed static functions).  Every @stride-th symbol: libdwfl
 * walks the whole table per address, which is slow for libLLVM.
 */
static void names_as_libdwfl(const char *path, size_t stride, uint32_t pid)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	struct symbolizer *s = sym_new();
	uint64_t text_vaddr = 0, text_off = 0, text_size = 0, slack;
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod;
	GElf_Addr bias = 0;
	Elf *elf;
	size_t i, nph, compared = 0, named = 0, differ = 0, plt = 0;
	int syms;

	/* libdwfl's names are the symbols' own: compared undemangled. */
	if (s)
		sym_set_demangle(s, false);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	check(elf != NULL);
	if (!elf)
		goto out;
	/* The executable segment, mapped as the loader would map it. */
	for (i = 0; !elf_getphdrnum(elf, &nph) && i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			text_vaddr = ph.p_vaddr;
			text_off = ph.p_offset;
			text_size = ph.p_filesz;
		}
	}
	check_uint(text_size, >, 0);
	slack = text_off & 0xfff;
	check_int(sym_add_mapping(s, pid, 0, TEXT_BASE, text_size + slack, text_off - slack,
				  path), ==, 0);
	syms = dwfl_module_getsymtab(mod);
	check_int(syms, >, 100);
	for (i = 1; syms > 0 && i < (size_t)syms; i += stride) {
		int64_t deltas[] = { -64, -1, 0, 1, 2 };
		GElf_Sym sym;
		GElf_Addr value;
		size_t d;

		if (!dwfl_module_getsym_info(mod, (int)i, &sym, &value, NULL, NULL, NULL))
			continue;
		for (d = 0; d < 8; d++) {
			uint64_t vaddr = (d < 5 ? value + deltas[d] :
					  d == 5 ? value + sym.st_size / 2 :
					  d == 6 ? value + sym.st_size - 1 : value + sym.st_size) - bias;
			uint64_t ip = TEXT_BASE + slack + vaddr - text_vaddr;
			const char *want;
			struct sym_result r;

			if (vaddr < text_vaddr || vaddr >= text_vaddr + text_size)
				continue;
			sym_lookup(s, pid, ip, 1, &r);
			want = dwfl_module_addrname(mod, vaddr + bias);
			compared++;
			named += want != NULL;
			/*
			 * No symbol covers a PLT entry: libdwfl names none,
			 * tailor names it by its relocation, as perf does.
			 */
			if (!want && r.function && in_plt(elf, vaddr)) {
				size_t len = strlen(r.function);

				check(len > 4 && !strcmp(r.function + len - 4, "@plt"));
				plt++;
				continue;
			}
			if (want ? !r.function || strcmp(want, r.function) : r.function != NULL) {
				if (differ++ < 5)
					fprintf(stderr, "# %s+%#llx: libdwfl '%s', tailor '%s'\n", path,
						(unsigned long long)vaddr, want ? want : "(none)",
						r.function ? r.function : "(none)");
			}
		}
	}
	fprintf(stderr, "# %zu addresses in %s compared (every %zu. symbol), %zu named, %zu in the PLT\n",
		compared, path, stride, named, plt);
	check_uint(compared, >, 1000);
	check_uint(named, >, compared / 2);
	check_uint(differ, ==, 0);
out:
	dwfl_end(dwfl);
	sym_free(s);
}

/*
 * Libraries of every kind: this very program (its labels above), its C
 * library and libdw (with
 * .symtab or not, as Debian ships them), and where installed the C++
 * runtime and LLVM's stripped libraries, whose static functions only
 * gaps between dynamic symbols hold.
 */
static void names_as_libdwfl_everywhere(void)
{
	static const struct { const char *path; size_t stride; } more[] = {
		{ "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 3 },
		{ "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", 150 },
		{ "/usr/lib/llvm-14/lib/libclang-cpp.so.14", 120 },
	};
	char path[4096] = { 0 };
	uint32_t pid = 100;
	size_t i;

	check(readlink("/proc/self/exe", path, sizeof(path) - 1) > 0);
	names_as_libdwfl(path, 1, pid++);
	check(mapped_library("/libc.so", path, sizeof(path)));
	names_as_libdwfl(path, 1, pid++);
	check(mapped_library("/libdw", path, sizeof(path)));
	names_as_libdwfl(path, 1, pid++);
	for (i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		if (access(more[i].path, R_OK)) {
			fprintf(stderr, "# %s: not here, not compared\n", more[i].path);
			continue;
		}
		names_as_libdwfl(more[i].path, more[i].stride, pid++);
	}
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
	TEST(names_as_libdwfl_everywhere(),
	     "function names as libdwfl gives them, around the symbols of five libraries");
	TEST(tls_offsets(), "a thread-local symbol's offset from the thread pointer, or why not");
	sym_free(sym);
	return test_done();
}

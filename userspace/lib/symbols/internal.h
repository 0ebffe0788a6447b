/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The symbolizer's insides, shared by its files: symbols.c (mappings,
 * ELF and DWARF, the answer cache) and jit_code.c (code in anonymous
 * memory, named by jitdumps and perf maps).  Not for callers: they see
 * tailor/symbols.h.
 */
#ifndef TAILOR_SYMBOLS_INTERNAL_H
#define TAILOR_SYMBOLS_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include "tailor/symbols.h"
#include "util/hashmap.h"

struct sym_file {
	char *path;
	bool anonymous;		/* no file: memory a JIT may fill (jit_code.c) */
	Dwfl *dwfl;		/* NULL: could not be opened */
	Dwfl_Module *mod;
	GElf_Addr bias;
	Elf *elf;
	bool tried;
	uint32_t noaddr_id;	/* id + 1 of its results without an address */
	/* Its loadable segments, read once: every sample needs them. */
	struct sym_segment *segments;
	size_t nr_segments;
	/*
	 * Function names by interval: interval 0 is below bounds[0],
	 * interval 2i + 1 is bounds[i] itself and 2i + 2 the addresses
	 * between bounds[i] and bounds[i + 1] (or above the last); names[]
	 * their answers, NOT_ASKED until asked.  Built at the first lookup.
	 */
	uint64_t *bounds;
	const char **names;
	size_t nr_bounds;
	bool intervals_tried;
	struct sym_table *table;	/* its symbols sorted, or NULL */
	/* Its units' address ranges, for lines libdw cannot place (cu_ranges.c). */
	struct cu_ranges *cu_ranges;
	bool cu_ranges_tried;
	/* Neither it nor its debug file has a .symtab: known once asked. */
	bool stripped, stripped_known;
	/*
	 * Another build than the profile recorded is at its path now, or none
	 * (build_ids.c): the build-id there ("" if none), and the copy of the
	 * recorded build read instead, NULL if none was found.
	 */
	bool changed;
	char disk_id[SYM_BUILD_ID_HEX];
	char *copy;
	/* Its PLT's entries by name (plt.c), built when a symbol is missed. */
	struct sym_plt *plt;
	bool plt_tried;
};

/*
 * A module's symbol table sorted (symtab_index.c): what
 * dwfl_module_addrname() answers, without its walk over every symbol.
 * @elf and @bias are the module's main file, as dwfl_module_getelf()
 * gives them.
 */
struct sym_table;
struct sym_table *sym_table_build(Dwfl_Module *mod, Elf *elf, GElf_Addr bias);
const char *sym_table_name(struct sym_table *t, uint64_t addr);
void sym_table_free(struct sym_table *t);

/*
 * A module's compile units by their own address ranges (cu_ranges.c): the
 * source line of @addr (a module address) where the module has no
 * .debug_aranges, and its unit's DW_AT_comp_dir (NULL if none).  NULL from
 * build only without memory; from line, when no unit's line table holds
 * @addr.
 */
struct cu_ranges;
struct cu_ranges *cu_ranges_build(Dwfl_Module *mod);
const char *cu_ranges_line(struct cu_ranges *c, GElf_Addr addr, int *lineno,
			   const char **comp_dir);
void cu_ranges_free(struct cu_ranges *c);
/* The unit whose ranges hold @addr (a module address) into @cudie, and its bias; 0 or -1. */
int cu_ranges_unit(struct cu_ranges *c, GElf_Addr addr, Dwarf_Die *cudie, Dwarf_Addr *bias);

/* A name slot whose interval libdwfl was not asked about yet. */
static const char not_asked[1];
#define NOT_ASKED	not_asked

struct sym_segment {
	uint64_t offset, filesz, vaddr;
};

struct jit_code;

/*
 * A range of a process's addresses over a time: a file mapping (@file),
 * or code a JIT loaded there (@code, and @file NULL).
 */
struct sym_map {
	uint32_t pid;
	uint64_t time;		/* in force from here ... */
	uint64_t until;		/* ... to here (an exec), UINT64_MAX: on */
	uint64_t start, end, pgoff;
	uint64_t seq;		/* order added: of equal times, the later wins */
	struct sym_file *file;
	const struct jit_code *code;
};

/*
 * A list of ranges, sorted by (pid, start, time, seq) for searching.
 * Mappings come in time order, a few at a time, and go in in place; a
 * JIT file's ranges come by the thousand, out of order: appended, and
 * the list sorted once at the next search.
 */
struct sym_map_list {
	struct sym_map *maps;
	size_t nr, cap;
	uint64_t next_seq;
	uint64_t max_len;	/* of any range: how far back a search looks */
	bool unsorted;
};

struct cache_entry {
	const void *owner;	/* its sym_file or jit_code; NULL: empty slot */
	uint64_t address;
	struct sym_result result;
};

/*
 * The mapping found for a (pid, page) and the times it answers for, so
 * that most samples skip the search: valid while no mapping was added.
 */
#define RECENT_SLOTS	256
struct recent_map {
	uint64_t generation;	/* of maps[]; 0: empty */
	uint32_t pid;
	uint64_t page;
	uint64_t from, to;	/* time window of the answer */
	size_t index;
};

/*
 * The answer for an IP in a file's mapping, and the times it holds for:
 * most samples are at an IP a sample before them was at (a hot loop), and
 * skip the search, the segments and the cache.  Valid while no mapping
 * was added; never for anonymous memory, where a JIT's code comes and goes.
 */
#define RECENT_IP_SLOTS	1024
struct recent_ip {
	uint64_t generation;	/* of maps[]; 0: empty */
	uint64_t ip;
	uint64_t from, to;	/* time window of the answer */
	uint32_t pid;
	struct sym_result result;
};

struct symbolizer {
	struct tev_consumer events;
	struct sym_map_list files_mapped;	/* mmaps of files */
	uint64_t generation;	/* of files_mapped, for recent[] and recent_ip[] */
	struct recent_map recent[RECENT_SLOTS];
	struct recent_ip recent_ip[RECENT_IP_SLOTS];
	struct sym_file **files;
	size_t nr_files;
	struct cache_entry *cache;
	size_t cache_cap, cache_used;
	char **strings;		/* owned copies handed out in results */
	size_t nr_strings;
	uint32_t next_id;
	struct sym_jit *jit;	/* jit_code.c's, NULL until a JIT is seen */
	bool no_demangle;	/* symbols' names as the ELF file has them */
	struct sym_inlines *inlines;	/* inline_frames.c's cache, NULL until asked */
	/* libdwfl's callbacks, with where debug files are looked for. */
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	char *debug_dir;	/* sym_set_debug_dir()'s, or NULL */
	/* The build-ids the profile recorded (build_ids.c), by path. */
	struct recorded_build_id {
		char *path;
		char id[SYM_BUILD_ID_HEX];
	} *recorded;
	size_t nr_recorded, cap_recorded;
	struct str_map recorded_index;
};

/* build_ids.c */
const char *sym_recorded_build_id(const struct symbolizer *s, const char *path);
bool sym_build_id_place(const struct symbolizer *s, const char *id, unsigned int n,
			char *out, size_t len);
void sym_build_ids_free(struct symbolizer *s);

int sym_list_insert(struct sym_map_list *l, const struct sym_map *m);
int sym_list_append(struct sym_map_list *l, const struct sym_map *m);
void sym_list_sort(struct sym_map_list *l);
/* Copies of @parent's ranges in force at @time, as @child's from then (appended). */
int sym_list_fork(struct sym_map_list *l, uint32_t parent, uint32_t child, uint64_t time);
/* @pid's ranges in force at @time end then (an exec). */
void sym_list_end(struct sym_map_list *l, uint32_t pid, uint64_t time);
/*
 * The range of @pid covering @ip at @time in @l (sorted): the newest in
 * force then; failing that, one that began later (a side-band time a
 * little late).  *@from..*@to: the times for which the answer holds.
 */
const struct sym_map *sym_list_search(const struct sym_map_list *l, uint32_t pid,
				      uint64_t ip, uint64_t time, uint64_t *from,
				      uint64_t *to);
const char *sym_keep_n(struct symbolizer *s, const char *str, size_t n);
/* The cached answer for (@owner, @address); a fresh one has owner NULL. */
struct cache_entry *sym_cache_slot(struct symbolizer *s, const void *owner,
				   uint64_t address, bool *fresh);

/*
 * The file mapped at @ip of @pid at @time, opened, with @ip's ELF virtual
 * address in it in *@vaddr; NULL where no file mapping covers @ip, or its
 * file cannot be read (maps over time, for unwind_dwarf.c).
 */
struct sym_file *sym_file_at(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t time,
			     uint64_t *vaddr);

/*
 * The file the profile mapped at @path, opened (NULL: none such, anonymous
 * memory, or unreadable), for questions asked by path (inline_frames.c).
 */
struct sym_file *sym_file_named(struct symbolizer *s, const char *path);
/* A line table's file name @src of a unit compiled in @comp_dir, as resolve() names it. */
const char *sym_keep_path(struct symbolizer *s, const char *comp_dir, const char *src);
/* inline_frames.c: its cache freed (by sym_free()). */
void sym_inlines_free(struct symbolizer *s);

/* plt.c: "NAME@plt" for an address (ELF vaddr) in @f's PLT, else NULL. */
const char *sym_plt_name(struct symbolizer *s, struct sym_file *f, uint64_t vaddr);
void sym_plt_free(struct sym_plt *p);

/* @raw demangled unless asked not to (demangle.c), owned like sym_keep()'s. */
const char *sym_demangled(struct symbolizer *s, const char *raw);

/* jit_code.c */
void jit_free(struct symbolizer *s);
bool jit_anonymous_path(const char *path);
/* @child gets @parent's JIT code in force at @time; exec ends @pid's. */
int jit_fork(struct symbolizer *s, uint32_t parent, uint32_t child, uint64_t time);
void jit_exec(struct symbolizer *s, uint32_t pid, uint64_t time);
/* A mapping seen: if it is a jitdump (jit-PID.dump), its code is read. */
int jit_on_mmap(struct symbolizer *s, uint32_t pid, const char *path);
/*
 * @ip of @pid in JIT code at @time: 1 with @out filled, 0 if no JIT
 * names it (@m, the file mapping covering it or NULL, says whether the
 * address is anonymous memory a JIT could have named).
 */
int jit_lookup(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t time,
	       const struct sym_map *m, struct sym_result *out);

/*
 * The defined thread-local symbol @name of @elf, from .symtab or .dynsym
 * (@only: SHT_DYNSYM or SHT_SYMTAB alone, 0 either); where asked, its
 * table and its index there.  0, or -ENOENT (tls_offset.c).
 */
int tls_find_symbol(Elf *elf, const char *name, Elf64_Word only, GElf_Sym *out,
		    Elf_Scn **table, size_t *index);

#endif /* TAILOR_SYMBOLS_INTERNAL_H */

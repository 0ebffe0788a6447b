// SPDX-License-Identifier: GPL-2.0-only
/*
 * A module's function names from its symbol table, sorted once, so that
 * naming an address is a binary search instead of libdwfl's walk over
 * every symbol.  dwfl_module_addrname() reads the whole table for each
 * address it is asked about: for libLLVM (45k symbols) and a recording
 * that hits a few thousand of its functions, that walk was nearly all of
 * a report's time (4.5 s of 4.6 natively, a minute in the test box).
 *
 * The answers must be the ones libdwfl gives (tests/unit/symbols_test.c
 * compares them at and around every symbol of several libraries), so this
 * follows the rules of elfutils' dwfl_module_addrinfo as of 0.188 on
 * x86-64 (no function descriptors, so a symbol has one value):
 *
 *  - a symbol counts if it has a name, a section (not SHN_UNDEF) and is
 *    not a section, file or TLS symbol;
 *  - the symbols after the table's first global are searched first, the
 *    locals only if none of those holds the address;
 *  - in each, the sized symbols holding the address are taken in table
 *    order, a later one replacing the one kept when it starts higher or
 *    binds stronger (global over weak over local), or starts at the same
 *    place, is shorter and binds no weaker.
 *
 *  - where no sized symbol holds the address, a sizeless one (an assembly
 *    label) names it if it starts exactly where the highest end of all
 *    the symbols below the address lies, in the same section as the
 *    address (libdwfl's sections: the allocated ones, a section's end
 *    address counting as inside it unless the next one starts there);
 *    of several, the last met, and the locals are met after the globals;
 *  - a global label right at the address keeps the locals out of it.
 */
#include <stdlib.h>
#include "internal.h"
#include "util/grow.h"

struct sym_entry {
	uint64_t start, end;	/* module addresses, end excluded */
	uint64_t max_end;	/* the highest end of this and every entry before */
	const char *name;
	uint32_t index;		/* in the symbol table: the order libdwfl walks */
	uint8_t binding;	/* higher binds stronger */
};

/* One search pass: its sized symbols, sorted by start. */
struct sym_pass {
	struct sym_entry *entries;
	size_t nr, cap;
};

/* A sizeless symbol. */
struct sym_label {
	uint64_t at;
	const char *name;
	uint32_t index;
	bool local;		/* met in the second pass */
};

/* An allocated section of the module's main file, as libdwfl bounds it. */
struct sym_section {
	uint64_t start, end;
	size_t ndx;
};

struct sym_table {
	struct sym_pass globals, locals;
	/* Sorted by address, then in the order libdwfl meets them. */
	struct sym_label *labels;
	size_t nr_labels, cap_labels;
	struct sym_section *sections;
	size_t nr_sections, cap_sections;
	/* Room to weigh the symbols holding one address. */
	const struct sym_entry **holders;
	size_t cap_holders;
};

/* libdwfl's preference between bindings: higher is better. */
static uint8_t binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static bool names_functions(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return name && name[0] && sym->st_shndx != SHN_UNDEF &&
	       type != STT_SECTION && type != STT_FILE && type != STT_TLS;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->index > y->index) - (x->index < y->index);
}

static int cmp_label(const void *a, const void *b)
{
	const struct sym_label *x = a, *y = b;

	if (x->at != y->at)
		return (x->at > y->at) - (x->at < y->at);
	if (x->local != y->local)
		return x->local - y->local;
	return (x->index > y->index) - (x->index < y->index);
}

/* Equal starts keep section order, as libdwfl's sort leaves them. */
static int cmp_section(const void *a, const void *b)
{
	const struct sym_section *x = a, *y = b;

	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->ndx > y->ndx) - (x->ndx < y->ndx);
}

static void finish_pass(struct sym_pass *p)
{
	uint64_t max_end = 0;
	size_t i;

	if (p->nr)
		qsort(p->entries, p->nr, sizeof(*p->entries), cmp_entry);
	for (i = 0; i < p->nr; i++) {
		if (p->entries[i].end > max_end)
			max_end = p->entries[i].end;
		p->entries[i].max_end = max_end;
	}
}

void sym_table_free(struct sym_table *t)
{
	if (!t)
		return;
	free(t->globals.entries);
	free(t->locals.entries);
	free(t->labels);
	free(t->sections);
	free(t->holders);
	free(t);
}

static int add_sections(struct sym_table *t, Elf *elf, GElf_Addr bias)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		if (array_grow((void **)&t->sections, &t->cap_sections, t->nr_sections + 1,
			       sizeof(*t->sections)))
			return -1;
		t->sections[t->nr_sections++] = (struct sym_section){
			.start = sh.sh_addr + bias, .end = sh.sh_addr + bias + sh.sh_size,
			.ndx = elf_ndxscn(scn) };
	}
	if (t->nr_sections)
		qsort(t->sections, t->nr_sections, sizeof(*t->sections), cmp_section);
	return 0;
}

static int add_symbol(struct sym_table *t, int i, bool global, const char *name,
		      const GElf_Sym *sym, GElf_Addr value)
{
	struct sym_pass *p = global ? &t->globals : &t->locals;

	if (!sym->st_size) {
		if (array_grow((void **)&t->labels, &t->cap_labels, t->nr_labels + 1,
			       sizeof(*t->labels)))
			return -1;
		t->labels[t->nr_labels++] = (struct sym_label){
			.at = value, .name = name, .index = (uint32_t)i, .local = !global };
		return 0;
	}
	if (array_grow((void **)&p->entries, &p->cap, p->nr + 1, sizeof(*p->entries)))
		return -1;
	p->entries[p->nr++] = (struct sym_entry){
		.start = value, .end = value + sym->st_size, .name = name,
		.index = (uint32_t)i, .binding = binding_rank(sym) };
	return 0;
}

struct sym_table *sym_table_build(Dwfl_Module *mod, Elf *elf, GElf_Addr bias)
{
	int syms = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);
	struct sym_table *t;
	int i;

	if (syms <= 0 || first_global < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	for (i = 1; i < syms; i++) {
		/* With no locals apart (first_global 0), one pass meets them all. */
		bool global = first_global == 0 || i >= first_global;
		const char *name;
		GElf_Sym sym;
		GElf_Addr value;

		name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
		if (names_functions(name, &sym) && add_symbol(t, i, global, name, &sym, value))
			goto fail;
	}
	if (add_sections(t, elf, bias))
		goto fail;
	finish_pass(&t->globals);
	finish_pass(&t->locals);
	if (t->nr_labels)
		qsort(t->labels, t->nr_labels, sizeof(*t->labels), cmp_label);
	return t;
fail:
	sym_table_free(t);
	return NULL;
}

/* Whether @next replaces @kept, met in this order, as libdwfl decides. */
static bool replaces(const struct sym_entry *kept, const struct sym_entry *next)
{
	if (kept->start < next->start || kept->binding < next->binding)
		return true;
	return kept->start == next->start && kept->end > next->end &&
	       kept->binding <= next->binding;
}

/* The number of entries of @p starting at or below @addr. */
static size_t entries_upto(const struct sym_pass *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->entries[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* @p's choice among its sized symbols holding @addr; NULL if none does. */
static const struct sym_entry *choose(struct sym_table *t, const struct sym_pass *p,
				      uint64_t addr)
{
	const struct sym_entry *kept;
	size_t i, j, n = 0;

	/* Back from @addr while some entry at or before reaches past it. */
	for (i = entries_upto(p, addr); i-- > 0 && p->entries[i].max_end > addr;) {
		if (p->entries[i].end <= addr)
			continue;
		if (array_grow((void **)&t->holders, &t->cap_holders, n + 1, sizeof(*t->holders)))
			return NULL;
		t->holders[n++] = &p->entries[i];
	}
	if (!n)
		return NULL;
	/* Into table order, the order libdwfl meets them in. */
	for (i = 1; i < n; i++) {
		const struct sym_entry *e = t->holders[i];

		for (j = i; j > 0 && t->holders[j - 1]->index > e->index; j--)
			t->holders[j] = t->holders[j - 1];
		t->holders[j] = e;
	}
	kept = t->holders[0];
	for (i = 1; i < n; i++)
		if (replaces(kept, t->holders[i]))
			kept = t->holders[i];
	return kept;
}

/* The number of labels at or below @addr. */
static size_t labels_upto(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_labels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->labels[mid].at <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* libdwfl's section of module address @addr, SHN_UNDEF if none. */
static size_t section_of(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_sections;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct sym_section *sc = &t->sections[mid];

		if (addr < sc->start) {
			hi = mid;
		} else if (addr > sc->end) {
			lo = mid + 1;
		} else {
			if (addr == sc->end && mid + 1 < t->nr_sections &&
			    addr == t->sections[mid + 1].start)
				mid++;
			return t->sections[mid].ndx;
		}
	}
	return SHN_UNDEF;
}

const char *sym_table_name(struct sym_table *t, uint64_t addr)
{
	const struct sym_entry *e = choose(t, &t->globals, addr);
	size_t n = labels_upto(t, addr), i, nr;
	uint64_t reach = 0;

	if (e)
		return e->name;
	/* The last global label right at @addr, which keeps the locals out. */
	for (i = n; i-- > 0 && t->labels[i].at == addr;)
		if (!t->labels[i].local)
			return t->labels[i].name;
	e = choose(t, &t->locals, addr);
	if (e)
		return e->name;
	/* Labels: the highest reach of anything below @addr, if one is there. */
	if (n)
		reach = t->labels[n - 1].at;
	nr = entries_upto(&t->globals, addr);
	if (nr && t->globals.entries[nr - 1].max_end > reach)
		reach = t->globals.entries[nr - 1].max_end;
	nr = entries_upto(&t->locals, addr);
	if (nr && t->locals.entries[nr - 1].max_end > reach)
		reach = t->locals.entries[nr - 1].max_end;
	if (!n || t->labels[n - 1].at != reach ||
	    section_of(t, reach) != section_of(t, addr))
		return NULL;
	return t->labels[n - 1].name;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Names for the PLT's entries, which no symbol covers: "free@plt" for the
 * stub that jumps to free, as perf names them (symbol-elf.c's
 * dso__synthesize_plt_symbols()).  The n-th JUMP_SLOT relocation of
 * .rela.plt is the n-th entry; on x86-64 an entry is the section's
 * sh_entsize (16), after a header of one entry.  Where the linker split
 * the PLT for IBT (.plt.sec: the entries calls go to, no header), those
 * are named -- perf 6.1 names .plt's there, which calls never reach.
 * Built once per file, the first time an address finds no symbol.
 */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/internal.h"

struct sym_plt {
	uint64_t start;		/* ELF virtual address of the first entry */
	uint64_t entry_size;
	size_t nr;
	const char **names;	/* sym_keep()'s, "NAME@plt" */
};

static Elf_Scn *section_named(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static struct sym_plt *build(struct symbolizer *s, Elf *elf)
{
	GElf_Shdr rel_sh, plt_sh, dynsym_sh;
	Elf_Scn *rel, *plt, *dynsym;
	Elf_Data *rels, *syms;
	struct sym_plt *p;
	size_t shstrndx, i, n, header;
	char name[1024];

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	rel = section_named(elf, shstrndx, ".rela.plt", &rel_sh);
	if (!rel || rel_sh.sh_type != SHT_RELA || !rel_sh.sh_entsize)
		return NULL;
	dynsym = elf_getscn(elf, rel_sh.sh_link);
	if (!dynsym || !gelf_getshdr(dynsym, &dynsym_sh) || dynsym_sh.sh_type != SHT_DYNSYM)
		return NULL;
	plt = section_named(elf, shstrndx, ".plt.sec", &plt_sh);
	header = 0;
	if (!plt) {
		plt = section_named(elf, shstrndx, ".plt", &plt_sh);
		header = 1;
	}
	if (!plt || !plt_sh.sh_entsize || plt_sh.sh_type != SHT_PROGBITS)
		return NULL;
	rels = elf_getdata(rel, NULL);
	syms = elf_getdata(dynsym, NULL);
	if (!rels || !syms)
		return NULL;
	/* The relocations there are, and no more entries than the section holds. */
	n = rels->d_size / rel_sh.sh_entsize;
	if (plt_sh.sh_size / plt_sh.sh_entsize <= header)
		return NULL;
	if (n > plt_sh.sh_size / plt_sh.sh_entsize - header)
		n = plt_sh.sh_size / plt_sh.sh_entsize - header;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->names = calloc(n ? n : 1, sizeof(*p->names)))) {
		free(p);
		return NULL;
	}
	p->start = plt_sh.sh_addr + header * plt_sh.sh_entsize;
	p->entry_size = plt_sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *raw;

		if (!gelf_getrela(rels, (int)i, &r) ||
		    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
			break;
		/* An IFUNC's slot (R_X86_64_IRELATIVE) names no symbol. */
		if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT)
			continue;
		raw = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name);
		if (!raw || !*raw)
			continue;
		snprintf(name, sizeof(name), "%s@plt", sym_demangled(s, raw));
		p->names[i] = sym_keep(s, name);
	}
	p->nr = i;
	return p;
}

const char *sym_plt_name(struct symbolizer *s, struct sym_file *f, uint64_t vaddr)
{
	struct sym_plt *p;
	uint64_t k;

	if (!f->plt_tried) {
		f->plt_tried = true;
		f->plt = build(s, f->elf);
	}
	p = f->plt;
	if (!p || vaddr < p->start)
		return NULL;
	k = (vaddr - p->start) / p->entry_size;
	return k < p->nr ? p->names[k] : NULL;
}

void sym_plt_free(struct sym_plt *p)
{
	if (p)
		free(p->names);
	free(p);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The chain of inlined calls at a code address (tailor/symbols.h,
 * sym_inline_frames()), as addr2line -i and perf's srcline --inline give
 * it: where a compiler inlined a function, the address lies in a
 * DW_TAG_inlined_subroutine scope of DWARF, perhaps in several nested
 * ones, inside the DW_TAG_subprogram of the function the symbol table
 * names.  dwarf_getscopes_die() lists those scopes innermost first; each
 * inlined one names its function (through DW_AT_abstract_origin) and the
 * line of the function around it that called it (DW_AT_call_file,
 * DW_AT_call_line).  An exporter asks per site, never per sample, and
 * the answers are cached per (file, address) besides.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include "symbols/internal.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* At most this many functions are kept of one chain (the innermost ones). */
#define MAX_INLINE_DEPTH	64

struct inline_chain {
	uint32_t first, n;	/* frames[first .. first + n) */
};

struct sym_inlines {
	struct pair_map chain_of;	/* (sym_file, address) -> index into chains */
	struct inline_chain *chains;
	size_t nr_chains, cap_chains;
	struct sym_inline_frame *frames;
	size_t nr_frames, cap_frames;
};

void sym_inlines_free(struct symbolizer *s)
{
	if (!s->inlines)
		return;
	pair_map_free(&s->inlines->chain_of);
	free(s->inlines->chains);
	free(s->inlines->frames);
	free(s->inlines);
	s->inlines = NULL;
}

/* A function scope's name: its linkage name demangled (C++, Rust), else its own name. */
static const char *scope_name(struct symbolizer *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *raw;

	raw = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!raw)
		raw = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (raw)
		return sym_demangled(s, raw);
	raw = dwarf_diename(die);	/* follows DW_AT_abstract_origin */
	/* addr2line's name for a function DWARF leaves unnamed. */
	return sym_keep(s, raw ? raw : "??");
}

/* An inlined scope's call site: the file and line in the function around it. */
static void call_site(struct symbolizer *s, Dwarf_Die *cudie, Dwarf_Die *die,
		      const char **file, unsigned int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word index, lineno;
	Dwarf_Files *files;
	size_t nfiles;
	const char *src, *comp_dir;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &lineno) || !lineno ||
	    lineno > UINT32_MAX)
		return;
	*line = (unsigned int)lineno;
	/* DWARF 5 numbers files from 0, the unit's own; libdw reads either numbering. */
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &index) ||
	    dwarf_getsrcfiles(cudie, &files, &nfiles) || index >= nfiles)
		return;
	src = dwarf_filesrc(files, index, NULL, NULL);
	comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	/* Named as the line table's files are (sym_lookup()'s), so that they meet. */
	if (src)
		*file = sym_keep_path(s, comp_dir, src);
}

/* The unit holding module address @addr, as resolve() finds its line. */
static Dwarf_Die *unit_of(struct sym_file *f, GElf_Addr addr, Dwarf_Die *mem, Dwarf_Addr *bias)
{
	Dwarf_Die *cudie = dwfl_module_addrdie(f->mod, addr, bias);

	if (cudie)
		return cudie;
	/* No .debug_aranges (clang, Go): the units' own ranges. */
	if (!f->cu_ranges_tried) {
		f->cu_ranges_tried = true;
		f->cu_ranges = cu_ranges_build(f->mod);
	}
	return cu_ranges_unit(f->cu_ranges, addr, mem, bias) ? NULL : mem;
}

/* The chain at ELF virtual address @vaddr of @f into @out (MAX_INLINE_DEPTH); its length. */
static int chain_of(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		    struct sym_inline_frame *out)
{
	Dwarf_Die mem, innermost, *cudie, *scopes = NULL;
	Dwarf_Addr bias;
	const char *call_file = NULL;
	unsigned int call_line = 0;
	int nscopes, i, n = 0;

	cudie = unit_of(f, vaddr + f->bias, &mem, &bias);
	if (!cudie)
		return 0;
	nscopes = dwarf_getscopes(cudie, vaddr + f->bias - bias, &scopes);
	if (nscopes <= 0) {
		free(scopes);
		return 0;
	}
	/*
	 * Past an inlined scope, dwarf_getscopes() goes on with the scopes
	 * around its abstract origin (the inlined function's definition);
	 * the ones around the code itself are those of the innermost DIE, as
	 * eu-addr2line -i finds them.
	 */
	innermost = scopes[0];
	free(scopes);
	scopes = NULL;
	nscopes = dwarf_getscopes_die(&innermost, &scopes);
	for (i = 0; i < nscopes && n < MAX_INLINE_DEPTH; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;	/* lexical blocks */
		out[n].function = scope_name(s, &scopes[i]);
		out[n].file = call_file;
		out[n].line = call_line;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* Where this one was inlined: the line of the next frame out. */
		call_site(s, cudie, &scopes[i], &call_file, &call_line);
	}
	free(scopes);
	return n;
}

int sym_inline_frames(struct symbolizer *s, const char *path, uint64_t address,
		      struct sym_inline_frame *out, int max)
{
	struct sym_inline_frame found[MAX_INLINE_DEPTH];
	struct sym_file *f = sym_file_named(s, path);
	struct sym_inlines *in;
	struct inline_chain *c;
	uint32_t idx;
	int n, i;

	if (!f)
		return 0;
	if (!s->inlines && !(s->inlines = calloc(1, sizeof(*s->inlines))))
		return -ENOMEM;
	in = s->inlines;
	if (!pair_map_get(&in->chain_of, (uintptr_t)f, address, &idx)) {
		n = chain_of(s, f, address, found);
		if (in->nr_chains >= UINT32_MAX ||
		    array_grow((void **)&in->chains, &in->cap_chains, in->nr_chains + 1,
			       sizeof(*in->chains)) ||
		    array_grow((void **)&in->frames, &in->cap_frames, in->nr_frames + n,
			       sizeof(*in->frames)))
			return -ENOMEM;
		if (n)
			memcpy(in->frames + in->nr_frames, found, n * sizeof(*found));
		idx = (uint32_t)in->nr_chains++;
		in->chains[idx] = (struct inline_chain){ (uint32_t)in->nr_frames, (uint32_t)n };
		in->nr_frames += n;
		if (pair_map_put(&in->chain_of, (uintptr_t)f, address, idx))
			return -ENOMEM;
	}
	c = &in->chains[idx];
	for (i = 0; i < (int)c->n && i < max; i++)
		out[i] = in->frames[c->first + i];
	return (int)c->n;
}

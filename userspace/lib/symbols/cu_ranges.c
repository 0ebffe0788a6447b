// SPDX-License-Identifier: GPL-2.0-only
/*
 * Source lines of modules without .debug_aranges.  clang emits none by
 * default, nor do Go and some Rust builds; libdw's address -> compile unit
 * lookup (dwarf_addrdie(), and through it dwfl_module_getsrc()) reads only
 * that section in elfutils 0.188, so on such a module every sample had
 * "no line information" where addr2line and perf's srcline name the line.
 * They find the unit by the units' own ranges (DW_AT_low_pc/high_pc, or
 * DW_AT_ranges: .debug_ranges, DWARF 5's .debug_rnglists), and so does
 * this: one walk over the units per module, at the first address libdw
 * could not place, into a sorted array that each later lookup searches.
 */
#include <dwarf.h>
#include <stdlib.h>
#include "symbols/internal.h"
#include "util/grow.h"

struct cu_range {
	Dwarf_Addr low, high;	/* [low, high), DWARF addresses */
	Dwarf_Off die;		/* the unit's DIE */
	Dwarf_Addr reach;	/* the highest high of this range and those before */
};

struct cu_ranges {
	Dwarf *dwarf;
	Dwarf_Addr bias;	/* module address - DWARF address */
	struct cu_range *ranges;
	size_t nr, cap;
};

static int by_low(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->low != y->low)
		return (x->low > y->low) - (x->low < y->low);
	return (x->high > y->high) - (x->high < y->high);
}

static int add_unit(struct cu_ranges *c, Dwarf_Die *cudie)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t at = 0;

	while ((at = dwarf_ranges(cudie, at, &base, &low, &high)) > 0) {
		if (low >= high)
			continue;
		if (array_grow((void **)&c->ranges, &c->cap, c->nr + 1, sizeof(*c->ranges)))
			return -1;
		c->ranges[c->nr++] = (struct cu_range){ low, high, dwarf_dieoffset(cudie), 0 };
	}
	return 0;
}

struct cu_ranges *cu_ranges_build(Dwfl_Module *mod)
{
	struct cu_ranges *c = calloc(1, sizeof(*c));
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	Dwarf_Half version;

	if (!c)
		return NULL;
	c->dwarf = dwfl_module_getdwarf(mod, &c->bias);
	if (!c->dwarf)
		return c;
	while (dwarf_get_units(c->dwarf, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		/* Type units hold no code; a skeleton's ranges are its split unit's. */
		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
			continue;
		if (add_unit(c, &cudie)) {
			cu_ranges_free(c);
			return NULL;
		}
	}
	qsort(c->ranges, c->nr, sizeof(*c->ranges), by_low);
	for (size_t i = 0; i < c->nr; i++)
		c->ranges[i].reach = i && c->ranges[i - 1].reach > c->ranges[i].high ?
				     c->ranges[i - 1].reach : c->ranges[i].high;
	return c;
}

/*
 * The units whose ranges hold @at (module-relative), innermost first:
 * *@i starts at units_from(); each call gives the next unit in @cudie.
 * The ranges before the first that starts above @at, back to the last
 * that reaches past it (units' ranges may nest).
 */
static size_t units_from(const struct cu_ranges *c, Dwarf_Addr at)
{
	size_t lo = 0, hi = c->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->ranges[mid].low <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool next_unit(const struct cu_ranges *c, Dwarf_Addr at, size_t *i, Dwarf_Die *cudie)
{
	while (*i > 0 && c->ranges[*i - 1].reach > at) {
		const struct cu_range *r = &c->ranges[--*i];

		if (at < r->high && dwarf_offdie(c->dwarf, r->die, cudie))
			return true;
	}
	return false;
}

const char *cu_ranges_line(struct cu_ranges *c, GElf_Addr addr, int *lineno,
			   const char **comp_dir)
{
	Dwarf_Addr at;
	Dwarf_Line *line;
	Dwarf_Die cudie;
	size_t i;

	if (!c || !c->nr || addr < c->bias)
		return NULL;
	at = addr - c->bias;
	for (i = units_from(c, at); next_unit(c, at, &i, &cudie);) {
		Dwarf_Attribute attr;
		const char *src;

		line = dwarf_getsrc_die(&cudie, at);
		if (!line || dwarf_lineno(line, lineno) || *lineno <= 0)
			continue;
		src = dwarf_linesrc(line, NULL, NULL);
		if (src) {
			*comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr));
			return src;
		}
	}
	return NULL;
}

int cu_ranges_unit(struct cu_ranges *c, GElf_Addr addr, Dwarf_Die *cudie, Dwarf_Addr *bias)
{
	size_t i;

	if (!c || !c->nr || addr < c->bias)
		return -1;
	i = units_from(c, addr - c->bias);
	if (!next_unit(c, addr - c->bias, &i, cudie))
		return -1;
	*bias = c->bias;
	return 0;
}

void cu_ranges_free(struct cu_ranges *c)
{
	if (c) {
		free(c->ranges);
		free(c);
	}
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Readable names for C++, Rust and D symbols, as perf report shows them:
 * without parameters (eng::ops::Join<unsigned long>::probe), Rust's legacy
 * hash dropped.  binutils' libiberty (Debian's libiberty-dev) does the
 * work: it is what c++filt and addr2line use, and it reads all three
 * languages, Rust's v0 scheme too, where the C++ ABI's __cxa_demangle
 * reads C++ alone and needs the C++ runtime.  Names are demangled once
 * per symbol interval (symbols.c caches them), never per sample.
 */
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>
#include "symbols/internal.h"

const char *sym_demangled(struct symbolizer *s, const char *raw)
{
	char *readable = NULL;
	const char *kept;

	if (!raw || s->no_demangle)
		return sym_keep(s, raw);
	/* C++ and Rust legacy: _Z; Rust v0: _R; D: _D and a digit. */
	if (raw[0] == '_' && (raw[1] == 'Z' || raw[1] == 'R'))
		readable = cplus_demangle(raw, DMGL_AUTO);
	else if (raw[0] == '_' && raw[1] == 'D' && raw[2] >= '0' && raw[2] <= '9')
		readable = cplus_demangle(raw, DMGL_DLANG);
	if (!readable)
		return sym_keep(s, raw);
	kept = sym_keep(s, readable);
	free(readable);
	return kept;
}

void sym_set_demangle(struct symbolizer *s, bool demangle)
{
	s->no_demangle = !demangle;
}

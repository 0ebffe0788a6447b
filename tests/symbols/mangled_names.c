// SPDX-License-Identifier: GPL-2.0-only
/*
 * mangled_names.c: hot functions whose symbols are mangled as C++, Rust
 * (legacy and v0) and D compilers mangle them, for tailor report's names
 * against perf's and the languages' own rules
 * (tests/symbols/perf_compare_test.sh).  No Rust or D compiler is needed:
 * each function's symbol is given by an asm label.  Usage: mangled_names
 * [ROUNDS]
 */
#include <stdlib.h>

static volatile unsigned long sink;

#define HOT(fn, symbol, parts)								\
	__attribute__((noinline)) void fn(unsigned long n) __asm__(symbol);		\
	__attribute__((noinline)) void fn(unsigned long n)				\
	{										\
		unsigned long x = sink;							\
											\
		for (unsigned long i = 0; i < (parts) * n; i++)				\
			x = x * 2862933555777941757ul + 3037000493ul;			\
		sink = x;								\
	}

/* eng::ops::Join<unsigned long>::probe(unsigned long) */
HOT(cpp_probe, "_ZN3eng3ops4JoinImE5probeEm", 1)
/* Rust legacy: mycrate::scan, with its hash */
HOT(rust_legacy_scan, "_ZN7mycrate4scan17h5f4e8d7c6b5a4938E", 2)
/* Rust v0: mycrate::scan::probe */
HOT(rust_v0_probe, "_RNvNtCs1234_7mycrate4scan5probe", 3)
/* D: tailored.probe(ulong) */
HOT(d_probe, "_D8tailored5probeFmZm", 4)

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;

	for (unsigned long r = 0; r < rounds; r++) {
		cpp_probe(100000);
		rust_legacy_scan(100000);
		rust_v0_probe(100000);
		d_probe(100000);
	}
	return 0;
}

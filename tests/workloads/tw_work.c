// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_work ITERATIONS: a fixed amount of CPU-bound work (a tagged loop),
 * so that wall time measures what profiling costs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "tagged_loop.h"

int main(int argc, char **argv)
{
	uint64_t n, tag = 0x7a6;

	if (argc != 2) {
		fprintf(stderr, "usage: tw_work ITERATIONS\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 0);
	if (n)
		tagged_loop(tag, n);
	return 0;
}

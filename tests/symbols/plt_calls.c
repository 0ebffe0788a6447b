// SPDX-License-Identifier: GPL-2.0-only
/*
 * plt_calls [N]: calls labs() N million times through the PLT
 * (-fno-builtin keeps the calls), so that samples land in the PLT
 * entry that no symbol covers: perf names it labs@plt.
 */
#include <stdlib.h>

volatile long sink;

int main(int argc, char **argv)
{
	unsigned long n = (argc > 1 ? strtoul(argv[1], NULL, 0) : 100) * 1000000ul;

	for (unsigned long i = 0; i < n; i++)
		sink += labs((long)i - 5);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/* tailor: the collector's entry point and subcommand dispatch. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const char usage[] =
"usage: tailor <command> [options]\n"
"\n"
"Tailored Profiling for compiling dataflow systems: samples carry the IP,\n"
"a raw TSC and the tag register, so profiles map back to operators.\n"
"\n"
"commands:\n"
"  record   profile a command, a process or all CPUs into a recording\n"
"  dump     print what a recording holds, and whether it is complete\n"
"  report   attribute samples to operators, pipelines, functions, lines:\n"
"           cost table, plan tree, annotated source, timeline, memory\n"
"  timeline operator activity over time (report --view timeline)\n"
"\n"
"'tailor <command> --help' describes each command's options.\n";

void err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("tailor: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tailor %s (recording format %d, module ABI %d)\n",
		       TAILOR_VERSION, TLR_VERSION, TAILOR_ABI_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "timeline"))
		return cmd_timeline(argc - 1, argv + 1);
	err_msg("unknown command '%s'; see 'tailor --help'", argv[1]);
	return EXIT_USAGE;
}

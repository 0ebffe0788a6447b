// SPDX-License-Identifier: GPL-2.0-only
/* tailor: the entry point, and the table of its commands. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

const struct cli_command *const commands[] = {
	&cmd_record, &cmd_dump, &cmd_report, &cmd_timeline, &cmd_completion, NULL,
};

static void print_usage(FILE *out)
{
	const struct cli_command *const *c;

	fputs("usage: tailor <command> [options]\n"
	      "\n"
	      "Tailored Profiling for compiling dataflow systems: samples carry the IP,\n"
	      "a raw TSC and the tag register, so profiles map back to operators.\n"
	      "\n"
	      "commands:\n", out);
	for (c = commands; *c; c++)
		fprintf(out, "  %-11s%s\n", (*c)->name, (*c)->summary);
	fputs("\n'tailor <command> --help' describes each command's options.\n", out);
}

static int run_completion(const struct cli_command *cmd, int argc, char **argv)
{
	const char *value;
	int c;

	while ((c = usage_next(cmd, argc, argv, &value)) != OPT_END) {
		if (c == OPT_ERROR)
			return EXIT_USAGE;
		usage_print(cmd, stdout);
		return EXIT_OK;
	}
	if (optind + 1 != argc || strcmp(argv[optind], "bash"))
		return usage_error(cmd, "say which shell: 'tailor completion bash'");
	usage_completion_bash(stdout);
	return fflush(stdout) ? cmd_fail(cmd, "writing the script failed") : EXIT_OK;
}

static const struct cli_option completion_options[] = {
	{ .id = 'h', .name = "help",
	  .help = "this text" },
	{ 0 }
};

const struct cli_command cmd_completion = {
	.name = "completion",
	.summary = "a shell completion script: eval \"$(tailor completion bash)\"",
	.synopsis = "usage: tailor completion bash",
	.description = "Print a bash completion script for tailor's commands, their options and\n"
		       "the options' values.  The script asks tailor for them as it completes,\n"
		       "so it never goes out of date.  make install and the tailor package put\n"
		       "it in /usr/share/bash-completion/completions/tailor.",
	.options = completion_options,
	.operands = "bash",
	.run = run_completion,
};

int main(int argc, char **argv)
{
	const struct cli_command *const *c;
	int rc;

	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	/* tailor help COMMAND: that command's --help, as git help does. */
	if (!strcmp(argv[1], "help") && argc > 2) {
		for (c = commands; *c; c++) {
			char *help_argv[] = { argv[2], "--help", NULL };

			if (!strcmp(argv[2], (*c)->name))
				return (*c)->run(*c, 2, help_argv);
		}
		err_msg("unknown command '%s'; see 'tailor --help'", argv[2]);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tailor %s (recording format %d, module ABI %d)\n",
		       TAILOR_VERSION, TLR_VERSION, TAILOR_ABI_VERSION);
		return EXIT_OK;
	}
	rc = introspect_global(argc, argv);
	if (rc >= 0)
		return rc;
	for (c = commands; *c; c++) {
		if (strcmp(argv[1], (*c)->name))
			continue;
		rc = introspect_command(*c, argc - 1, argv + 1);
		return rc >= 0 ? rc : (*c)->run(*c, argc - 1, argv + 1);
	}
	err_msg("unknown command '%s'; see 'tailor --help'", argv[1]);
	return EXIT_USAGE;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the commands' tables say about tailor itself, for the shell
 * completion script and the man pages, so neither can drift from --help:
 *
 *   tailor --list-cmds              the commands
 *   tailor CMD --list-opts          its options, long and short
 *   tailor CMD --list-values OPT    the values OPT takes: words, @file or
 *                                   @command; exit 1 if it takes none
 *   tailor CMD --list-operands      what its operands are: words, @file or
 *                                   @command (a command it runs)
 *   tailor --scdoc-commands         the commands as an scdoc list
 *   tailor CMD --scdoc-options      its options as scdoc (the OPTIONS
 *                                   section of tailor-CMD(1))
 *
 * These are hidden, as perf's --list-cmds and --list-opts are: the
 * completion script asks the very binary it completes, so an old script
 * never offers options a new tailor lacks, nor the other way round.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static void list_commands(FILE *out)
{
	const struct cli_command *const *c;

	for (c = commands; *c; c++)
		fprintf(out, "%s%s", c == commands ? "" : " ", (*c)->name);
	fputc('\n', out);
}

static void list_options(const struct cli_command *cmd, FILE *out)
{
	const struct cli_option *o;

	for (o = cmd->options; o->name; o++) {
		fprintf(out, "%s--%s", o == cmd->options ? "" : " ", o->name);
		if (option_has_short(o))
			fprintf(out, " -%c", o->id);
	}
	fputc('\n', out);
}

/* The option @word names ("--event", "-e" or "--event=..."), or NULL. */
static const struct cli_option *option_named(const struct cli_command *cmd, const char *word)
{
	const struct cli_option *o;
	size_t len;

	if (word[0] != '-')
		return NULL;
	for (o = cmd->options; o->name; o++) {
		if (word[1] != '-') {
			if (option_has_short(o) && word[1] == o->id && !word[2])
				return o;
			continue;
		}
		len = strlen(o->name);
		if (!strncmp(word + 2, o->name, len) && (!word[2 + len] || word[2 + len] == '='))
			return o;
	}
	return NULL;
}

static int list_values(const struct cli_command *cmd, const char *word, FILE *out)
{
	const struct cli_option *o = option_named(cmd, word);

	if (!o)
		return usage_error(cmd, "--list-values: no option '%s'", word);
	if (!o->arg)
		return EXIT_FAIL;	/* the answer "takes no value" */
	if (o->choices) {
		const char *const *c = o->choices();
		int i;

		for (i = 0; c[i]; i++)
			fprintf(out, "%s%s", i ? " " : "", c[i]);
	} else if (o->complete) {
		fputs(o->complete, out);
	}
	fputc('\n', out);
	return EXIT_OK;
}

/* @text for scdoc: its markup characters taken literally. */
static void scdoc_text(FILE *out, const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (strchr("\\*_", text[i]))
			fputc('\\', out);
		fputc(text[i], out);
	}
}

/*
 * Help text is broken into lines for a terminal; a man page fills its own
 * lines, so the lines become one paragraph.
 */
static void scdoc_paragraph(FILE *out, const char *text)
{
	const char *nl;

	for (;;) {
		while (*text == ' ')
			text++;
		nl = strchr(text, '\n');
		scdoc_text(out, text, nl ? (size_t)(nl - text) : strlen(text));
		if (!nl)
			break;
		fputc(' ', out);
		text = nl + 1;
	}
}

/*
 * No blank lines: scdoc makes each an empty paragraph that mandoc -Tlint
 * reports.  A line holding an escaped space sets entries apart instead.
 */
static void scdoc_options(const struct cli_command *cmd, FILE *out)
{
	const struct cli_option *o;

	for (o = cmd->options; o->name; o++) {
		if (o->section) {
			fputs("## ", out);
			scdoc_text(out, o->section, strlen(o->section));
			fputc('\n', out);
		} else if (o != cmd->options) {
			fputs("\\ \n", out);
		}
		if (option_has_short(o))
			fprintf(out, "*-%c*, ", o->id);
		fputs("*--", out);
		scdoc_text(out, o->name, strlen(o->name));
		fputc('*', out);
		if (o->arg) {
			fputs(" _", out);
			scdoc_text(out, o->arg, strlen(o->arg));
			fputc('_', out);
		}
		fputs("\n\t", out);
		scdoc_paragraph(out, o->help);
		fputc('\n', out);
	}
}

static void scdoc_commands(FILE *out)
{
	const struct cli_command *const *c;

	for (c = commands; *c; c++) {
		fprintf(out, "*%s*\n\t", (*c)->name);
		scdoc_paragraph(out, (*c)->summary);
		fputc('\n', out);
	}
}

static int written(FILE *out)
{
	if (fflush(out) || ferror(out)) {
		err_msg("writing to stdout failed");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int introspect_global(int argc, char **argv)
{
	if (argc != 2)
		return -1;
	if (!strcmp(argv[1], "--list-cmds"))
		list_commands(stdout);
	else if (!strcmp(argv[1], "--scdoc-commands"))
		scdoc_commands(stdout);
	else
		return -1;
	return written(stdout);
}

int introspect_command(const struct cli_command *cmd, int argc, char **argv)
{
	int rc;

	if (argc == 2 && !strcmp(argv[1], "--list-opts"))
		list_options(cmd, stdout);
	else if (argc == 2 && !strcmp(argv[1], "--list-operands"))
		puts(cmd->operands ? cmd->operands : "@file");
	else if (argc == 2 && !strcmp(argv[1], "--scdoc-options"))
		scdoc_options(cmd, stdout);
	else if (argc == 3 && !strcmp(argv[1], "--list-values")) {
		rc = list_values(cmd, argv[2], stdout);
		if (rc != EXIT_OK)
			return rc;
	} else {
		return -1;
	}
	return written(stdout);
}

/* The script, as bash reads it (tests/usage runs shellcheck on it). */
static const char completion_bash[] =
	"# bash completion for tailor, from 'tailor completion bash'.  It asks\n"
	"# tailor itself (--list-cmds, --list-opts, --list-values, --list-operands),\n"
	"# so it completes what the installed tailor takes.\n"
	"# SPDX-License-Identifier: GPL-2.0-only\n"
	"\n"
	"# _tailor_reply WHAT CUR: COMPREPLY from the words WHAT, or files (@file),\n"
	"# or commands and files (@command), quoted as file names are.\n"
	"_tailor_reply()\n"
	"{\n"
	"\tcase $1 in\n"
	"\t@file)\n"
	"\t\tcompopt -o filenames 2>/dev/null\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$2\") ;;\n"
	"\t@command)\n"
	"\t\tcompopt -o filenames 2>/dev/null\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -c -- \"$2\"; compgen -f -- \"$2\") ;;\n"
	"\t*)\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$2\") ;;\n"
	"\tesac\n"
	"}\n"
	"\n"
	"_tailor()\n"
	"{\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	"\tlocal tailor=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} values operands i word\n"
	"\n"
	"\tCOMPREPLY=()\n"
	"\t# The tailor as typed (a build tree's), else the one on PATH.\n"
	"\tcommand -v \"$tailor\" >/dev/null 2>&1 || tailor=tailor\n"
	"\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	"\t\t_tailor_reply \"$(\"$tailor\" --list-cmds 2>/dev/null) --help --version\" \"$cur\"\n"
	"\t\treturn\n"
	"\tfi\n"
	"\t[[ \" $(\"$tailor\" --list-cmds 2>/dev/null) \" == *\" $cmd \"* ]] || return\n"
	"\toperands=$(\"$tailor\" \"$cmd\" --list-operands 2>/dev/null) || operands=@file\n"
	"\t# A command that runs a command (record): its first operand ends its\n"
	"\t# options, and the words after it are that command's.\n"
	"\tif [ \"$operands\" = @command ]; then\n"
	"\t\ti=2\n"
	"\t\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
	"\t\t\tword=${COMP_WORDS[i]}\n"
	"\t\t\tif [ \"$word\" = -- ]; then\n"
	"\t\t\t\ti=$((i + 1))\n"
	"\t\t\t\tbreak\n"
	"\t\t\telif [[ $word != -* ]]; then\n"
	"\t\t\t\tbreak\n"
	"\t\t\telif [ \"${COMP_WORDS[i+1]}\" = = ]; then\n"
	"\t\t\t\ti=$((i + 3))\t# --opt=value, split at '='\n"
	"\t\t\telif \"$tailor\" \"$cmd\" --list-values \"$word\" >/dev/null 2>&1; then\n"
	"\t\t\t\ti=$((i + 2))\t# --opt value\n"
	"\t\t\telse\n"
	"\t\t\t\ti=$((i + 1))\n"
	"\t\t\tfi\n"
	"\t\tdone\n"
	"\t\tif [ \"$i\" -lt \"$COMP_CWORD\" ]; then\n"
	"\t\t\t_tailor_reply @file \"$cur\"\n"
	"\t\t\treturn\n"
	"\t\telif [ \"$i\" -eq \"$COMP_CWORD\" ] && [[ $cur != -* || ${COMP_WORDS[i-1]} == -- ]]; then\n"
	"\t\t\t_tailor_reply @command \"$cur\"\n"
	"\t\t\treturn\n"
	"\t\tfi\n"
	"\tfi\n"
	"\t# bash splits \"--opt=value\" at '=': the option is the word before it.\n"
	"\tif [ \"$cur\" = = ]; then\n"
	"\t\tcur=\n"
	"\telif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -ge 3 ]; then\n"
	"\t\tprev=${COMP_WORDS[COMP_CWORD-2]}\n"
	"\tfi\n"
	"\tif [[ $prev == -* ]] && values=$(\"$tailor\" \"$cmd\" --list-values \"$prev\" 2>/dev/null); then\n"
	"\t\t_tailor_reply \"$values\" \"$cur\"\n"
	"\telif [[ $cur == -* ]]; then\n"
	"\t\t_tailor_reply \"$(\"$tailor\" \"$cmd\" --list-opts 2>/dev/null)\" \"$cur\"\n"
	"\telse\n"
	"\t\t_tailor_reply \"$operands\" \"$cur\"\n"
	"\tfi\n"
	"}\n"
	"complete -F _tailor tailor\n";

void usage_completion_bash(FILE *out)
{
	fputs(completion_bash, out);
}

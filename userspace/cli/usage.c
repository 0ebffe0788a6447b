// SPDX-License-Identifier: GPL-2.0-only
/*
 * Messages, --help text and option parsing, all from the commands' option
 * tables (usage.h), so that they cannot disagree; introspect.c gives the
 * same tables to the shell completion and the man pages.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "usage.h"

#define HELP_COLUMN	24
#define MAX_OPTIONS	64

void err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("tailor: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void cmd_msg(const struct cli_command *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "tailor: %s: ", cmd->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_msg(cmd, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

int cmd_fail(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_msg(cmd, fmt, ap);
	va_end(ap);
	return EXIT_FAIL;
}

const char *usage_choices_text(const char *const *names, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; names[i] && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", !i ? "" : names[i + 1] ? ", " : " or ",
			      names[i]);
	return buf;
}

void usage_print(const struct cli_command *cmd, FILE *out)
{
	const struct cli_option *o;

	fprintf(out, "%s\n\n%s\n", cmd->synopsis, cmd->description);
	for (o = cmd->options; o->name; o++) {
		char left[96];
		const char *help = o->help, *nl;
		int n;

		if (o->section)
			fprintf(out, "\n%s:\n", o->section);
		else if (o == cmd->options)
			fputc('\n', out);
		if (option_has_short(o))
			n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", o->id, o->name,
				     o->arg ? " " : "", o->arg ? o->arg : "");
		else
			n = snprintf(left, sizeof(left), "      --%s%s%s", o->name,
				     o->arg ? " " : "", o->arg ? o->arg : "");
		fputs(left, out);
		if (n >= HELP_COLUMN - 1) {
			fputc('\n', out);
			n = 0;
		}
		for (;;) {
			nl = strchr(help, '\n');
			fprintf(out, "%*s%.*s\n", HELP_COLUMN - n, "",
				nl ? (int)(nl - help) : (int)strlen(help), help);
			if (!nl)
				break;
			help = nl + 1;
			n = 0;
		}
	}
	if (cmd->epilogue)
		fprintf(out, "\n%s", cmd->epilogue);
}

/* getopt_long's view of the table, made again for each command. */
struct getopt_tables {
	const struct cli_command *cmd;
	char shorts[2 * MAX_OPTIONS + 4];
	struct option longs[MAX_OPTIONS + 1];
};

static void build_tables(struct getopt_tables *t, const struct cli_command *cmd)
{
	const struct cli_option *o;
	size_t s = 0;
	int n = 0;

	memset(t, 0, sizeof(*t));
	t->cmd = cmd;
	if (cmd->options_first)
		t->shorts[s++] = '+';
	t->shorts[s++] = ':';	/* a missing value is ':', not '?' */
	for (o = cmd->options; o->name && n < MAX_OPTIONS; o++, n++) {
		t->longs[n] = (struct option){ o->name,
			o->arg ? required_argument : no_argument, NULL, o->id };
		if (option_has_short(o)) {
			t->shorts[s++] = (char)o->id;
			if (o->arg)
				t->shorts[s++] = ':';
		}
	}
}

int usage_next(const struct cli_command *cmd, int argc, char **argv, const char **value)
{
	static struct getopt_tables t;
	static char **started;
	int c;

	if (started != argv || t.cmd != cmd) {
		build_tables(&t, cmd);
		started = argv;
		optind = 1;
		opterr = 0;
	}
	c = getopt_long(argc, argv, t.shorts, t.longs, NULL);
	*value = optarg;
	if (c == -1) {
		started = NULL;
		return OPT_END;
	}
	if (c == ':') {
		usage_error(cmd, "option '%s' needs a value; see 'tailor %s --help'",
			    argv[optind - 1], cmd->name);
		return OPT_ERROR;
	}
	if (c == '?') {
		if (optopt && optopt < OPT_LONG_ONLY)
			usage_error(cmd, "unknown option '-%c'; see 'tailor %s --help'",
				    optopt, cmd->name);
		else
			usage_error(cmd, "unknown option '%s'; see 'tailor %s --help'",
				    argv[optind - 1], cmd->name);
		return OPT_ERROR;
	}
	return c;
}

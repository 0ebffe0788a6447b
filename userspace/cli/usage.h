/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How the tailor command talks to its user: exit codes, error messages,
 * and each command's options as one table from which getopt's options,
 * the --help text and the shell completion are all made.
 */
#ifndef TAILOR_CLI_USAGE_H
#define TAILOR_CLI_USAGE_H

#include <stdbool.h>
#include <stdio.h>

/* Exit codes of every tailor command (record in launch mode returns the command's). */
enum tailor_exit {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* input unreadable, output unwritable, device refused */
	EXIT_USAGE = 2,		/* a bad option or value */
	EXIT_CUT = 3,		/* done, but the input was cut short */
};

/* Option ids above the characters: for options with a long name only. */
#define OPT_LONG_ONLY	256

struct cli_option {
	int id;			/* the short option's letter, or OPT_LONG_ONLY + n */
	const char *name;	/* long name, without the dashes */
	const char *arg;	/* the value's name in --help; NULL: takes none */
	const char *help;	/* lines separated by '\n' */
	/* Shell completion of the value: words separated by spaces, "@file"
	 * or "@command" (the rest of the line is a command); NULL: none. */
	const char *complete;
	/* Or the values from a table of the program's (formats, views). */
	const char *const *(*choices)(void);
	const char *section;	/* a heading this option starts in --help, or NULL */
};

static inline bool option_has_short(const struct cli_option *o)
{
	return o->id > 0 && o->id < OPT_LONG_ONLY;
}

struct cli_command {
	const char *name;
	const char *summary;	/* one line for 'tailor --help' */
	const char *synopsis;	/* "usage: ..." lines */
	const char *description;
	const struct cli_option *options;	/* ends with { 0 } */
	const char *epilogue;	/* after the options */
	int (*run)(const struct cli_command *cmd, int argc, char **argv);
	bool options_first;	/* the first operand ends the options (a command follows) */
	/* For completion: the operands' words, "@file" or "@command"; NULL: @file. */
	const char *operands;
};

extern const struct cli_command *const commands[];	/* NULL-terminated */

/* "tailor: " + message on stderr. */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "tailor: CMD: message"; returns EXIT_USAGE. */
int usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "tailor: CMD: message"; returns EXIT_FAIL. */
int cmd_fail(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "a, b or c": @names (NULL-terminated) for a message, in @buf. */
const char *usage_choices_text(const char *const *names, char *buf, size_t len);

/* The command's --help text. */
void usage_print(const struct cli_command *cmd, FILE *out);

#define OPT_END		(-1)	/* no more options */
#define OPT_ERROR	(-2)	/* a bad option, already reported */

/*
 * The next option of @argv as its id, with its value in *@value; OPT_END
 * (then optind is the first operand) or OPT_ERROR.  Starts over when
 * called with a new @argv.
 */
int usage_next(const struct cli_command *cmd, int argc, char **argv, const char **value);

/* introspect.c: a bash completion script that asks tailor (--list-opts ...). */
void usage_completion_bash(FILE *out);
/*
 * The hidden options of introspect.c: tailor --list-cmds and
 * --scdoc-commands; tailor CMD --list-opts, --list-values OPT,
 * --list-operands and --scdoc-options.  -1 if @argv is none of them, else the exit status.
 */
int introspect_global(int argc, char **argv);
int introspect_command(const struct cli_command *cmd, int argc, char **argv);

#endif /* TAILOR_CLI_USAGE_H */

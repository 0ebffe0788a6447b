/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading back a line of tailor-engine --times (written by main.c's
 * write_times()): "key=value" fields separated by single spaces, one line
 * per execution.  Two readers use it, --explain-analyze (the child's CPU
 * time and row counts) and --feedback-times (the levels a profiled run
 * compiled at), and fuzz_feedback reaches it through the second.
 */
#ifndef ENGINE_TIMES_H
#define ENGINE_TIMES_H

#include <stddef.h>

#define TIMES_VALUE_MAX	24	/* one value of a "1:V,2:V" list */

/*
 * The value of "@key=" in @line, up to the next space or newline, copied
 * into @buf of @size bytes; NULL if the line has no such field or the
 * value does not fit.
 */
const char *times_field(const char *line, const char *key, char *buf, size_t size);

/*
 * Split the list "1:V,2:V,...,N:V" of @text into @values: the numbers
 * count up from 1, there are at most @max, and no value is empty or as
 * long as TIMES_VALUE_MAX.  Returns N, or -1 when the list is malformed.
 */
int times_list(const char *text, char (*values)[TIMES_VALUE_MAX], int max);

/* @text whole as a decimal unsigned number at most @max: 0, or -1. */
int times_number(const char *text, unsigned long long max, unsigned long long *value);

#endif

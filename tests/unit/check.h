/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every unit test shares: TAP output, and checks that say what they
 * saw.  A failed check prints its expression, where it is, and both
 * operands, then lets the test go on; the test is "not ok" if any of its
 * checks failed.
 *
 *	static void test_sorted(void)
 *	{
 *		check_uint(n, ==, 3);
 *		check_str(name, "scan");
 *	}
 *	int main(void)
 *	{
 *		TEST(test_sorted(), "rows come sorted");
 *		return test_done();
 *	}
 *
 * test_done() prints the plan and a kselftest-style "# Totals:" line,
 * which scripts/check.sh adds up, and returns the exit status.
 */
#ifndef TAILOR_TESTS_CHECK_H
#define TAILOR_TESTS_CHECK_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_tests_run, check_tests_failed, check_failures_now;
static bool check_started;

static inline void check_failed(const char *file, int line, const char *what)
{
	check_failures_now++;
	printf("# check \"%s\" failed at %s:%d\n", what, file, line);
}

#define check(cond) do {						\
	if (!(cond))							\
		check_failed(__FILE__, __LINE__, #cond);		\
} while (0)

#define check_int(a, op, b) do {					\
	intmax_t check_a_ = (a), check_b_ = (b);			\
	if (!(check_a_ op check_b_)) {					\
		check_failed(__FILE__, __LINE__, #a " " #op " " #b);	\
		printf("#    left: %jd\n#   right: %jd\n", check_a_, check_b_); \
	}								\
} while (0)

#define check_uint(a, op, b) do {					\
	uintmax_t check_a_ = (a), check_b_ = (b);			\
	if (!(check_a_ op check_b_)) {					\
		check_failed(__FILE__, __LINE__, #a " " #op " " #b);	\
		printf("#    left: %ju\n#   right: %ju\n", check_a_, check_b_); \
	}								\
} while (0)

#define check_str(a, b) do {						\
	const char *check_a_ = (a), *check_b_ = (b);			\
	if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) {	\
		check_failed(__FILE__, __LINE__, #a " == " #b);		\
		printf("#    left: \"%s\"\n#   right: \"%s\"\n",		\
		       check_a_ ? check_a_ : "(null)",			\
		       check_b_ ? check_b_ : "(null)");			\
	}								\
} while (0)

/* @hay contains @needle: a message names what it should. */
#define check_contains(hay, needle) do {				\
	const char *check_a_ = (hay), *check_b_ = (needle);		\
	if (!check_a_ || !strstr(check_a_, check_b_)) {			\
		check_failed(__FILE__, __LINE__, #hay " contains " #needle); \
		printf("#    text: \"%s\"\n#    lacks: \"%s\"\n",		\
		       check_a_ ? check_a_ : "(null)", check_b_);	\
	}								\
} while (0)

/* Run @body (a call, or a block) as one test named by the format. */
#define TEST(body, ...) do {						\
	if (!check_started) {						\
		printf("TAP version 13\n");				\
		check_started = true;					\
	}								\
	check_failures_now = 0;						\
	body;								\
	check_tests_run++;						\
	check_tests_failed += check_failures_now != 0;			\
	printf("%s %d - ", check_failures_now ? "not ok" : "ok",	\
	       check_tests_run);					\
	printf(__VA_ARGS__);						\
	putchar('\n');							\
} while (0)

static inline int test_done(void)
{
	if (!check_started)
		printf("TAP version 13\n");
	printf("1..%d\n# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       check_tests_run, check_tests_run - check_tests_failed, check_tests_failed);
	return check_tests_failed ? 1 : 0;
}

#endif /* TAILOR_TESTS_CHECK_H */

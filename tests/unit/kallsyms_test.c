// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel symbols: what tailor record stores of a kallsyms file (the
 * functions its kernel samples fell in, kallsyms_subset()) names every
 * one of those addresses as the whole file does -- on a kallsyms text
 * with the shapes that matter (several symbols at one address, data
 * symbols between functions, an address below the first), and on this
 * host's /proc/kallsyms where its addresses can be read.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tailor/kallsyms.h"

static const char text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81001000 t alias_first\n"
	"ffffffff81001000 T alias_last\n"
	"ffffffff81001800 d some_data\n"
	"ffffffff81002000 W weak_fn\n"
	"ffffffff81003000 t last_fn [module]\n";

/* @addrs named alike by @full and by the subset of @full for them. */
static void same_names(const struct kallsyms *full, const uint64_t *addrs, size_t n)
{
	struct kallsyms *part;
	char err[256], *sub;
	size_t len, i;
	uint32_t fi, pi;

	sub = kallsyms_subset(full, addrs, n, &len);
	check(sub != NULL);
	if (!sub)
		return;
	part = kallsyms_parse(sub, len, "the subset", err, sizeof(err));
	check(part != NULL);
	if (!part) {
		printf("# %s\n", err);
		free(sub);
		return;
	}
	check_uint(kallsyms_text(part), ==, kallsyms_text(full));
	check_uint(kallsyms_count(part), <=, n + 1);
	for (i = 0; i < n; i++) {
		const char *want = kallsyms_name(full, addrs[i], &fi);
		const char *got = kallsyms_name(part, addrs[i], &pi);

		if (!want) {
			check(got == NULL);
			continue;
		}
		check(got != NULL);
		if (got && strcmp(got, want)) {
			printf("# 0x%" PRIx64 ": whole %s, subset %s\n", addrs[i], want, got);
			check(!strcmp(got, want));
		}
	}
	kallsyms_free(part);
	free(sub);
}

static void test_shapes(void)
{
	static const uint64_t addrs[] = {
		0xffffffff81000010, 0xffffffff81001004, 0xffffffff81001900,
		0xffffffff81002010, 0xffffffff81003fff, 0xffffffff80000000,
	};
	char err[256];
	struct kallsyms *k = kallsyms_parse(text, strlen(text), "t", err, sizeof(err));
	uint32_t i;

	check(k != NULL);
	if (!k)
		return;
	/* Of two at one address, the file's last; data between is no function. */
	check(!strcmp(kallsyms_name(k, 0xffffffff81001004, &i), "alias_last"));
	check(!strcmp(kallsyms_name(k, 0xffffffff81001900, &i), "alias_last"));
	same_names(k, addrs, sizeof(addrs) / sizeof(addrs[0]));
	/* A subset for one address keeps one function (and _text). */
	same_names(k, &addrs[3], 1);
	kallsyms_free(k);
}

static void test_this_host(void)
{
	char err[256];
	struct kallsyms *k = kallsyms_load("/proc/kallsyms", err, sizeof(err));
	uint64_t *addrs;
	uint64_t x = 88172645463325252ull;
	size_t i, n = 20000;

	if (!k) {
		printf("# /proc/kallsyms not compared: %s\n", err);
		return;
	}
	addrs = malloc(n * sizeof(*addrs));
	check(addrs != NULL);
	/* Addresses spread over the text: a pseudo-random symbol, a bit in. */
	for (i = 0; addrs && i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		addrs[i] = kallsyms_text(k) + x % (64u << 20);
	}
	if (addrs)
		same_names(k, addrs, n);
	printf("# /proc/kallsyms: %zu text symbols, %zu addresses compared\n", kallsyms_count(k), n);
	free(addrs);
	kallsyms_free(k);
}

int main(void)
{
	TEST(test_shapes(), "a kallsyms subset names its addresses as the whole file does");
	TEST(test_this_host(), "the same on this host's /proc/kallsyms, 20000 addresses");
	return test_done();
}

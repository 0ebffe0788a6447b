// SPDX-License-Identifier: GPL-2.0-only
/*
 * first_program - what a new libtailor user writes first, built against
 * the installed libtailor-dev (tests/install/install_test.sh): one
 * operator, "spin", whose work runs in a function declared shared, with
 * the operator's tag in the tag register around it, so that tailor report
 * can attribute its samples only by the tag the samples captured.
 *
 * Usage: first_program [-d DICT] [SECONDS]
 *   -d DICT   write the Tagging Dictionary to DICT first
 *   SECONDS   how long to spin, in CPU time of this thread (default 1)
 *
 * Build with the tag register reserved and the source's absolute path,
 * so that __FILE__ names the file as DWARF does:
 *   cc -g -O2 $(pkg-config --variable=tag_cflags libtailor) /abs/first_program.c \
 *      $(pkg-config --cflags --libs libtailor)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tailor/dictionary.h>
#include <tailor/tag.h>

enum { OP_SPIN = 1 };

/* The shared code: every line between the two markers is declared shared. */
enum { SHARED_FIRST = __LINE__ };
__attribute__((noinline)) void spin(uint64_t n)
{
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}
enum { SHARED_LAST = __LINE__ };

static int write_dictionary(const char *path)
{
	struct tailor_dict *d = tailor_dict_new();
	int op, line, ret;

	if (!d)
		return -1;
	op = tailor_dict_level(d, "operator");
	tailor_dict_component(d, op, OP_SPIN, "spin");
	for (line = SHARED_FIRST + 1; line < SHARED_LAST; line++)
		tailor_dict_shared_line(d, __FILE__, line);
	tailor_dict_tag_field(d, op, 0, 16);
	ret = tailor_dict_write(d, path);
	tailor_dict_free(d);
	return ret;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = 1, end;
	uint64_t saved, chunks = 0, held;

	if (argc >= 3 && !strcmp(argv[1], "-d")) {
		int ret = write_dictionary(argv[2]);

		if (ret) {
			fprintf(stderr, "first_program: cannot write %s: %s\n", argv[2],
				strerror(-ret));
			return 1;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: first_program [-d DICT] [SECONDS]\n");
		return 2;
	}
	if (argc == 2)
		seconds = atof(argv[1]);

	end = cpu_seconds() + seconds;
	saved = tailor_tag_set(OP_SPIN);
	do {
		spin(1u << 20);
		chunks++;
	} while (cpu_seconds() < end);
	held = tailor_tag_get();
	tailor_tag_restore(saved);

	printf("first_program: %llu chunks of 2^20 iterations, tag %llu held\n",
	       (unsigned long long)chunks, (unsigned long long)held);
	return held == OP_SPIN ? 0 : 1;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program as a libtailor user writes one, built against an installed
 * libtailor (make install, the libtailor-dev package): it writes a
 * Tagging Dictionary, runs a loop with a tag set and the tag word set, and
 * says what it did.  Built with the tag register reserved, as tag.h asks.
 *
 * Usage: libtailor_user DICT [SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <tailor/dictionary.h>
#include <tailor/tag.h>
#include <tailor/tag_word.h>

TAILOR_TAG_WORD_DEFINE;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct tailor_dict *d = tailor_dict_new();
	double seconds = argc > 2 ? atof(argv[2]) : 0.1, end;
	volatile unsigned long sink = 0;
	uint64_t old_tag, old_word;
	int query, op;

	if (argc < 2 || !d)
		return 2;
	query = tailor_dict_level(d, "query");
	op = tailor_dict_level(d, "operator");
	if (query < 0 || op < 0 || tailor_dict_component(d, query, 1, "q1") ||
	    tailor_dict_component(d, op, 7, "spin") || tailor_dict_tag_field(d, op, 0, 16) ||
	    tailor_dict_tag_word_field(d, query, 0, 16) || tailor_dict_write(d, argv[1])) {
		fprintf(stderr, "libtailor_user: the dictionary failed\n");
		return 1;
	}
	tailor_dict_free(d);

	old_word = tailor_tag_word_set(1);
	old_tag = tailor_tag_set(7);
	end = now() + seconds;
	while (now() < end)
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * i;
	if (tailor_tag_get() != 7)
		return 1;
	tailor_tag_restore(old_tag);
	tailor_tag_word_restore(old_word);
	printf("libtailor_user: dictionary %s, tag 7 held, tag word offset %lld\n", argv[1],
	       (long long)tailor_tag_word_offset());
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for tailor-engine --feedback's inputs: the JSON
 * profile (through the JSON reader) and the profiled run's --times.  The
 * first byte picks which; no input may crash them, every refusal names
 * the input, and what is accepted must hold what the model reads.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "feedback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	size_t i;
	int k;

	if (!size)
		return 0;
	if (data[0] & 1) {
		struct fb_profile p;

		if (fb_profile_parse(&p, (const char *)data + 1, size - 1, "fuzz", err,
				     sizeof(err))) {
			if (strncmp(err, "fuzz: ", 6))
				abort();
			return 0;
		}
		if (!(p.sample_ns >= 1) || !isfinite(p.sample_ns))
			abort();
		for (i = 0; i < p.nr_rows; i++)
			if (!p.rows[i].name || !(p.rows[i].samples >= 0))
				abort();
		fb_profile_free(&p);
	} else {
		struct fb_times t;
		FILE *f = size > 1 ? fmemopen((void *)(data + 1), size - 1, "r") : NULL;

		if (!f)
			return 0;
		if (fb_times_parse(&t, f, "fuzz", err, sizeof(err))) {
			fclose(f);
			if (strncmp(err, "fuzz: ", 6))
				abort();
			return 0;
		}
		fclose(f);
		for (k = 0; k < t.nr_queries; k++) {
			const struct fb_times_query *q = &t.queries[k];
			int j;

			if (q->executions < 1 || !(q->compile_ns > 0) || q->nr_pipelines < 1 ||
			    q->nr_pipelines > LOWER_MAX_PIPELINES)
				abort();
			for (j = 0; j < q->nr_pipelines; j++)
				if (q->opt[j] < 0 || q->opt[j] >= FB_NR_LEVELS)
					abort();
		}
		fb_times_free(&t);
	}
	return 0;
}

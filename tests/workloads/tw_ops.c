// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_ops [--dict FILE] [--times FILE] SCAN JOIN AGG: three "operators" of
 * known cost (a loop of SCAN, JOIN and AGG iterations each), the way a
 * compiled query runs them, with ground truth for the reports:
 *
 *   scan    its own loop                        (linked lines)
 *   join    calls ht_probe(), shared code       (declared shared, tagged 2)
 *   agg     calls rt_combine(), runtime code    (no links at all, tagged 3)
 *
 * --times writes the thread CPU time each operator took ("scan_ns=..."),
 * the truth a sampled profile estimates: under emulation (the test box)
 * equal iterations need not take equal time.
 *
 * --dict writes its Tagging Dictionary through libtailor: levels pipeline
 * and operator, every line of each operator's function linked, the plan
 * scan -> join -> agg, and the tag field of the operator level.
 * Build with -ffixed-r15 and the source's absolute path, so that
 * __FILE__ names the file as DWARF does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tailor/dictionary.h"
#include "tailor/tag.h"

enum { OP_SCAN = 1, OP_JOIN = 2, OP_AGG = 3 };

/* Every operator's loop is the same instruction pair, so time ~ iterations. */
#define SPIN(n) __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc")

enum { HT_PROBE_FIRST = __LINE__ };
__attribute__((noinline)) void ht_probe(uint64_t n)
{
	SPIN(n);	/* golden: probe */
}
enum { HT_PROBE_LAST = __LINE__ };

__attribute__((noinline)) void rt_combine(uint64_t n)
{
	SPIN(n);	/* golden: combine */
}

enum { SCAN_FIRST = __LINE__ };
__attribute__((noinline)) static void op_scan(uint64_t n)
{
	SPIN(n);	/* golden: scan */
}
enum { SCAN_LAST = __LINE__ };

enum { JOIN_FIRST = __LINE__ };
__attribute__((noinline)) static void op_join(uint64_t n)
{
	uint64_t saved = tailor_tag_set(OP_JOIN);

	ht_probe(n);
	tailor_tag_restore(saved);
}
enum { JOIN_LAST = __LINE__ };

enum { AGG_FIRST = __LINE__ };
__attribute__((noinline)) static void op_agg(uint64_t n)
{
	uint64_t saved = tailor_tag_set(OP_AGG);

	rt_combine(n);
	tailor_tag_restore(saved);
}
enum { AGG_LAST = __LINE__ };

static void link_lines(struct tailor_dict *d, int first, int last,
		       int pipeline_level, uint64_t pipeline,
		       int operator_level, uint64_t op)
{
	int line;

	tailor_track_push(d, pipeline_level, pipeline);
	tailor_track_push(d, operator_level, op);
	for (line = first + 1; line < last; line++)
		tailor_track_emit_line(d, __FILE__, line);
	tailor_track_pop(d, operator_level);
	tailor_track_pop(d, pipeline_level);
}

static int write_dictionary(const char *path)
{
	struct tailor_dict *d = tailor_dict_new();
	int pipeline, op, line, ret;

	if (!d)
		return -1;
	pipeline = tailor_dict_level(d, "pipeline");
	op = tailor_dict_level(d, "operator");
	tailor_dict_component(d, op, OP_SCAN, "scan");
	tailor_dict_component(d, op, OP_JOIN, "join");
	tailor_dict_component(d, op, OP_AGG, "agg");
	tailor_dict_parent(d, op, OP_SCAN, op, OP_JOIN);
	tailor_dict_parent(d, op, OP_JOIN, op, OP_AGG);
	tailor_dict_component(d, pipeline, 1, "pipeline 1");
	tailor_dict_component(d, pipeline, 2, "pipeline 2");
	tailor_dict_log(d, "operators->pipelines");
	tailor_dict_link(d, pipeline, 1, op, OP_SCAN);
	tailor_dict_link(d, pipeline, 1, op, OP_JOIN);
	tailor_dict_link(d, pipeline, 2, op, OP_AGG);
	tailor_dict_log(d, "pipelines->code");
	link_lines(d, SCAN_FIRST, SCAN_LAST, pipeline, 1, op, OP_SCAN);
	link_lines(d, JOIN_FIRST, JOIN_LAST, pipeline, 1, op, OP_JOIN);
	link_lines(d, AGG_FIRST, AGG_LAST, pipeline, 2, op, OP_AGG);
	for (line = HT_PROBE_FIRST + 1; line < HT_PROBE_LAST; line++)
		tailor_dict_shared_line(d, __FILE__, line);
	tailor_dict_tag_field(d, op, 0, 16);
	ret = tailor_dict_write(d, path);
	tailor_dict_free(d);
	return ret;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t scan, join, agg, t0, t1, t2, t3;
	const char *times = NULL;
	FILE *f;

	if (argc >= 3 && !strcmp(argv[1], "--dict")) {
		if (write_dictionary(argv[2])) {
			fprintf(stderr, "tw_ops: cannot write %s\n", argv[2]);
			return 1;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc >= 3 && !strcmp(argv[1], "--times")) {
		times = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: tw_ops [--dict FILE] [--times FILE] SCAN JOIN AGG\n");
		return 2;
	}
	scan = strtoull(argv[1], NULL, 0);
	join = strtoull(argv[2], NULL, 0);
	agg = strtoull(argv[3], NULL, 0);
	t0 = cpu_ns();
	if (scan)
		op_scan(scan);
	t1 = cpu_ns();
	if (join)
		op_join(join);
	t2 = cpu_ns();
	if (agg)
		op_agg(agg);
	t3 = cpu_ns();
	if (times) {
		f = fopen(times, "w");
		if (!f || fprintf(f, "scan_ns=%llu\njoin_ns=%llu\nagg_ns=%llu\n",
				  (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1),
				  (unsigned long long)(t3 - t2)) < 0 || fclose(f)) {
			fprintf(stderr, "tw_ops: cannot write %s\n", times);
			return 1;
		}
	}
	return 0;
}

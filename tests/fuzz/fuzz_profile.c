// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the profile readers tailor report uses: tailor
 * recordings and perf.data files, opened as sessions (userspace/lib/
 * session.c, format/).  No input may crash them; a profile that opens
 * must deliver exactly the samples it counts -- at open, or fewer where
 * delivery found a batch bad (format 3 checks a packed batch's stream
 * only then), cut short with a reason -- and in time order but for the
 * events it counts as out of order; a sample's call stack (perf record
 * -g), its user registers and stack bytes (--call-graph dwarf), and its
 * LBR calls (--call-graph lbr) lie within the file.  fuzz_export symbolizes, unwinds and interns the stacks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tailor/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct counter {
	struct tev_consumer events;
	uint64_t samples, backwards, last, entries_sum;
};

static int count_sample(struct tev_consumer *c, const struct tev_sample *s)
{
	struct counter *n = tev_container_of(c, struct counter, events);

	uint64_t e, sum = 0;
	uint32_t i;

	/* A call stack's every entry is in the file: read them all. */
	for (i = 0; i < s->nr_callchain; i++) {
		memcpy(&e, (const uint8_t *)s->callchain + 8ull * i, 8);
		sum += e;
	}
	/* So are --call-graph dwarf's user registers and stack bytes. */
	for (i = 0; s->user_regs && i < (uint32_t)__builtin_popcountll(s->user_regs_mask); i++) {
		memcpy(&e, (const uint8_t *)s->user_regs + 8ull * i, 8);
		sum += e;
	}
	for (i = 0; s->user_stack && i < s->user_stack_size; i++)
		sum += ((const uint8_t *)s->user_stack)[i];
	/* And the LBR's calls (--call-graph lbr), 24 bytes each. */
	for (i = 0; i < s->nr_lbr_calls; i++) {
		memcpy(&e, (const uint8_t *)s->lbr_calls + 24ull * i + 16, 8);
		sum += e;
	}
	if (!s->user_stack != !s->user_stack_size || (s->user_stack && !s->user_regs))
		abort();	/* a stack comes with its size and the registers that begin it */
	n->entries_sum += sum;
	n->samples++;
	if (s->time < n->last)
		n->backwards++;
	else
		n->last = s->time;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct session_options o = { .tag_reg = 23, .tsc_khz = 1000000 };
	struct counter n = { .events = { .sample = count_sample } };
	struct tev_consumer *consumers[] = { &n.events };
	struct session *s;
	char err[512];

	if (fd < 0) {
		fd = memfd_create("fuzz-profile", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	err[0] = '\0';
	s = session_open(path, &o, err, sizeof(err));
	if (s) {
		if (session_run(s, consumers, 1))
			abort();
		if (n.samples != session_info(s)->nr_samples ||
		    n.backwards > session_info(s)->out_of_order ||
		    (!session_info(s)->complete && !session_info(s)->problem[0]))
			abort();
		session_close(s);
	} else if (!err[0]) {
		abort();	/* every refusal says why */
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Choosing a collector (collector.h), and the clock its records are on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "collector.h"

/*
 * AUTO: tailor.ko where /dev/tailor exists (PEBS and the raw TSC, the
 * switches on the samples' clock), else BPF; when neither can be had,
 * one message says why for each.
 */
int collector_open(struct collector *c, enum collector_kind kind, bool quiet)
{
	char why[256] = "";

	if (kind == COLLECTOR_KMOD || (kind == COLLECTOR_AUTO && !access(TAILOR_DEVICE, F_OK)))
		return collector_kmod_open(c);
	if (!collector_bpf_open(c, why, sizeof(why))) {
		if (kind == COLLECTOR_AUTO && !quiet)
			fprintf(stderr, "tailor: no %s (tailor.ko is not loaded): recording with the BPF collector\n",
				TAILOR_DEVICE);
		return 0;
	}
	if (kind == COLLECTOR_BPF)
		err_msg("the BPF collector cannot run here: %s", why);
	else
		err_msg("nothing to record with: tailor.ko is not loaded (no %s; 'sudo modprobe tailor', or 'sudo insmod kmod/tailor.ko' after 'make'), and the BPF collector cannot run: %s",
			TAILOR_DEVICE, why);
	return -1;
}

uint64_t collector_now(const struct collector *c)
{
	struct timespec ts;

	if (!c->clock_monotonic)
		return rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int cpu_list(const char *path, bool *set, uint32_t nr)
{
	FILE *f = fopen(path, "r");
	char list[4096], *tok, *save;

	if (!f || !fgets(list, sizeof(list), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (tok = strtok_r(list, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		unsigned long lo, hi;
		char *end;

		lo = strtoul(tok, &end, 10);
		hi = *end == '-' ? strtoul(end + 1, &end, 10) : lo;
		if (*end || hi < lo)
			return -1;
		for (; lo <= hi && lo < nr; lo++)
			set[lo] = true;
	}
	return 0;
}

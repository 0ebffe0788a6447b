// SPDX-License-Identifier: GPL-2.0-only
/*
 * Event names to perf encodings: perf's generic names and raw rNNNN
 * encodings here, everything else (INST_RETIRED.PREC_DIST,
 * MEM_INST_RETIRED.ALL_LOADS, ...) through libpfm4, which knows each
 * CPU model's event tables.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include "cli.h"

static const struct {
	const char *name;
	uint64_t config;
} generic_events[] = {
	{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
	{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
	{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
	{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
};

static const char *const timer_names[] = { "cpu-clock", "timer", "task-clock" };

static int raw_event(const char *name, struct event_spec *ev)
{
	char *end;

	errno = 0;
	ev->config = strtoull(name + 1, &end, 16);
	if (errno || *end || end == name + 1) {
		err_msg("bad raw event '%s': expected r followed by hex digits, e.g. r01c0", name);
		return -1;
	}
	ev->type = TAILOR_EVENT_RAW;
	return 0;
}

/* libpfm4 writes PMU:EVENT:UMASK; perf users write EVENT.UMASK. */
static int pfm_event(const char *name, struct event_spec *ev)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char pfm_name[256];
	size_t i;
	int ret;

	ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		err_msg("libpfm4 cannot start (%s), so event '%s' cannot be encoded: give a raw encoding (-e rNNNN) or use '--source timer'",
			pfm_strerror(ret), name);
		return -1;
	}
	snprintf(pfm_name, sizeof(pfm_name), "%s", name);
	for (i = 0; pfm_name[i]; i++)
		if (pfm_name[i] == '.')
			pfm_name[i] = ':';

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(pfm_name, PFM_PLM0 | PFM_PLM3,
					PFM_OS_PERF_EVENT, &arg);
	if (ret != PFM_SUCCESS) {
		err_msg("event '%s' is not known on this CPU (libpfm4: %s): PEBS events need an Intel CPU that has them; use '--source timer' to sample with the software clock",
			name, pfm_strerror(ret));
		return -1;
	}
	/* Offcore and load-latency events need config1, which tailor.ko lacks. */
	if (attr.config1 || attr.config2) {
		err_msg("event '%s' needs extra encoding fields (config1/config2) that tailor cannot pass yet; choose another event",
			name);
		return -1;
	}
	if (attr.type != PERF_TYPE_RAW && attr.type != PERF_TYPE_HARDWARE) {
		err_msg("event '%s' is not a CPU event tailor can sample with PEBS (perf type %u)",
			name, attr.type);
		return -1;
	}
	ev->type = attr.type == PERF_TYPE_RAW ? TAILOR_EVENT_RAW :
						TAILOR_EVENT_HARDWARE;
	ev->config = attr.config;
	return 0;
}

int event_resolve(const char *name, struct event_spec *ev)
{
	size_t i;

	memset(ev, 0, sizeof(*ev));
	if (!name) {
		/* The module's default: PEBS cycles, or the software clock. */
		ev->name = "cycles";
		ev->type = TAILOR_EVENT_HARDWARE;
		ev->config = PERF_COUNT_HW_CPU_CYCLES;
		return 0;
	}
	ev->name = name;
	for (i = 0; i < sizeof(timer_names) / sizeof(timer_names[0]); i++) {
		if (!strcmp(name, timer_names[i])) {
			ev->timer = true;
			return 0;
		}
	}
	for (i = 0; i < sizeof(generic_events) / sizeof(generic_events[0]); i++) {
		if (!strcmp(name, generic_events[i].name)) {
			ev->type = TAILOR_EVENT_HARDWARE;
			ev->config = generic_events[i].config;
			return 0;
		}
	}
	if (name[0] == 'r' && name[1] && isxdigit((unsigned char)name[1]))
		return raw_event(name, ev);
	return pfm_event(name, ev);
}

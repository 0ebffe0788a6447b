// SPDX-License-Identifier: GPL-2.0-only
/* Durations for people (tailor/export.h). */
#include <inttypes.h>
#include <stdio.h>
#include "tailor/export.h"

const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 10000000000ull)
		snprintf(buf, len, "%.3fs", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.3fus", ns / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	return buf;
}

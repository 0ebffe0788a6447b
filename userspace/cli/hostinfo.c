// SPDX-License-Identifier: GPL-2.0-only
/* Facts about the host for a recording's META: who, what kernel, what CPU. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "cli.h"

static void cpuinfo_field(const char *field, char *out, size_t len)
{
	char line[512];
	size_t flen = strlen(field);
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, len, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *v;

		if (strncmp(line, field, flen) || !(v = strchr(line, ':')))
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = 0;
		snprintf(out, len, "%s", v);
		break;
	}
	if (f)
		fclose(f);
}

int hostinfo_meta(char *buf, size_t len)
{
	char vendor[128], model[256];
	struct utsname u;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	cpuinfo_field("vendor_id", vendor, sizeof(vendor));
	cpuinfo_field("model name", model, sizeof(model));
	return snprintf(buf, len,
			"host=%s\nkernel=%s %s\nmachine=%s\ncpu_vendor=%s\ncpu_model=%s\nnr_cpus=%ld\n",
			u.nodename, u.release, u.version, u.machine, vendor,
			model, sysconf(_SC_NPROCESSORS_ONLN));
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The collector's side of /dev/tailor: open, configure and stats, with
 * every failure turned into one sentence that says what to do.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "cli.h"

const char *source_name(uint32_t source)
{
	switch (source) {
	case TAILOR_SOURCE_AUTO:
		return "auto";
	case TAILOR_SOURCE_PEBS:
		return "pebs";
	case TAILOR_SOURCE_TIMER:
		return "timer";
	}
	return "unknown";
}

int device_open(void)
{
	int fd = open(TAILOR_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT) {
		if (access("/sys/module/tailor", F_OK))
			err_msg("the tailor kernel module is not loaded: load it with 'sudo insmod kmod/tailor.ko' (build it with 'make')");
		else
			err_msg("tailor.ko is loaded but %s is missing: is devtmpfs mounted on /dev?",
				TAILOR_DEVICE);
	} else if (errno == EACCES || errno == EPERM) {
		err_msg("no permission to open %s: run as root, or load tailor.ko with open_gid=<a group you are in>",
			TAILOR_DEVICE);
	} else {
		err_msg("cannot open %s: %s", TAILOR_DEVICE, strerror(errno));
	}
	return -1;
}

int device_info(int fd, struct tailor_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (!ioctl(fd, TAILOR_IOC_INFO, info))
		return 0;
	if (errno == EINVAL || errno == ENOTTY)
		err_msg("tailor.ko speaks another ABI than this tailor (%d): rebuild both with 'make'",
			TAILOR_ABI_VERSION);
	else
		err_msg("TAILOR_IOC_INFO failed: %s", strerror(errno));
	return -1;
}

int device_configure(int fd, struct tailor_config *cfg, const char *event)
{
	if (!ioctl(fd, TAILOR_IOC_CONFIGURE, cfg))
		return 0;
	switch (errno) {
	case EOPNOTSUPP:
		err_msg("event '%s' needs PEBS, which this CPU does not offer (see /sys/class/misc/tailor/pebs): use '--source timer' (or auto) to sample with the software clock",
			event);
		break;
	case EPERM:
		err_msg("not allowed: sampling all CPUs or kernel code needs CAP_PERFMON (run as root)");
		break;
	case EACCES:
		err_msg("not allowed to profile process %d: you may only profile processes you could ptrace",
			cfg->target_pid);
		break;
	case ESRCH:
		err_msg("no process %d", cfg->target_pid);
		break;
	case EINVAL:
		err_msg("tailor.ko refused the configuration (event '%s'): check the rate and registers (see 'tailor record --help')",
			event);
		break;
	default:
		err_msg("configuring the session failed: %s", strerror(errno));
	}
	return -1;
}

int device_stats(int fd, struct tailor_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, TAILOR_IOC_STATS, st) ? -1 : 0;
}

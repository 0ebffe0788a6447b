// SPDX-License-Identifier: GPL-2.0-only
/*
 * hold-perf-sched - keep the kernel's perf_sched_events static key on for
 * the life of the test box.
 *
 * Why: the key turns on with the first per-task perf counter and off
 * (after a second) with the last, and each turn live-patches a jump in
 * __schedule() with the int3 protocol of text_poke_bp().  QEMU's
 * multi-threaded TCG does not make that patching coherent across vCPUs:
 * a vCPU can still run the int3 after the kernel has finished patching
 * and stopped expecting it, and the box dies with "Oops: int3" at a
 * jump site in __schedule on both vCPUs at once (Debian's 6.12 under QEMU
 * 7.2: once in CI's record kselftest, and once in 160 recordings started
 * and SIGKILLed in a loop; never in 100 such with this holder).  The
 * tests create and drop per-task counters all the time, so without this
 * they hit it at random.
 * One counter held from boot to the end keeps the key from ever turning.
 *
 * The counter is a software dummy on this process: it counts nothing and
 * never samples.  Prints one line, then sleeps until killed.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(void)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	/* pid 0, cpu -1: a per-task counter, which is what the key counts. */
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		printf("hold-perf-sched: perf_event_open: %s; the key may turn\n",
		       strerror(errno));
		return 1;
	}
	printf("== perf_sched_events held on by pid %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * clock-floor -F HZ -- COMMAND [ARG...]
 *
 * Runs COMMAND, its threads and children under a perf cpu-clock counter
 * that takes a sample HZ times a second of each thread's CPU time, as
 * 'tailor record' and 'perf record -e cpu-clock' do, but with its ring's
 * output paused (PERF_EVENT_IOC_PAUSE_OUTPUT), so that every sample is
 * counted as lost and none is written or read.  What COMMAND loses under
 * it is what any profiler on the software clock pays per sample before
 * its own handler runs: the hrtimer interrupt and perf's overflow path.
 * bench/record-overhead.sh sets it beside tailor and perf; where it alone
 * costs more than a quarter of perf's overhead, no handler can bring a
 * profiler on this clock to a quarter of perf's.
 *
 * Prints to stderr floor_samples=N, the samples the clock took (counted
 * as lost: PERF_FORMAT_LOST, Linux 6.0 or later), and floor_cpu_ns=N, the
 * CPU time it counted, which at HZ should hold as many samples or a few
 * more (a host that stalls the vCPU makes the timer skip periods).  Exits
 * with COMMAND's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench-launch.h"

#define MAX_CPUS	64

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST	(1U << 4)
#endif

static void usage(void)
{
	fprintf(stderr, "usage: clock-floor -F HZ -- COMMAND [ARG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_type = PERF_SAMPLE_IP,
		.read_format = PERF_FORMAT_LOST,
		.disabled = 1,
		.enable_on_exec = 1,
		.inherit = 1,
	};
	struct { uint64_t value, lost; } counts;
	long page = sysconf(_SC_PAGESIZE), hz;
	int go, fd[MAX_CPUS], status, cpu, ncpu;
	unsigned long long samples = 0, cpu_ns = 0;
	char *end;
	pid_t pid;

	if (argc < 5 || strcmp(argv[1], "-F") || strcmp(argv[3], "--"))
		usage();
	errno = 0;
	hz = strtol(argv[2], &end, 10);
	if (errno || *end || hz < 1 || hz > 1000000)
		usage();
	attr.sample_freq = (uint64_t)hz;
	argv += 4;

	/* The child waits until its counters are open. */
	pid = bench_launch_waiting("clock-floor", argv, &go);
	if (pid < 0)
		return 1;

	/*
	 * One counter a CPU, as perf record's: an inherited counter of a task
	 * on any CPU cannot be mapped.  One data page each: pausing needs a
	 * ring, and nothing is ever written to it.
	 */
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (cpu = 0; cpu < ncpu; cpu++) {
		fd[cpu] = (int)syscall(SYS_perf_event_open, &attr, pid, cpu, -1,
				       PERF_FLAG_FD_CLOEXEC);
		if (fd[cpu] < 0 ||
		    mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd[cpu], 0) == MAP_FAILED ||
		    ioctl(fd[cpu], PERF_EVENT_IOC_PAUSE_OUTPUT, 1)) {
			fprintf(stderr, "clock-floor: a paused cpu-clock counter on CPU %d: %s\n",
				cpu, strerror(errno));
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return 1;
		}
	}
	if (bench_launch_go(go))
		return perror("clock-floor: pipe"), kill(pid, SIGKILL), 1;
	if (waitpid(pid, &status, 0) < 0)
		return perror("clock-floor: waitpid"), 1;
	/* A sample of an inherited counter counts as its parent's. */
	for (cpu = 0; cpu < ncpu; cpu++) {
		if (read(fd[cpu], &counts, sizeof(counts)) != (ssize_t)sizeof(counts))
			return perror("clock-floor: read"), 1;
		samples += counts.lost;
		cpu_ns += counts.value;
	}
	fprintf(stderr, "floor_samples=%llu\nfloor_cpu_ns=%llu\n", samples, cpu_ns);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

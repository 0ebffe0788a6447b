// SPDX-License-Identifier: GPL-2.0-only
/*
 * sideband-sink [--switches] [--wakeups] -- COMMAND [ARG...]
 *
 * Runs COMMAND with the side-band events 'tailor record' opens for it
 * (userspace/cli/sideband.c: an inherited dummy event per CPU with
 * mmap, comm and task records, context_switch with --switches, the
 * sched:sched_waking tracepoint into the same ring with --wakeups), but
 * with rings large enough to hold the whole run and nobody reading them
 * until COMMAND has exited.  What COMMAND loses under it is the kernel's
 * part of recording switches, without any reader's: bench/switch-overhead.sh
 * sets it beside 'tailor record'.
 *
 * The clock is perf's (the stock kernel's), not the raw TSC of the
 * patched ones.  Prints to stderr, as key=value lines, what the kernel
 * wrote into the rings: sink_bytes, sink_records, sink_switches (SWITCH
 * records), sink_wakeups (tracepoint samples), and sink_full (yes: a ring
 * filled, records were dropped and the run cost the kernel less than a
 * recording's).  Exits with COMMAND's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
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
#define RING_PAGES	4096	/* 16 MiB a CPU: 2 s of 40k records/s is 4 */

static int event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int waking_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/sched/sched_waking/id",
		"/sys/kernel/debug/tracing/events/sched/sched_waking/id",
	};
	int id = -1;
	size_t i;

	for (i = 0; i < 2 && id < 0; i++) {
		FILE *f = fopen(paths[i], "re");

		if (!f)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

static void usage(void)
{
	fprintf(stderr, "usage: sideband-sink [--switches] [--wakeups] -- COMMAND [ARG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool switches = false, wakeups = false;
	int go, ring_fd[MAX_CPUS], status, i, ncpu, wid = -1;
	struct perf_event_mmap_page *meta[MAX_CPUS];
	uint64_t bytes = 0, records = 0, switch_records = 0, wakeup_records = 0;
	bool full = false;
	long page = sysconf(_SC_PAGESIZE);
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--switches"))
			switches = true;
		else if (!strcmp(argv[i], "--wakeups"))
			wakeups = true;
		else
			usage();
	}
	if (i + 1 >= argc)
		usage();
	argv += i + 1;
	if (wakeups && (wid = waking_id()) < 0) {
		fprintf(stderr, "sideband-sink: no sched:sched_waking in tracefs\n");
		return 1;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;

	/* The child waits until its events are open. */
	pid = bench_launch_waiting("sideband-sink", argv, &go);
	if (pid < 0)
		return 1;

	for (i = 0; i < ncpu; i++) {
		struct perf_event_attr dummy = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(dummy),
			.config = PERF_COUNT_SW_DUMMY,
			.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
			.sample_id_all = 1,
			.mmap = 1, .mmap2 = 1, .comm = 1, .comm_exec = 1, .task = 1,
			.context_switch = switches,
			.inherit = 1,
			.exclude_kernel = 1,
			.exclude_hv = 1,
		};
		struct perf_event_attr waking = {
			.type = PERF_TYPE_TRACEPOINT,
			.size = sizeof(waking),
			.config = (uint64_t)wid,
			.sample_period = 1,
			.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW,
			.sample_id_all = 1,
			.inherit = 1,
		};
		void *m;

		ring_fd[i] = event_open(&dummy, pid, i);
		if (ring_fd[i] < 0)
			goto fail;
		m = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ring_fd[i], 0);
		if (m == MAP_FAILED)
			goto fail;
		meta[i] = m;
		if (wakeups) {
			int fd = event_open(&waking, pid, i);

			if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd[i]))
				goto fail;
		}
	}
	if (bench_launch_go(go))
		goto fail;
	if (waitpid(pid, &status, 0) < 0)
		return perror("sideband-sink: waitpid"), 1;

	for (i = 0; i < ncpu; i++) {
		uint8_t *data = (uint8_t *)meta[i] + page;
		uint64_t head = __atomic_load_n(&meta[i]->data_head, __ATOMIC_ACQUIRE), off;
		struct perf_event_header *h;

		bytes += head;
		/* Nobody read: the ring never wrapped, and stops when full. */
		if (head + 4096 > (uint64_t)RING_PAGES * page)
			full = true;
		for (off = 0; off + sizeof(*h) <= head; off += h->size) {
			h = (void *)(data + off);
			if (!h->size)
				break;
			records++;
			if (h->type == PERF_RECORD_SWITCH)
				switch_records++;
			else if (h->type == PERF_RECORD_SAMPLE)
				wakeup_records++;
		}
	}
	fprintf(stderr, "sink_bytes=%llu\nsink_records=%llu\nsink_switches=%llu\n"
		"sink_wakeups=%llu\nsink_full=%s\n",
		(unsigned long long)bytes, (unsigned long long)records,
		(unsigned long long)switch_records, (unsigned long long)wakeup_records,
		full ? "yes (figures undercount)" : "no");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

fail:
	fprintf(stderr, "sideband-sink: perf_event_open on CPU %d: %s\n", i, strerror(errno));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 1;
}

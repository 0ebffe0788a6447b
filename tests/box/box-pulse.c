// SPDX-License-Identifier: GPL-2.0-only
/*
 * box-pulse CPU LOG - the test box's measure of its own progress on one CPU.
 *
 * Pinned to CPU, at SCHED_FIFO priority 1 (above every test, which runs
 * at SCHED_OTHER), it wakes every 100 ms on an absolute deadline and runs
 * a fixed loop of about a millisecond, and appends a line per pulse to
 * LOG:
 *
 *     MONOTONIC_NS LOOP_NS LATE_NS
 *
 * LOOP_NS is the loop's wall time and LATE_NS how long after its deadline
 * it woke.  Being real-time, neither waits for the tests' own work: what
 * slows them is what a CPU does that no task can preempt -- interrupts (a
 * timer re-armed every nanosecond, NMIs), softirqs, a long loop in the
 * kernel under a spinlock or with preemption off -- and the host that
 * runs the box.  run-in-box.sh sums the lines of each test and judges them
 * against the lines before the first test (why and how: there).
 *
 * Runs until killed.  Exit status: 1 on a setup error, 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PERIOD_NS	100000000ull
#define LOOP_TARGET_NS	1000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t spin(unsigned long iterations)
{
	uint64_t t0 = now_ns();
	unsigned long i;

	for (i = 0; i < iterations; i++)
		__asm__ volatile("" : : "r"(i) : "memory");
	return now_ns() - t0;
}

/* The fastest of three: interrupts and the host only add time. */
static uint64_t spin_best(unsigned long iterations)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t t = spin(iterations);

		if (t < best)
			best = t;
	}
	return best;
}

/*
 * Iterations for LOOP_TARGET_NS: doubled until the loop is that long.
 * The first runs also have QEMU translate the loop's code, which TCG
 * does once: without the warm-up one CPU's loop came out 6 times shorter.
 */
static unsigned long calibrate(void)
{
	unsigned long n = 1000;

	spin_best(n);
	while (spin_best(n) < LOOP_TARGET_NS && n < (1ul << 40))
		n *= 2;
	return n;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec next;
	unsigned long iterations;
	cpu_set_t set;
	uint64_t deadline;
	char *end;
	FILE *log;
	long cpu;

	if (argc != 3) {
		fprintf(stderr, "usage: box-pulse CPU LOG\n");
		return 2;
	}
	errno = 0;
	cpu = strtol(argv[1], &end, 10);
	if (errno || *end || cpu < 0 || cpu >= CPU_SETSIZE) {
		fprintf(stderr, "box-pulse: '%s' is not a CPU number\n", argv[1]);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "box-pulse: cannot run on CPU %ld: %s\n", cpu, strerror(errno));
		return 1;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "box-pulse: cannot become SCHED_FIFO: %s\n", strerror(errno));
		return 1;
	}
	log = fopen(argv[2], "a");
	if (!log) {
		fprintf(stderr, "box-pulse: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	setvbuf(log, NULL, _IOLBF, 0);
	iterations = calibrate();

	deadline = now_ns();
	for (;;) {
		uint64_t woke, loop;

		deadline += PERIOD_NS;
		next.tv_sec = (time_t)(deadline / 1000000000ull);
		next.tv_nsec = (long)(deadline % 1000000000ull);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		woke = now_ns();
		/*
		 * Taken offline and back (tailor_mmap_test's hotplug test),
		 * the CPU lost us: come back to it when it is up again.
		 */
		if (sched_getcpu() != cpu)
			sched_setaffinity(0, sizeof(set), &set);
		loop = spin(iterations);
		fprintf(log, "%llu %llu %llu\n", (unsigned long long)woke,
			(unsigned long long)loop, (unsigned long long)(woke - deadline));
		/* Behind by more than a period: start again from now. */
		if (now_ns() > deadline + PERIOD_NS)
			deadline = now_ns();
	}
}

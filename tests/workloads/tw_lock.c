// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_lock [-t THREADS] [-r ROUNDS] [-p PARALLEL_US] [-s SERIAL_US]: a
 * workload whose parallelism is known, for the CMetric (GAPP) tests.
 *
 * THREADS threads (default 2; thread 0 is the main thread) run ROUNDS
 * rounds (default 100).  In each round:
 *
 *   1. every thread spins PARALLEL_US (default 5000) of its own CPU time
 *      (CLOCK_THREAD_CPUTIME_ID) in parallel_work();
 *   2. all meet at a barrier; thread 0 takes the one global mutex; all
 *      meet at a second barrier; thread 0 spins SERIAL_US (default 8000)
 *      of CPU time in serial_work() holding the mutex, while the others
 *      block in pthread_mutex_lock() on it (a normal mutex: glibc sleeps
 *      in the futex, it does not spin);
 *   3. thread 0 unlocks; each other thread takes the mutex and releases
 *      it at once, and goes on to the next round.
 *
 * With the defaults a run takes about 1.3 s on 2 CPUs.
 *
 * Expected CMetric, with T threads on at least T CPUs, P = PARALLEL_US,
 * S = SERIAL_US, R = ROUNDS.  A thread is active while it is runnable;
 * an interval dt counts dt / n for each running thread, n = the active
 * threads.  Per round:
 *   - the parallel phase lasts P of wall time with n = T: each thread
 *     gets P / T;
 *   - the serial phase lasts S with n = 1 (the others are switched out
 *     blocked on the mutex): thread 0 gets S.
 * So
 *   thread 0:        CM ~= R * (P / T + S)
 *   every other one: CM ~= R * P / T
 *   total:           CM ~= R * (P + S)  (~= the wall time)
 *   serial_work's share of the total   ~= S / (P + S)
 *   parallel_work's share of the total ~= P / (P + S)
 * With the defaults and T = 2: thread 0 1.05 s, thread 1 0.25 s,
 * serial_work 61.5 % -- though parallel_work has more samples (2P per
 * round against S), which is the point: only the weighting puts
 * serial_work first.
 *
 * Real runs differ a little.  The barriers, the mutex hand-over and the
 * wakeups (a woken thread counts as active only from its switch in when
 * the profiler sees no wakeup records) take some time at lower
 * parallelism; when one thread reaches a barrier late (woken late,
 * preempted, or its spin overshooting more: each spin passes its target
 * by up to one chunk of the loop), the other waits blocked and the late
 * one runs alone, at n = 1, and gains.  A thread preempted by another
 * process (the profiler itself, on a small machine) stays active without
 * running: the wall time, and with it the total, grows, and if that
 * thread was on its way to block on the mutex, serial_work runs at
 * n = 2 meanwhile.  Measured on 2 CPUs (tests/parallel/parallel_test.sh
 * has the figures): thread 0 1-4 % above, thread 1 2-7 % above,
 * serial_work within 1 % idle and up to 5 % below loaded.  The printed
 * CPU times of the two functions (measured, not requested) are the
 * better base for expectations.
 *
 * Prints at the end, as key=value lines on stdout:
 *   pid, threads, rounds, parallel_us, serial_us, wall_ns (from the
 *   first round's start to the last one's end), and for each thread i
 *   thread<i>_tid, thread<i>_cpu_ns (its whole CPU time),
 *   thread<i>_parallel_ns and thread<i>_serial_ns (CPU time measured in
 *   parallel_work() and serial_work()); and, from /proc/stat over the
 *   rounds, all CPUs', busy_ticks (user, nice, system, irq, softirq and
 *   steal) and steal_ticks.
 *
 * Steal matters on a virtual machine whose host is busy: while the
 * hypervisor runs something else, the guest's task stays switched in, so
 * its running time by the context switches grows, but the guest kernel
 * leaves the stolen time out of the task's CPU time (paravirt steal
 * accounting, update_rq_clock_task()).  Every expectation above in CPU
 * time is then short by the share stolen: a test divides it by
 * 1 - steal_ticks / busy_ticks.
 *
 * Build with -g: the two work functions are noinline, so that a profile
 * shows them as functions of their own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
/* Loop iterations between two looks at the clock, a system call: ~0.1 ms. */
#define CHUNK 200000

struct worker {
	pthread_t thread;
	int index;
	long tid;
	uint64_t cpu_ns, parallel_ns, serial_ns;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start_barrier, parallel_barrier, serial_barrier;
static struct worker workers[MAX_THREADS];
static int nr_threads = 2;
static long rounds = 100, parallel_us = 5000, serial_us = 8000;
static volatile uint64_t sink, serial_sink;

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Spins @us of the thread's CPU time; returns the CPU time it took. */
__attribute__((noinline)) static uint64_t parallel_work(long us)
{
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID), now, x = sink;
	long i;

	do {
		for (i = 0; i < CHUNK; i++)
			__asm__ volatile("" : "+r"(x));
		now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (now - start < (uint64_t)us * 1000);
	sink = x;
	return now - start;
}

/*
 * The same, under the lock: a function of its own for the profile (its
 * own sink keeps the compiler from folding the two into one).
 */
__attribute__((noinline)) static uint64_t serial_work(long us)
{
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID), now, x = serial_sink;
	long i;

	do {
		for (i = 0; i < CHUNK; i++)
			__asm__ volatile("" : "+r"(x));
		now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (now - start < (uint64_t)us * 1000);
	serial_sink = x;
	return now - start;
}

/*
 * All CPUs' busy and stolen time so far, in clock ticks (the "cpu" line
 * of /proc/stat: user nice system idle iowait irq softirq steal ...);
 * 0 and 0 if it cannot be read.
 */
static void cpu_ticks(unsigned long long *busy, unsigned long long *steal)
{
	unsigned long long user, nice, system, idle, iowait, irq, softirq;
	FILE *f = fopen("/proc/stat", "r");

	*busy = *steal = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system,
		   &idle, &iowait, &irq, &softirq, steal) == 8)
		*busy = user + nice + system + irq + softirq + *steal;
	else
		*steal = 0;
	fclose(f);
}

static void barrier(pthread_barrier_t *b)
{
	int err = pthread_barrier_wait(b);

	if (err && err != PTHREAD_BARRIER_SERIAL_THREAD) {
		fprintf(stderr, "tw_lock: pthread_barrier_wait: %s\n", strerror(err));
		exit(1);
	}
}

/* The rounds of worker @w. */
static void run(struct worker *w)
{
	long r;

	for (r = 0; r < rounds; r++) {
		w->parallel_ns += parallel_work(parallel_us);
		/*
		 * Everyone is done with the last round's lock: thread 0 may
		 * take it (without this a thread late to the lock would find
		 * thread 0 holding it for the next round, at the barrier).
		 */
		barrier(&parallel_barrier);
		if (w->index == 0) {
			pthread_mutex_lock(&lock);
			barrier(&serial_barrier);
			w->serial_ns += serial_work(serial_us);
			pthread_mutex_unlock(&lock);
		} else {
			/* Thread 0 holds the lock once we are past the barrier. */
			barrier(&serial_barrier);
			pthread_mutex_lock(&lock);
			pthread_mutex_unlock(&lock);
		}
	}
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;

	w->tid = syscall(SYS_gettid);
	barrier(&start_barrier);
	run(w);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: tw_lock [-t THREADS] [-r ROUNDS] [-p PARALLEL_US] [-s SERIAL_US]\n");
	exit(2);
}

static long number(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long busy0, steal0, busy1, steal1;
	uint64_t begin, end;
	int c, i, err;

	while ((c = getopt(argc, argv, "t:r:p:s:")) != -1) {
		switch (c) {
		case 't':
			nr_threads = number(optarg, 1, MAX_THREADS);
			break;
		case 'r':
			rounds = number(optarg, 0, 1000000000);
			break;
		case 'p':
			parallel_us = number(optarg, 0, 1000000000);
			break;
		case 's':
			serial_us = number(optarg, 0, 1000000000);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (pthread_barrier_init(&start_barrier, NULL, nr_threads) ||
	    pthread_barrier_init(&parallel_barrier, NULL, nr_threads) ||
	    pthread_barrier_init(&serial_barrier, NULL, nr_threads)) {
		fprintf(stderr, "tw_lock: pthread_barrier_init failed\n");
		return 1;
	}
	for (i = 0; i < nr_threads; i++)
		workers[i].index = i;
	for (i = 1; i < nr_threads; i++) {
		err = pthread_create(&workers[i].thread, NULL, thread_main, &workers[i]);
		if (err) {
			fprintf(stderr, "tw_lock: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	/* Thread 0, the main thread, times the rounds. */
	workers[0].tid = syscall(SYS_gettid);
	barrier(&start_barrier);
	cpu_ticks(&busy0, &steal0);
	begin = clock_ns(CLOCK_MONOTONIC);
	run(&workers[0]);
	end = clock_ns(CLOCK_MONOTONIC);
	for (i = 1; i < nr_threads; i++)
		pthread_join(workers[i].thread, NULL);
	cpu_ticks(&busy1, &steal1);
	printf("pid=%ld\nthreads=%d\nrounds=%ld\nparallel_us=%ld\nserial_us=%ld\nwall_ns=%llu\n",
	       (long)getpid(), nr_threads, rounds, parallel_us, serial_us,
	       (unsigned long long)(end - begin));
	for (i = 0; i < nr_threads; i++)
		printf("thread%d_tid=%ld\nthread%d_cpu_ns=%llu\n"
		       "thread%d_parallel_ns=%llu\nthread%d_serial_ns=%llu\n",
		       i, workers[i].tid, i, (unsigned long long)workers[i].cpu_ns,
		       i, (unsigned long long)workers[i].parallel_ns,
		       i, (unsigned long long)workers[i].serial_ns);
	if (busy1 > busy0 && steal1 >= steal0)
		printf("busy_ticks=%llu\nsteal_ticks=%llu\n", busy1 - busy0, steal1 - steal0);
	return 0;
}

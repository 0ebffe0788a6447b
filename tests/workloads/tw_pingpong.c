// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_pingpong [-n ROUNDS] [-c CPU] [-w WORK_NS]: as many context switches
 * a second as the machine can make, for what recording them costs
 * (bench/switch-overhead.sh).
 *
 * Two threads, both pinned to CPU (default 0), hand a byte back and
 * forth over two pipes ROUNDS times (default 20000).  With one CPU
 * between them each hand-over is a switch, about 2 a round: the writer
 * blocks in its next read(), or the woken reader preempts it first.
 * WORK_NS (default 0) of CPU time each thread spins between hand-overs
 * lowers the rate.
 *
 * Prints, as key=value lines: rounds, wall_ns, and the switches the
 * kernel counted for the two threads (getrusage RUSAGE_THREAD):
 * voluntary (blocked), involuntary (preempted), switches (their sum) and
 * switches_per_s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

struct side {
	int in, out;		/* read from in, write to out */
	long rounds;
	uint64_t work_ns;
	int cpu;
	long voluntary, involuntary;	/* switches the kernel counted */
	int error;
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* @first writes before it reads; the other answers. */
static void play(struct side *s, int first)
{
	struct rusage ru;
	char b = 'x';
	long i;

	s->error = pin(s->cpu);
	for (i = 0; !s->error && i < s->rounds; i++) {
		if (first && write(s->out, &b, 1) != 1)
			s->error = errno ? errno : EIO;
		else if (read(s->in, &b, 1) != 1)
			s->error = errno ? errno : EIO;
		else if (!first && write(s->out, &b, 1) != 1)
			s->error = errno ? errno : EIO;
		spin(s->work_ns);
	}
	/* The other side, if it still waits, reads end of file and stops. */
	if (s->error)
		close(s->out);
	if (!getrusage(RUSAGE_THREAD, &ru)) {
		s->voluntary = ru.ru_nvcsw;
		s->involuntary = ru.ru_nivcsw;
	}
}

static void *answer(void *arg)
{
	play(arg, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	struct side serve = { .rounds = 20000 }, reply;
	int ping[2], pong[2], opt;
	long voluntary, involuntary;
	uint64_t t0, t1;
	pthread_t other;

	while ((opt = getopt(argc, argv, "n:c:w:")) != -1) {
		switch (opt) {
		case 'n': serve.rounds = atol(optarg); break;
		case 'c': serve.cpu = atoi(optarg); break;
		case 'w': serve.work_ns = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: tw_pingpong [-n ROUNDS] [-c CPU] [-w WORK_NS]\n");
			return 2;
		}
	}
	if (serve.rounds <= 0 || serve.cpu < 0 || pipe(ping) || pipe(pong)) {
		fprintf(stderr, "tw_pingpong: need ROUNDS > 0, CPU >= 0 and two pipes\n");
		return 2;
	}
	reply = serve;
	serve.in = pong[0], serve.out = ping[1];
	reply.in = ping[0], reply.out = pong[1];
	t0 = now_ns(CLOCK_MONOTONIC);
	if (pthread_create(&other, NULL, answer, &reply)) {
		fprintf(stderr, "tw_pingpong: cannot start the second thread\n");
		return 1;
	}
	play(&serve, 1);
	pthread_join(other, NULL);
	t1 = now_ns(CLOCK_MONOTONIC);
	if (serve.error || reply.error) {
		fprintf(stderr, "tw_pingpong: %s\n", strerror(serve.error ? serve.error : reply.error));
		return 1;
	}
	voluntary = serve.voluntary + reply.voluntary;
	involuntary = serve.involuntary + reply.involuntary;
	printf("rounds=%ld\nwall_ns=%llu\nvoluntary=%ld\ninvoluntary=%ld\nswitches=%ld\n"
	       "switches_per_s=%.0f\n", serve.rounds, (unsigned long long)(t1 - t0), voluntary,
	       involuntary, voluntary + involuntary,
	       1e9 * (double)(voluntary + involuntary) / (double)(t1 - t0));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * r15_noise VALUE SECONDS: another program that keeps VALUE in r15 (as
 * many a program keeps its own data there) and spins for SECONDS of CPU
 * time, printing its pid.  Built with -ffixed-r15, so that the compiler
 * leaves the value alone.  A tag register read from it names whatever
 * component VALUE happens to be: tailor must not believe it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long value, sum = 0, i;
	double seconds;

	if (argc != 3) {
		fprintf(stderr, "usage: r15_noise VALUE SECONDS\n");
		return 2;
	}
	value = strtoul(argv[1], NULL, 0);
	seconds = atof(argv[2]);
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	__asm__ volatile("mov %0, %%r15" : : "r"(value) : "r15");
	while (cpu_seconds() < seconds)
		for (i = 0; i < 1000000; i++)
			sum += i * i;
	return (int)(sum & 1);
}

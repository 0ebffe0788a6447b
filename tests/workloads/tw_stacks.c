// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_stacks: call stacks of known shape, for tailor record --call-graph fp.
 * main -> outer -> middle -> leaf_spin spins in user code; main ->
 * write_loop writes to /dev/null, so that most of its time is the
 * kernel's, under a system call.  Built -O0 with frame pointers: every
 * function sets up its frame, so each sample's stack is the whole chain.
 *
 * usage: tw_stacks SPINS WRITES
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf_spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) static void middle(unsigned long n)
{
	leaf_spin(n);
	sink++;
}

__attribute__((noinline)) static void outer(unsigned long n)
{
	middle(n);
	sink++;
}

__attribute__((noinline)) static void write_loop(unsigned long n)
{
	static char buf[4096];
	int fd = open("/dev/null", O_WRONLY);
	unsigned long i;

	if (fd < 0) {
		perror("tw_stacks: /dev/null");
		exit(1);
	}
	for (i = 0; i < n; i++)
		if (write(fd, buf, sizeof(buf)) < 0) {
			perror("tw_stacks: write");
			exit(1);
		}
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: tw_stacks SPINS WRITES\n");
		return 2;
	}
	outer(strtoul(argv[1], NULL, 0));
	write_loop(strtoul(argv[2], NULL, 0));
	return 0;
}

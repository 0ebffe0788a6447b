// SPDX-License-Identifier: GPL-2.0-only
/*
 * box-singlestep on|off - have the test box's QEMU translate one guest
 * instruction per block (on), or whole blocks again (off), and return once
 * it does.
 *
 * Why: TCG takes an interrupt only between translation blocks, and a block
 * runs to its branch, up to 512 instructions.  A timer sample's IP is then
 * the start of the block after the one that was running, and which code it
 * is charged to depends on where the compiler's layout ends blocks: for
 * the same query, gcc's and clang's code had 8 to 13 points of the
 * samples moved between two operators (tests/engine/llvm_box_test.sh).
 * With one instruction per block the interrupt comes after the instruction
 * it interrupted, as on hardware; the guest runs about 30 times slower.
 *
 * How: this prints TAILOR-BOX-SINGLESTEP=on (or =off) on the console;
 * boot.sh, which reads the console, sends QEMU's monitor "singlestep on"
 * (or off).  The guest cannot ask QEMU which mode it is in, so this times
 * a fixed loop before asking and then until the loop's time has moved by
 * SLOWER times (measured, 2026-11-24: 41 times), and gives up after
 * a minute (KVM, or a QEMU without the monitor boot.sh gives it).
 *
 * Exit status: 0 done, 1 not granted, 2 usage error.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOOP_ITERATIONS	200000
#define SLOWER		8	/* the factor that means the mode changed */
#define GIVE_UP_NS	60000000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The fastest of three runs of a fixed loop: interrupts only add time. */
static uint64_t loop_ns(void)
{
	uint64_t best = UINT64_MAX;
	int run;

	for (run = 0; run < 3; run++) {
		uint64_t t0 = now_ns(), t;
		unsigned long i;

		for (i = 0; i < LOOP_ITERATIONS; i++)
			__asm__ volatile("" : : "r"(i) : "memory");
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

/* The marker for boot.sh, on the console whatever stdout is. */
static int ask(const char *mode)
{
	char line[64];
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC), len;
	bool sent;

	if (fd < 0) {
		perror("box-singlestep: /dev/console");
		return -1;
	}
	/* Its own line, in case the console's cursor is mid-line. */
	len = snprintf(line, sizeof(line), "\nTAILOR-BOX-SINGLESTEP=%s\n", mode);
	sent = write(fd, line, len) == len;
	close(fd);
	if (!sent)
		perror("box-singlestep: writing to /dev/console");
	return sent ? 0 : -1;
}

int main(int argc, char **argv)
{
	uint64_t before, now = 0, start;
	bool on;

	if (argc != 2 || (strcmp(argv[1], "on") && strcmp(argv[1], "off"))) {
		fprintf(stderr, "usage: box-singlestep on|off\n");
		return 2;
	}
	on = !strcmp(argv[1], "on");
	before = loop_ns();
	if (ask(argv[1]))
		return 1;
	start = now_ns();
	while (now_ns() - start < GIVE_UP_NS) {
		now = loop_ns();
		if (on ? now > SLOWER * before : now * SLOWER < before) {
			printf("box-singlestep: %s (a loop took %.2f ms, %.2f ms before)\n",
			       argv[1], now / 1e6, before / 1e6);
			return 0;
		}
		usleep(10000);
	}
	fprintf(stderr,
		"box-singlestep: QEMU did not turn single-stepping %s in a minute (a loop took %.2f ms, %.2f ms before): not TCG, or not booted by tests/box/boot.sh\n",
		argv[1], now / 1e6, before / 1e6);
	return 1;
}

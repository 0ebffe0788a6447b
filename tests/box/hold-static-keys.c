// SPDX-License-Identifier: GPL-2.0-only
/*
 * hold-static-keys - keep on, for the life of the test box, the kernel's
 * static keys that recording turns: perf_sched_events (a jump in
 * __schedule()) and the sched_waking and sched_switch tracepoints' (jumps
 * and static calls in try_to_wake_up() and __schedule(), which tailor.ko's
 * scheduler probes would otherwise patch at every recording's start and
 * end).
 *
 * Why: each turn of a key live-patches its jump sites with the int3
 * protocol of text_poke_bp().  QEMU's multi-threaded TCG (7.2) does not
 * make that patching coherent across vCPUs: a vCPU can go on running a
 * stale translation that still holds the int3 after the kernel has
 * written the new instruction and stopped expecting the trap.
 *   - perf_sched_events turns on with the first per-task perf counter and
 *     off (after a second) with the last.  Seen: "Oops: int3" at a jump
 *     site in __schedule on both vCPUs at once (Debian's 6.12: once in
 *     CI's record kselftest, and once in 160 recordings started and
 *     SIGKILLed in a loop; never in 100 such with this holder).
 *   - sched_waking's key turns with tailor record's wakeup events (one per
 *     recording, on at start, off at the end).  Seen: make demo's
 *     recording never ended (CI twice; 1 in 62 and 1 in 7 recordings in a
 *     loop, 2026-11-23).  Through QEMU's gdb stub: vCPU 0 trapped at
 *     try_to_wake_up's tracepoint site, whose bytes were already the NOP,
 *     over and over -- kprobes' handler backs up over an int3 that is
 *     gone from memory, and the stale translation traps again -- holding
 *     the rcu_preempt thread's pi_lock, which vCPU 1 waited for with
 *     interrupts off.  The box hung without a message.
 * The tests create and drop such counters all the time, so without this
 * they hit it at random.
 *
 * The holder's own first turn is the same patching, so it happens with
 * every CPU but the boot CPU offline, where no other vCPU can be running
 * the sites: CI saw "Oops: int3" at __schedule's jump site 3 s into a boot
 * of Debian's 6.12, as this holder started (2026-11-24).  The CPUs come
 * back online before the box's tests start (this program returns when they
 * are); one that does not fails the box.
 *
 * The counters are on a child, which never runs after: a software dummy
 * (counts nothing) and the tracepoints (never fire there).  Each
 * tracepoint also has ftrace's probe, with the trace buffer off: a second
 * probe, so that tailor.ko's, a third, patches nothing.  It prints one
 * line, then sleeps until killed.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/types.h>

static long open_counter(__u32 type, __u64 config)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	/* pid 0, cpu -1: a per-task counter, which is what the keys count. */
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/*
 * Writes VALUE to the sysfs or tracefs file F (NULL: its fopen() failed)
 * and closes it: such files report a refused write at fputs() or fclose().
 * 0 or -1.
 */
static int write_and_close(FILE *f, const char *value)
{
	int failed;

	if (!f)
		return -1;
	failed = fputs(value, f) == EOF;
	if (fclose(f) != 0)
		failed = 1;
	return failed ? -1 : 0;
}

/*
 * Writes VALUE ("0" or "1") to CPU's online file.  Returns 0, or -1 with
 * errno set (ENOENT: the CPU does not exist or cannot be hot-unplugged).
 */
static int set_cpu_online(int cpu, const char *value)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return write_and_close(fopen(path, "we"), value);
}

/* Whether CPU exists: its directory in sysfs. */
static int cpu_exists(int cpu)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	return access(path, F_OK) == 0;
}

/*
 * tracefs file REL opened with fopen()'s MODE under the first root that
 * has it (tracefs's own mount, else debugfs's), or NULL with errno set.
 */
static FILE *tracefs_open(const char *rel, const char *mode)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];
	size_t i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", roots[i], rel);
		f = fopen(path, mode);
		if (f)
			return f;
	}
	errno = ENOENT;
	return NULL;
}

/* The tracepoint's id from tracefs, or -1. */
static long tracepoint_id(const char *event)
{
	char rel[128];
	long id;
	FILE *f;

	snprintf(rel, sizeof(rel), "events/%s/id", event);
	f = tracefs_open(rel, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &id) != 1)
		id = -1;
	fclose(f);
	return id;
}

/* Writes VALUE to tracefs file REL; 0 or -1. */
static int tracefs_write(const char *rel, const char *value)
{
	return write_and_close(tracefs_open(rel, "we"), value);
}

/*
 * A scheduler tracepoint held with two probes of its own: perf's (a
 * counter on it) and ftrace's (its event enabled, with the trace buffer
 * off so that nothing is written).  tailor.ko's probe then comes and goes
 * as a third, which changes only the probe array: the key and the static
 * call (patched when a tracepoint goes from none to one probe, or one to
 * two) stay as they are.  Returns a bit per probe held.
 */
static int hold_tracepoint(const char *event)
{
	long id = tracepoint_id(event);
	char rel[128];
	int held = 0;

	if (id < 0) {
		printf("hold-static-keys: no %s in tracefs; its key may turn\n", event);
		return 0;
	}
	if (open_counter(PERF_TYPE_TRACEPOINT, (__u64)id) < 0)
		printf("hold-static-keys: perf_event_open (%s): %s; its key may turn\n",
		       event, strerror(errno));
	else
		held |= 1;
	snprintf(rel, sizeof(rel), "events/%s/enable", event);
	if (tracefs_write("tracing_on", "0") || tracefs_write(rel, "1"))
		printf("hold-static-keys: enabling ftrace's %s: %s; tailor.ko's probe may patch it\n",
		       event, strerror(errno));
	else
		held |= 2;
	return held;
}

/*
 * Turns the keys on for good with the other CPUs offline.  Returns 0, or 1
 * if a CPU did not come back online.
 */
static int hold_keys(void)
{
	int dummy = 0, waking, sw, offline = 0, lost = 0, cpu;
	unsigned long long taken_down = 0;	/* bit n: CPU n went offline */

	/* CPU 0 stays; the others go offline while the keys turn. */
	for (cpu = 1; cpu < 64 && cpu_exists(cpu); cpu++) {
		if (set_cpu_online(cpu, "0") == 0) {
			taken_down |= 1ULL << cpu;
			offline++;
		} else {
			printf("hold-static-keys: cannot take CPU %d offline: %s; the keys turn with it running\n",
			       cpu, strerror(errno));
		}
	}

	if (open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY) < 0)
		printf("hold-static-keys: perf_event_open (dummy): %s; perf_sched_events may turn\n",
		       strerror(errno));
	else
		dummy = 1;
	waking = hold_tracepoint("sched/sched_waking");
	sw = hold_tracepoint("sched/sched_switch");

	for (cpu = 1; cpu < 64; cpu++) {
		if (!(taken_down & (1ULL << cpu)) || set_cpu_online(cpu, "1") == 0)
			continue;
		printf("hold-static-keys: CPU %d did not come back online: %s\n", cpu, strerror(errno));
		lost++;
	}
	printf("== static keys held on by pid %d:%s sched_waking:%s%s sched_switch:%s%s (turned with %d other CPU(s) offline)\n",
	       (int)getpid(), dummy ? " perf_sched_events" : "",
	       waking & 1 ? " perf" : "", waking & 2 ? " ftrace" : "",
	       sw & 1 ? " perf" : "", sw & 2 ? " ftrace" : "", offline);
	fflush(stdout);
	return lost ? 1 : 0;
}

/*
 * The counters belong to a child that sleeps until killed; this process
 * exits once they are open and the CPUs are back, so that the box's tests
 * start after, with the child's status: 0, or 1 if a CPU stayed offline.
 */
int main(void)
{
	int ready[2];
	char status = 1;
	pid_t child;

	if (pipe(ready) < 0) {
		perror("hold-static-keys: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("hold-static-keys: fork");
		return 1;
	}
	if (child == 0) {
		close(ready[0]);
		status = (char)hold_keys();
		if (write(ready[1], &status, 1) != 1)
			return 1;
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &status, 1) != 1) {
		fprintf(stderr, "hold-static-keys: the holder (pid %d) ended before holding the keys\n",
			(int)child);
		return 1;
	}
	return status;
}

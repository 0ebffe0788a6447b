/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libtailor: what a JIT calls so that profilers can name the code it
 * generates at run time, where no ELF file describes it.
 *
 * The jitdump writer produces DIR/jit-PID.dump in the format of the perf
 * JIT interface (tools/perf/Documentation/jitdump-specification.txt, as
 * read by `perf inject --jit` and by tailor): every function's name,
 * address, machine code and, optionally, a line table.  The file stays
 * mapped executable while it is open: that mapping is the marker by
 * which a profiler finds the file among the recording's mmap events, so
 * open it while the profiler records, before the code it describes runs.
 *
 * A code address may be reused: a later load at the same address
 * supersedes the earlier one from its timestamp on: a reader resolves a
 * sample by the last load (or move) at or before the sample's time.
 *
 * tailor_perfmap_append() is the simpler, names-only interface:
 * /tmp/perf-PID.map, one "START SIZE NAME" line per function, with no
 * time, so it cannot express reused addresses.
 *
 * The calls that return int return 0 or -errno (tailor_jitdump_open()
 * returns NULL and the error in *err); the writer's calls are thread-safe.
 */
#ifndef TAILOR_JITDUMP_H
#define TAILOR_JITDUMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Timestamps are the TSC (rdtsc) rather than CLOCK_MONOTONIC; the reader
 * converts them with the recording's time conversion.  Without it, record
 * with `perf record -k mono` so that samples and loads share a clock.
 */
#define TAILOR_JITDUMP_TSC	(1u << 0)

struct tailor_jitdump;

/* One line table entry: code from @addr (absolute) on comes from @file:@line. */
struct tailor_jit_line {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

/*
 * Create DIR/jit-PID.dump (@dir NULL: /tmp, where perf looks by default)
 * and map it.  Returns NULL with *@err = -errno (when @err is given) on
 * failure; a directory on a noexec mount fails the mapping with -EPERM.
 */
struct tailor_jitdump *tailor_jitdump_open(const char *dir, unsigned int flags,
					   int *err);
/* The dump's path, for logs and tests. */
const char *tailor_jitdump_path(const struct tailor_jitdump *j);
/*
 * Describe @size bytes of machine code at @code, already in place (its
 * address is the function's address) and about to run, named @name.
 * @lines, sorted by address, may be NULL when @nr_lines is 0.  Each load
 * gets the next code index, from 0.  On failure nothing is written.
 */
int tailor_jitdump_load(struct tailor_jitdump *j, const char *name,
			const void *code, uint64_t size,
			const struct tailor_jit_line *lines, size_t nr_lines);
/*
 * The code loaded at @old_addr now lives at @new_addr, unchanged.  The
 * record names the code index of the last load at @old_addr (0 when none
 * is known), through which a reader finds the name and code again.
 */
int tailor_jitdump_move(struct tailor_jitdump *j, uint64_t old_addr,
			uint64_t new_addr, uint64_t size);
/* Write the close record, unmap, close and free @j (even on failure). */
int tailor_jitdump_close(struct tailor_jitdump *j);

/* Append "START SIZE NAME" (hex, no 0x) to /tmp/perf-@pid.map. */
int tailor_perfmap_append(pid_t pid, uint64_t start, uint64_t size,
			  const char *name);

#endif /* TAILOR_JITDUMP_H */

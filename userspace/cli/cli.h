/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tailor command's internals: subcommands and the pieces they share
 * (the /dev/tailor session, event names, side-band collection, host facts).
 */
#ifndef TAILOR_CLI_H
#define TAILOR_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "uapi/tailor.h"
#include "tailor/recording.h"
#include "usage.h"

#define TAILOR_VERSION	"0.7"

extern const struct cli_command cmd_record, cmd_dump, cmd_report, cmd_timeline,
	cmd_completion;

/* ---- events.c: event names to encodings ---- */

struct event_spec {
	const char *name;	/* as given, or "cpu-clock" */
	bool timer;		/* the software clock, no PMU event */
	uint32_t type;		/* TAILOR_EVENT_HARDWARE or _RAW */
	uint64_t config;
};

/* Resolve @name (NULL: the default); prints why on failure. */
int event_resolve(const char *name, struct event_spec *ev);

/* ---- sideband.c: executable mappings, comm, fork/exit via perf ---- */

struct sideband;

enum sideband_target { SB_PROCESS, SB_ALL_CPUS };

/*
 * Watch @pid (all its threads and children, present and future) or every
 * CPU for executable mmaps, comm and task events, with @switches context
 * switches, with @wakeups the wakeups its threads make, emitted as
 * recording records, their times on the TSC (converted where need be) or,
 * with @monotonic, on CLOCK_MONOTONIC.  NULL (and a message) if
 * perf_event_open is refused.
 */
struct sideband *sideband_open(enum sideband_target target, pid_t pid, bool switches,
			       bool wakeups, bool monotonic);
/* The fds to poll for data. */
int sideband_fds(struct sideband *sb, int *fds, int max);
/* Move what the kernel has buffered into the recording. */
int sideband_drain(struct sideband *sb, struct tlr_writer *w);
/* Write COMM and MMAP records for what @pid (or every process) has now. */
int sideband_snapshot(struct tlr_writer *w, pid_t pid, uint64_t tsc);
/* Write COMM records for the names @pid's threads have now. */
int sideband_snapshot_comms(struct tlr_writer *w, pid_t pid, uint64_t tsc);
uint64_t sideband_lost(const struct sideband *sb);
const char *sideband_clock_name(const struct sideband *sb);
/* Whether SWITCH records are written: asked for, and a clock to stamp them. */
bool sideband_switches(const struct sideband *sb);
/* "recorded" if WAKEUP records are written, else "not recorded (why)". */
const char *sideband_wakeups(const struct sideband *sb);
void sideband_close(struct sideband *sb);

/*
 * jit_files.c: the jitdumps the recorded processes mapped and their perf
 * maps, copied into the recording at @recording through @w (perf maps
 * older than @start_wall_ns are not this run's; 0: any age).  0 or -errno
 * (a write error).
 */
/*
 * The build-ids of the files @recording mapped (its MMAP records, read
 * back), as one BUILD_IDS record into @w.  0 or -errno.
 */
int build_ids_store(const char *recording, struct tlr_writer *w);
int jit_files_carry(const char *recording, struct tlr_writer *w, uint64_t start_wall_ns,
		    bool quiet);

/* ---- hostinfo.c ---- */

/* Append META lines describing this host to @buf. */
int hostinfo_meta(char *buf, size_t len);

static inline uint64_t rdtsc(void)
{
	return __builtin_ia32_rdtsc();
}

#endif /* TAILOR_CLI_H */

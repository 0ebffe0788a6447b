/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Between the session and the file formats: a format reader checks and
 * counts its file at open, then hands the session its events as runs --
 * consecutive events in the file whose times do not decrease -- and
 * marks rounds; the session merges the runs (session.c) and asks the
 * reader to deliver each event as a typed struct to the consumers.
 */
#ifndef TAILOR_LIB_FORMAT_READER_H
#define TAILOR_LIB_FORMAT_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "tailor/events.h"
#include "tailor/session.h"

/* A run: @count events from @first on, in time order. */
struct rd_run {
	const uint8_t *first;
	uint64_t first_time, last_time;
	uint32_t count;
	uint32_t stride;	/* bytes from one event to the next; 0: ask advance() */
	uint8_t kind;		/* the format's own tag for its events */
};

enum rd_next { RD_EOF = 0, RD_RUN = 1, RD_ROUND = 2 };

/* The consumers, per kind, without the ones that ignore it. */
struct tev_dispatch {
	struct tev_consumer *sample[8], *mmap[8], *comm[8], *fork[8], *exit[8],
		*lost[8], *context_switch[8], *label[8], *jit[8], *wakeup[8];
	int nr_sample, nr_mmap, nr_comm, nr_fork, nr_exit, nr_lost,
	    nr_context_switch, nr_label, nr_jit, nr_wakeup;
};

#define TEV_DISPATCH(d, kind, ev) ({					\
	int ret_ = 0, i_;						\
	for (i_ = 0; !ret_ && i_ < (d)->nr_##kind; i_++)		\
		ret_ = (d)->kind[i_]->kind((d)->kind[i_], (ev));	\
	ret_;								\
})

struct format_reader;

struct format_ops {
	/*
	 * The next run (*run filled), a round mark, or the end.  A run's
	 * events must stay where they are until the reader has handed out
	 * two more round marks and is called again: the session delivers
	 * at mark N everything read before mark N - 1, and nothing later
	 * (or at the end, everything).
	 */
	enum rd_next (*next)(struct format_reader *r, struct rd_run *run);
	/* The event after @ev in its run (runs with stride 0). */
	const uint8_t *(*advance)(const struct format_reader *r, uint8_t kind,
				  const uint8_t *ev);
	uint64_t (*time)(const struct format_reader *r, uint8_t kind,
			 const uint8_t *ev);
	/* Parse @ev and hand it to the consumers; their return value. */
	int (*deliver)(struct format_reader *r, uint8_t kind, const uint8_t *ev,
		       const struct tev_dispatch *d);
	/* After the last event: anything the file says only at its end. */
	int (*finish)(struct format_reader *r, const struct tev_dispatch *d);
	/* A file the profile carries (a JIT's), by its path; NULL: none. */
	int (*file)(struct format_reader *r, const char *path, const void **data,
		    size_t *len);
	void (*close)(struct format_reader *r);
};

struct format_reader {
	const struct format_ops *ops;
	struct session_info info;
	int tag_reg;
};

struct format_reader *tailor_rec_open(const char *path, int tag_reg,
				      char *err, size_t errlen);
/* @event: the sampling event whose profile to read (perf's name), NULL: the first. */
struct format_reader *perf_data_open(const char *path, int tag_reg,
				     uint32_t tsc_khz, const char *event, char *err,
				     size_t errlen);

/*
 * Whether @name names the event perf calls @event: as it is, or without
 * its modifiers and terms (cpu-clock for cpu-clock:u, page-faults for
 * page-faults/period=16/).
 */
static inline bool format_event_named(const char *event, const char *name)
{
	size_t n = strcspn(event, ":/");

	return event[0] && (!strcmp(event, name) ||
			    (strlen(name) == n && !strncmp(event, name, n)));
}

#endif /* TAILOR_LIB_FORMAT_READER_H */

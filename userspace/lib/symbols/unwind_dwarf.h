/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A sample's user-mode call stack unwound from the registers and stack
 * bytes perf record --call-graph dwarf copied (unwind_dwarf.c), through
 * the call frame information (.eh_frame, .debug_frame) of the files the
 * symbolizer's maps over time put at each address.
 */
#ifndef TAILOR_LIB_SYMBOLS_UNWIND_DWARF_H
#define TAILOR_LIB_SYMBOLS_UNWIND_DWARF_H

#include <stdbool.h>
#include <stdint.h>
#include "tailor/events.h"

/* perf's default bound on a stack (kernel.perf_event_max_stack). */
#define UNWIND_MAX_FRAMES	127

struct symbolizer;
struct unwinder;

struct unwound_frame {
	uint64_t ip;
	/*
	 * An interrupted IP -- the sampled one, or one a signal interrupted
	 * -- named as it is; else a return address, whose call is the byte
	 * before it.
	 */
	bool exact;
};

/* An unwinder reading files through @sym (which must outlive it); NULL without memory. */
struct unwinder *unwind_new(struct symbolizer *sym);
void unwind_free(struct unwinder *u);

/*
 * @s's user-mode frames, innermost first (its sampled IP, then the
 * callers), at most @max of them into @frames: how many.  0 without user
 * registers and stack.  The walk stops cleanly at the outermost frame
 * (its return address undefined by the CFI), at a read outside the
 * sampled stack, or where neither CFI nor a frame pointer leads on.
 */
uint32_t unwind_user(struct unwinder *u, const struct tev_sample *s,
		     struct unwound_frame *frames, uint32_t max);

#endif /* TAILOR_LIB_SYMBOLS_UNWIND_DWARF_H */

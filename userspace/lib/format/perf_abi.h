/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The perf.data file layout (tools/perf/Documentation/perf.data-file-format.txt)
 * and the record types of <linux/perf_event.h> that perf's tools add:
 * the one place tailor spells them, for the reader (perf_data.c) and the
 * test tools that write perf.data files.  The kernel's record layouts come
 * from <linux/perf_event.h> itself.
 */
#ifndef TAILOR_LIB_FORMAT_PERF_ABI_H
#define TAILOR_LIB_FORMAT_PERF_ABI_H

#include <linux/perf_event.h>
#include <stdint.h>

#define PERF_FILE_MAGIC		"PERFILE2"
#define PERF_PIPE_HEADER_SIZE	16	/* a pipe-mode file's header */

/* Records perf's tools write (perf's util/event.h numbers them so). */
#define PERF_RECORD_FINISHED_ROUND	68
#define PERF_RECORD_COMPRESSED		81

/* CLOCK_PERF_HW_CLOCK of patches/0002: sample times are the raw TSC. */
#define PERF_CLOCK_HW_TSC		12
/* perf's util/header.h feature bits: where it was recorded, the events' names */
#define PERF_HEADER_BUILD_ID		2
#define PERF_HEADER_HOSTNAME		3
#define PERF_HEADER_OSRELEASE		4
#define PERF_HEADER_EVENT_DESC		12
/*
 * The most callchain entries a sample may carry: the kernel's
 * kernel.perf_event_max_stack stops at 65535 frames, plus its context
 * markers; more is a damaged record.
 */
#define PERF_MAX_CALLCHAIN		(65535u + 16u)
/* x86's perf register number of rip (asm/perf_regs.h, not in the uapi set used here) */
#define PERF_REG_X86_IP_NUMBER		8

struct perf_file_section {
	uint64_t offset, size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;			/* sizeof(struct perf_file_header) */
	uint64_t attr_size;		/* of one perf_file_attr */
	struct perf_file_section attrs, data, event_types;
	uint64_t features[4];		/* HEADER_* bits; sections after data */
};

/* An entry of the attrs section: the attr (attr_size - 16 bytes), its ids. */
struct perf_file_attr_ids {
	struct perf_file_section ids;
};

/*
 * The sample_id trailer of non-sample records, with sample_id_all: the
 * fields of sample_type among these, in this order, at the record's end.
 */
#define PERF_SAMPLE_ID_ALL_FIELDS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
				   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | \
				   PERF_SAMPLE_IDENTIFIER)

#endif /* TAILOR_LIB_FORMAT_PERF_ABI_H */

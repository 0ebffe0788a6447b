/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The samples of a profile, whatever wrote them: a tailor recording or a
 * perf.data (perf record --intr-regs, optionally with the raw-TSC clock of
 * patches/0002).  Opening one feeds its executable mappings to a
 * symbolizer; samples are then visited in file order as one normalized
 * struct, without copying the file.
 */
#ifndef TAILOR_PROFILE_H
#define TAILOR_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

#define PROF_HAS_TAG	1u	/* tag holds the captured tag register */
#define PROF_HAS_ADDR	2u	/* data_addr holds the sample's data address */
#define PROF_KERNEL	4u	/* ip is in the kernel */
/*
 * The tag is the user's: a user-mode sample's, or a kernel sample whose
 * registers are the user state at kernel entry (the software clock).
 */
#define PROF_USER_TAG	8u
/* A kernel sample's entry_ip: the user IP where the thread entered. */
#define PROF_HAS_ENTRY_IP 16u

struct prof_sample {
	uint64_t time;		/* TSC ticks, or ns (prof_info.time_unit) */
	uint64_t ip;
	uint64_t tag;
	uint64_t data_addr;
	uint64_t entry_ip;
	uint32_t pid, tid, cpu;
	uint32_t flags;		/* PROF_* */
};

enum prof_time_unit { PROF_TIME_TSC, PROF_TIME_NS };

struct prof_info {
	const char *format;	/* "tailor recording" or "perf.data" */
	enum prof_time_unit time_unit;
	/* time delta -> ns: (delta * mult) >> shift; mult 0: unknown */
	uint32_t mult;
	uint32_t shift;
	uint64_t nr_samples;	/* counted at open */
	uint64_t first_time, last_time;
	uint64_t nr_mappings;
	bool has_tag;		/* some sample carries the tag register */
	bool has_addr;		/* some sample carries a data address */
	bool complete;		/* false: cut short, see problem */
	char problem[512];	/* why it is not complete, or "" */
	char event[128];	/* the sampled event */
	uint64_t lost;		/* samples the kernel dropped, if known */
};

struct prof_input;

/*
 * Open @path (format by its magic), give every executable mapping to @sym
 * and count the samples.  @tag_reg is the perf register number of the tag
 * register (x86: r15 = 23).  @tsc_khz converts a perf.data on the raw-TSC
 * clock (0: unknown).  NULL and a message in @err when unreadable.
 */
struct prof_input *prof_open(const char *path, struct symbolizer *sym,
			     int tag_reg, uint32_t tsc_khz, char *err,
			     size_t errlen);
const struct prof_info *prof_info(const struct prof_input *in);
/* Visit every sample; stops early when @fn returns non-zero. */
int prof_foreach(struct prof_input *in,
		 int (*fn)(void *ctx, const struct prof_sample *s), void *ctx);
void prof_close(struct prof_input *in);

/* x86-64 perf register numbers by name ("r15", "bx"); -1 if unknown. */
int prof_register_number(const char *name);
/* The x86-64 name of perf register @reg ("rax", "rip", "r15"); NULL if none. */
const char *prof_register_name(int reg);

/* ---- the two formats (profile_tailor.c, profile_perf.c) ---- */

struct prof_ops {
	int (*foreach)(struct prof_input *in,
		       int (*fn)(void *ctx, const struct prof_sample *s),
		       void *ctx);
	void (*close)(struct prof_input *in);
};

struct prof_input {
	const struct prof_ops *ops;
	struct prof_info info;
	int tag_reg;
	void *priv;
};

struct prof_input *prof_open_tailor(const char *path, struct symbolizer *sym,
				    int tag_reg, char *err, size_t errlen);
struct prof_input *prof_open_perf(const char *path, struct symbolizer *sym,
				  int tag_reg, uint32_t tsc_khz, char *err,
				  size_t errlen);
/* mult/shift for ns = (ticks * mult) >> shift at @khz. */
void prof_khz_to_mult_shift(uint32_t khz, uint32_t *mult, uint32_t *shift);
/* A time delta in ns. */
uint64_t prof_time_to_ns(const struct prof_info *info, uint64_t delta);

#endif /* TAILOR_PROFILE_H */

// SPDX-License-Identifier: GPL-2.0-only
/* Opening a profile in either format; what both formats share. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "uapi/tailor.h"
#include "tailor/profile.h"

struct prof_input *prof_open(const char *path, struct symbolizer *sym,
			     int tag_reg, uint32_t tsc_khz, char *err,
			     size_t errlen)
{
	char magic[8] = "";
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open: %m");
		return NULL;
	}
	got = read(fd, magic, sizeof(magic));
	close(fd);
	if (got == (ssize_t)sizeof(magic) && !memcmp(magic, "PERFILE2", 8))
		return prof_open_perf(path, sym, tag_reg, tsc_khz, err, errlen);
	if (got == (ssize_t)sizeof(magic) && !memcmp(magic, "TAILORRC", 8))
		return prof_open_tailor(path, sym, tag_reg, err, errlen);
	snprintf(err, errlen,
		 "neither a tailor recording nor a perf.data file (magic '%.8s'%s)",
		 got > 0 ? magic : "",
		 got < 8 ? ", file shorter than 8 bytes" : "");
	return NULL;
}

const struct prof_info *prof_info(const struct prof_input *in)
{
	return &in->info;
}

int prof_foreach(struct prof_input *in,
		 int (*fn)(void *ctx, const struct prof_sample *s), void *ctx)
{
	return in->ops->foreach(in, fn, ctx);
}

void prof_close(struct prof_input *in)
{
	if (in)
		in->ops->close(in);
}

/*
 * perf's x86 register numbering (arch/x86/include/uapi/asm/perf_regs.h),
 * by their x86-64 names; up to the IP perf writes them without the r.
 */
#define X86_SHORT_NAMES_END	9
static const char *const x86_regs[] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "rip", "flags",
	"cs", "ss", "ds", "es", "fs", "gs", "r8", "r9", "r10", "r11",
	"r12", "r13", "r14", "r15",
};

int prof_register_number(const char *name)
{
	size_t i;

	if (name[0] == 'r' && (name[1] == 'a' || name[1] == 'b' ||
			       name[1] == 'c' || name[1] == 'd' ||
			       name[1] == 's' || name[1] == 'i'))
		name++;		/* rax, rbx, rsi, rip ... */
	for (i = 0; i < sizeof(x86_regs) / sizeof(x86_regs[0]); i++)
		if (!strcmp(name, x86_regs[i] + (i < X86_SHORT_NAMES_END)))
			return (int)i;
	return -1;
}

const char *prof_register_name(int reg)
{
	if (reg < 0 || (size_t)reg >= sizeof(x86_regs) / sizeof(x86_regs[0]))
		return NULL;
	return x86_regs[reg];
}

void prof_khz_to_mult_shift(uint32_t khz, uint32_t *mult, uint32_t *shift)
{
	uint32_t s = 24;

	/* The largest shift whose mult still fits 32 bits keeps precision. */
	while (s && (1000000ull << s) / (khz ? khz : 1) > UINT32_MAX)
		s--;
	*shift = s;
	*mult = khz ? (uint32_t)((1000000ull << s) / khz) : 0;
}

uint64_t prof_time_to_ns(const struct prof_info *info, uint64_t delta)
{
	return tailor_tsc_to_ns(delta, info->mult, info->shift);
}

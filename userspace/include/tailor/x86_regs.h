/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perf's x86-64 register numbering (arch/x86/include/uapi/asm/perf_regs.h),
 * which tailor.ko's register masks and perf.data's regs_intr share, by
 * name: one table for record, dump and report.
 */
#ifndef TAILOR_X86_REGS_H
#define TAILOR_X86_REGS_H

#include <stdbool.h>
#include <stdint.h>

/* The perf register number of @name ("r15", "rbx" or "bx"); -1 if unknown. */
int x86_register_number(const char *name);
/* The x86-64 name of perf register @reg ("rax", "rip", "r15"); NULL if none. */
const char *x86_register_name(int reg);

/*
 * Whether @addr lies in the kernel's half of the address space: the upper
 * half, bit 63 set, with 4- and 5-level paging alike (user space ends
 * below 2^47 or 2^56, the kernel starts at 0xffff800000000000 or
 * 0xff00000000000000).
 */
static inline bool x86_kernel_address(uint64_t addr)
{
	return addr >> 63;
}

#endif /* TAILOR_X86_REGS_H */

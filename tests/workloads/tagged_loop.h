/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The workloads' unit of known work: @n iterations of a loop that holds
 * @tag in r15 throughout (the tag register, reserved with -ffixed-r15).
 */
#ifndef TW_TAGGED_LOOP_H
#define TW_TAGGED_LOOP_H

#include <stdint.h>

static inline void tagged_loop(uint64_t tag, uint64_t n)
{
	__asm__ volatile("push %%r15\n\t"
			 "mov %0, %%r15\n\t"
			 "1: dec %1\n\t"
			 "jnz 1b\n\t"
			 "pop %%r15"
			 : "+r"(tag), "+r"(n) : : "cc");
}

#endif /* TW_TAGGED_LOOP_H */

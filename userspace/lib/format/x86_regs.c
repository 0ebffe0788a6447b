// SPDX-License-Identifier: GPL-2.0-only
/* x86-64 register names and perf's numbers for them (tailor/x86_regs.h). */
#include <stddef.h>
#include <string.h>
#include "tailor/x86_regs.h"

/* Up to the IP perf's own tools write the names without the r. */
#define X86_SHORT_NAMES_END	9
static const char *const x86_regs[] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "rip", "flags",
	"cs", "ss", "ds", "es", "fs", "gs", "r8", "r9", "r10", "r11",
	"r12", "r13", "r14", "r15",
};

int x86_register_number(const char *name)
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

const char *x86_register_name(int reg)
{
	if (reg < 0 || (size_t)reg >= sizeof(x86_regs) / sizeof(x86_regs[0]))
		return NULL;
	return x86_regs[reg];
}

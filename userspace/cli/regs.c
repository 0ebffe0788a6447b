// SPDX-License-Identifier: GPL-2.0-only
/* x86-64 register names for perf's register numbers (TAILOR_REG_*). */
#include <string.h>
#include "cli.h"

static const struct {
	const char *name;
	int reg;
} reg_names[] = {
	{ "rax", TAILOR_REG_AX }, { "rbx", TAILOR_REG_BX }, { "rcx", TAILOR_REG_CX },
	{ "rdx", TAILOR_REG_DX }, { "rsi", TAILOR_REG_SI }, { "rdi", TAILOR_REG_DI },
	{ "rbp", TAILOR_REG_BP }, { "rsp", TAILOR_REG_SP }, { "rip", TAILOR_REG_IP },
	{ "r8", 16 }, { "r9", 17 }, { "r10", 18 }, { "r11", 19 },
	{ "r12", 20 }, { "r13", 21 }, { "r14", 22 }, { "r15", TAILOR_REG_R15 },
};

const char *reg_name(int reg)
{
	size_t i;

	for (i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++)
		if (reg_names[i].reg == reg)
			return reg_names[i].name;
	return NULL;
}

int reg_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++)
		if (!strcmp(reg_names[i].name, name))
			return reg_names[i].reg;
	return -1;
}

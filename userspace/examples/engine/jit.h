/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The last lowering step: the system C compiler turns a generated file
 * into a shared object with debug information (its DWARF lines are the
 * keys of the dictionary's last log), which the engine loads and runs.
 */
#ifndef ENGINE_JIT_H
#define ENGINE_JIT_H

#include "rt_abi.h"

#define JIT_MAX_PIPELINES	16

struct jit_module {
	void *handle;
	int nr_pipelines;
	pipeline_fn pipelines[JIT_MAX_PIPELINES];	/* one morsel each call */
	finish_fn finishes[JIT_MAX_PIPELINES];		/* after the last morsel */
	int sources[JIT_MAX_PIPELINES];		/* ctx->rows[] split; -1: one morsel */
	void (*work_calibrate)(unsigned long n);	/* the oracle's work loop */
};

/*
 * Compile @c_path to @so_path with @cc ("cc" when NULL; split on spaces)
 * and load it.  0, or -1 with the reason on stderr.
 */
int jit_compile(const char *cc, const char *c_path, const char *so_path);
int jit_load(struct jit_module *m, const char *so_path);
void jit_unload(struct jit_module *m);

#endif /* ENGINE_JIT_H */

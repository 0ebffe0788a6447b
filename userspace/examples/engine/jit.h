/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The last lowering step, by one of two backends.  C: the system C
 * compiler turns a generated file into a shared object with debug
 * information (its DWARF lines are the keys of the dictionary's last
 * log), which the engine loads and runs.  LLVM (jit_llvm.c): clang turns
 * the same file into bitcode with debug locations, and LLVM's ORC JIT
 * compiles that in this process into anonymous memory, described for
 * profilers by LLVM's perf listener (a jitdump with the lines).
 */
#ifndef ENGINE_JIT_H
#define ENGINE_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include "rt_abi.h"

#define JIT_MAX_PIPELINES	16

struct jit_module {
	void *handle;					/* dlopen()'s, or the LLJIT */
	void (*release)(void *handle);
	int nr_pipelines;
	pipeline_fn pipelines[JIT_MAX_PIPELINES];	/* one morsel each call */
	finish_fn finishes[JIT_MAX_PIPELINES];		/* after the last morsel */
	int sources[JIT_MAX_PIPELINES];		/* ctx->rows[] split; -1: one morsel */
	void (*work_calibrate)(unsigned long n);	/* the oracle's work loop */
};

/*
 * Compile @c_path to @so_path with @cc ("cc" when NULL; split on spaces),
 * with -march=native when @native, and load it.  0, or -1 with the
 * reason on stderr.
 */
int jit_compile(const char *cc, const char *c_path, const char *so_path, bool native);
int jit_load(struct jit_module *m, const char *so_path);
void jit_unload(struct jit_module *m);

/*
 * LLVM (jit_llvm.c, which loads tailor-engine-llvm.so): compile @c_path
 * to bitcode @bc_path with @clang (NULL: the clang of the LLVM the plugin
 * links), then JIT it.  jit_llvm_available() is false where the plugin
 * is missing (built without llvm-14-dev), jit_llvm_why_not() says why,
 * and the others then fail with a message.
 */
int jit_llvm_available(void);
const char *jit_llvm_why_not(void);
int jit_llvm_compile(const char *clang, const char *c_path, const char *bc_path);
int jit_llvm_load(struct jit_module *m, const char *bc_path);

/* For the backends: run @cc FLAGS... OUT C; bind a loaded module's symbols. */
int jit_run_compiler(const char *cc, const char *const *flags, size_t nr_flags,
		     const char *out_path, const char *c_path);
int jit_bind(struct jit_module *m, const char *what, void *handle,
	     void *(*lookup)(void *handle, const char *name), void (*release)(void *handle));

#endif /* ENGINE_JIT_H */

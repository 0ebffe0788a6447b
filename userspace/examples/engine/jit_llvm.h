/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Between tailor-engine and its LLVM backend, tailor-engine-llvm.so
 * (llvm_plugin.c), which the engine loads only for --backend llvm: the
 * engine itself then needs no LLVM to run, nor the test box's image to
 * hold it for the C backend.  The engine lends the plugin its compiler
 * runner and symbol binder; the plugin returns its two steps.
 */
#ifndef ENGINE_JIT_LLVM_H
#define ENGINE_JIT_LLVM_H

#include <stddef.h>
#include "jit.h"

#define JIT_LLVM_PLUGIN		"tailor-engine-llvm.so"
#define JIT_LLVM_ENTRY		"tailor_engine_llvm_backend"
#define JIT_LLVM_ABI		1	/* bump with any change below */

struct jit_llvm_host {
	int (*run_compiler)(const char *cc, const char *const *flags, size_t nr_flags,
			    const char *out_path, const char *c_path);
	int (*bind)(struct jit_module *m, const char *what, void *handle,
		    void *(*lookup)(void *handle, const char *name),
		    void (*release)(void *handle));
};

struct jit_llvm_backend {
	int abi;
	int (*compile)(const char *clang, const char *c_path, const char *bc_path);
	int (*load)(struct jit_module *m, const char *bc_path);
};

typedef const struct jit_llvm_backend *(*jit_llvm_entry_fn)(const struct jit_llvm_host *host);
const struct jit_llvm_backend *tailor_engine_llvm_backend(const struct jit_llvm_host *host);

#endif /* ENGINE_JIT_LLVM_H */

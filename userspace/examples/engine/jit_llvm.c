// SPDX-License-Identifier: GPL-2.0-only
/*
 * --backend llvm, the engine's side: find and load tailor-engine-llvm.so
 * (jit_llvm.h) beside the executable, or where $TAILOR_ENGINE_LLVM says.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jit.h"
#include "jit_llvm.h"

static const struct jit_llvm_host host = {
	.run_compiler = jit_run_compiler,
	.bind = jit_bind,
};
static const struct jit_llvm_backend *backend;
static char why_not[PATH_MAX + 256];

/* The plugin's path: $TAILOR_ENGINE_LLVM, else beside /proc/self/exe. */
static int plugin_path(char *path, size_t size)
{
	const char *env = getenv("TAILOR_ENGINE_LLVM");
	ssize_t n;
	char *slash;

	if (env && *env) {
		if (strlen(env) >= size)
			return -1;
		strcpy(path, env);
		return 0;
	}
	n = readlink("/proc/self/exe", path, size - 1);
	if (n < 0)
		return -1;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash + 1 - path) + sizeof(JIT_LLVM_PLUGIN) > size)
		return -1;
	strcpy(slash + 1, JIT_LLVM_PLUGIN);
	return 0;
}

int jit_llvm_available(void)
{
	char path[PATH_MAX];
	jit_llvm_entry_fn entry;
	void *handle, *sym;

	if (backend)
		return 1;
	if (plugin_path(path, sizeof(path))) {
		snprintf(why_not, sizeof(why_not), "cannot tell where %s is", JIT_LLVM_PLUGIN);
		return 0;
	}
	/* Kept loaded for good: the JIT's code and its listener live in it. */
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		snprintf(why_not, sizeof(why_not), "%s (built where llvm-14-dev is installed)",
			 dlerror());
		return 0;
	}
	sym = dlsym(handle, JIT_LLVM_ENTRY);
	if (!sym) {
		snprintf(why_not, sizeof(why_not), "%s has no %s", path, JIT_LLVM_ENTRY);
		dlclose(handle);
		return 0;
	}
	memcpy(&entry, &sym, sizeof(sym));
	backend = entry(&host);
	if (!backend || backend->abi != JIT_LLVM_ABI) {
		snprintf(why_not, sizeof(why_not), "%s is of another build (ABI %d, want %d)",
			 path, backend ? backend->abi : -1, JIT_LLVM_ABI);
		backend = NULL;
		dlclose(handle);
		return 0;
	}
	return 1;
}

const char *jit_llvm_why_not(void)
{
	return why_not;
}

int jit_llvm_compile(const char *clang, const char *c_path, const char *bc_path)
{
	if (!jit_llvm_available()) {
		fprintf(stderr, "tailor-engine: no LLVM backend: %s\n", why_not);
		return -1;
	}
	return backend->compile(clang, c_path, bc_path);
}

int jit_llvm_load(struct jit_module *m, const char *bc_path)
{
	memset(m, 0, sizeof(*m));
	if (!jit_llvm_available()) {
		fprintf(stderr, "tailor-engine: no LLVM backend: %s\n", why_not);
		return -1;
	}
	return backend->load(m, bc_path);
}

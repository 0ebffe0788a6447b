// SPDX-License-Identifier: GPL-2.0-only
/* Compiling and loading generated code (see jit.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "jit.h"
#include "proc.h"
#include "tailor/tag.h"

int jit_run_compiler(const char *cc, const char *const *flags, size_t nr_flags,
		     const char *out_path, const char *c_path)
{
	char *words = strdup(cc);
	char *argv[64], *save = NULL, *w;
	int argc = 0, status, ret;
	size_t i;

	if (!words)
		return -1;
	for (w = strtok_r(words, " ", &save); w && argc < 48; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	for (i = 0; i < nr_flags && argc < 60; i++)
		argv[argc++] = (char *)flags[i];
	argv[argc++] = (char *)out_path;
	argv[argc++] = (char *)c_path;
	argv[argc] = NULL;

	ret = proc_run(argv, NULL, NULL, &status);
	if (ret) {
		fprintf(stderr, "tailor-engine: cannot run the C compiler '%s': %s "
			"(set --cc or CC)\n", argv[0], strerror(ret));
		free(words);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "tailor-engine: '%s' failed to compile %s (status %d)\n",
			argv[0], c_path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		free(words);
		return -1;
	}
	free(words);
	return 0;
}

int jit_compile(const char *cc, const char *c_path, const char *so_path, bool native)
{
	/*
	 * -g: DWARF lines lead samples back to the generated lines.  The tag
	 * register stays reserved; -nostdlib: generated code calls only the
	 * runtime, through the context it is given.
	 */
	static const char *const flags[] = {
		"-std=gnu11", "-O2", "-g", "-fPIC", "-shared", "-nostdlib", TAILOR_TAG_CFLAGS,
	};
	const size_t n = sizeof(flags) / sizeof(flags[0]);
	const char *chosen[sizeof(flags) / sizeof(flags[0]) + 2];
	size_t k;

	memcpy(chosen, flags, sizeof(flags));
	k = n;
	/* --feedback's hot pipelines: -march=native, for the whole file. */
	if (native)
		chosen[k++] = "-march=native";
	chosen[k++] = "-o";
	return jit_run_compiler(cc && *cc ? cc : "cc", chosen, k, so_path, c_path);
}

static void *so_lookup(void *handle, const char *name)
{
	return dlsym(handle, name);
}

static void so_release(void *handle)
{
	dlclose(handle);
}

int jit_bind(struct jit_module *m, const char *what, void *handle,
	     void *(*lookup)(void *handle, const char *name), void (*release)(void *handle))
{
	const int *count, *sources;
	void *sym;
	int i;

	memset(m, 0, sizeof(*m));
	m->handle = handle;
	m->release = release;
	count = lookup(handle, "tailor_pipelines");
	if (!count || *count < 1 || *count > JIT_MAX_PIPELINES) {
		fprintf(stderr, "tailor-engine: %s: no valid tailor_pipelines\n", what);
		goto fail;
	}
	m->nr_pipelines = *count;
	sources = lookup(handle, "tailor_pipeline_source");
	if (!sources) {
		fprintf(stderr, "tailor-engine: %s: no tailor_pipeline_source\n", what);
		goto fail;
	}
	for (i = 0; i < m->nr_pipelines; i++) {
		char name[64];

		m->sources[i] = sources[i];
		snprintf(name, sizeof(name), "tailor_pipeline_%d", i);
		sym = lookup(handle, name);
		if (!sym) {
			fprintf(stderr, "tailor-engine: %s: no %s\n", what, name);
			goto fail;
		}
		/* POSIX: a dlsym() result may be converted to a function pointer. */
		memcpy(&m->pipelines[i], &sym, sizeof(sym));
		snprintf(name, sizeof(name), "tailor_finish_%d", i);
		sym = lookup(handle, name);
		if (!sym) {
			fprintf(stderr, "tailor-engine: %s: no %s\n", what, name);
			goto fail;
		}
		memcpy(&m->finishes[i], &sym, sizeof(sym));
	}
	sym = lookup(handle, "tailor_work_calibrate");
	if (!sym) {
		fprintf(stderr, "tailor-engine: %s: no tailor_work_calibrate\n", what);
		goto fail;
	}
	memcpy(&m->work_calibrate, &sym, sizeof(sym));
	return 0;
fail:
	jit_unload(m);
	return -1;
}

int jit_load(struct jit_module *m, const char *so_path)
{
	void *handle = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);

	if (!handle) {
		memset(m, 0, sizeof(*m));
		fprintf(stderr, "tailor-engine: cannot load %s: %s\n", so_path, dlerror());
		return -1;
	}
	return jit_bind(m, so_path, handle, so_lookup, so_release);
}

void jit_unload(struct jit_module *m)
{
	if (m->handle && m->release)
		m->release(m->handle);
	memset(m, 0, sizeof(*m));
}

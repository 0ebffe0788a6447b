// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor-engine-llvm.so, the LLVM backend (see jit.h and jit_llvm.c):
 * clang makes bitcode of the generated C, with its debug locations;
 * LLVM's ORC JIT (LLJIT) compiles it in the engine's process into
 * anonymous memory.  This is how Umbra, HyPer or PostgreSQL's JIT run
 * their code: no file behind it, so profilers learn of it only from the
 * JIT, here through LLVM's own perf listener, which writes jit-PID.dump
 * (code loads, and the DWARF lines of each function) and maps it, so
 * that tailor record finds and keeps it.
 *
 * LLVM 14, Debian 12's default (llvm-14-dev), because its C API has all
 * this takes: LLJIT with a custom object layer, RuntimeDyld's layer with
 * event listeners (JITLink's cannot take the perf listener in 14), and
 * the listener itself.  The bitcode must come from a clang no newer than
 * the LLVM linked in, hence clang-14 by default.
 *
 * Generated code calls nothing by name: the runtime is reached through
 * the context's table.  Whatever else the compiler emits a call to
 * (memset, memcpy) is looked up in the process.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jit.h"
#include "jit_llvm.h"
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm/Config/llvm-config.h>

#define STRINGIFY(x)	#x
#define TO_STRING(x)	STRINGIFY(x)
#define DEFAULT_CLANG	"clang-" TO_STRING(LLVM_VERSION_MAJOR)

static const struct jit_llvm_host *host;

static int llvm_compile(const char *clang, const char *c_path, const char *bc_path)
{
	/* -g: debug locations, which the perf listener turns into lines. */
	static const char *const flags[] = {
		"-std=gnu11", "-O2", "-g", "-fPIC", "-c", "-emit-llvm", "-o",
	};

	return host->run_compiler(clang && *clang ? clang : DEFAULT_CLANG, flags,
				sizeof(flags) / sizeof(flags[0]), bc_path, c_path);
}

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;
static int llvm_init_failed;
static int perf_listener_missing;

static void llvm_init(void)
{
	llvm_init_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
}

static void report_error(const char *what, LLVMErrorRef err)
{
	char *msg = LLVMGetErrorMessage(err);

	fprintf(stderr, "tailor-engine: %s: %s\n", what, msg);
	LLVMDisposeErrorMessage(msg);
}

/* RuntimeDyld's layer, which tells the perf listener of every object it loads. */
static LLVMOrcObjectLayerRef make_object_layer(void *ctx, LLVMOrcExecutionSessionRef es,
					       const char *triple)
{
	LLVMOrcObjectLayerRef layer = LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);
	LLVMJITEventListenerRef perf = LLVMCreatePerfJITEventListener();

	(void)ctx;
	(void)triple;
	if (perf)
		LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer, perf);
	else
		perf_listener_missing = 1;
	return layer;
}

/*
 * The target: the host's, position independent (the JIT's sections may
 * land anywhere), optimizing as the C backend's -O2.
 */
static LLVMOrcJITTargetMachineBuilderRef target_machine(void)
{
	char *triple = LLVMGetDefaultTargetTriple(), *error = NULL;
	LLVMTargetMachineRef tm = NULL;
	LLVMTargetRef target;

	if (LLVMGetTargetFromTriple(triple, &target, &error)) {
		fprintf(stderr, "tailor-engine: LLVM has no target for %s: %s\n", triple, error);
		LLVMDisposeMessage(error);
	} else {
		tm = LLVMCreateTargetMachine(target, triple, "", "", LLVMCodeGenLevelDefault,
					     LLVMRelocPIC, LLVMCodeModelJITDefault);
	}
	LLVMDisposeMessage(triple);
	return tm ? LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm) : NULL;
}

static void *lljit_lookup(void *handle, const char *name)
{
	LLVMOrcExecutorAddress addr = 0;
	LLVMErrorRef err = LLVMOrcLLJITLookup(handle, &addr, name);

	if (err) {
		report_error(name, err);
		return NULL;
	}
	return (void *)(uintptr_t)addr;
}

static void lljit_release(void *handle)
{
	LLVMErrorRef err = LLVMOrcDisposeLLJIT(handle);

	if (err)
		report_error("releasing the JIT", err);
}

/* The JIT, its process symbols and the module of @bc_path; NULL on error. */
static LLVMOrcLLJITRef lljit_with_module(const char *bc_path)
{
	LLVMOrcThreadSafeContextRef tsc = NULL;
	LLVMOrcDefinitionGeneratorRef process;
	LLVMOrcJITTargetMachineBuilderRef jtmb;
	LLVMMemoryBufferRef buf = NULL;
	LLVMOrcLLJITBuilderRef builder;
	LLVMOrcLLJITRef jit = NULL;
	LLVMModuleRef module;
	LLVMErrorRef err;
	char *msg = NULL;

	jtmb = target_machine();
	if (!jtmb)
		return NULL;
	builder = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, jtmb);
	LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(builder, make_object_layer, NULL);
	err = LLVMOrcCreateLLJIT(&jit, builder);
	if (err) {
		report_error("creating LLVM's JIT", err);
		return NULL;
	}
	err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&process,
		LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
	if (err) {
		report_error("looking up this process's symbols", err);
		goto fail;
	}
	LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), process);

	if (LLVMCreateMemoryBufferWithContentsOfFile(bc_path, &buf, &msg)) {
		fprintf(stderr, "tailor-engine: cannot read %s: %s\n", bc_path, msg);
		LLVMDisposeMessage(msg);
		goto fail;
	}
	tsc = LLVMOrcCreateNewThreadSafeContext();
	if (LLVMParseBitcodeInContext2(LLVMOrcThreadSafeContextGetContext(tsc), buf, &module)) {
		fprintf(stderr, "tailor-engine: %s is not bitcode LLVM %d can read\n", bc_path,
			LLVM_VERSION_MAJOR);
		goto fail;
	}
	LLVMDisposeMemoryBuffer(buf);
	buf = NULL;
	/* The module and, through it, the context are the JIT's now. */
	err = LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit),
					  LLVMOrcCreateNewThreadSafeModule(module, tsc));
	LLVMOrcDisposeThreadSafeContext(tsc);
	if (err) {
		report_error(bc_path, err);
		lljit_release(jit);
		return NULL;
	}
	return jit;
fail:
	if (buf)
		LLVMDisposeMemoryBuffer(buf);
	if (tsc)
		LLVMOrcDisposeThreadSafeContext(tsc);
	lljit_release(jit);
	return NULL;
}

static int llvm_load(struct jit_module *m, const char *bc_path)
{
	LLVMOrcLLJITRef jit;

	memset(m, 0, sizeof(*m));
	pthread_once(&llvm_once, llvm_init);
	if (llvm_init_failed) {
		fprintf(stderr, "tailor-engine: LLVM has no native target here\n");
		return -1;
	}
	jit = lljit_with_module(bc_path);
	if (!jit)
		return -1;
	/* The first lookup compiles the module; the perf listener sees it then. */
	if (host->bind(m, bc_path, jit, lljit_lookup, lljit_release))
		return -1;
	if (perf_listener_missing) {
		fprintf(stderr, "tailor-engine: this LLVM has no perf listener: no jitdump, so "
			"profilers cannot name the generated code\n");
		perf_listener_missing = 0;
	}
	return 0;
}

static const struct jit_llvm_backend backend = {
	.abi = JIT_LLVM_ABI,
	.compile = llvm_compile,
	.load = llvm_load,
};

const struct jit_llvm_backend *tailor_engine_llvm_backend(const struct jit_llvm_host *h)
{
	host = h;
	return &backend;
}

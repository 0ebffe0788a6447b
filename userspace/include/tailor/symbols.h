/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * From a sampled IP to code: which mapping of which process held it at
 * the sample's time, which ELF file and address that is, and, through
 * DWARF (libdw, including separate debuginfo), which function and source
 * line.  Results are cached per (file, address), so a sample costs about
 * a hash lookup once its address has been seen.
 *
 * Mappings come as events (sym_consumer()): mmaps in time order, a fork
 * copying its parent's, an exec ending the old image's.  Code a JIT put
 * in anonymous memory is named by its jitdump (found by its mapping, as
 * perf finds it) or its perf map (/tmp/perf-PID.map): function, and
 * source line where the jitdump has them (lib/symbols/jit_code.c).
 */
#ifndef TAILOR_SYMBOLS_H
#define TAILOR_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "tailor/events.h"

enum sym_status {
	SYM_OK = 0,		/* function and line known */
	SYM_NO_LINE,		/* function known, no line information */
	SYM_NO_DEBUGINFO,	/* in a file with neither symbols nor DWARF */
	SYM_NO_FILE,		/* the mapped file cannot be opened */
	SYM_NO_MAPPING,		/* no mapping of the process covers the IP */
};

struct sym_result {
	enum sym_status status;
	const char *path;	/* the mapped file, or NULL */
	uint64_t address;	/* ELF virtual address of the IP in that file */
	const char *function;	/* or NULL */
	/*
	 * With no function: the file has no symbol table (.symtab), nor has
	 * a separate debug file found for it -- it was stripped.
	 */
	bool stripped;
	const char *file;	/* source file, or NULL */
	unsigned int line;	/* 0 if unknown */
	/*
	 * A number for (path, address), dense from 0, so that callers can
	 * keep their own facts about it in an array; UINT32_MAX when memory
	 * ran out.  Results without an address share one per file.
	 */
	uint32_t id;
};

struct symbolizer;

struct symbolizer *sym_new(void);
void sym_free(struct symbolizer *s);
/* An owned copy of @str, valid until sym_free(); NULL without memory. */
const char *sym_keep(struct symbolizer *s, const char *str);
/* C++, Rust and D names demangled as perf shows them (the default), or not. */
void sym_set_demangle(struct symbolizer *s, bool demangle);
/*
 * Separate debug files are looked for under @dir (absolute, no ':') too,
 * after the file's own directory, its .debug/ and /usr/lib/debug.
 */
int sym_set_debug_dir(struct symbolizer *s, const char *dir);
/*
 * The build-ids the profile recorded for its files (session_info's
 * build_ids: "PATH\tHEX\n" lines).  A file whose path holds another build
 * now is read from a kept copy of the recorded one (--debug-dir's, perf's
 * build-id cache ~/.debug, /usr/lib/debug), as perf report reads it, or
 * not at all; sym_each_changed() says which.
 */
int sym_set_recorded_build_ids(struct symbolizer *s, const char *text, size_t len);
/* For each file read so far that changed since the recording: @copy, NULL if none found. */
void sym_each_changed(struct symbolizer *s,
		      void (*fn)(void *arg, const char *path, const char *recorded,
				 const char *now, const char *copy),
		      void *arg);
/*
 * Whether the profile maps the module @path of GNU build-id @build_id
 * (hex; NULL: none known), after the session's mappings were read: at
 * @path, as that build or another; or not at all.  By path, as the
 * attributor asks whether a process maps it (a copy elsewhere, or a
 * container's path, is not found).  *@mapped is the file found (valid
 * until sym_free()), @mapped_id its build-id in hex ("" if none).
 */
enum sym_module_match {
	SYM_MODULE_NONE,
	SYM_MODULE_MAPPED,
	SYM_MODULE_OTHER_BUILD,
};
#define SYM_BUILD_ID_HEX	81	/* 40 bytes as hex, and the NUL */
enum sym_module_match sym_find_module(struct symbolizer *s, const char *path,
				      const char *build_id, const char **mapped,
				      char *mapped_id, size_t len);
/*
 * What an object the profile mapped is, for exporters that describe
 * objects (pprof's Mapping table).
 */
struct sym_object {
	char build_id[SYM_BUILD_ID_HEX];	/* its GNU build-id as hex, "" if none */
	/* A program, not a library: ET_EXEC, or ET_DYN with PT_INTERP (PIE). */
	bool executable;
	bool has_dwarf;		/* debug info, its own or a separate debug file's */
	/*
	 * Its first executable PT_LOAD segment: ELF virtual addresses
	 * [text_start, text_end) and the file offset they begin at; 0s if none.
	 */
	uint64_t text_start, text_end, text_offset;
};
/* 0, or -ENOENT for a path no mapping named or that cannot be read (gone, anonymous). */
int sym_object_info(struct symbolizer *s, const char *path, struct sym_object *out);

/*
 * One function of the chain of inlined calls at an address (inline_frames.c),
 * as DWARF's DW_TAG_inlined_subroutine scopes give it: its name (the
 * linkage name demangled as the symbols' are, else DW_AT_name) and the
 * line it was at.  The innermost's line is the address's own (sym_lookup()'s
 * file and line): @file NULL and @line 0 here.  Each outer one's is the call
 * site of the one inside it (DW_AT_call_file, DW_AT_call_line; NULL and 0
 * where DWARF has none).  Strings are valid until sym_free().
 */
struct sym_inline_frame {
	const char *function;
	const char *file;
	unsigned int line;
};
/*
 * The functions at ELF virtual address @address of @path (a file the
 * profile mapped), innermost first, ending with the subprogram holding
 * them: 1 frame where no code is inlined there, more where it is; at most
 * @max are stored, the count there are is returned.  0 without DWARF for
 * the address.  Worked out once per (file, address), then cached.
 */
int sym_inline_frames(struct symbolizer *s, const char *path, uint64_t address,
		      struct sym_inline_frame *out, int max);
/* Whether @pid has one of @paths mapped at @time. */
bool sym_pid_maps(const struct symbolizer *s, uint32_t pid, const char *const *paths,
		  size_t nr_paths, uint64_t time);
/* A number that changes whenever the mappings do (an answer's age). */
uint64_t sym_generation(const struct symbolizer *s);
/* The symbolizer as a consumer of mmap, fork and comm (exec) events. */
struct tev_consumer *sym_consumer(struct symbolizer *s);
/* A mapping of @pid from @time on (0: from the start); 0 or -errno. */
int sym_add_mapping(struct symbolizer *s, uint32_t pid, uint64_t time,
		    uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *path);
/* Process @child gets copies of @parent's mappings in force at @time. */
int sym_fork(struct symbolizer *s, uint32_t parent, uint32_t child, uint64_t time);
/* @pid's mappings end at @time: an exec replaced its image. */
void sym_exec(struct symbolizer *s, uint32_t pid, uint64_t time);
/* Strings in @out stay valid until sym_free(). */
void sym_lookup(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t time,
		struct sym_result *out);

/*
 * Where JIT files are read from before the path the JIT wrote: first
 * through @embedded (0 with the bytes of @path, valid until sym_free();
 * a recording's own copies), then from @dir under the file's own name.
 */
int sym_set_jit_files(struct symbolizer *s,
		      int (*embedded)(void *ctx, const char *path, const void **data, size_t *len),
		      void *ctx);
int sym_set_jit_dir(struct symbolizer *s, const char *dir);
/* Perf maps on disk older than @wall_ns (the profile's start) are not its. */
int sym_set_jit_not_before(struct symbolizer *s, uint64_t wall_ns);
/*
 * How a jitdump's times (TSC ticks if @tsc, else CLOCK_MONOTONIC ns)
 * become the profile's: 0 with *@time converted, else a dump's times are
 * dropped (loads in file order; see jit_code.c).  Unset: dropped.
 */
int sym_set_jit_clock(struct symbolizer *s, int (*convert)(void *ctx, bool tsc, uint64_t *time),
		      void *ctx);

/* A JIT file looked for, and what came of it, for the report's notes. */
struct sym_jit_source {
	const char *path;	/* as the JIT named it */
	const char *read_from;	/* where it was read, NULL if nowhere */
	const char *problem;	/* "" if read whole */
	uint32_t pid;
	bool perf_map;		/* else a jitdump */
	bool tsc;		/* a jitdump with TSC times */
	bool times_dropped;	/* its times are not the profile's clock */
	uint64_t loads;		/* code loads, or perf map entries */
	uint64_t moves, moves_unknown;	/* moves, of which of no known code */
	uint64_t bad_lines;	/* perf map lines skipped */
	uint64_t bad_line_entries;	/* jitdump lines with unreadable file names */
	bool lines_shifted;	/* its lines taken back by 0x40 (LLVM's, V8's) */
	uint64_t samples;	/* lookups it answered */
	uint64_t unnamed;	/* lookups in its process's anonymous memory it could not */
};

size_t sym_jit_nr_sources(const struct symbolizer *s);
const struct sym_jit_source *sym_jit_source(const struct symbolizer *s, size_t i);

/*
 * The offset from the thread pointer of thread-local @name, defined in
 * the x86-64 executable @path (its static TLS block; see tls_offset.c).
 * 0, or -errno with the problem named in @err.
 */
int tls_symbol_offset(const char *path, const char *name, int64_t *offset,
		      char *err, size_t errlen);

/*
 * The offset from the thread pointer of thread-local @name in running
 * process @pid, wherever it is defined: the executable, or a shared
 * library whose static-TLS block the loader placed (read from the GOT
 * entry the library reads it through; see tls_live.c).  0 with the
 * object's path in @object; -ENOENT where no object defines it; other
 * -errno with the reason in @err (dynamic TLS, __tls_get_addr access).
 */
int tls_live_offset(pid_t pid, const char *name, int64_t *offset, char *object, size_t objlen,
		    char *err, size_t errlen);

/*
 * tls_live_offset() for one object: the file at @path (named @shown in
 * messages), mapped in process @pid at @start.  0 with the offset,
 * -ENOENT where it does not define @name, other -errno with @err.
 */
int tls_object_offset(pid_t pid, const char *path, const char *shown, uint64_t start,
		      const char *name, int64_t *offset, char *err, size_t errlen);

/*
 * OpenTelemetry's thread context (OTEP 4947): a thread-local pointer to
 * the thread's context record, exported under this name.
 */
#define OTEL_CTX_SYMBOL	"otel_thread_ctx_v1"

#endif /* TAILOR_SYMBOLS_H */

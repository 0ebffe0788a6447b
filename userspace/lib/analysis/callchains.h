/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Call stacks interned for the aggregate (callchains.c): the index the
 * pass keeps while it reads, and the one call it makes per sample.
 */
#ifndef TAILOR_LIB_ANALYSIS_CALLCHAINS_H
#define TAILOR_LIB_ANALYSIS_CALLCHAINS_H

#include "tailor/aggregate.h"
#include "tailor/events.h"
#include "util/hashmap.h"

struct symbolizer;
struct kallsyms;
struct unwinder;

/* A stack's raw entries, to tell stacks of one hash apart. */
struct raw_chain {
	size_t first;		/* byte offset in entries */
	uint32_t n;		/* entries */
	uint32_t pid;
	uint32_t image;		/* the pid's execs before it */
};

struct chain_index {
	struct pair_map by_hash;	/* (hash, pid << 32 | n) -> chain */
	struct raw_chain *chains;	/* by chain, as g->chains */
	size_t cap_chains;
	uint8_t *entries;
	size_t nr_entries, cap_entries;
	/* The kernel's symbols that name kernel callers, or NULL: asked once. */
	const struct kallsyms *kallsyms;
	uint64_t kernel_delta;	/* the recording's kernel address minus the file's */
	bool kernel_asked;
	struct unwinder *unwinder;	/* --call-graph dwarf's, made on first need */
};

/*
 * The chain (index into g->chains) of @s's callers, made and symbolized on
 * first sight; 0 when @s carries no callers.  A --call-graph dwarf
 * sample's user stack is unwound here, where @sym knows the maps.  @image: how many execs @s's
 * process made before @s (the same addresses mean other code after one).
 * 0 or -ENOMEM.
 */
int chains_intern(struct chain_index *ix, struct agg *g, struct symbolizer *sym,
		  const struct tev_sample *s, uint32_t image, uint32_t *chain);
void chains_index_free(struct chain_index *ix);

#endif /* TAILOR_LIB_ANALYSIS_CALLCHAINS_H */

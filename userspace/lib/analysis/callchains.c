// SPDX-License-Identifier: GPL-2.0-only
/*
 * Call stacks (perf record -g, --call-graph dwarf): each distinct stack of
 * callers, symbolized once and kept in the aggregate, root first.  Samples
 * of a hot loop share a few stacks, so a stack is interned by its raw
 * return addresses (and the process, whose mappings give them meaning)
 * and symbolized when first seen, never per sample.
 *
 * As perf reads the kernel's callchain: entries come leaf first, with
 * PERF_CONTEXT_* markers saying whose code follows; the first entry is the
 * sample's own IP (its frames are the sample's, not a caller's, so stacks
 * that differ only there are one); in each context the first entry is an
 * interrupted IP and the others are return addresses, looked up one byte
 * back so that a call that is its function's last instruction is named by
 * that function (and its line by the call's).  A stack is the process's
 * at the time: an exec gives the same addresses new meaning (@image).
 *
 * With --call-graph dwarf the callchain holds the kernel's part only, and
 * the user's is unwound from the sampled registers and stack bytes
 * (symbols/unwind_dwarf.c) -- per sample, as every sample's stack is its
 * own, but into the same raw addresses, interned and symbolized as a
 * callchain's are.  Kernel callers are named from the kernel's symbols
 * (--kallsyms, or this host's /proc/kallsyms) as perf names them; where
 * no kernel symbols are known they are left out, as before kernel
 * symbols were read: the sample's own frame still says [kernel].
 */
#include <errno.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/aggregate.h"
#include "tailor/attribution.h"
#include "tailor/kallsyms.h"
#include "tailor/x86_regs.h"
#include "tailor/symbols.h"
#include "analysis/callchains.h"
#include "symbols/unwind_dwarf.h"
#include "util/grow.h"


static uint64_t entry_at(const struct tev_sample *s, uint32_t i)
{
	uint64_t e;

	memcpy(&e, (const uint8_t *)s->callchain + 8ull * i, 8);
	return e;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/*
 * The callers of @s that name code here, into @key: the entries after the
 * leaf, each run of them led by its context's marker where one came after
 * the leaf -- PERF_CONTEXT_KERNEL's entries are the kernel's, and a
 * PERF_CONTEXT_USER says the entry after it is an interrupted IP, not a
 * return address.  Kernel callers only with kernel symbols to name them
 * (ix->kallsyms); a guest's or the hypervisor's are no code of this
 * host's.  With the LBR's calls (--call-graph lbr), they stand for the
 * callchain's user frames but its first.  Then, where the callchain has
 * no user part and the sample brought its user registers and stack
 * (--call-graph dwarf), the user frames unwound from them, @ix->unwinder
 * made on first need.  The number of entries; @key has room for
 * nr_callchain + 1 + UNWIND_MAX_FRAMES * 2 + nr_lbr_calls * 2.
 */
static uint32_t callers_key(struct chain_index *ix, struct symbolizer *sym,
			    const struct tev_sample *s, uint64_t *key)
{
	struct unwound_frame frames[UNWIND_MAX_FRAMES];
	uint64_t context = 0;
	bool leaf_seen = false, user_part = false, kernel_run = false, user_first = false;
	uint32_t k, n = 0, nr;

	for (k = 0; k < s->nr_callchain; k++) {
		uint64_t e = entry_at(s, k);
		bool user = context == PERF_CONTEXT_USER ||
			    (!context && !x86_kernel_address(e));

		if (e >= PERF_CONTEXT_MAX) {
			context = e;
			if (leaf_seen && e == PERF_CONTEXT_USER)
				key[n++] = e;
			kernel_run = false;
			continue;
		}
		if (!leaf_seen) {
			leaf_seen = true;
			user_first = user;
			continue;
		}
		if (user) {
			/* The LBR's calls stand for the user's frames after the first. */
			if (s->nr_lbr_calls && user_first)
				continue;
			key[n++] = e;
			user_part = true;
			user_first = true;
		} else if (context == PERF_CONTEXT_KERNEL && ix->kallsyms) {
			if (!kernel_run)
				key[n++] = PERF_CONTEXT_KERNEL;
			kernel_run = true;
			key[n++] = e;
		}
	}
	/*
	 * The LBR's calls, latest first, as perf takes them for --call-graph
	 * lbr: each a call instruction's own address, looked up as it is (a
	 * PERF_CONTEXT_USER before it says so, as for an interrupted IP).
	 */
	for (k = 0; k < s->nr_lbr_calls; k++) {
		uint64_t from;

		memcpy(&from, (const uint8_t *)s->lbr_calls + 24ull * k, 8);
		key[n++] = PERF_CONTEXT_USER;
		key[n++] = from;
		user_part = true;
	}
	/* A marker with no entry after it names nothing. */
	if (n && key[n - 1] >= PERF_CONTEXT_MAX)
		n--;
	if (user_part || !s->user_stack_size)
		return n;
	if (!ix->unwinder && !(ix->unwinder = unwind_new(sym)))
		return n;
	nr = unwind_user(ix->unwinder, s, frames, UNWIND_MAX_FRAMES);
	/* A user-mode sample's first frame is its own IP: its leaf. */
	for (k = leaf_seen ? 0 : 1; k < nr; k++) {
		if (frames[k].exact)
			key[n++] = PERF_CONTEXT_USER;
		key[n++] = frames[k].ip;
	}
	return n;
}

/* The bracketed name of an object, as its row: [libc.so.6], [vdso]. */
static const char *object_name(struct symbolizer *sym, const char *path)
{
	char name[512];

	attr_object_name(path, name, sizeof(name));
	return sym_keep(sym, name);
}

static int add_frame(struct agg *g, const struct agg_frame *f)
{
	if (array_grow((void **)&g->frames, &g->cap_frames, g->nr_frames + 1, sizeof(*g->frames)))
		return -ENOMEM;
	g->frames[g->nr_frames++] = *f;
	return 0;
}

/*
 * A kernel caller, named as perf names it from kallsyms (the function the
 * call is in: its return address one byte back), in perf's object.  Where
 * the kernel's unwinder crossed an interrupt or exception (its callee here
 * is an entry stub, asm_sysvec_apic_timer_interrupt, asm_exc_page_fault),
 * the entry is the IP the stub saved -- an interrupted instruction, not a
 * return address: looked up as it is, or an interrupt at a function's
 * first instruction would name the padding before it (__pfx_read_zero).
 */
static void kernel_frame(const struct chain_index *ix, uint64_t ret, bool interrupted,
			 struct agg_frame *f)
{
	uint32_t index;
	const char *name = kallsyms_name(ix->kallsyms, ret - !interrupted - ix->kernel_delta,
					 &index);

	/*
	 * One byte back is the padding before a function (__pfx_write_null,
	 * CONFIG_FUNCTION_PADDING), which holds no call: the entry is the
	 * function's own first byte, reached by a jump (a return thunk's
	 * frame), not a return address.  Named as it is, as perf does.
	 */
	if (name && !interrupted && !strncmp(name, "__pfx_", 6))
		name = kallsyms_name(ix->kallsyms, ret - ix->kernel_delta, &index);

	f->function = name ? name : "[unknown]";
	f->object = "[kernel.kallsyms]";
	f->kernel = true;
}

/*
 * An interrupt's or exception's entry stub, as idtentry.h names them
 * (asm_exc_page_fault, asm_sysvec_apic_timer_interrupt,
 * asm_common_interrupt): the frame below it in a kernel callchain is the
 * IP the stub saved.  Not every asm_ function is one (asm_load_gs_index).
 */
static bool entry_stub(const char *name)
{
	return !strncmp(name, "asm_exc_", 8) || !strncmp(name, "asm_sysvec_", 11) ||
	       !strcmp(name, "asm_common_interrupt") || !strcmp(name, "asm_spurious_interrupt");
}

/* The callers in @key (callers_key()) symbolized into g->frames, root first. */
static int symbolize(const struct chain_index *ix, struct agg *g, struct symbolizer *sym,
		     const struct tev_sample *s, const uint64_t *key, uint32_t nr, uint32_t *n)
{
	bool interrupted = false, kernel = false;
	size_t start = g->nr_frames, i, j;
	uint32_t k;

	for (k = 0; k < nr; k++) {
		struct agg_frame f = { 0 };
		struct sym_result r;

		if (key[k] >= PERF_CONTEXT_MAX) {
			kernel = key[k] == PERF_CONTEXT_KERNEL;
			interrupted = key[k] == PERF_CONTEXT_USER;
			continue;
		}
		if (kernel) {
			kernel_frame(ix, key[k], interrupted, &f);
			interrupted = entry_stub(f.function);
			if (add_frame(g, &f))
				return -ENOMEM;
			continue;
		}
		sym_lookup(sym, s->pid, interrupted ? key[k] : key[k] - 1, s->time, &r);
		interrupted = false;
		f.object = r.path;
		f.file = r.file;
		f.line = r.line;
		f.function = r.function ? r.function :
			     r.path ? object_name(sym, r.path) : "[unknown]";
		if (!f.function || add_frame(g, &f))
			return -ENOMEM;
	}
	/* Leaf first as the kernel gave them: root first as stacks are read. */
	for (i = start, j = g->nr_frames; i + 1 < j; i++, j--) {
		struct agg_frame t = g->frames[i];

		g->frames[i] = g->frames[j - 1];
		g->frames[j - 1] = t;
	}
	*n = (uint32_t)(g->nr_frames - start);
	return 0;
}

int chains_intern(struct chain_index *ix, struct agg *g, struct symbolizer *sym,
		  const struct tev_sample *s, uint32_t image, uint32_t *chain)
{
	uint64_t h = image, salt, small[64 + 1 + 2 * UNWIND_MAX_FRAMES], *key = small;
	uint32_t k, idx, n, nr;
	int ret = 0;

	*chain = 0;
	if (!tev_sample_has_stack(s))
		return 0;
	if (!ix->kernel_asked) {
		ix->kernel_asked = true;
		ix->kallsyms = attr_kernel_symbols(g->attr, &ix->kernel_delta);
	}
	if (s->nr_callchain + 2ull * s->nr_lbr_calls > 64) {
		key = malloc(8ull * (s->nr_callchain + 1 + 2 * UNWIND_MAX_FRAMES +
				     2ull * s->nr_lbr_calls));
		if (!key)
			return -ENOMEM;
	}
	nr = callers_key(ix, sym, s, key);
	if (!nr)
		goto out;
	for (k = 0; k < nr; k++)
		h = mix(h, key[k]);
	/* A hash met by another stack: the next salt, until one is free or ours. */
	for (salt = 0;; salt++) {
		uint64_t hk = h ^ salt * 0xc2b2ae3d27d4eb4full;
		const struct raw_chain *c;

		if (!pair_map_get(&ix->by_hash, hk, (uint64_t)s->pid << 32 | nr, &idx))
			break;
		c = &ix->chains[idx];
		if (c->pid == s->pid && c->image == image && c->n == nr &&
		    !memcmp(ix->entries + c->first, key, 8ull * nr)) {
			*chain = idx;
			goto out;
		}
	}
	ret = -ENOMEM;
	if (!g->nr_chains) {
		/* Chain 0: no callers recorded. */
		if (array_grow((void **)&g->chains, &g->cap_chains, 1, sizeof(*g->chains)) ||
		    array_grow((void **)&ix->chains, &ix->cap_chains, 1, sizeof(*ix->chains)))
			goto out;
		g->chains[g->nr_chains++] = (struct agg_chain){ 0, 0 };
		ix->chains[0] = (struct raw_chain){ 0 };
	}
	idx = (uint32_t)g->nr_chains;
	if (array_grow((void **)&g->chains, &g->cap_chains, idx + 1, sizeof(*g->chains)) ||
	    array_grow((void **)&ix->chains, &ix->cap_chains, idx + 1, sizeof(*ix->chains)) ||
	    array_grow((void **)&ix->entries, &ix->cap_entries, ix->nr_entries + 8ull * nr, 1))
		goto out;
	g->chains[idx].first = (uint32_t)g->nr_frames;
	if (symbolize(ix, g, sym, s, key, nr, &n))
		goto out;
	g->chains[idx].n = n;
	ix->chains[idx] = (struct raw_chain){ ix->nr_entries, nr, s->pid, image };
	memcpy(ix->entries + ix->nr_entries, key, 8ull * nr);
	ix->nr_entries += 8ull * nr;
	if (pair_map_put(&ix->by_hash, h ^ salt * 0xc2b2ae3d27d4eb4full,
			 (uint64_t)s->pid << 32 | nr, idx))
		goto out;
	g->nr_chains++;
	*chain = idx;
	ret = 0;
out:
	if (key != small)
		free(key);
	return ret;
}

void chains_index_free(struct chain_index *ix)
{
	unwind_free(ix->unwinder);
	pair_map_free(&ix->by_hash);
	free(ix->chains);
	free(ix->entries);
	memset(ix, 0, sizeof(*ix));
}

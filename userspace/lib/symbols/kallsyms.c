// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel function names from a kallsyms file (/proc/kallsyms, or a copy
 * taken where the profile was recorded): "ADDRESS TYPE NAME [MODULE]" a
 * line.  Only text symbols name code; a symbol holds the addresses up to
 * the next one, as perf's kallsyms reader takes them (the file gives no
 * sizes).  A file whose addresses are all zero was read without the right
 * to see them (kptr_restrict): refused, saying so, rather than naming
 * every sample after the first symbol.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/kallsyms.h"
#include "util/grow.h"

struct ksym {
	uint64_t addr;
	char *name;
	size_t order;		/* in the file */
};

struct kallsyms {
	struct ksym *syms;
	size_t nr, cap;
	uint64_t text;		/* _text's address, 0 if absent */
};

/*
 * By address, and of several at one address in the file's order: the
 * lookup takes the last, as perf does.  perf gives each symbol the
 * addresses up to the next one's start, so at a shared address all but
 * the last in the file get none, and its choose_best_symbol() prefers the
 * one that has some (__x86_indirect_thunk_rax over the
 * __pi___x86_indirect_thunk_rax and __x86_indirect_thunk_array before it).
 */
static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void kallsyms_free(struct kallsyms *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nr; i++)
		free(k->syms[i].name);
	free(k->syms);
	free(k);
}

/* The kallsyms text of @f, called @path in messages; @f is closed. */
static struct kallsyms *kallsyms_read(FILE *f, const char *path, char *err, size_t errlen)
{
	struct kallsyms *k = calloc(1, sizeof(*k));
	char line[1024], type, name[512];
	unsigned long long addr;
	size_t lineno = 0, nonzero = 0;

	if (!k || !f) {
		snprintf(err, errlen, "%s: %s", path, k ? strerror(errno) : "out of memory");
		goto fail;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3) {
			snprintf(err, errlen, "%s:%zu: not a kallsyms line (ADDRESS TYPE NAME)", path,
				 lineno);
			goto fail;
		}
		if (addr)
			nonzero++;
		if (!strcmp(name, "_text"))
			k->text = addr;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (array_grow((void **)&k->syms, &k->cap, k->nr + 1, sizeof(*k->syms)) ||
		    !(k->syms[k->nr].name = strdup(name))) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		k->syms[k->nr].order = k->nr;
		k->syms[k->nr++].addr = addr;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto fail;
	}
	if (!nonzero || !k->nr) {
		snprintf(err, errlen, !lineno ? "%s: empty" :
			 !nonzero ? "%s: every address is 0 (kernel.kptr_restrict hides them: read it as root)" :
			 "%s: no text symbols", path);
		goto fail;
	}
	fclose(f);
	qsort(k->syms, k->nr, sizeof(*k->syms), by_addr);
	return k;
fail:
	if (f)
		fclose(f);
	kallsyms_free(k);
	return NULL;
}

struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen)
{
	return kallsyms_read(fopen(path, "re"), path, err, errlen);
}

struct kallsyms *kallsyms_parse(const char *text, size_t len, const char *name, char *err,
				size_t errlen)
{
	if (!len) {
		snprintf(err, errlen, "%s: empty", name);
		return NULL;
	}
	return kallsyms_read(fmemopen((void *)text, len, "r"), name, err, errlen);
}

size_t kallsyms_count(const struct kallsyms *k)
{
	return k->nr;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

char *kallsyms_subset(const struct kallsyms *k, const uint64_t *addrs, size_t n, size_t *len)
{
	uint32_t *used = malloc((n ? n : 1) * sizeof(*used));
	size_t i, nr = 0, cap = 4096, at = 0;
	char *text = malloc(cap);

	if (!used || !text)
		goto fail;
	for (i = 0; i < n; i++)
		if (kallsyms_name(k, addrs[i], &used[nr]))
			nr++;
	if (nr)
		qsort(used, nr, sizeof(*used), cmp_u32);
	/*
	 * _text, then each symbol holding one of the addresses, once, in
	 * address order: the lookup of each of them finds the same symbol
	 * in the subset (no symbol kept lies between it and the address).
	 */
	at = (size_t)snprintf(text, cap, "%016llx T _text\n", (unsigned long long)k->text);
	for (i = 0; i < nr; i++) {
		const struct ksym *s = &k->syms[used[i]];
		size_t need = strlen(s->name) + 24;

		if (i && used[i] == used[i - 1])
			continue;
		if (at + need >= cap) {
			char *grown = realloc(text, cap * 2 + need);

			if (!grown)
				goto fail;
			text = grown;
			cap = cap * 2 + need;
		}
		at += (size_t)snprintf(text + at, cap - at, "%016llx t %s\n",
				       (unsigned long long)s->addr, s->name);
	}
	free(used);
	*len = at;
	return text;
fail:
	free(used);
	free(text);
	return NULL;
}

uint64_t kallsyms_text(const struct kallsyms *k)
{
	return k->text;
}

const char *kallsyms_name(const struct kallsyms *k, uint64_t addr, uint32_t *index)
{
	size_t lo = 0, hi = k->nr;

	/* The last symbol at or below @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || lo > UINT32_MAX)
		return NULL;
	*index = (uint32_t)(lo - 1);
	return k->syms[lo - 1].name;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization for reports: IP -> mapping -> ELF address -> function and
 * source line (libdw).  A report looks up millions of samples that hit a
 * few thousand distinct addresses, so every answer is cached by (file,
 * address) and mappings are found by binary search.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tailor/symbols.h"

struct sym_file {
	char *path;
	Dwfl *dwfl;		/* NULL: could not be opened */
	Dwfl_Module *mod;
	GElf_Addr bias;
	Elf *elf;
	bool tried;
};

struct sym_map {
	uint32_t pid;
	uint64_t tsc;
	uint64_t start, end, pgoff;
	struct sym_file *file;
};

struct cache_entry {
	struct sym_file *file;	/* NULL: empty slot */
	uint64_t address;
	struct sym_result result;
};

struct symbolizer {
	struct sym_map *maps;	/* sorted by (pid, start, tsc) once looked up */
	size_t nr_maps, cap_maps;
	bool sorted;
	struct sym_file **files;
	size_t nr_files;
	struct cache_entry *cache;
	size_t cache_cap, cache_used;
	char **strings;		/* owned copies handed out in results */
	size_t nr_strings;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct symbolizer *sym_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (s) {
		s->cache_cap = 4096;
		s->cache = calloc(s->cache_cap, sizeof(*s->cache));
		if (!s->cache) {
			free(s);
			return NULL;
		}
	}
	return s;
}

void sym_free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_files; i++) {
		if (s->files[i]->dwfl)
			dwfl_end(s->files[i]->dwfl);
		free(s->files[i]->path);
		free(s->files[i]);
	}
	for (i = 0; i < s->nr_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->files);
	free(s->maps);
	free(s->cache);
	free(s);
}

static struct sym_file *file_of(struct symbolizer *s, const char *path)
{
	struct sym_file *f, **files;
	size_t i;

	for (i = 0; i < s->nr_files; i++)
		if (!strcmp(s->files[i]->path, path))
			return s->files[i];
	f = calloc(1, sizeof(*f));
	files = realloc(s->files, (s->nr_files + 1) * sizeof(*files));
	if (!f || !files || !(f->path = strdup(path))) {
		free(f);
		if (files)
			s->files = files;
		return NULL;
	}
	s->files = files;
	s->files[s->nr_files++] = f;
	return f;
}

int sym_add_mapping(struct symbolizer *s, uint32_t pid, uint64_t tsc,
		    uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *path)
{
	struct sym_map *m;

	if (!len || start + len < start)
		return -EINVAL;
	if (s->nr_maps == s->cap_maps) {
		size_t cap = s->cap_maps ? s->cap_maps * 2 : 256;

		m = realloc(s->maps, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		s->maps = m;
		s->cap_maps = cap;
	}
	m = &s->maps[s->nr_maps];
	*m = (struct sym_map){ .pid = pid, .tsc = tsc, .start = start,
			       .end = start + len, .pgoff = pgoff };
	m->file = file_of(s, path);
	if (!m->file)
		return -ENOMEM;
	s->nr_maps++;
	s->sorted = false;
	return 0;
}

static int cmp_map(const void *a, const void *b)
{
	const struct sym_map *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

/*
 * The mapping of @pid covering @ip at @tsc: among those covering it, the
 * newest that began by @tsc (a later mapping at the same place replaced
 * it, as when generated code is unloaded and reloaded).
 */
static const struct sym_map *find_map(struct symbolizer *s, uint32_t pid,
				      uint64_t ip, uint64_t tsc)
{
	const struct sym_map *best = NULL, *fallback = NULL;
	size_t lo = 0, hi, i;

	if (!s->sorted) {
		if (s->nr_maps)
			qsort(s->maps, s->nr_maps, sizeof(*s->maps), cmp_map);
		s->sorted = true;
	}
	/* First mapping of pid with start > ip; candidates lie before it. */
	hi = s->nr_maps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sym_map *m = &s->maps[mid];

		if (m->pid < pid || (m->pid == pid && m->start <= ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0;) {
		const struct sym_map *m = &s->maps[i];

		if (m->pid != pid)
			break;
		if (ip >= m->end)
			continue;
		if (m->tsc <= tsc) {
			if (!best || m->tsc > best->tsc)
				best = m;
		} else if (!fallback) {
			fallback = m;
		}
	}
	return best ? best : fallback;
}

static void open_file(struct sym_file *f)
{
	f->tried = true;
	f->dwfl = dwfl_begin(&offline_callbacks);
	if (!f->dwfl)
		return;
	f->mod = dwfl_report_offline(f->dwfl, f->path, f->path, -1);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (f->mod)
		f->elf = dwfl_module_getelf(f->mod, &f->bias);
	if (!f->mod || !f->elf) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
		f->mod = NULL;
	}
}

/* File offset -> ELF virtual address, through the loadable segments. */
static int offset_to_vaddr(Elf *elf, uint64_t off, uint64_t *vaddr)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*vaddr = off - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

static const char *keep(struct symbolizer *s, const char *str)
{
	char **strings, *copy;

	if (!str)
		return NULL;
	copy = strdup(str);
	strings = realloc(s->strings, (s->nr_strings + 1) * sizeof(*strings));
	if (!copy || !strings) {
		free(copy);
		if (strings)
			s->strings = strings;
		return NULL;
	}
	s->strings = strings;
	s->strings[s->nr_strings++] = copy;
	return copy;
}

static void resolve(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		    struct sym_result *r)
{
	GElf_Addr addr = vaddr + f->bias;
	Dwfl_Line *line;
	const char *src;
	int lineno = 0;

	r->function = keep(s, dwfl_module_addrname(f->mod, addr));
	line = dwfl_module_getsrc(f->mod, addr);
	src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (src && lineno > 0) {
		r->file = keep(s, src);
		r->line = lineno;
		r->status = SYM_OK;
	} else {
		r->status = r->function ? SYM_NO_LINE : SYM_NO_DEBUGINFO;
	}
}

static struct cache_entry *cache_slot(struct symbolizer *s, struct sym_file *f,
				      uint64_t address)
{
	uint64_t h = (address ^ (uintptr_t)f) * 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = h & (s->cache_cap - 1);; i = (i + 1) & (s->cache_cap - 1)) {
		struct cache_entry *e = &s->cache[i];

		if (!e->file || (e->file == f && e->address == address))
			return e;
	}
}

static void cache_grow(struct symbolizer *s)
{
	struct cache_entry *old = s->cache;
	size_t old_cap = s->cache_cap, i;

	s->cache = calloc(old_cap * 2, sizeof(*s->cache));
	if (!s->cache) {
		/* Keep the full cache; lookups stay correct, just uncached. */
		s->cache = old;
		return;
	}
	s->cache_cap = old_cap * 2;
	for (i = 0; i < old_cap; i++)
		if (old[i].file)
			*cache_slot(s, old[i].file, old[i].address) = old[i];
	free(old);
}

void sym_lookup(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t tsc,
		struct sym_result *out)
{
	const struct sym_map *m = find_map(s, pid, ip, tsc);
	struct cache_entry *e;
	struct sym_file *f;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	if (!m) {
		out->status = SYM_NO_MAPPING;
		return;
	}
	f = m->file;
	out->path = f->path;
	if (!f->tried)
		open_file(f);
	if (!f->dwfl) {
		out->status = SYM_NO_FILE;
		return;
	}
	if (offset_to_vaddr(f->elf, ip - m->start + m->pgoff, &vaddr)) {
		out->status = SYM_NO_DEBUGINFO;
		return;
	}
	out->address = vaddr;
	if ((s->cache_used + 1) * 2 > s->cache_cap)
		cache_grow(s);
	if ((s->cache_used + 1) * 2 > s->cache_cap) {
		/* Out of memory for the cache: answer without it. */
		resolve(s, f, vaddr, out);
		return;
	}
	e = cache_slot(s, f, vaddr);
	if (!e->file) {
		e->file = f;
		e->address = vaddr;
		e->result = *out;
		resolve(s, f, vaddr, &e->result);
		s->cache_used++;
	}
	*out = e->result;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization for reports: IP -> mapping -> ELF address -> function and
 * source line (libdw).  A report looks up millions of samples that hit a
 * few thousand distinct addresses, so every answer is cached by (file,
 * address) and mappings are found by binary search.
 *
 * libdwfl finds a function by scanning the file's whole symbol table
 * (dwfl_module_addrname()), which costs a millisecond a lookup in a large
 * library under emulation.  Its answer depends on the address only through
 * comparisons with symbol starts and ends and section bounds, so it is the
 * same for every address strictly between two consecutive such bounds (a
 * bound itself, where a comparison for equality may hold, is an interval
 * of its own): each file keeps them sorted, and asks libdwfl once per
 * interval.
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
#include "util/grow.h"

struct sym_file {
	char *path;
	Dwfl *dwfl;		/* NULL: could not be opened */
	Dwfl_Module *mod;
	GElf_Addr bias;
	Elf *elf;
	bool tried;
	uint32_t noaddr_id;	/* id + 1 of its results without an address */
	/* Its loadable segments, read once: every sample needs them. */
	struct sym_segment *segments;
	size_t nr_segments;
	/*
	 * Function names by interval: interval 0 is below bounds[0],
	 * interval 2i + 1 is bounds[i] itself and 2i + 2 the addresses
	 * between bounds[i] and bounds[i + 1] (or above the last); names[]
	 * their answers, NOT_ASKED until asked.  Built at the first lookup.
	 */
	uint64_t *bounds;
	const char **names;
	size_t nr_bounds;
	bool intervals_tried;
};

/* A name slot whose interval libdwfl was not asked about yet. */
static const char not_asked[1];
#define NOT_ASKED	not_asked

struct sym_segment {
	uint64_t offset, filesz, vaddr;
};

struct sym_map {
	uint32_t pid;
	uint64_t time;		/* in force from here ... */
	uint64_t until;		/* ... to here (an exec), UINT64_MAX: on */
	uint64_t start, end, pgoff;
	struct sym_file *file;
};

struct cache_entry {
	struct sym_file *file;	/* NULL: empty slot */
	uint64_t address;
	struct sym_result result;
};

/*
 * The mapping found for a (pid, page) and the times it answers for, so
 * that most samples skip the search: valid while no mapping was added.
 */
#define RECENT_SLOTS	256
struct recent_map {
	uint64_t generation;	/* of maps[]; 0: empty */
	uint32_t pid;
	uint64_t page;
	uint64_t from, to;	/* time window of the answer */
	size_t index;
};

struct symbolizer {
	struct tev_consumer events;
	struct sym_map *maps;	/* sorted by (pid, start, time) */
	size_t nr_maps, cap_maps;
	uint64_t generation;
	struct recent_map recent[RECENT_SLOTS];
	struct sym_file **files;
	size_t nr_files;
	struct cache_entry *cache;
	size_t cache_cap, cache_used;
	char **strings;		/* owned copies handed out in results */
	size_t nr_strings;
	uint32_t next_id;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int on_mmap(struct tev_consumer *c, const struct tev_mmap *m);
static int on_fork(struct tev_consumer *c, const struct tev_task *t);
static int on_comm(struct tev_consumer *c, const struct tev_comm *e);

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
		s->generation = 1;
		s->events.mmap = on_mmap;
		s->events.fork = on_fork;
		s->events.comm = on_comm;
		tev_consumer_defaults(&s->events);
	}
	return s;
}

struct tev_consumer *sym_consumer(struct symbolizer *s)
{
	return &s->events;
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
		free(s->files[i]->segments);
		free(s->files[i]->bounds);
		free(s->files[i]->names);
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

static bool map_before(const struct sym_map *x, const struct sym_map *y)
{
	if (x->pid != y->pid)
		return x->pid < y->pid;
	if (x->start != y->start)
		return x->start < y->start;
	return x->time < y->time;
}

/* Mappings arrive in time order, among lookups: insert in place. */
static int insert_map(struct symbolizer *s, const struct sym_map *m)
{
	size_t lo = 0, hi = s->nr_maps;

	if (array_grow((void **)&s->maps, &s->cap_maps, s->nr_maps + 1, sizeof(*s->maps)))
		return -ENOMEM;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map_before(m, &s->maps[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	memmove(s->maps + lo + 1, s->maps + lo, (s->nr_maps - lo) * sizeof(*s->maps));
	s->maps[lo] = *m;
	s->nr_maps++;
	s->generation++;
	return 0;
}

int sym_add_mapping(struct symbolizer *s, uint32_t pid, uint64_t time,
		    uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *path)
{
	struct sym_map m = { .pid = pid, .time = time, .until = UINT64_MAX,
			     .start = start, .end = start + len, .pgoff = pgoff };

	if (!len || start + len < start)
		return -EINVAL;
	m.file = file_of(s, path);
	if (!m.file)
		return -ENOMEM;
	return insert_map(s, &m);
}

/* A new process starts with a copy of its parent's mappings. */
int sym_fork(struct symbolizer *s, uint32_t parent, uint32_t child, uint64_t time)
{
	size_t i, n = s->nr_maps;

	for (i = 0; i < n; i++) {
		struct sym_map m = s->maps[i];

		if (m.pid != parent || m.time > time || m.until <= time)
			continue;
		m.pid = child;
		m.time = time;
		if (insert_map(s, &m))
			return -ENOMEM;
		if (child < parent)
			i++, n++;	/* the copy went in before us */
	}
	return 0;
}

/* An exec replaces the whole image: what was mapped before ends. */
void sym_exec(struct symbolizer *s, uint32_t pid, uint64_t time)
{
	size_t i;

	for (i = 0; i < s->nr_maps; i++)
		if (s->maps[i].pid == pid && s->maps[i].time <= time &&
		    s->maps[i].until > time)
			s->maps[i].until = time;
	s->generation++;
}

static int on_mmap(struct tev_consumer *c, const struct tev_mmap *m)
{
	struct symbolizer *s = tev_container_of(c, struct symbolizer, events);

	/* A mapping that cannot be used is skipped: its samples say so. */
	if (sym_add_mapping(s, m->pid, m->at_start ? 0 : m->time, m->start, m->len,
			    m->pgoff, m->path) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

static int on_fork(struct tev_consumer *c, const struct tev_task *t)
{
	struct symbolizer *s = tev_container_of(c, struct symbolizer, events);

	if (t->pid == t->ppid)
		return 0;	/* a new thread shares its process's mappings */
	return sym_fork(s, t->ppid, t->pid, t->time);
}

static int on_comm(struct tev_consumer *c, const struct tev_comm *e)
{
	struct symbolizer *s = tev_container_of(c, struct symbolizer, events);

	if (e->exec)
		sym_exec(s, e->pid, e->time);
	return 0;
}

/*
 * The mapping of @pid covering @ip at @time: the newest in force then;
 * failing that, one that began later (a side-band time a little late).
 * *@from..*@to: the times for which the answer holds.
 */
static const struct sym_map *search_map(const struct symbolizer *s, uint32_t pid,
					uint64_t ip, uint64_t time, uint64_t *from,
					uint64_t *to)
{
	const struct sym_map *best = NULL, *fallback = NULL;
	size_t lo = 0, hi = s->nr_maps, i;

	*from = 0;
	*to = UINT64_MAX;
	/* First mapping of pid with start > ip; candidates lie before it. */
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
		if (m->time <= time && time < m->until) {
			if (!best || m->time > best->time)
				best = m;
		} else if (m->time > time) {
			if (m->time < *to)
				*to = m->time;
			if (!fallback)
				fallback = m;
		} else if (m->until > *from) {
			*from = m->until;
		}
	}
	if (best) {
		if (best->time > *from)
			*from = best->time;
		if (best->until < *to)
			*to = best->until;
		return best;
	}
	*from = *to = 0;	/* a fallback is never cached */
	return fallback;
}

static const struct sym_map *find_map(struct symbolizer *s, uint32_t pid,
				      uint64_t ip, uint64_t time)
{
	uint64_t page = ip >> 12, from, to;
	struct recent_map *r = &s->recent[(page ^ pid * 0x9e37u) & (RECENT_SLOTS - 1)];
	const struct sym_map *m;

	if (r->generation == s->generation && r->pid == pid && r->page == page &&
	    time >= r->from && time < r->to)
		return &s->maps[r->index];
	m = search_map(s, pid, ip, time, &from, &to);
	if (m && from < to && ((m->start | m->end) & 0xfff) == 0)
		*r = (struct recent_map){ .generation = s->generation, .pid = pid,
					  .page = page, .from = from, .to = to,
					  .index = (size_t)(m - s->maps) };
	return m;
}

/* The PT_LOAD segments; none on any failure (samples then have no address). */
static void read_segments(struct sym_file *f)
{
	size_t i, n;

	if (elf_getphdrnum(f->elf, &n) || !n)
		return;
	f->segments = calloc(n, sizeof(*f->segments));
	if (!f->segments)
		return;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segments[f->nr_segments++] = (struct sym_segment){
			ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
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
		return;
	}
	read_segments(f);
}

/* File offset -> ELF virtual address, through the loadable segments. */
static int offset_to_vaddr(const struct sym_file *f, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < f->nr_segments; i++) {
		const struct sym_segment *sg = &f->segments[i];

		if (off >= sg->offset && off - sg->offset < sg->filesz) {
			*vaddr = off - sg->offset + sg->vaddr;
			return 0;
		}
	}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int add_bound(uint64_t **bounds, size_t *n, size_t *cap, uint64_t at)
{
	if (array_grow((void **)bounds, cap, *n + 1, sizeof(**bounds)))
		return -1;
	(*bounds)[(*n)++] = at;
	return 0;
}

/* @elf's section bounds, as module addresses (@bias added). */
static int add_section_bounds(Elf *elf, GElf_Addr bias, uint64_t **bounds, size_t *n,
			      size_t *cap)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (add_bound(bounds, n, cap, sh.sh_addr + bias) ||
		    add_bound(bounds, n, cap, sh.sh_addr + sh.sh_size + bias))
			return -1;
	}
	return 0;
}

/*
 * Every symbol's start and end and every section's bounds, sorted and
 * unique, as module addresses.  More bounds than libdwfl compares with
 * only split intervals further, which keeps the answers exact; without
 * memory, there are none and every lookup asks libdwfl.
 */
static void build_intervals(struct sym_file *f)
{
	Elf *seen_elf[4] = { f->elf };
	GElf_Addr seen_bias[4] = { f->bias };
	size_t nr_seen = 1, n = 0, cap = 0, i, j;
	uint64_t *bounds = NULL;
	int syms = dwfl_module_getsymtab(f->mod);

	f->intervals_tried = true;
	for (i = 1; syms > 0 && i < (size_t)syms; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias = 0;
		GElf_Word shndx;
		Elf *elf = NULL;

		if (!dwfl_module_getsym_info(f->mod, (int)i, &sym, &addr, &shndx, &elf, &bias))
			continue;
		/* Its value as resolved and as st_value adjusted: libdwfl tries both. */
		if (add_bound(&bounds, &n, &cap, addr) ||
		    add_bound(&bounds, &n, &cap, addr + sym.st_size) ||
		    add_bound(&bounds, &n, &cap, sym.st_value + bias) ||
		    add_bound(&bounds, &n, &cap, sym.st_value + bias + sym.st_size))
			goto fail;
		for (j = 0; elf && j < nr_seen && seen_elf[j] != elf; j++)
			;
		if (elf && j == nr_seen && nr_seen < 4) {
			seen_elf[nr_seen] = elf;
			seen_bias[nr_seen++] = bias;
		}
	}
	for (j = 0; j < nr_seen; j++)
		if (add_section_bounds(seen_elf[j], seen_bias[j], &bounds, &n, &cap))
			goto fail;
	if (!n)
		goto fail;
	qsort(bounds, n, sizeof(*bounds), cmp_u64);
	for (i = 1, j = 1; i < n; i++)
		if (bounds[i] != bounds[j - 1])
			bounds[j++] = bounds[i];
	f->names = malloc((2 * j + 1) * sizeof(*f->names));
	if (!f->names)
		goto fail;
	for (i = 0; i < 2 * j + 1; i++)
		f->names[i] = NOT_ASKED;
	f->bounds = bounds;
	f->nr_bounds = j;
	return;
fail:
	free(bounds);
}

/* The interval of module address @addr (see struct sym_file). */
static size_t interval_of(const struct sym_file *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nr_bounds;

	/* lo: the number of bounds at or below @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->bounds[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	return f->bounds[lo - 1] == addr ? 2 * lo - 1 : 2 * lo;
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

	if (!f->intervals_tried)
		build_intervals(f);
	if (f->names) {
		const char **name = &f->names[interval_of(f, addr)];

		if (*name == NOT_ASKED)
			*name = keep(s, dwfl_module_addrname(f->mod, addr));
		r->function = *name;
	} else {
		r->function = keep(s, dwfl_module_addrname(f->mod, addr));
	}
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

void sym_lookup(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t time,
		struct sym_result *out)
{
	const struct sym_map *m = find_map(s, pid, ip, time);
	struct cache_entry *e;
	struct sym_file *f;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	out->id = UINT32_MAX;
	if (!m) {
		out->status = SYM_NO_MAPPING;
		return;
	}
	f = m->file;
	out->path = f->path;
	if (!f->tried)
		open_file(f);
	if (!f->noaddr_id)
		f->noaddr_id = ++s->next_id;
	out->id = f->noaddr_id - 1;
	if (!f->dwfl) {
		out->status = SYM_NO_FILE;
		return;
	}
	if (offset_to_vaddr(f, ip - m->start + m->pgoff, &vaddr)) {
		out->status = SYM_NO_DEBUGINFO;
		return;
	}
	out->address = vaddr;
	if ((s->cache_used + 1) * 2 > s->cache_cap)
		cache_grow(s);
	if ((s->cache_used + 1) * 2 > s->cache_cap) {
		/* Out of memory for the cache: answer without it. */
		resolve(s, f, vaddr, out);
		out->id = UINT32_MAX;
		return;
	}
	e = cache_slot(s, f, vaddr);
	if (!e->file) {
		e->file = f;
		e->address = vaddr;
		e->result = *out;
		e->result.id = s->next_id++;
		resolve(s, f, vaddr, &e->result);
		s->cache_used++;
	}
	*out = e->result;
}

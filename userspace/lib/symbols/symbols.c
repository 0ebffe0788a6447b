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
 * of its own): each file keeps them sorted, and names each interval once.
 * That name comes from symtab_index.c, which keeps the symbols sorted and
 * answers as libdwfl does without its walk: a library with 45k symbols
 * and a few thousand functions sampled took seconds natively and a minute
 * in the test box.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/internal.h"
#include "util/grow.h"

/*
 * A file's separate debug file is found as libdwfl finds it: by build-id
 * (DIR/.build-id/xx/rest.debug), then by .gnu_debuglink, under each
 * directory of the path -- by default the file's own, its .debug/ and
 * /usr/lib/debug (sym_set_debug_dir() adds one).
 */
static char default_debuginfo_path[] = ":.debug:/usr/lib/debug";

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
		s->debuginfo_path = default_debuginfo_path;
		s->callbacks = (Dwfl_Callbacks){
			.find_elf = dwfl_build_id_find_elf,
			.find_debuginfo = dwfl_standard_find_debuginfo,
			.section_address = dwfl_offline_section_address,
			.debuginfo_path = &s->debuginfo_path,
		};
		s->events.mmap = on_mmap;
		s->events.fork = on_fork;
		s->events.comm = on_comm;
		tev_consumer_defaults(&s->events);
	}
	return s;
}

int sym_set_debug_dir(struct symbolizer *s, const char *dir)
{
	size_t n = strlen(default_debuginfo_path) + strlen(dir) + 2;
	char *path;

	if (dir[0] != '/' || strchr(dir, ':'))
		return -EINVAL;
	path = malloc(n);
	if (!path)
		return -ENOMEM;
	snprintf(path, n, "%s:%s", default_debuginfo_path, dir);
	if (s->debuginfo_path != default_debuginfo_path)
		free(s->debuginfo_path);
	s->debuginfo_path = path;
	free(s->debug_dir);
	s->debug_dir = strdup(dir);
	return s->debug_dir ? 0 : -ENOMEM;
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
		sym_table_free(s->files[i]->table);
		cu_ranges_free(s->files[i]->cu_ranges);
		sym_plt_free(s->files[i]->plt);
		free(s->files[i]->copy);
		free(s->files[i]);
	}
	sym_build_ids_free(s);
	for (i = 0; i < s->nr_strings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->files);
	free(s->files_mapped.maps);
	jit_free(s);
	sym_inlines_free(s);
	free(s->cache);
	if (s->debuginfo_path != default_debuginfo_path)
		free(s->debuginfo_path);
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
	f->anonymous = jit_anonymous_path(path);
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
	if (x->time != y->time)
		return x->time < y->time;
	return x->seq < y->seq;
}

static int cmp_map(const void *a, const void *b)
{
	const struct sym_map *x = a, *y = b;

	return map_before(x, y) ? -1 : map_before(y, x);
}

static int list_room(struct sym_map_list *l, struct sym_map *m)
{
	if (array_grow((void **)&l->maps, &l->cap, l->nr + 1, sizeof(*l->maps)))
		return -ENOMEM;
	m->seq = l->next_seq++;
	if (m->end - m->start > l->max_len)
		l->max_len = m->end - m->start;
	return 0;
}

int sym_list_append(struct sym_map_list *l, const struct sym_map *m)
{
	struct sym_map copy = *m;

	if (list_room(l, &copy))
		return -ENOMEM;
	l->maps[l->nr++] = copy;
	l->unsorted = true;
	return 0;
}

void sym_list_sort(struct sym_map_list *l)
{
	if (l->unsorted)
		qsort(l->maps, l->nr, sizeof(*l->maps), cmp_map);
	l->unsorted = false;
}

/*
 * Mappings arrive in time order, among lookups: insert in place, after
 * any of the same pid, start and time (the newest of equals wins).
 */
int sym_list_insert(struct sym_map_list *l, const struct sym_map *m)
{
	struct sym_map copy = *m;
	size_t lo = 0, hi = l->nr;

	sym_list_sort(l);
	if (list_room(l, &copy))
		return -ENOMEM;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map_before(&copy, &l->maps[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	memmove(l->maps + lo + 1, l->maps + lo, (l->nr - lo) * sizeof(*l->maps));
	l->maps[lo] = copy;
	l->nr++;
	return 0;
}

static int insert_map(struct symbolizer *s, const struct sym_map *m)
{
	s->generation++;
	return sym_list_insert(&s->files_mapped, m);
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
int sym_list_fork(struct sym_map_list *l, uint32_t parent, uint32_t child, uint64_t time)
{
	size_t i, n = l->nr;

	for (i = 0; i < n; i++) {
		struct sym_map m = l->maps[i];

		if (m.pid != parent || m.time > time || m.until <= time)
			continue;
		m.pid = child;
		m.time = time;
		if (sym_list_append(l, &m))
			return -ENOMEM;
	}
	return 0;
}

void sym_list_end(struct sym_map_list *l, uint32_t pid, uint64_t time)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (l->maps[i].pid == pid && l->maps[i].time <= time && l->maps[i].until > time)
			l->maps[i].until = time;
}

int sym_fork(struct symbolizer *s, uint32_t parent, uint32_t child, uint64_t time)
{
	int err = sym_list_fork(&s->files_mapped, parent, child, time);

	/* Searched without sorting first (find_map): kept sorted. */
	sym_list_sort(&s->files_mapped);
	s->generation++;
	return err ?: jit_fork(s, parent, child, time);
}

/* An exec replaces the whole image: what was mapped before ends. */
void sym_exec(struct symbolizer *s, uint32_t pid, uint64_t time)
{
	sym_list_end(&s->files_mapped, pid, time);
	s->generation++;
	jit_exec(s, pid, time);
}

static int on_mmap(struct tev_consumer *c, const struct tev_mmap *m)
{
	struct symbolizer *s = tev_container_of(c, struct symbolizer, events);

	/* A mapping that cannot be used is skipped: its samples say so. */
	if (sym_add_mapping(s, m->pid, m->at_start ? 0 : m->time, m->start, m->len,
			    m->pgoff, m->path) == -ENOMEM)
		return -ENOMEM;
	return jit_on_mmap(s, m->pid, m->path);
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

const struct sym_map *sym_list_search(const struct sym_map_list *l, uint32_t pid,
				      uint64_t ip, uint64_t time, uint64_t *from,
				      uint64_t *to)
{
	const struct sym_map *best = NULL, *fallback = NULL;
	size_t lo = 0, hi = l->nr, i;

	*from = 0;
	*to = UINT64_MAX;
	/* First mapping of pid with start > ip; candidates lie before it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sym_map *m = &l->maps[mid];

		if (m->pid < pid || (m->pid == pid && m->start <= ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0;) {
		const struct sym_map *m = &l->maps[i];

		/* Below here every range starts too low to reach @ip. */
		if (m->pid != pid || ip - m->start >= l->max_len)
			break;
		if (ip >= m->end)
			continue;
		if (m->time <= time && time < m->until) {
			if (!best || m->time > best->time ||
			    (m->time == best->time && m->seq > best->seq))
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

/* The mapping of @ip, and in *@from..*@to the times that answer holds for. */
static const struct sym_map *find_map(struct symbolizer *s, uint32_t pid,
				      uint64_t ip, uint64_t time, uint64_t *from, uint64_t *to)
{
	uint64_t page = ip >> 12;
	struct recent_map *r = &s->recent[(page ^ pid * 0x9e37u) & (RECENT_SLOTS - 1)];
	const struct sym_map *m;

	if (r->generation == s->generation && r->pid == pid && r->page == page &&
	    time >= r->from && time < r->to) {
		*from = r->from;
		*to = r->to;
		return &s->files_mapped.maps[r->index];
	}
	m = sym_list_search(&s->files_mapped, pid, ip, time, from, to);
	if (m && *from < *to && ((m->start | m->end) & 0xfff) == 0)
		*r = (struct recent_map){ .generation = s->generation, .pid = pid,
					  .page = page, .from = *from, .to = *to,
					  .index = (size_t)(m - s->files_mapped.maps) };
	return m;
}

static struct recent_ip *recent_ip_slot(struct symbolizer *s, uint32_t pid, uint64_t ip)
{
	uint64_t h = (ip ^ (uint64_t)pid << 40) * 0x9e3779b97f4a7c15ull;

	return &s->recent_ip[h >> (64 - 10)];
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

/* @f (named by its path) read from @file; false, and nothing open, if it cannot be. */
static bool open_elf(struct symbolizer *s, struct sym_file *f, const char *file)
{
	f->dwfl = dwfl_begin(&s->callbacks);
	if (!f->dwfl)
		return false;
	f->mod = dwfl_report_offline(f->dwfl, f->path, file, -1);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (f->mod)
		f->elf = dwfl_module_getelf(f->mod, &f->bias);
	if (!f->mod || !f->elf) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
		f->mod = NULL;
		f->elf = NULL;
		return false;
	}
	return true;
}

static void close_elf(struct sym_file *f)
{
	dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
	f->elf = NULL;
}

/* An open module's GNU build-id as lowercase hex into @hex, "" if none. */
static void module_build_id(Dwfl_Module *mod, char *hex, size_t len)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n, i;

	hex[0] = '\0';
	n = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	for (i = 0; i < n && (size_t)(2 * i + 2) < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
}

/*
 * @f's ELF file: the one at its path, unless the profile recorded another
 * build there (build_ids.c); then a kept copy of the recorded build, as
 * perf report reads one, or none: its samples are then left unnamed, and
 * the file said to have changed.
 */
static void open_file(struct symbolizer *s, struct sym_file *f)
{
	const char *want = sym_recorded_build_id(s, f->path);
	char place[4096];
	unsigned int n;

	f->tried = true;
	if (!open_elf(s, f, f->path) && !want)
		return;
	if (want) {
		module_build_id(f->mod, f->disk_id, sizeof(f->disk_id));
		if (!f->mod || strcmp(f->disk_id, want)) {
			f->changed = true;
			if (f->mod)
				close_elf(f);
			for (n = 0; !f->mod && sym_build_id_place(s, want, n, place, sizeof(place));
			     n++) {
				char id[SYM_BUILD_ID_HEX];

				if (access(place, R_OK) || !open_elf(s, f, place))
					continue;
				module_build_id(f->mod, id, sizeof(id));
				if (strcmp(id, want))
					close_elf(f);
				else
					f->copy = strdup(place);
			}
			if (!f->mod)
				return;
		}
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
	f->table = sym_table_build(f->mod, f->elf, f->bias);
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

const char *sym_keep_n(struct symbolizer *s, const char *str, size_t n)
{
	char **strings, *copy;

	if (!str)
		return NULL;
	copy = strndup(str, n);
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

const char *sym_keep(struct symbolizer *s, const char *str)
{
	return str ? sym_keep_n(s, str, strlen(str)) : NULL;
}

/*
 * A line table's file name as addr2line and perf's srcline give it: a
 * relative one joined to its unit's compilation directory (which may be
 * relative itself: "./elf/../sysdeps/x86/dl-cacheinfo.h" in glibc).
 */
const char *sym_keep_path(struct symbolizer *s, const char *comp_dir, const char *src)
{
	char *joined;
	const char *kept;

	size_t n = comp_dir ? strlen(comp_dir) : 0;

	/* libdw joined directory entry 0, the unit's own, already. */
	if (src[0] == '/' || !n || (!strncmp(src, comp_dir, n) && src[n] == '/'))
		return sym_keep(s, src);
	if (asprintf(&joined, "%s/%s", comp_dir, src) < 0)
		return sym_keep(s, src);
	kept = sym_keep(s, joined);
	free(joined);
	return kept;
}

static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/*
 * Whether @f was stripped: no .symtab in it or in a debug file libdwfl
 * finds for it (its .dynsym names only what it exports).  Asked only of
 * files with code no symbol covers.
 */
static bool file_stripped(struct sym_file *f)
{
	GElf_Addr bias;
	Dwarf *dwarf;

	if (!f->stripped_known) {
		f->stripped_known = true;
		dwarf = dwfl_module_getdwarf(f->mod, &bias);
		f->stripped = !has_symtab(f->elf) && !(dwarf && has_symtab(dwarf_getelf(dwarf)));
	}
	return f->stripped;
}

static void resolve(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		    struct sym_result *r)
{
	GElf_Addr addr = vaddr + f->bias;
	Dwfl_Line *line;
	const char *src, *comp_dir = NULL;
	int lineno = 0;

	if (!f->intervals_tried)
		build_intervals(f);
	if (f->names) {
		const char **name = &f->names[interval_of(f, addr)];

		/* libdwfl would walk every symbol: the sorted table answers. */
		if (*name == NOT_ASKED)
			*name = sym_demangled(s, f->table ? sym_table_name(f->table, addr) :
					      dwfl_module_addrname(f->mod, addr));
		r->function = *name;
	} else {
		r->function = sym_demangled(s, dwfl_module_addrname(f->mod, addr));
	}
	line = dwfl_module_getsrc(f->mod, addr);
	src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (src)
		comp_dir = dwfl_line_comp_dir(line);
	if (!src || lineno <= 0) {
		/* No .debug_aranges (clang, Go): the units' own ranges. */
		if (!f->cu_ranges_tried) {
			f->cu_ranges_tried = true;
			f->cu_ranges = cu_ranges_build(f->mod);
		}
		src = cu_ranges_line(f->cu_ranges, addr, &lineno, &comp_dir);
	}
	if (src && lineno > 0) {
		r->file = sym_keep_path(s, comp_dir, src);
		r->line = lineno;
		r->status = SYM_OK;
	} else {
		r->status = r->function ? SYM_NO_LINE : SYM_NO_DEBUGINFO;
	}
	/* No symbol covers a PLT entry: named by its relocation, as perf does. */
	if (!r->function) {
		r->function = sym_plt_name(s, f, vaddr);
		if (r->function && r->status == SYM_NO_DEBUGINFO)
			r->status = SYM_NO_LINE;
	}
	r->stripped = !r->function && file_stripped(f);
}

static struct cache_entry *cache_slot(struct symbolizer *s, const void *owner,
				      uint64_t address)
{
	uint64_t h = (address ^ (uintptr_t)owner) * 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = h & (s->cache_cap - 1);; i = (i + 1) & (s->cache_cap - 1)) {
		struct cache_entry *e = &s->cache[i];

		if (!e->owner || (e->owner == owner && e->address == address))
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
		if (old[i].owner)
			*cache_slot(s, old[i].owner, old[i].address) = old[i];
	free(old);
}

/*
 * The entry for (@owner, @address), claimed for it (*@fresh: to be filled
 * in, its result.id already numbered); NULL when the cache is full and
 * cannot grow: the caller answers uncached.
 */
struct cache_entry *sym_cache_slot(struct symbolizer *s, const void *owner,
				   uint64_t address, bool *fresh)
{
	struct cache_entry *e;

	if ((s->cache_used + 1) * 2 > s->cache_cap)
		cache_grow(s);
	if ((s->cache_used + 1) * 2 > s->cache_cap)
		return NULL;
	e = cache_slot(s, owner, address);
	*fresh = !e->owner;
	if (*fresh) {
		e->owner = owner;
		e->address = address;
		e->result.id = s->next_id++;
		s->cache_used++;
	}
	return e;
}

/* @ip in file mapping @m: the answer depends on nothing else. */
static void lookup_in_file(struct symbolizer *s, const struct sym_map *m, uint64_t ip,
			   struct sym_result *out)
{
	struct cache_entry *e;
	struct sym_file *f;
	uint64_t vaddr;
	bool fresh;

	f = m->file;
	out->path = f->path;
	if (!f->tried)
		open_file(s, f);
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
	e = sym_cache_slot(s, f, vaddr, &fresh);
	if (!e) {
		/* Out of memory for the cache: answer without it. */
		resolve(s, f, vaddr, out);
		out->id = UINT32_MAX;
		return;
	}
	if (fresh) {
		uint32_t id = e->result.id;

		e->result = *out;
		e->result.id = id;
		resolve(s, f, vaddr, &e->result);
	}
	*out = e->result;
}

struct sym_file *sym_file_at(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t time,
			     uint64_t *vaddr)
{
	const struct sym_map *m;
	uint64_t from, to;

	m = find_map(s, pid, ip, time, &from, &to);
	if (!m || !m->file || m->file->anonymous)
		return NULL;
	if (!m->file->tried)
		open_file(s, m->file);
	if (!m->file->dwfl || offset_to_vaddr(m->file, ip - m->start + m->pgoff, vaddr))
		return NULL;
	return m->file;
}

void sym_lookup(struct symbolizer *s, uint32_t pid, uint64_t ip, uint64_t time,
		struct sym_result *out)
{
	struct recent_ip *r = recent_ip_slot(s, pid, ip);
	const struct sym_map *m;
	uint64_t from, to;

	if (r->generation == s->generation && r->ip == ip && r->pid == pid &&
	    time >= r->from && time < r->to) {
		*out = r->result;
		return;
	}
	m = find_map(s, pid, ip, time, &from, &to);
	memset(out, 0, sizeof(*out));
	out->id = UINT32_MAX;
	if (jit_lookup(s, pid, ip, time, m, out))
		return;
	if (!m) {
		out->status = SYM_NO_MAPPING;
		return;
	}
	lookup_in_file(s, m, ip, out);
	/* Out of memory (no id) is answered again next time. */
	if (!m->file->anonymous && out->id != UINT32_MAX && from < to)
		*r = (struct recent_ip){ .generation = s->generation, .ip = ip, .from = from,
					 .to = to, .pid = pid, .result = *out };
}

/*
 * @f's GNU build-id as lowercase hex into @hex, "" if it has none: the
 * profile's record of it where there is one (the build that ran), else
 * the file's.
 */
static void file_build_id(struct symbolizer *s, struct sym_file *f, char *hex, size_t len)
{
	const char *recorded = sym_recorded_build_id(s, f->path);

	hex[0] = '\0';
	if (f->anonymous)
		return;
	if (recorded) {
		snprintf(hex, len, "%s", recorded);
		return;
	}
	if (!f->tried)
		open_file(s, f);
	module_build_id(f->mod, hex, len);
}

struct sym_file *sym_file_named(struct symbolizer *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->nr_files; i++) {
		struct sym_file *f = s->files[i];

		if (strcmp(f->path, path))
			continue;
		if (f->anonymous)
			return NULL;
		if (!f->tried)
			open_file(s, f);
		return f->dwfl ? f : NULL;
	}
	return NULL;
}

int sym_object_info(struct symbolizer *s, const char *path, struct sym_object *out)
{
	struct sym_file *f = sym_file_named(s, path);
	bool interp = false, text = false;
	GElf_Addr bias;
	GElf_Ehdr eh;
	size_t i, n;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -ENOENT;
	file_build_id(s, f, out->build_id, sizeof(out->build_id));
	out->has_dwarf = dwfl_module_getdwarf(f->mod, &bias) != NULL;
	if (elf_getphdrnum(f->elf, &n))
		n = 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, i, &ph))
			continue;
		interp |= ph.p_type == PT_INTERP;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !text) {
			text = true;
			out->text_start = ph.p_vaddr;
			out->text_end = ph.p_vaddr + ph.p_memsz;
			out->text_offset = ph.p_offset;
		}
	}
	out->executable = gelf_getehdr(f->elf, &eh) &&
			  (eh.e_type == ET_EXEC || (eh.e_type == ET_DYN && interp));
	return 0;
}

enum sym_module_match sym_find_module(struct symbolizer *s, const char *path,
				      const char *build_id, const char **mapped,
				      char *mapped_id, size_t len)
{
	size_t i;

	*mapped = NULL;
	mapped_id[0] = '\0';
	for (i = 0; i < s->nr_files; i++) {
		struct sym_file *f = s->files[i];

		if (strcmp(f->path, path))
			continue;
		*mapped = f->path;
		file_build_id(s, f, mapped_id, len);
		/* A file gone since, or one without a build-id: its path decides. */
		return !build_id || !mapped_id[0] || !strcmp(build_id, mapped_id) ?
		       SYM_MODULE_MAPPED : SYM_MODULE_OTHER_BUILD;
	}
	return SYM_MODULE_NONE;
}

bool sym_pid_maps(const struct symbolizer *s, uint32_t pid, const char *const *paths,
		  size_t nr_paths, uint64_t time)
{
	const struct sym_map_list *l = &s->files_mapped;
	size_t i = 0, k, lo = 0, hi = l->nr;

	/* Sorted by pid first: its ranges are one run, found by halving. */
	if (!l->unsorted) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (l->maps[mid].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
	}
	for (; i < l->nr; i++) {
		const struct sym_map *m = &l->maps[i];

		if (m->pid != pid) {
			if (!l->unsorted && m->pid > pid)
				break;
			continue;
		}
		if (m->time > time || m->until <= time)
			continue;
		for (k = 0; k < nr_paths; k++)
			if (!strcmp(m->file->path, paths[k]))
				return true;
	}
	return false;
}

uint64_t sym_generation(const struct symbolizer *s)
{
	return s->generation;
}

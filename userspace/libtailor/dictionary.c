// SPDX-License-Identifier: GPL-2.0-only
/*
 * libtailor's Tagging Dictionary writer and Abstraction Trackers
 * (docs/dictionary-format.md).  A compiler calls it for every component
 * and generated line, so each call is an append to a text buffer plus a
 * check against a small hash set of declared components; the file is
 * written once, at the end of compilation.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tailor/dictionary.h"

#define MAX_LEVELS	16
#define MAX_ID		(1ull << 63)

struct id_stack {
	uint64_t *ids;
	int depth;
	int cap;
};

struct tailor_dict {
	int error;			/* first failure, -errno; sticky */
	char *levels[MAX_LEVELS];	/* [0] is "line" */
	int nr_levels;
	struct id_stack active[MAX_LEVELS];
	char *text;			/* everything after the level lines */
	size_t len, cap;
	uint64_t *known;		/* declared (level, id), open addressing */
	size_t known_cap, known_n;
	char **modules;			/* paths of the module lines, each once */
	char **module_ids;		/* their build-ids, "-" for none */
	int nr_modules;
};

static int fail(struct tailor_dict *d, int err)
{
	if (!d->error)
		d->error = err;
	return d->error;
}

static int appendf(struct tailor_dict *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int appendf(struct tailor_dict *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(d->text + d->len, d->cap - d->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return fail(d, -EINVAL);
		if ((size_t)n < d->cap - d->len)
			break;
		{
			size_t cap = (d->cap + n + 1) * 2;
			char *t = realloc(d->text, cap);

			if (!t)
				return fail(d, -ENOMEM);
			d->text = t;
			d->cap = cap;
		}
	}
	d->len += n;
	return 0;
}

static uint64_t known_key(int level, uint64_t id)
{
	/* Ids are < 2^63 and levels < 16: mix both, never 0. */
	return (id * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(level + 1) << 59) ^ 1;
}

static int known_find(const struct tailor_dict *d, uint64_t key)
{
	size_t i;

	if (!d->known_cap)
		return 0;
	for (i = key & (d->known_cap - 1); d->known[i]; i = (i + 1) & (d->known_cap - 1))
		if (d->known[i] == key)
			return 1;
	return 0;
}

static int known_add(struct tailor_dict *d, uint64_t key)
{
	size_t i;

	if ((d->known_n + 1) * 2 > d->known_cap) {
		size_t cap = d->known_cap ? d->known_cap * 2 : 1024, j;
		uint64_t *k = calloc(cap, sizeof(*k));

		if (!k)
			return fail(d, -ENOMEM);
		for (j = 0; j < d->known_cap; j++) {
			if (!d->known[j])
				continue;
			for (i = d->known[j] & (cap - 1); k[i]; i = (i + 1) & (cap - 1))
				;
			k[i] = d->known[j];
		}
		free(d->known);
		d->known = k;
		d->known_cap = cap;
	}
	for (i = key & (d->known_cap - 1); d->known[i]; i = (i + 1) & (d->known_cap - 1))
		if (d->known[i] == key)
			return 0;
	d->known[i] = key;
	d->known_n++;
	return 0;
}

/* Names and paths become TAB-separated fields: no TAB, no newline. */
static int bad_text(const char *s)
{
	return !s || !*s || strpbrk(s, "\t\n\r");
}

struct tailor_dict *tailor_dict_new(void)
{
	struct tailor_dict *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->levels[0] = strdup("line");
	d->nr_levels = 1;
	if (!d->levels[0]) {
		free(d);
		return NULL;
	}
	return d;
}

void tailor_dict_free(struct tailor_dict *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < d->nr_levels; i++) {
		free(d->levels[i]);
		free(d->active[i].ids);
	}
	free(d->text);
	free(d->known);
	for (i = 0; i < d->nr_modules; i++) {
		free(d->modules[i]);
		free(d->module_ids[i]);
	}
	free(d->modules);
	free(d->module_ids);
	free(d);
}

static int valid_level(const struct tailor_dict *d, int level, bool line_ok)
{
	return level >= (line_ok ? 0 : 1) && level < d->nr_levels;
}

int tailor_dict_level(struct tailor_dict *d, const char *name)
{
	int i;

	if (d->error)
		return d->error;
	if (bad_text(name) || d->nr_levels == MAX_LEVELS)
		return fail(d, -EINVAL);
	for (i = 0; i < d->nr_levels; i++)
		if (!strcmp(d->levels[i], name))
			return fail(d, -EEXIST);
	d->levels[d->nr_levels] = strdup(name);
	if (!d->levels[d->nr_levels])
		return fail(d, -ENOMEM);
	return d->nr_levels++;
}

int tailor_dict_component(struct tailor_dict *d, int level, uint64_t id,
			  const char *name)
{
	uint64_t key = known_key(level, id);

	if (d->error)
		return d->error;
	if (!valid_level(d, level, false) || !id || id >= MAX_ID || bad_text(name))
		return fail(d, -EINVAL);
	if (known_find(d, key))
		return fail(d, -EEXIST);
	if (known_add(d, key))
		return d->error;
	return appendf(d, "component\t%s\t%llu\t%s\n", d->levels[level],
		       (unsigned long long)id, name);
}

static int known_component(struct tailor_dict *d, int level, uint64_t id)
{
	if (!valid_level(d, level, false) || !known_find(d, known_key(level, id)))
		return fail(d, -ENOENT);
	return 0;
}

int tailor_dict_parent(struct tailor_dict *d, int level, uint64_t id,
		       int parent_level, uint64_t parent_id)
{
	if (d->error)
		return d->error;
	if (known_component(d, level, id) || known_component(d, parent_level, parent_id))
		return d->error;
	return appendf(d, "parent\t%s\t%llu\t%s\t%llu\n", d->levels[level],
		       (unsigned long long)id, d->levels[parent_level],
		       (unsigned long long)parent_id);
}

int tailor_dict_log(struct tailor_dict *d, const char *name)
{
	if (d->error)
		return d->error;
	if (bad_text(name))
		return fail(d, -EINVAL);
	return appendf(d, "log\t%s\n", name);
}

int tailor_dict_link(struct tailor_dict *d, int level, uint64_t id,
		     int upper_level, uint64_t upper_id)
{
	if (d->error)
		return d->error;
	if (upper_level <= level)
		return fail(d, -EINVAL);
	if (known_component(d, level, id) || known_component(d, upper_level, upper_id))
		return d->error;
	return appendf(d, "link\t%s\t%llu\t%s\t%llu\n", d->levels[level],
		       (unsigned long long)id, d->levels[upper_level],
		       (unsigned long long)upper_id);
}

int tailor_dict_link_line(struct tailor_dict *d, const char *file,
			  unsigned int line, int upper_level, uint64_t upper_id)
{
	if (d->error)
		return d->error;
	if (bad_text(file) || !line)
		return fail(d, -EINVAL);
	if (known_component(d, upper_level, upper_id))
		return d->error;
	return appendf(d, "link\tline\t%s:%u\t%s\t%llu\n", file, line,
		       d->levels[upper_level], (unsigned long long)upper_id);
}

int tailor_dict_shared_line(struct tailor_dict *d, const char *file,
			    unsigned int line)
{
	if (d->error)
		return d->error;
	if (bad_text(file) || !line)
		return fail(d, -EINVAL);
	return appendf(d, "shared\t%s:%u\n", file, line);
}

int tailor_dict_tag_field(struct tailor_dict *d, int level, unsigned int shift,
			  unsigned int bits)
{
	if (d->error)
		return d->error;
	if (!valid_level(d, level, false) || !bits || bits > 64 || shift + bits > 64)
		return fail(d, -EINVAL);
	return appendf(d, "tag\t%s\t%u\t%u\n", d->levels[level], shift, bits);
}

int tailor_dict_tag_word_field(struct tailor_dict *d, int level, unsigned int shift,
			       unsigned int bits)
{
	if (d->error)
		return d->error;
	if (!valid_level(d, level, false) || !bits || bits > 64 || shift + bits > 64)
		return fail(d, -EINVAL);
	return appendf(d, "tag-word\t%s\t%u\t%u\n", d->levels[level], shift, bits);
}

int tailor_dict_module(struct tailor_dict *d, const char *path, const char *build_id)
{
	char **grown;
	size_t i;
	int m;

	if (d->error)
		return d->error;
	/* As the reader takes them: 1 to 40 bytes, in lowercase hex. */
	if (bad_text(path) || path[0] != '/' ||
	    (build_id && (!*build_id || strlen(build_id) > 80 || strlen(build_id) % 2)))
		return fail(d, -EINVAL);
	for (i = 0; build_id && build_id[i]; i++)
		if (!strchr("0123456789abcdef", build_id[i]))
			return fail(d, -EINVAL);
	/* A module once: named again alike, nothing to add; otherwise a mistake. */
	for (m = 0; m < d->nr_modules; m++)
		if (!strcmp(d->modules[m], path))
			return strcmp(d->module_ids[m], build_id ? build_id : "-") ?
			       fail(d, -EEXIST) : 0;
	grown = realloc(d->modules, (d->nr_modules + 1) * sizeof(*grown));
	if (!grown)
		return fail(d, -ENOMEM);
	d->modules = grown;
	grown = realloc(d->module_ids, (d->nr_modules + 1) * sizeof(*grown));
	if (!grown)
		return fail(d, -ENOMEM);
	d->module_ids = grown;
	d->modules[d->nr_modules] = strdup(path);
	d->module_ids[d->nr_modules] = strdup(build_id ? build_id : "-");
	if (!d->modules[d->nr_modules] || !d->module_ids[d->nr_modules]) {
		free(d->modules[d->nr_modules]);
		free(d->module_ids[d->nr_modules]);
		return fail(d, -ENOMEM);
	}
	d->nr_modules++;
	return appendf(d, "module\t%s\t%s\n", path, build_id ? build_id : "-");
}

struct module_search {
	uintptr_t addr;
	char path[4096];
	char build_id[81];
	bool found;
};

/* The GNU build-id among a loaded object's notes, as hex, or "" if none. */
static void build_id_of(const struct dl_phdr_info *info, char *hex, size_t len)
{
	int i;

	hex[0] = '\0';
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		/*
		 * A segment of 8-byte alignment (.note.gnu.property's) pads
		 * names and descriptors to 8, others to 4 (as libelf's
		 * ELF_T_NHDR8 and ELF_T_NHDR read them).
		 */
		size_t al = ph->p_align == 8 ? 8 : 4;

		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t name = ((size_t)n->n_namesz + al - 1) & ~(al - 1);
			size_t desc = ((size_t)n->n_descsz + al - 1) & ~(al - 1);
			const unsigned char *bytes = (const unsigned char *)(n + 1) + name;
			size_t k;

			if ((size_t)(end - p) < sizeof(*n) + name + desc)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(n + 1, "GNU", 4) && n->n_descsz && 2 * n->n_descsz < len) {
				for (k = 0; k < n->n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", bytes[k]);
				return;
			}
			p += sizeof(*n) + name + desc;
		}
	}
}

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module_search *m = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || m->addr < start || m->addr - start >= ph->p_memsz)
			continue;
		/*
		 * The program itself has no name here: the kernel knows its
		 * file.  A library's name is as dlopen() was given it (maybe
		 * relative, or through a link): the kernel maps the real file.
		 * The vDSO has no file.
		 */
		if (!info->dlpi_name || !info->dlpi_name[0]) {
			ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);

			if (n <= 0)
				return 1;
			m->path[n] = '\0';
		} else if (!realpath(info->dlpi_name, m->path)) {
			return 1;
		}
		build_id_of(info, m->build_id, sizeof(m->build_id));
		m->found = true;
		return 1;
	}
	return 0;
}

int tailor_dict_module_of(struct tailor_dict *d, const void *addr)
{
	struct module_search m = { .addr = (uintptr_t)addr };

	if (d->error)
		return d->error;
	dl_iterate_phdr(find_module, &m);
	if (!m.found)
		return fail(d, -ENOENT);
	return tailor_dict_module(d, m.path, m.build_id[0] ? m.build_id : NULL);
}

int tailor_track_push(struct tailor_dict *d, int level, uint64_t id)
{
	struct id_stack *s;

	if (d->error)
		return d->error;
	if (known_component(d, level, id))
		return d->error;
	s = &d->active[level];
	if (s->depth == s->cap) {
		int cap = s->cap ? s->cap * 2 : 8;
		uint64_t *ids = realloc(s->ids, cap * sizeof(*ids));

		if (!ids)
			return fail(d, -ENOMEM);
		s->ids = ids;
		s->cap = cap;
	}
	s->ids[s->depth++] = id;
	return 0;
}

int tailor_track_pop(struct tailor_dict *d, int level)
{
	if (d->error)
		return d->error;
	if (!valid_level(d, level, false) || !d->active[level].depth)
		return fail(d, -EINVAL);
	d->active[level].depth--;
	return 0;
}

int tailor_track_emit(struct tailor_dict *d, int level, uint64_t id)
{
	int l;

	if (d->error)
		return d->error;
	/* Checked here too: a level below 0 would index active[] before it. */
	if (!valid_level(d, level, true))
		return fail(d, -EINVAL);
	for (l = level + 1; l < d->nr_levels && !d->error; l++)
		if (d->active[l].depth)
			tailor_dict_link(d, level, id, l,
					 d->active[l].ids[d->active[l].depth - 1]);
	return d->error;
}

int tailor_track_emit_line(struct tailor_dict *d, const char *file,
			   unsigned int line)
{
	int l;

	for (l = 1; l < d->nr_levels && !d->error; l++)
		if (d->active[l].depth)
			tailor_dict_link_line(d, file, line, l,
					      d->active[l].ids[d->active[l].depth - 1]);
	return d->error;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

int tailor_dict_write(struct tailor_dict *d, const char *path)
{
	char tmp[4096];
	int fd, i, err;

	if (d->error)
		return d->error;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* Version 2 only where it says more: readers of 1 read the rest. */
	err = write_all(fd, d->nr_modules ? "tailor-dictionary\t2\n" : "tailor-dictionary\t1\n", 20);
	for (i = 1; i < d->nr_levels && !err; i++) {
		char line[512];
		int n = snprintf(line, sizeof(line), "level\t%s\n", d->levels[i]);

		err = n >= (int)sizeof(line) ? -ENAMETOOLONG : write_all(fd, line, n);
	}
	if (!err && d->len)
		err = write_all(fd, d->text, d->len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

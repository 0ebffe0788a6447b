// SPDX-License-Identifier: GPL-2.0-only
/*
 * The build-ids a profile recorded (perf.data's BUILD_ID feature), and
 * where a copy of a recorded build is kept when the file at its path is
 * another build now -- rebuilt, upgraded, or gone.  perf record puts a
 * copy of every file with samples in its build-id cache
 * (~/.debug/.build-id/xx/rest/elf), and perf report reads that copy; so
 * does tailor, and failing one, says the file changed rather than name
 * its samples from a build that never ran them.  Debug files kept by
 * build-id (/usr/lib/debug/.build-id, --debug-dir) name functions too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/internal.h"
#include "util/grow.h"

int sym_set_recorded_build_ids(struct symbolizer *s, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *tab = memchr(p, '\t', (size_t)((nl ? nl : end) - p));
		size_t id_len;
		char *path;

		if (!nl)
			nl = end;
		if (!tab || tab == p) {
			p = nl + 1;
			continue;
		}
		id_len = (size_t)(nl - tab - 1);
		path = strndup(p, (size_t)(tab - p));
		if (!path || array_grow((void **)&s->recorded, &s->cap_recorded,
					s->nr_recorded + 1, sizeof(*s->recorded))) {
			free(path);
			return -ENOMEM;
		}
		/* A path recorded twice (two processes): the first id holds. */
		if (!sym_recorded_build_id(s, path) && id_len && id_len < SYM_BUILD_ID_HEX) {
			s->recorded[s->nr_recorded].path = path;
			memcpy(s->recorded[s->nr_recorded].id, tab + 1, id_len);
			s->recorded[s->nr_recorded].id[id_len] = '\0';
			if (str_map_put(&s->recorded_index, path, (uint32_t)s->nr_recorded))
				return -ENOMEM;
			s->nr_recorded++;
		} else {
			free(path);
		}
		p = nl + 1;
	}
	return 0;
}

const char *sym_recorded_build_id(const struct symbolizer *s, const char *path)
{
	uint32_t i;

	return str_map_get(&s->recorded_index, path, &i) ? s->recorded[i].id : NULL;
}

/*
 * The @n-th place a copy of build @id may be kept, into @out; false past
 * the last.  --debug-dir's first, then perf's build-id cache, then the
 * distribution's debug files.
 */
bool sym_build_id_place(const struct symbolizer *s, const char *id, unsigned int n,
			char *out, size_t len)
{
	const char *home = getenv("HOME");

	if (strlen(id) < 3)
		return false;
	if (!s->debug_dir)
		n += 2;
	if (n >= 2 && !(home && *home))
		n++;
	switch (n) {
	case 0:
		snprintf(out, len, "%s/.build-id/%.2s/%s.debug", s->debug_dir, id, id + 2);
		return true;
	case 1:
		snprintf(out, len, "%s/.build-id/%.2s/%s", s->debug_dir, id, id + 2);
		return true;
	case 2:
		snprintf(out, len, "%s/.debug/.build-id/%.2s/%s/elf", home, id, id + 2);
		return true;
	case 3:
		snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		return true;
	}
	return false;
}

void sym_each_changed(struct symbolizer *s,
		      void (*fn)(void *arg, const char *path, const char *recorded,
				 const char *now, const char *copy),
		      void *arg)
{
	size_t i;

	for (i = 0; i < s->nr_files; i++) {
		const struct sym_file *f = s->files[i];

		if (f->changed)
			fn(arg, f->path, sym_recorded_build_id(s, f->path), f->disk_id, f->copy);
	}
}

void sym_build_ids_free(struct symbolizer *s)
{
	size_t i;

	for (i = 0; i < s->nr_recorded; i++)
		free(s->recorded[i].path);
	free(s->recorded);
	str_map_free(&s->recorded_index);
	free(s->debug_dir);
}

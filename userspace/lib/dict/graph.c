// SPDX-License-Identifier: GPL-2.0-only
/* Walks over a Tagging Dictionary's links (dict/graph.h). */
#include "dict/graph.h"

#define MAX_DEPTH	16

/*
 * Every component of @target that (@level, @id) leads up to, each once:
 * an operator of a plan that two clients run links to both runs.
 */
static size_t climb(const struct tdict *d, int level, uint64_t id, int target, int depth,
		    const struct tdict_component **out, size_t n, size_t max)
{
	const struct tdict_link *links;
	const struct tdict_component *c;
	size_t i, j, nr_links;

	if (level == target) {
		c = tdict_component(d, level, id);
		if (!c || n == max)
			return n;
		for (j = 0; j < n; j++)
			if (out[j] == c)
				return n;
		out[n++] = c;
		return n;
	}
	if (level > target || depth > MAX_DEPTH)
		return n;
	links = tdict_component_links(d, level, id, &nr_links);
	for (i = 0; i < nr_links && n < max; i++) {
		if (links[i].upper_level > target)
			continue;
		n = climb(d, links[i].upper_level, links[i].upper_id, target, depth + 1,
			  out, n, max);
	}
	return n;
}

size_t dict_climb_all(const struct tdict *d, int level, uint64_t id, int target,
		      const struct tdict_component **out, size_t max)
{
	return climb(d, level, id, target, 0, out, 0, max);
}

const struct tdict_component *dict_climb(const struct tdict *d, int level,
					 uint64_t id, int target)
{
	const struct tdict_component *c = NULL;

	return dict_climb_all(d, level, id, target, &c, 1) ? c : NULL;
}

static bool reaches(const struct tdict *d, int level, uint64_t id, int to_level,
		    uint64_t to_id, int depth)
{
	const struct tdict_link *links;
	size_t i, n;

	if (level == to_level)
		return id == to_id;
	if (level > to_level || depth > MAX_DEPTH)
		return false;
	links = tdict_component_links(d, level, id, &n);
	for (i = 0; i < n; i++)
		if (reaches(d, links[i].upper_level, links[i].upper_id, to_level,
			    to_id, depth + 1))
			return true;
	return false;
}

bool dict_reaches(const struct tdict *d, int level, uint64_t id, int to_level,
		  uint64_t to_id)
{
	return reaches(d, level, id, to_level, to_id, 0);
}

const struct tdict_component *dict_level_components(const struct tdict *d,
						    int level, size_t *n)
{
	size_t i, j;

	for (i = 0; i < d->nr_components && d->components[i].level != level; i++)
		;
	for (j = i; j < d->nr_components && d->components[j].level == level; j++)
		;
	*n = j - i;
	return d->components + i;
}

const struct tdict_component *dict_tag_component(const struct tdict *d, int level,
						 uint64_t id, int target,
						 bool *ambiguous)
{
	const struct tdict_component *c, *found = NULL;
	size_t i, n;

	*ambiguous = false;
	if (level <= target) {
		const struct tdict_component *up[2];

		n = dict_climb_all(d, level, id, target, up, 2);
		*ambiguous = n > 1;
		return n ? up[0] : NULL;
	}
	if (!tdict_component(d, level, id))
		return NULL;
	c = dict_level_components(d, target, &n);
	for (i = 0; i < n; i++) {
		if (!dict_reaches(d, target, c[i].id, level, id))
			continue;
		if (found) {
			*ambiguous = true;
			break;
		}
		found = &c[i];
	}
	return found;
}

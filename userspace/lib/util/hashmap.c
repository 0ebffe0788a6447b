// SPDX-License-Identifier: GPL-2.0-only
/* Hash maps for the report's caches (hashmap.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "util/hashmap.h"

struct pair_slot {
	uint64_t a, b;
	uint32_t val;
	bool used;
};

struct str_slot {
	char *key;		/* NULL: empty */
	uint64_t hash;
	uint32_t val;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;

	return h ^ (h >> 31);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

int pair_map_get(const struct pair_map *m, uint64_t a, uint64_t b, uint32_t *val)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = mix(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct pair_slot *s = &m->slots[i];

		if (!s->used)
			return 0;
		if (s->a == a && s->b == b) {
			*val = s->val;
			return 1;
		}
	}
}

static int pair_grow(struct pair_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024, i, j;
	struct pair_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].used)
			continue;
		for (j = mix(m->slots[i].a, m->slots[i].b) & (cap - 1); slots[j].used;
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int pair_map_put(struct pair_map *m, uint64_t a, uint64_t b, uint32_t val)
{
	size_t i;

	if ((m->used + 1) * 2 > m->cap && pair_grow(m))
		return -ENOMEM;
	for (i = mix(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct pair_slot *s = &m->slots[i];

		if (!s->used) {
			*s = (struct pair_slot){ a, b, val, true };
			m->used++;
			return 0;
		}
		if (s->a == a && s->b == b) {
			s->val = val;
			return 0;
		}
	}
}

void pair_map_free(struct pair_map *m)
{
	free(m->slots);
	*m = (struct pair_map){};
}

int str_map_get(const struct str_map *m, const char *key, uint32_t *val)
{
	uint64_t h;
	size_t i;

	if (!m->cap)
		return 0;
	h = str_hash(key);
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct str_slot *s = &m->slots[i];

		if (!s->key)
			return 0;
		if (s->hash == h && !strcmp(s->key, key)) {
			*val = s->val;
			return 1;
		}
	}
}

static int str_grow(struct str_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256, i, j;
	struct str_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		for (j = m->slots[i].hash & (cap - 1); slots[j].key; j = (j + 1) & (cap - 1))
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int str_map_put(struct str_map *m, const char *key, uint32_t val)
{
	uint64_t h = str_hash(key);
	size_t i;

	if ((m->used + 1) * 2 > m->cap && str_grow(m))
		return -ENOMEM;
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct str_slot *s = &m->slots[i];

		if (!s->key) {
			s->key = strdup(key);
			if (!s->key)
				return -ENOMEM;
			s->hash = h;
			s->val = val;
			m->used++;
			return 0;
		}
		if (s->hash == h && !strcmp(s->key, key)) {
			s->val = val;
			return 0;
		}
	}
}

void str_map_free(struct str_map *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	*m = (struct str_map){};
}

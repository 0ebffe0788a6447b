/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Open-addressing hash maps for the report's caches: (u64, u64) -> u32
 * and string -> u32.  Keys are copied; the maps only grow.
 */
#ifndef TAILOR_LIB_HASHMAP_H
#define TAILOR_LIB_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct pair_map {
	struct pair_slot *slots;
	size_t cap, used;
};

struct str_map {
	struct str_slot *slots;
	size_t cap, used;
};

/* 1 and *val if present, else 0. */
int pair_map_get(const struct pair_map *m, uint64_t a, uint64_t b, uint32_t *val);
int pair_map_put(struct pair_map *m, uint64_t a, uint64_t b, uint32_t val);
void pair_map_free(struct pair_map *m);

int str_map_get(const struct str_map *m, const char *key, uint32_t *val);
int str_map_put(struct str_map *m, const char *key, uint32_t val);
void str_map_free(struct str_map *m);

#endif /* TAILOR_LIB_HASHMAP_H */

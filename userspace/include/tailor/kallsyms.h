/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel function names from a kallsyms file (kallsyms.c).
 */
#ifndef TAILOR_KALLSYMS_H
#define TAILOR_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* NULL with the problem in @err: unreadable, not kallsyms, addresses hidden. */
struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen);
/* The same from @len bytes of kallsyms text (a recording's), called @name. */
struct kallsyms *kallsyms_parse(const char *text, size_t len, const char *name, char *err,
				size_t errlen);
void kallsyms_free(struct kallsyms *k);
/* How many text symbols it has. */
size_t kallsyms_count(const struct kallsyms *k);
/*
 * kallsyms text naming @addrs as @k does, and nothing else: _text and
 * each symbol holding one of them, once.  Malloc'd, length in *@len;
 * NULL without memory.
 */
char *kallsyms_subset(const struct kallsyms *k, const uint64_t *addrs, size_t n, size_t *len);
/* _text's address in the file, 0 if it has none. */
uint64_t kallsyms_text(const struct kallsyms *k);
/* The function holding @addr and its index, or NULL below the first. */
const char *kallsyms_name(const struct kallsyms *k, uint64_t addr, uint32_t *index);

#endif /* TAILOR_KALLSYMS_H */

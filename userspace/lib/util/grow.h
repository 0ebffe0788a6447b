/* SPDX-License-Identifier: GPL-2.0-only */
/* Growing arrays: the one doubling realloc the report's tables share. */
#ifndef TAILOR_LIB_GROW_H
#define TAILOR_LIB_GROW_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Make room for @need elements of @size bytes in *@arr (capacity *@cap),
 * doubling from 64; new elements are zeroed.  0, or -ENOMEM with *@arr
 * untouched.
 */
static inline int array_grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t cap2 = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (cap2 < need)
		cap2 *= 2;
	p = realloc(*arr, cap2 * size);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * size, 0, (cap2 - *cap) * size);
	*arr = p;
	*cap = cap2;
	return 0;
}

#endif /* TAILOR_LIB_GROW_H */

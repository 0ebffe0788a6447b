/* SPDX-License-Identifier: GPL-2.0-only */
/* A path's last component: the name a row, a label or a lookup uses. */
#ifndef TAILOR_LIB_PATH_H
#define TAILOR_LIB_PATH_H

#include <string.h>

/* @path after its last '/' ("libc.so.6" of "/usr/lib/.../libc.so.6"). */
static inline const char *path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

#endif

// SPDX-License-Identifier: GPL-2.0-only
/* Every output format, in one table (tailor/export.h). */
#include <string.h>
#include "tailor/export.h"

const struct exporter *const exporters[] = {
	&export_text, &export_csv, &export_json,
	&export_pprof, &export_folded, &export_chrome,
	NULL,
};

const struct exporter *exporter_find(const char *name)
{
	const struct exporter *const *e;

	for (e = exporters; *e; e++)
		if (!strcmp((*e)->name, name))
			return *e;
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the Tagging Dictionary reader: dictionaries come
 * from other programs, so no input may crash it, and whatever it accepts
 * must answer every lookup consistently.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tailor/dictionary_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct tdict *d = tdict_parse((const char *)data, size, "fuzz", err,
				      sizeof(err));
	size_t i, n;

	if (!d) {
		/* Every refusal names the input and a line. */
		if (strncmp(err, "fuzz:", 5))
			abort();
		return 0;
	}
	for (i = 0; i < d->nr_links; i++) {
		const struct tdict_link *k = &d->links[i];
		const struct tdict_link *run = k->level ?
			tdict_component_links(d, k->level, k->key_id, &n) :
			tdict_line_links(d, k->key_line, &n);

		if (!run || !n || k < run || k >= run + n)
			abort();
		if (!tdict_component(d, k->upper_level, k->upper_id))
			abort();
	}
	for (i = 0; i < d->nr_shared; i++)
		if (!tdict_is_shared(d, d->shared[i]))
			abort();
	for (i = 0; i < d->nr_components; i++)
		if (tdict_component(d, d->components[i].level,
				    d->components[i].id) != &d->components[i])
			abort();
	tdict_tag_component(d, 1, ~0ull);
	tdict_free(d);
	return 0;
}

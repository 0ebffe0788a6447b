/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Walks over a Tagging Dictionary's links (seed 000, section 3.3): a
 * component's links name components of higher levels, so climbing them
 * leads from a source line or task up to its operator, pipeline, query.
 * Walks stop at a depth of 16, so a dictionary whose links form a cycle
 * cannot hang them.
 */
#ifndef TAILOR_LIB_DICT_GRAPH_H
#define TAILOR_LIB_DICT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tailor/dictionary_reader.h"

/* The first component of level @target that (@level, @id) leads up to, or NULL. */
const struct tdict_component *dict_climb(const struct tdict *d, int level,
					 uint64_t id, int target);
/*
 * All of them, each once, at most @max into @out; returns the count.  An
 * operator of a plan that several clients run leads up to every run.
 */
size_t dict_climb_all(const struct tdict *d, int level, uint64_t id, int target,
		      const struct tdict_component **out, size_t max);
/* Whether links lead from (@level, @id) up to (@to_level, @to_id). */
bool dict_reaches(const struct tdict *d, int level, uint64_t id, int to_level,
		  uint64_t to_id);
/* The components of @level (contiguous: sorted by level, then id). */
const struct tdict_component *dict_level_components(const struct tdict *d,
						    int level, size_t *n);
/*
 * The component of level @target that a tag's component (@level, @id)
 * names: up the links when the tag is of a lower level; when it is of a
 * higher one (an operator tag, a pipeline report), the component of
 * @target whose links lead up to it -- *@ambiguous if there are several
 * (a join's build and probe pipelines; up the links, the runs of one plan
 * by several clients), and the first is returned.
 */
const struct tdict_component *dict_tag_component(const struct tdict *d, int level,
						 uint64_t id, int target,
						 bool *ambiguous);

#endif /* TAILOR_LIB_DICT_GRAPH_H */

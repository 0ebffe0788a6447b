/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libtailor: what an instrumented system calls while it compiles, to
 * leave a Tagging Dictionary (docs/dictionary-format.md) behind.
 *
 * Abstraction Trackers: the compiler pushes the component it is lowering
 * on each level (tailor_track_push) and pops it when done; whatever it
 * produces meanwhile is linked to every active component
 * (tailor_track_emit for a new lower-level component,
 * tailor_track_emit_line for a line of generated source).  Each lowering
 * step keeps its own log.  The cost is a few appends per generated line;
 * nothing happens at run time but the tag moves of tailor/tag.h.
 *
 * Errors are sticky: calls after a failure do nothing, and
 * tailor_dict_write() reports the first failure (-errno).
 */
#ifndef TAILOR_DICTIONARY_H
#define TAILOR_DICTIONARY_H

#include <stdint.h>

#define TAILOR_DICT_VERSION	1
#define TAILOR_LEVEL_LINE	0	/* the built-in level of file:line keys */

struct tailor_dict;

struct tailor_dict *tailor_dict_new(void);
void tailor_dict_free(struct tailor_dict *d);

/* Declare a level above the last one; returns its number (>= 1) or -errno. */
int tailor_dict_level(struct tailor_dict *d, const char *name);
/* A component of @level with @id (>= 1) and a name for reports. */
int tailor_dict_component(struct tailor_dict *d, int level, uint64_t id,
			  const char *name);
/* Optional plan structure: @id of @level sits under @parent_id. */
int tailor_dict_parent(struct tailor_dict *d, int level, uint64_t id,
		       int parent_level, uint64_t parent_id);
/* Start the log of a lowering step; later links go into it. */
int tailor_dict_log(struct tailor_dict *d, const char *name);
/* Explicit links, when trackers do not fit. */
int tailor_dict_link(struct tailor_dict *d, int level, uint64_t id,
		     int upper_level, uint64_t upper_id);
int tailor_dict_link_line(struct tailor_dict *d, const char *file,
			  unsigned int line, int upper_level, uint64_t upper_id);
/* Mark a source location as shared: attributed by tag. */
int tailor_dict_shared_line(struct tailor_dict *d, const char *file,
			    unsigned int line);
/* The tag register holds @level's component id in bits [shift, shift+bits). */
int tailor_dict_tag_field(struct tailor_dict *d, int level, unsigned int shift,
			  unsigned int bits);
/*
 * The per-thread tag word (tailor/tag_word.h) holds @level's component id
 * in bits [shift, shift+bits); where it names one, it decides first.
 */
int tailor_dict_tag_word_field(struct tailor_dict *d, int level, unsigned int shift,
			       unsigned int bits);

/*
 * The modules whose code the dictionary describes -- the program whose
 * runtime its shared lines are in, a library of generated code -- by path
 * and GNU build-id: a report refuses a dictionary for a profile in which
 * none of them is mapped (another program's samples, whose tag register
 * holds values of its own).  @build_id in lowercase hex, or NULL for a
 * file without one.  Makes the file format version 2.
 */
int tailor_dict_module(struct tailor_dict *d, const char *path, const char *build_id);
/*
 * The same for the loaded object (the program, or a library dlopen()ed)
 * whose code or data @addr is in, found through dl_iterate_phdr():
 * -ENOENT if none is.
 */
int tailor_dict_module_of(struct tailor_dict *d, const void *addr);

/* Abstraction Trackers. */
int tailor_track_push(struct tailor_dict *d, int level, uint64_t id);
int tailor_track_pop(struct tailor_dict *d, int level);
/* Link component @id of @level to every active component above it. */
int tailor_track_emit(struct tailor_dict *d, int level, uint64_t id);
/* Link a generated source line to every active component. */
int tailor_track_emit_line(struct tailor_dict *d, const char *file,
			   unsigned int line);

/* Write the dictionary (atomically: a temporary file, then rename). */
int tailor_dict_write(struct tailor_dict *d, const char *path);

#endif /* TAILOR_DICTIONARY_H */

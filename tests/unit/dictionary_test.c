// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Tagging Dictionary end to end without a profiler: libtailor's
 * trackers record what a small compiler lowers, the file is written, and
 * the reader gives back exactly those links; every malformed line is
 * refused with its line number.  Built with ASan and UBSan.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "tailor/dictionary.h"
#include "tailor/dictionary_reader.h"


static char tmp_path[64];

/*
 * A query like seed 000's Figure 3: scan -> join (build, probe) ->
 * group-by, two pipelines, generated lines 10..15 of q.c, and a shared
 * runtime function (rt.c:100) called by the join, attributed by tag.
 */
static int build_query_dictionary(const char *path)
{
	struct tailor_dict *d = tailor_dict_new();
	int pipe, op, ret;
	unsigned int line;

	if (!d)
		return -ENOMEM;
	pipe = tailor_dict_level(d, "pipeline");
	op = tailor_dict_level(d, "operator");
	tailor_dict_component(d, op, 1, "TableScan lineitem");
	tailor_dict_component(d, op, 2, "HashJoin");
	tailor_dict_component(d, op, 3, "GroupBy");
	tailor_dict_parent(d, op, 1, op, 2);
	tailor_dict_parent(d, op, 2, op, 3);
	tailor_dict_component(d, pipe, 1, "pipeline 1 (scan, build)");
	tailor_dict_component(d, pipe, 2, "pipeline 2 (probe, group)");
	tailor_dict_tag_field(d, op, 0, 16);
	tailor_dict_tag_field(d, pipe, 16, 16);
	tailor_dict_tag_word_field(d, pipe, 8, 24);

	tailor_dict_log(d, "operators->pipelines");
	tailor_track_push(d, op, 1);
	tailor_track_emit(d, pipe, 1);
	tailor_track_pop(d, op);
	tailor_track_push(d, op, 2);
	tailor_track_emit(d, pipe, 1);
	tailor_track_emit(d, pipe, 2);
	tailor_track_pop(d, op);
	tailor_track_push(d, op, 3);
	tailor_track_emit(d, pipe, 2);
	tailor_track_pop(d, op);

	tailor_dict_log(d, "pipelines->code");
	tailor_track_push(d, pipe, 1);
	tailor_track_push(d, op, 1);
	for (line = 10; line <= 11; line++)
		tailor_track_emit_line(d, "/tmp/q.c", line);
	tailor_track_pop(d, op);
	tailor_track_push(d, op, 2);
	tailor_track_emit_line(d, "/tmp/q.c", 12);
	tailor_track_pop(d, op);
	tailor_track_pop(d, pipe);
	tailor_track_push(d, pipe, 2);
	tailor_track_push(d, op, 2);
	tailor_track_emit_line(d, "/tmp/q.c", 13);
	tailor_track_pop(d, op);
	tailor_track_push(d, op, 3);
	for (line = 14; line <= 15; line++)
		tailor_track_emit_line(d, "/tmp/q.c", line);
	tailor_track_pop(d, op);
	tailor_track_pop(d, pipe);
	tailor_dict_shared_line(d, "/src/rt.c", 100);

	ret = tailor_dict_write(d, path);
	tailor_dict_free(d);
	return ret;
}

static uint64_t upper_of_line(const struct tdict *d, const char *fl, int level)
{
	const struct tdict_link *k;
	size_t n, i;

	k = tdict_line_links(d, fl, &n);
	for (i = 0; i < n; i++)
		if (k[i].upper_level == level)
			return k[i].upper_id;
	return 0;
}

static void test_roundtrip(void)
{
	const struct tdict_component *c;
	const struct tdict_link *k;
	struct tdict *d;
	char err[256];
	size_t n;
	int op, pipe;

	check(build_query_dictionary(tmp_path) == 0);
	d = tdict_load(tmp_path, err, sizeof(err));
	check(d != NULL);
	if (!d) {
		printf("# %s\n", err);
		return;
	}
	pipe = tdict_level(d, "pipeline");
	op = tdict_level(d, "operator");
	check(pipe == 1 && op == 2 && d->nr_levels == 3);
	check(tdict_level(d, "line") == 0);
	check(d->nr_components == 5);
	c = tdict_component(d, op, 2);
	check(c && !strcmp(c->name, "HashJoin"));
	check(c && c->parent_level == op && c->parent_id == 3);
	check(tdict_component(d, op, 4) == NULL);
	check(tdict_component(d, pipe, 3) == NULL);
	/* Generated lines go up to their pipeline and operator. */
	check(upper_of_line(d, "/tmp/q.c:10", pipe) == 1);
	check(upper_of_line(d, "/tmp/q.c:10", op) == 1);
	check(upper_of_line(d, "/tmp/q.c:12", op) == 2);
	check(upper_of_line(d, "/tmp/q.c:13", pipe) == 2);
	check(upper_of_line(d, "/tmp/q.c:13", op) == 2);
	check(upper_of_line(d, "/tmp/q.c:15", op) == 3);
	check(tdict_line_links(d, "/tmp/q.c:16", &n) == NULL && n == 0);
	/* A prefix of a key is not the key. */
	check(tdict_line_links(d, "/tmp/q.c:1", &n) == NULL && n == 0);
	/* The join feeds both pipelines. */
	k = tdict_component_links(d, pipe, 1, &n);
	check(k && n == 2);
	k = tdict_component_links(d, pipe, 2, &n);
	check(k && n == 2);
	check(d->nr_logs == 2 && !strcmp(d->logs[1], "pipelines->code"));
	check(tdict_is_shared(d, "/src/rt.c:100"));
	check(!tdict_is_shared(d, "/src/rt.c:10"));
	/* Tags: operator in bits 0..15, pipeline in 16..31. */
	check(tdict_tag_component(d, op, 0x00020003) == 3);
	check(tdict_tag_component(d, pipe, 0x00020003) == 2);
	check(tdict_tag_component(d, 0, 0x00020003) == 0);
	check(!strcmp(d->tag_register, "r15"));
	/* The word's field, apart from the register's. */
	check(d->nr_tags == 3 && d->tags[2].in_word && d->tags[2].level == pipe);
	check(d->nr_tags == 3 && tdict_tag_field(&d->tags[2], 0x0200) == 2);
	check(!d->tags[0].in_word && !d->tags[1].in_word);
	tdict_free(d);
}

static void test_writer_refusals(void)
{
	struct tailor_dict *d = tailor_dict_new();
	int op = tailor_dict_level(d, "operator");

	check(op == 1);
	check(tailor_dict_level(d, "operator") == -EEXIST);
	tailor_dict_free(d);

	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	check(tailor_dict_component(d, op, 0, "zero id") == -EINVAL);
	tailor_dict_free(d);

	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	check(tailor_dict_component(d, op, 1, "tab\tin name") == -EINVAL);
	/* Sticky: later calls report the first failure. */
	check(tailor_dict_component(d, op, 2, "fine") == -EINVAL);
	check(tailor_dict_write(d, tmp_path) == -EINVAL);
	tailor_dict_free(d);

	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	check(tailor_dict_link_line(d, "/tmp/q.c", 3, op, 9) == -ENOENT);
	tailor_dict_free(d);

	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	check(tailor_track_pop(d, op) == -EINVAL);
	tailor_dict_free(d);

	/* A level below the line level once indexed the trackers before them. */
	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	check(tailor_track_emit(d, -5, 1) == -EINVAL);
	tailor_dict_free(d);

	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	check(tailor_dict_tag_field(d, op, 60, 8) == -EINVAL);
	tailor_dict_free(d);

	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	check(tailor_dict_tag_word_field(d, op, 60, 8) == -EINVAL);
	tailor_dict_free(d);

	d = tailor_dict_new();
	op = tailor_dict_level(d, "operator");
	tailor_dict_component(d, op, 1, "A");
	check(tailor_dict_component(d, op, 1, "A again") == -EEXIST);
	tailor_dict_free(d);
}

struct bad_dict {
	const char *text;
	const char *message;	/* expected in the error */
};

static const struct bad_dict bad_dicts[] = {
	{ "", ":1: empty file" },
	{ "tailor-dictionary\t3\n", ":1: dictionary format 3 is not a version this tailor reads (1 and 2)" },
	{ "tailor-dictionary\t1\nmodule\t/usr/bin/e\t-\n", ":2: 'module' lines are format version 2's" },
	{ "tailor-dictionary\t2\nmodule\tbin/e\t-\n", ":2: module path 'bin/e' is not absolute" },
	{ "tailor-dictionary\t2\nmodule\t/bin/e\tabc\n", ":2: build-id 'abc' is not 2 to 80 hex digits" },
	{ "tailor-dictionary\t2\nmodule\t/bin/e\tABCD\n", ":2: build-id 'ABCD' is not lowercase hex" },
	{ "tailor-dictionary\t2\nmodule\t/bin/e\t-\nmodule\t/bin/e\tab\n", ":3: module '/bin/e' named twice" },
	{ "hello\n", ":1: not a tailor dictionary" },
	{ "tailor-dictionary\t1\ncomponent\top\t1\tX\n", ":2: unknown level 'op'" },
	{ "tailor-dictionary\t1\nlevel\top\nlevel\top\n", ":3: level 'op' declared twice" },
	{ "tailor-dictionary\t1\nlevel\top\ncomponent\top\tx\tX\n", ":3: component id 'x' is not a number" },
	{ "tailor-dictionary\t1\nlevel\top\ncomponent\top\t0\tX\n", ":3: component id '0' is out of range" },
	{ "tailor-dictionary\t1\nlevel\top\ncomponent\top\t1\n", ":3: 'component' takes 3" },
	{ "tailor-dictionary\t1\nlevel\top\nlink\tline\tq.c\top\t1\n", ":3: line key 'q.c' is not file:line" },
	{ "tailor-dictionary\t1\nlevel\top\nlink\tline\tq.c:3\top\t1\n", "op 1, which is not declared" },
	{ "tailor-dictionary\t1\nlevel\top\ncomponent\top\t1\tX\ncomponent\top\t1\tY\n", "op 1 declared twice" },
	{ "tailor-dictionary\t1\nlevel\top\ntag\top\t60\t8\n", ":3: tag field 60+8 does not fit" },
	/* A last line without its newline was cut: its last field may be a prefix (12 of 123). */
	{ "tailor-dictionary\t1\nlevel\top\ncomponent\top\t12", ":3: the last line is cut short" },
	{ "tailor-dictionary\t1\nfrobnicate\t1\n", ":2: unknown line kind 'frobnicate'" },
	{ "tailor-dictionary\t1\nlevel\ta\nlevel\tb\ncomponent\ta\t1\tA\ncomponent\tb\t1\tB\nlink\tb\t1\ta\t1\n",
	  ":6: link from level 'b' to 'a' does not go up" },
};

static void test_reader_refusals(void)
{
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad_dicts) / sizeof(bad_dicts[0]); i++) {
		struct tdict *d = tdict_parse(bad_dicts[i].text,
					      strlen(bad_dicts[i].text), "t.dict",
					      err, sizeof(err));

		check(d == NULL);
		if (d) {
			tdict_free(d);
			printf("# case %zu accepted\n", i);
			continue;
		}
		if (!strstr(err, bad_dicts[i].message)) {
			printf("# case %zu:\n", i);
			check_contains(err, bad_dicts[i].message);
		}
	}
}

static void test_extensions_and_comments(void)
{
	static const char text[] =
		"tailor-dictionary\t1\n# a comment\n\nx-vendor\tanything\there\n"
		"level\top\ncomponent\top\t7\tSort (by key)\ntag-register\tr14\n";
	char err[256];
	struct tdict *d = tdict_parse(text, sizeof(text) - 1, "t.dict", err, sizeof(err));

	check(d != NULL);
	if (d) {
		check(!strcmp(tdict_component(d, 1, 7)->name, "Sort (by key)"));
		check(!strcmp(d->tag_register, "r14"));
		tdict_free(d);
	}
}

/* A module by an address in it: this program, its path and build-id as readelf says. */
static void test_modules(void)
{
	struct tailor_dict *d = tailor_dict_new();
	char err[256], exe[4096], cmd[4200], want[128] = "";
	struct tdict *r;
	ssize_t n;
	FILE *f;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	check(n > 0);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID:/ { print $3 }'", exe);
	f = popen(cmd, "r");
	check(f && fgets(want, sizeof(want), f));
	if (f)
		pclose(f);
	want[strcspn(want, "\n")] = '\0';
	check(tailor_dict_module_of(d, (const void *)test_modules) == 0);
	/* Once per path; a second address in the same file adds nothing. */
	check(tailor_dict_module_of(d, (const void *)test_roundtrip) == 0);
	check(tailor_dict_module(d, "/usr/lib/libgenerated.so", NULL) == 0);
	check(tailor_dict_write(d, tmp_path) == 0);
	tailor_dict_free(d);
	r = tdict_load(tmp_path, err, sizeof(err));
	check(r != NULL);
	if (!r) {
		printf("# %s\n", err);
		return;
	}
	check(r->version == 2);
	check(r->nr_modules == 2);
	if (r->nr_modules == 2) {
		check(!strcmp(r->modules[0].path, exe));
		check(r->modules[0].build_id && !strcmp(r->modules[0].build_id, want));
		check(!strcmp(r->modules[1].path, "/usr/lib/libgenerated.so"));
		check(r->modules[1].build_id == NULL);
	}
	tdict_free(r);
	d = tailor_dict_new();
	check(tailor_dict_module(d, "relative.so", NULL) == -EINVAL);
	tailor_dict_free(d);
	/* Build-ids as the reader takes them; a module named twice alike, or a mistake. */
	d = tailor_dict_new();
	check(tailor_dict_module(d, "/bin/e", "abc") == -EINVAL);
	tailor_dict_free(d);
	d = tailor_dict_new();
	check(tailor_dict_module(d, "/bin/e", "ABCD") == -EINVAL);
	tailor_dict_free(d);
	d = tailor_dict_new();
	check(tailor_dict_module(d, "/bin/e", "abcd") == 0);
	check(tailor_dict_module(d, "/bin/e", "abcd") == 0);
	check(tailor_dict_module(d, "/bin/e", "abce") == -EEXIST);
	tailor_dict_free(d);
	d = tailor_dict_new();
	check(tailor_dict_module_of(d, NULL) == -ENOENT);
	tailor_dict_free(d);
}

int main(void)
{
	snprintf(tmp_path, sizeof(tmp_path), "/tmp/tailor-dict-test.%d", (int)getpid());
	TEST(test_roundtrip(), "trackers write what the reader gives back");
	TEST(test_writer_refusals(), "the writer refuses what the format cannot hold");
	TEST(test_reader_refusals(), "the reader refuses bad lines, naming the line");
	TEST(test_extensions_and_comments(), "comments, blank lines and x- extensions are skipped");
	TEST(test_modules(), "modules by path and build-id, found from an address, read back (version 2)");
	unlink(tmp_path);
	return test_done();
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * --feedback's inputs (see feedback.h): tailor report's JSON profile and
 * the profiled run's --times.  Both come from outside; fuzz_feedback
 * feeds this file random profiles.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "feedback.h"
#include "json.h"
#include "times.h"

void fb_profile_free(struct fb_profile *p)
{
	if (p->doc) {
		json_free(p->doc);
		free(p->doc);
	}
	free(p->rows);
	memset(p, 0, sizeof(*p));
}

__attribute__((format(printf, 4, 5)))
static int refuse(char *err, size_t errlen, const char *what, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "%s: ", what);

	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int is_count(const struct json_value *v)
{
	return v && v->type == JSON_NUMBER && v->number >= 0 && v->number <= 1e18;
}

int fb_profile_parse(struct fb_profile *p, const char *text, size_t len, const char *what,
		     char *err, size_t errlen)
{
	const struct json_value *root, *info, *level, *rows, *r, *sample_ns, *complete, *cpu_time;
	struct json_doc *doc = calloc(1, sizeof(*doc));
	char why[200];
	size_t i = 0;

	memset(p, 0, sizeof(*p));
	if (!doc)
		return refuse(err, errlen, what, "out of memory");
	if (json_parse(doc, text, len, why, sizeof(why))) {
		free(doc);
		return refuse(err, errlen, what, "not JSON: %s", why);
	}
	p->doc = doc;
	root = doc->root;
	info = json_get(root, "profile");
	level = json_get(root, "level");
	rows = json_get(root, "rows");
	sample_ns = json_get(info, "sample_ns");
	complete = json_get(info, "complete");
	if (root->type != JSON_OBJECT || !info || !level || !rows) {
		refuse(err, errlen, what, "not a profile of tailor report --format json "
			      "(it needs \"profile\", \"level\" and \"rows\")");
		fb_profile_free(p);
		return -1;
	}
	if (level->type != JSON_STRING ||
	    (strcmp(level->string, "pipeline") && strcmp(level->string, "task"))) {
		refuse(err, errlen, what, "a profile at level '%s'; --feedback needs "
			      "'task' or 'pipeline' (tailor report --level task --by-query "
			      "--format json)", level->type == JSON_STRING ? level->string : "?");
		fb_profile_free(p);
		return -1;
	}
	p->by_task = !strcmp(level->string, "task");
	cpu_time = json_get(info, "sample_ns_is_cpu_time");
	if (!is_count(sample_ns) || sample_ns->number < 1 || !cpu_time) {
		refuse(err, errlen, what, "no \"profile\".\"sample_ns\" and "
			      "\"sample_ns_is_cpu_time\": written by a tailor before 2026-11-24? "
			      "Report it again");
		fb_profile_free(p);
		return -1;
	}
	if (cpu_time->type != JSON_TRUE) {
		refuse(err, errlen, what, "its samples are not CPU time (the event is not a "
			      "clock: sample with cpu-clock, or tailor record)");
		fb_profile_free(p);
		return -1;
	}
	if (rows->type != JSON_ARRAY) {
		refuse(err, errlen, what, "\"rows\" is not an array");
		fb_profile_free(p);
		return -1;
	}
	p->sample_ns = sample_ns->number;
	p->complete = !complete || complete->type != JSON_FALSE;
	p->rows = calloc(rows->len ? rows->len : 1, sizeof(*p->rows));
	if (!p->rows) {
		refuse(err, errlen, what, "out of memory");
		fb_profile_free(p);
		return -1;
	}
	for (r = rows->first; r; r = r->next, i++) {
		const struct json_value *name = json_get(r, "name");
		const struct json_value *samples = json_get(r, "samples");
		const struct json_value *query = json_get(r, "query");

		if (!name || name->type != JSON_STRING || !is_count(samples) ||
		    (query && query->type != JSON_STRING)) {
			refuse(err, errlen, what, "row %zu has no \"name\" string and "
				      "\"samples\" count%s", i + 1,
				      query ? ", or its \"query\" is not a string" : "");
			fb_profile_free(p);
			return -1;
		}
		p->rows[i] = (struct fb_row){ name->string, query ? query->string : NULL,
					      samples->number };
	}
	p->nr_rows = i;
	return 0;
}

int fb_profile_read(struct fb_profile *p, const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL, err[512];
	size_t len = 0, cap = 0, n;
	int ret;

	if (!f) {
		fprintf(stderr, "tailor-engine: cannot open the profile %s: %m\n", path);
		return -1;
	}
	do {
		if (cap - len < 65536) {
			char *bigger = cap > (256u << 20) ? NULL : realloc(text, cap + 65536 * 4);

			if (!bigger) {
				fprintf(stderr, "tailor-engine: %s: %s\n", path,
					cap > (256u << 20) ? "larger than 256 MiB" : "out of memory");
				free(text);
				fclose(f);
				return -1;
			}
			text = bigger;
			cap += 65536 * 4;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		fprintf(stderr, "tailor-engine: cannot read the profile %s\n", path);
		free(text);
		fclose(f);
		return -1;
	}
	fclose(f);
	ret = fb_profile_parse(p, text, len, path, err, sizeof(err));
	free(text);
	if (ret)
		fprintf(stderr, "tailor-engine: %s\n", err);
	return ret;
}

void fb_times_free(struct fb_times *t)
{
	free(t->queries);
	memset(t, 0, sizeof(*t));
}

/*
 * "2:1.0,5:0.2.1": filter 2 tested its term 1, then 0; filter 5 its terms
 * 0, 2, 1.  Each a permutation of 0..n-1 of an operator number in range.
 */
static int parse_terms(struct fb_times_query *q, const char *text)
{
	const char *s = text;

	while (*s) {
		unsigned long op = 0, term;
		bool seen[PLAN_MAX_CONJUNCTS] = { false };
		int order[PLAN_MAX_CONJUNCTS], n = 0, i;
		char *end;

		if (*s < '0' || *s > '9')
			return -1;
		op = strtoul(s, &end, 10);
		if (*end != ':' || !op || op > PLAN_MAX_OPERATORS)
			return -1;
		s = end + 1;
		for (;;) {
			if (*s < '0' || *s > '9' || n == PLAN_MAX_CONJUNCTS)
				return -1;
			term = strtoul(s, &end, 10);
			if (term >= PLAN_MAX_CONJUNCTS || seen[term])
				return -1;
			seen[term] = true;
			order[n++] = (int)term;
			s = end;
			if (*s != '.')
				break;
			s++;
		}
		/* A permutation: every term below n once. */
		for (i = 0; i < n; i++)
			if (!seen[i])
				return -1;
		if (n < 2)
			return -1;
		/* Every execution of the query says it; they all ran the same code. */
		if (q->nr_terms[op] && (q->nr_terms[op] != n ||
					memcmp(q->terms[op], order, sizeof(order[0]) * (size_t)n)))
			return -1;
		q->nr_terms[op] = n;
		memcpy(q->terms[op], order, sizeof(order[0]) * (size_t)n);
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			return -1;
	}
	return 0;
}

int fb_times_parse(struct fb_times *t, FILE *f, const char *what, char *err, size_t errlen)
{
	char line[4096], v[2048], levels[LOWER_MAX_PIPELINES][TIMES_VALUE_MAX], *end;
	int lineno = 0, i;

	memset(t, 0, sizeof(*t));
	while (fgets(line, sizeof(line), f)) {
		struct fb_times_query *q = NULL, *grown;
		unsigned long long repeat;

		lineno++;
		if (!times_field(line, "query", v, sizeof(v)) || strlen(v) >= sizeof(q->name))
			goto bad;
		for (i = 0; i < t->nr_queries; i++)
			if (!strcmp(t->queries[i].name, v))
				q = &t->queries[i];
		if (!q) {
			if (t->nr_queries == 64) {
				refuse(err, errlen, what, "more than 64 queries");
				goto fail;
			}
			grown = realloc(t->queries, (size_t)(t->nr_queries + 1) * sizeof(*grown));
			if (!grown) {
				refuse(err, errlen, what, "out of memory");
				goto fail;
			}
			t->queries = grown;
			q = &t->queries[t->nr_queries++];
			memset(q, 0, sizeof(*q));
			strcpy(q->name, v);
		}
		if (!times_field(line, "repeat", v, sizeof(v)) ||
		    times_number(v, 100000, &repeat) || !repeat)
			goto bad;
		q->executions += (long)repeat;
		if (!times_field(line, "compile_ns", v, sizeof(v)))
			goto bad;
		q->compile_ns = strtod(v, &end);
		if (!(q->compile_ns > 0 && q->compile_ns < 1e15) || *end)
			goto bad;
		/* opt=1:O2,2:O0,...: the level of each pipeline, in execution order. */
		if (!times_field(line, "opt", v, sizeof(v)))
			goto bad;
		q->nr_pipelines = times_list(v, levels, LOWER_MAX_PIPELINES);
		if (q->nr_pipelines < 1)
			goto bad;
		for (i = 0; i < q->nr_pipelines; i++) {
			if (levels[i][0] != 'O' || levels[i][1] < '0' ||
			    levels[i][1] >= '0' + FB_NR_LEVELS || levels[i][2])
				goto bad;
			q->opt[i] = levels[i][1] - '0';
		}
		/* terms=2:1.0,5:0.2.1: optional, the queries without filters of terms have none. */
		if (times_field(line, "terms", v, sizeof(v)) && parse_terms(q, v))
			goto bad;
	}
	if (ferror(f) || !t->nr_queries) {
		refuse(err, errlen, what, ferror(f) ? "cannot read it" : "no query in it");
		goto fail;
	}
	return 0;
bad:
	refuse(err, errlen, what, "line %d: not a line of tailor-engine --times with query=, "
	       "repeat=, compile_ns= and opt= (from this version)", lineno);
fail:
	fb_times_free(t);
	return -1;
}

const struct fb_times_query *fb_input_times(const struct fb_input *in, const char *query)
{
	int k;

	if (!in->have_times)
		return NULL;
	for (k = 0; k < in->times.nr_queries; k++)
		if (!strcmp(in->times.queries[k].name, query))
			return &in->times.queries[k];
	return NULL;
}

int fb_times_read(struct fb_times *t, const char *path)
{
	FILE *f = fopen(path, "r");
	char err[512];
	int ret;

	memset(t, 0, sizeof(*t));
	if (!f) {
		fprintf(stderr, "tailor-engine: cannot open --feedback-times %s: %m\n", path);
		return -1;
	}
	ret = fb_times_parse(t, f, path, err, sizeof(err));
	fclose(f);
	if (ret)
		fprintf(stderr, "tailor-engine: --feedback-times %s\n", err);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0-only
/* What the report's views share: the profile's description and the notes. */
#include <inttypes.h>
#include <string.h>
#include "cli.h"
#include "report.h"

const char *row_kind_name(const struct attr_row *row)
{
	static const char *const names[] = {
		[ROW_COMPONENT] = "component", [ROW_FUNCTION] = "function",
		[ROW_LINE] = "line", [ROW_INSTRUCTION] = "instruction",
		[ROW_KERNEL] = "kernel", [ROW_OBJECT] = "object",
		[ROW_UNKNOWN] = "unknown", [ROW_UNRESOLVED] = "unresolved",
	};

	return names[row->kind];
}

const char *row_name(const struct report *r, uint32_t row)
{
	return attr_row(r->attr, row)->name;
}

const char *query_title(const struct report *r, struct doc *d, uint32_t query,
			uint64_t samples)
{
	const struct attr_row *q = attr_row(r->attr, query);

	return doc_printf(d, "\n## %s%s%s: %" PRIu64 " samples (%.2f%% of all)",
			  q->kind == ROW_COMPONENT ? "query " : "", q->name,
			  q->kind == ROW_COMPONENT ? "" : " (no query reached)", samples,
			  agg_share(&r->agg, samples));
}

struct doc_table *queries_table(struct doc *d)
{
	static const struct doc_column cols[] = {
		{ .name = "query", .type = DOC_STR }, { .name = "samples", .type = DOC_U64 },
		{ .name = "share", .type = DOC_SHARE },
	};

	return doc_table(d, "queries", DOC_JSON, cols, 3);
}

void queries_row(const struct report *r, struct doc *d, struct doc_table *t,
		 uint32_t query, uint64_t samples)
{
	doc_row(d, t, 0);
	doc_cell(d, t, doc_str(row_name(r, query)));
	doc_cell(d, t, doc_u64(samples));
	doc_cell(d, t, doc_share(agg_share(&r->agg, samples)));
}

/* "operators", "queries": a level's name for many. */
static const char *plural(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);

	if (n > 1 && name[n - 1] == 'y' && !strchr("aeiou", name[n - 2]))
		snprintf(buf, len, "%.*sies", (int)(n - 1), name);
	else
		snprintf(buf, len, "%ss", name);
	return buf;
}

/* The comment lines a text view starts with. */
void report_header(const struct report *r, struct doc *d)
{
	const struct agg *g = &r->agg;
	uint64_t attributed = agg_attributed(g);
	char dicts[4096] = "", name[80];
	size_t n = 0;
	int i;

	doc_header(d, "# profile: %s (%s, %s): %" PRIu64 " samples, event %s",
		   r->input, r->info->format, r->info->complete ? "complete" : "cut short",
		   r->info->nr_samples, r->info->event[0] ? r->info->event : "?");
	if (r->kernel_symbols[0])
		doc_header(d, "# kernel symbols: %s", r->kernel_symbols);
	if (r->info->other_events[0])
		doc_header(d, "# also sampled, each a profile of its own (--event NAME): %s",
			   r->info->other_events);
	for (i = 0; i < r->nr_dicts && n < sizeof(dicts); i++)
		n += snprintf(dicts + n, sizeof(dicts) - n, " %s", r->dict_paths[i]);
	if (r->nr_dicts)
		doc_header(d, "# dictionaries:%s", dicts);
	if (r->query_filter)
		doc_header(d, "# only the samples of query %s (--query)", r->query_filter);
	if (g->filtered_out)
		doc_header(d, "# filters left %" PRIu64 " samples (%" PRIu64 " filtered out)",
			   g->total, g->filtered_out);
	doc_header(d, "# level: %s; %" PRIu64 " of %" PRIu64 " samples (%.1f%%) attributed to %s",
		   attr_level_name(r->attr), attributed, g->total, agg_share(g, attributed),
		   plural(attr_level_name(r->attr), name, sizeof(name)));
}

/* JSON: what was read, and how much of it the level reached. */
void report_meta(const struct report *r, struct doc *d)
{
	uint64_t cpu_ns = 0;

	doc_meta(d, "profile", "input", doc_str(r->input));
	doc_meta(d, "profile", "format", doc_str(r->info->format));
	doc_meta(d, "profile", "complete", doc_bool(r->info->complete));
	doc_meta(d, "profile", "samples", doc_u64(r->info->nr_samples));
	doc_meta(d, "profile", "filtered_out", doc_u64(r->agg.filtered_out));
	/*
	 * What a sample stands for in CPU time, for programs (--feedback):
	 * a clock's period, or a clock's period at perf -F's frequency --
	 * not the mean spacing of all samples, which shrinks with the CPUs
	 * sampled at once.
	 */
	if (r->info->period_is_ns && r->info->period)
		cpu_ns = r->info->period;
	else if (r->info->period_is_ns && r->info->freq_hz)
		cpu_ns = 1000000000ull / r->info->freq_hz;
	doc_meta(d, "profile", "sample_ns", doc_u64(cpu_ns ? cpu_ns : r->agg.sample_ns));
	doc_meta(d, "profile", "sample_ns_is_cpu_time", doc_bool(cpu_ns != 0));
	doc_meta(d, NULL, "level", doc_str(attr_level_name(r->attr)));
	doc_meta(d, NULL, "total", doc_u64(r->agg.total));
	doc_meta(d, NULL, "attributed", doc_u64(agg_attributed(&r->agg)));
}

/* Every reason counted: closing comment lines, and a JSON table. */
void report_notes(const struct report *r, struct doc *d)
{
	static const struct doc_column cols[] = {
		{ .name = "samples", .type = DOC_U64 }, { .name = "note", .type = DOC_STR },
	};
	struct doc_table *t = doc_table(d, "notes", DOC_JSON, cols, 2);
	const struct agg *g = &r->agg;
	enum attr_note n;
	uint64_t count;
	bool any = false;
	size_t i;

	for (n = NOTE_NONE + 1; n < NOTE_MAX; n++) {
		count = attr_note_count(r->attr, n);
		if (!count)
			continue;
		if (!any)
			doc_footer(d, "# notes:");
		any = true;
		doc_footer(d, "#   %" PRIu64 " sample%s (%.1f%%) %s", count, count == 1 ? "" : "s",
			   agg_share(g, count), attr_note_text(n));
		doc_row(d, t, 0);
		doc_cell(d, t, doc_u64(count));
		doc_cell(d, t, doc_str(attr_note_text(n)));
	}
	for (i = 0; i < attr_nr_nodebug(r->attr); i++) {
		bool stripped;
		const char *obj = attr_nodebug(r->attr, i, &count, &stripped);

		if (!count)
			continue;
		if (stripped)
			doc_footer(d, "#   %" PRIu64 " sample%s in %s: no symbols (stripped); --level instruction gives their addresses, and its debug file, where installed, its names (looked for by build-id under /usr/lib/debug, or --debug-dir DIR)",
				   count, count == 1 ? "" : "s", obj);
		else
			doc_footer(d, "#   %" PRIu64 " sample%s in %s, which has no %s (build with -g, or install its debug symbols)",
				   count, count == 1 ? "" : "s", obj,
				   !attr_level_is_dict(r->attr) &&
				   !strcmp(attr_level_name(r->attr), "function") ?
				   "symbol for their code" : "line information");
	}
}

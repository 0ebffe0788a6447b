// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor dump: what a recording holds, and whether it is whole.  Every
 * line is "key: value" so scripts and tests can read it too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "tailor/x86_regs.h"

/* The file starts as perf.data files do. */
static bool is_perf_data(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rb");
	bool yes;

	if (!f)
		return false;
	yes = fread(magic, 1, sizeof(magic), f) == sizeof(magic) && !memcmp(magic, "PERFILE2", 8);
	fclose(f);
	return yes;
}

static int run_dump(const struct cli_command *cmd, int argc, char **argv);

enum { OPT_SAMPLES = OPT_LONG_ONLY, OPT_MMAPS, OPT_SWITCHES, OPT_RECORDS };

static const struct cli_option dump_options[] = {
	{ .id = 'i', .name = "input", .arg = "FILE",
	  .help = "the recording (default tailor.rec)",
	  .complete = "@file" },
	{ .id = OPT_SAMPLES, .name = "samples", .arg = "N",
	  .help = "also print the first N samples, their captured\n"
		  "registers by name (in a kernel sample of the\n"
		  "software clock, the user registers at kernel\n"
		  "entry: rip is where the thread entered)" },
	{ .id = OPT_RECORDS, .name = "records",
	  .help = "also print every record in file order: its offset,\n"
		  "kind (META, SAMPLES, MMAP ...; an unknown kind by\n"
		  "its number) and payload size" },
	{ .id = OPT_MMAPS, .name = "mmaps",
	  .help = "also print every executable mapping" },
	{ .id = OPT_SWITCHES, .name = "switches",
	  .help = "also print every context switch: tsc, pid, tid,\n"
		  "cpu, in or out (preempted: still runnable), the\n"
		  "thread on the other side where known, and how the\n"
		  "time was taken (0 tsc, 1 converted perf time);\n"
		  "and every wakeup: the waker, the woken tid and\n"
		  "the CPU it is to run on" },
	{ .id = 'h', .name = "help",
	  .help = "this text" },
	{ 0 }
};

const struct cli_command cmd_dump = {
	.name = "dump",
	.summary = "print what a recording holds, and whether it is complete",
	.synopsis = "usage: tailor dump [options] [-i] FILE",
	.description = "Print a recording's header (host, event, sampling source, TSC facts),\n"
		       "what it contains (samples per thread, executable mappings, side-band),\n"
		       "how it ended, and whether it is complete.",
	.options = dump_options,
	.epilogue = "Exit status: 0 complete, 3 readable but cut short (no END record, or a\n"
		    "damaged tail), 1 not readable, 2 bad options.\n",
	.run = run_dump,
};

struct thread_count {
	uint32_t pid, tid;
	uint64_t samples;
};

struct dump_state {
	uint64_t samples, batches, mmaps, comms, tasks, switches, wakeups, rounds, unknown;
	uint64_t packed_batches;
	uint64_t sample_bytes;	/* the sample records' bytes in the file */
	uint64_t files;		/* FILE records that start a file */
	uint64_t first_tsc, last_tsc;
	uint64_t regs_mask;
	uint64_t flags_used;	/* TAILOR_CFG_* in force */
	uint64_t tag_word_bad;	/* samples whose tag word was unreadable */
	uint64_t otel;		/* samples with an OpenTelemetry context */
	struct thread_count *threads;
	size_t nr_threads, cap_threads;
	uint64_t print_samples;
	bool print_mmaps;
	bool print_switches;
	bool print_records;
	bool have_meta, have_end;
	uint64_t unknown_shown;
	uint64_t kernel_symbols;	/* lines of the KALLSYMS record, _text's too */
	uint64_t stacks, stack_entries;	/* STACK records, and their entries */
	uint64_t build_ids;		/* files in the BUILD_IDS record */
	bool have_kallsyms;
};

/* The record kinds of docs/recording-format.md, by type. */
static const char *const kind_names[] = {
	[TLR_META] = "META", [TLR_SAMPLES] = "SAMPLES", [TLR_MMAP] = "MMAP",
	[TLR_COMM] = "COMM", [TLR_TASK] = "TASK", [TLR_END] = "END", [TLR_ROUND] = "ROUND",
	[TLR_SWITCH] = "SWITCH", [TLR_WAKEUP] = "WAKEUP", [TLR_FILE] = "FILE",
	[TLR_SAMPLES_PACKED] = "SAMPLES_PACKED", [TLR_KALLSYMS] = "KALLSYMS",
	[TLR_STACK] = "STACK", [TLR_BUILD_IDS] = "BUILD_IDS",
};

static const char *kind_name(uint32_t type)
{
	return type < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[type] ?
	       kind_names[type] : NULL;
}

static void count_thread(struct dump_state *d, uint32_t pid, uint32_t tid)
{
	size_t i;

	for (i = 0; i < d->nr_threads; i++) {
		if (d->threads[i].tid == tid && d->threads[i].pid == pid) {
			d->threads[i].samples++;
			return;
		}
	}
	if (d->nr_threads == d->cap_threads) {
		size_t cap = d->cap_threads ? d->cap_threads * 2 : 64;
		struct thread_count *t = realloc(d->threads, cap * sizeof(*t));

		if (!t)
			return;
		d->threads = t;
		d->cap_threads = cap;
	}
	d->threads[d->nr_threads++] = (struct thread_count){ pid, tid, 1 };
}

static void print_text(const char *what, const struct tlr_record *rec)
{
	const char *p = rec->payload, *end = p + rec->size;

	while (p < end && *p) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *eq = memchr(p, '=', n);

		if (eq)
			printf("%s.%.*s: %.*s\n", what, (int)(eq - p), p,
			       (int)(n - (eq - p) - 1), eq + 1);
		p += n + 1;
	}
}

/*
 * Registers by name, in the ascending order they are stored in, then the
 * data address and the tag word where the session captured them.
 */
static void print_sample(const struct tailor_sample *s, uint64_t regs_mask,
			 uint32_t nr_regs, uint64_t flags_used, uint32_t room)
{
	uint32_t i = 0;
	int reg;

	printf("sample: tsc=%" PRIu64 " ip=0x%" PRIx64 " pid=%u tid=%u cpu=%u flags=0x%x",
	       (uint64_t)s->tsc, (uint64_t)s->ip, tailor_who_pid(s->who),
	       tailor_who_tid(s->who), tailor_who_cpu(s->who),
	       tailor_who_flags(s->who));
	for (reg = 0; reg < 64 && i < nr_regs; reg++) {
		if (!(regs_mask >> reg & 1))
			continue;
		if (TAILOR_REGS_CAPTURABLE >> reg & 1)
			printf(" %s=0x%" PRIx64, x86_register_name(reg), (uint64_t)s->regs[i]);
		else
			printf(" reg%d=0x%" PRIx64, reg, (uint64_t)s->regs[i]);
		i++;
	}
	if ((flags_used & TAILOR_CFG_DATA_ADDR) && i < room)
		printf(" data_addr=0x%" PRIx64, (uint64_t)s->regs[i++]);
	if ((flags_used & TAILOR_CFG_TAG_WORD) && i < room) {
		if (tailor_who_flags(s->who) & TAILOR_SF_TAG_WORD_BAD)
			printf(" tag_word=unreadable");
		else
			printf(" tag_word=0x%" PRIx64, (uint64_t)s->regs[i]);
		i++;
	}
	/* OpenTelemetry's ids as W3C writes them: the record's bytes in order. */
	if ((flags_used & TAILOR_CFG_OTEL_CTX) && i + TAILOR_OTEL_IDS_SIZE / 8 <= room) {
		uint8_t ids[TAILOR_OTEL_IDS_SIZE];
		static const uint8_t none[TAILOR_OTEL_IDS_SIZE];
		size_t b;

		memcpy(ids, &s->regs[i], sizeof(ids));
		if (!memcmp(ids, none, sizeof(ids))) {
			printf(" otel=none");
		} else {
			printf(" otel_trace=");
			for (b = 0; b < 16; b++)
				printf("%02x", ids[b]);
			printf(" otel_span=");
			for (b = 16; b < 24; b++)
				printf("%02x", ids[b]);
		}
	}
	putchar('\n');
}

/* Whether sample @s carries an OpenTelemetry context (its ids are not zero). */
static bool has_otel(const struct tailor_sample *s, uint32_t nr_regs, uint64_t flags_used,
		     uint32_t room)
{
	uint32_t i = nr_regs + !!(flags_used & TAILOR_CFG_DATA_ADDR) +
		     !!(flags_used & TAILOR_CFG_TAG_WORD);
	uint64_t ids[TAILOR_OTEL_IDS_SIZE / 8];

	if (!(flags_used & TAILOR_CFG_OTEL_CTX) || i + TAILOR_OTEL_IDS_SIZE / 8 > room)
		return false;
	memcpy(ids, &s->regs[i], sizeof(ids));
	return ids[0] | ids[1] | ids[2];
}

static void take_samples(struct dump_state *d, const uint8_t *p, uint32_t count,
			 uint32_t record_size)
{
	/* META's mask, but never more registers than the record holds. */
	uint32_t i, nr_regs = __builtin_popcountll(d->regs_mask);
	uint32_t room = (record_size - TAILOR_SAMPLE_BASE_SIZE) / 8;

	if (nr_regs > room)
		nr_regs = room;

	d->batches++;
	for (i = 0; i < count; i++, p += record_size) {
		const struct tailor_sample *s = (const void *)p;

		if (!d->samples || s->tsc < d->first_tsc)
			d->first_tsc = s->tsc;
		if (s->tsc > d->last_tsc)
			d->last_tsc = s->tsc;
		count_thread(d, tailor_who_pid(s->who), tailor_who_tid(s->who));
		if (tailor_who_flags(s->who) & TAILOR_SF_TAG_WORD_BAD)
			d->tag_word_bad++;
		d->otel += has_otel(s, nr_regs, d->flags_used, room);
		if (d->samples < d->print_samples)
			print_sample(s, d->regs_mask, nr_regs, d->flags_used, room);
		d->samples++;
	}
}

static void take_record(struct dump_state *d, const struct tlr_record *rec)
{
	const char *kind = kind_name(rec->type);

	if (d->print_records) {
		if (kind)
			printf("record: offset=%" PRIu64 " kind=%s size=%u\n", rec->offset, kind,
			       rec->size);
		else
			printf("record: offset=%" PRIu64 " kind=unknown type=%u size=%u\n",
			       rec->offset, rec->type, rec->size);
	}
	switch (rec->type) {
	case TLR_META:
		d->have_meta = true;
		tlr_kv_get_u64(rec->payload, rec->size, "regs_mask", &d->regs_mask);
		tlr_kv_get_u64(rec->payload, rec->size, "flags_used", &d->flags_used);
		print_text("meta", rec);
		break;
	case TLR_SAMPLES:
	case TLR_SAMPLES_PACKED: {
		/* Either way the reader hands the samples over unpacked. */
		const struct tlr_samples *h = rec->payload;

		d->packed_batches += rec->type == TLR_SAMPLES_PACKED;
		d->sample_bytes += sizeof(struct tlr_record_header) + rec->size;
		take_samples(d, rec->samples, h->count, h->record_size);
		break;
	}
	case TLR_MMAP: {
		const struct tlr_mmap *m = rec->payload;

		d->mmaps++;
		if (d->print_mmaps)
			printf("mmap: pid=%u start=0x%" PRIx64 " end=0x%" PRIx64 " pgoff=0x%" PRIx64 " time_kind=%u path=%s\n",
			       m->pid, (uint64_t)m->start, (uint64_t)(m->start + m->len),
			       (uint64_t)m->pgoff, m->time_kind, (const char *)(m + 1));
		break;
	}
	case TLR_COMM:
		d->comms++;
		break;
	case TLR_TASK:
		d->tasks++;
		break;
	case TLR_SWITCH: {
		const struct tlr_switch *sw = rec->payload;

		d->switches++;
		if (d->print_switches)
			printf("switch: tsc=%" PRIu64 " pid=%u tid=%u cpu=%u %s other_pid=%d other_tid=%d time_kind=%u\n",
			       (uint64_t)sw->tsc, sw->pid, sw->tid, sw->cpu,
			       !(sw->flags & TLR_SWITCH_OUT) ? "in" :
			       (sw->flags & TLR_SWITCH_PREEMPTED) ? "out-preempted" : "out",
			       sw->other_pid, sw->other_tid, sw->time_kind);
		break;
	}
	case TLR_WAKEUP: {
		const struct tlr_wakeup *wk = rec->payload;

		d->wakeups++;
		if (d->print_switches)
			printf("wakeup: tsc=%" PRIu64 " pid=%u tid=%u cpu=%u target_tid=%u target_cpu=%d time_kind=%u\n",
			       (uint64_t)wk->tsc, wk->pid, wk->tid, wk->cpu, wk->target_tid,
			       wk->target_cpu, wk->time_kind);
		break;
	}
	case TLR_FILE: {
		const struct tlr_file *f = rec->payload;

		/* One line a file, at its first piece. */
		if (f->offset)
			break;
		d->files++;
		printf("carried: %s pid=%u bytes=%" PRIu64 " path=%s\n",
		       f->kind == TLR_FILE_JITDUMP ? "jitdump" : "perf-map", f->pid,
		       (uint64_t)f->file_size, (const char *)(f + 1));
		break;
	}
	case TLR_END:
		d->have_end = true;
		print_text("end", rec);
		break;
	case TLR_ROUND:
		d->rounds++;
		break;
	case TLR_KALLSYMS: {
		const char *p = rec->payload;
		uint32_t i;

		d->have_kallsyms = true;
		for (i = 0; i < rec->size && p[i]; i++)
			d->kernel_symbols += p[i] == '\n';
		break;
	}
	case TLR_BUILD_IDS: {
		const char *p = rec->payload;
		uint32_t i;

		for (i = 0; i < rec->size && p[i]; i++)
			d->build_ids += p[i] == '\n';
		break;
	}
	case TLR_STACK: {
		const struct tlr_stack *st = rec->payload;

		d->stacks++;
		d->stack_entries += st->nr;
		break;
	}
	default:
		/* A later writer's kind: skipped, and named by its number. */
		if (!d->print_records && d->unknown_shown++ < 16)
			printf("unknown_record: offset=%" PRIu64 " type=%u size=%u (skipped)\n",
			       rec->offset, rec->type, rec->size);
		d->unknown++;
	}
}

static int cmp_threads(const void *a, const void *b)
{
	const struct thread_count *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

static int run_dump(const struct cli_command *cmd, int argc, char **argv)
{
	struct dump_state d = {};
	const char *path = "tailor.rec", *val;
	struct tlr_record rec;
	struct tlr_reader *r;
	char err[512], *end;
	struct stat st;
	size_t i;
	int c, ret;

	while ((c = usage_next(cmd, argc, argv, &val)) != OPT_END) {
		switch (c) {
		case 'i':
			path = val;
			break;
		case OPT_SAMPLES:
			d.print_samples = strtoull(val, &end, 10);
			if (*end || *val < '0' || *val > '9')
				return usage_error(cmd, "invalid value '%s' for --samples: expected a number",
						   val);
			break;
		case OPT_MMAPS:
			d.print_mmaps = true;
			break;
		case OPT_SWITCHES:
			d.print_switches = true;
			break;
		case OPT_RECORDS:
			d.print_records = true;
			break;
		case 'h':
			usage_print(cmd, stdout);
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return usage_error(cmd, "one recording at a time ('%s' is extra)", argv[optind]);

	r = tlr_reader_open(path, err, sizeof(err));
	if (!r) {
		if (is_perf_data(path))
			return cmd_fail(cmd, "%s is a perf.data: tailor dump reads tailor recordings; for this file, perf report -D -i %s shows its records, tailor report -i %s its profile",
					path, path, path);
		return cmd_fail(cmd, "%s: %s", path, err);
	}
	printf("file: %s\nsize: %lld\nversion: %u\n", path,
	       stat(path, &st) ? -1LL : (long long)st.st_size, tlr_reader_version(r));
	while ((ret = tlr_next(r, &rec)) > 0)
		take_record(&d, &rec);

	printf("samples: %" PRIu64 "\nsample_batches: %" PRIu64 "\npacked_batches: %" PRIu64
	       "\nsample_bytes: %" PRIu64 "\nbytes_per_sample: %.2f\nmmaps: %" PRIu64
	       "\ncomms: %" PRIu64 "\ntask_events: %" PRIu64 "\nswitches: %" PRIu64
	       "\nwakeups: %" PRIu64 "\nrounds: %" PRIu64 "\ncarried_files: %" PRIu64
	       "\nunknown_records: %" PRIu64 "\n",
	       d.samples, d.batches, d.packed_batches, d.sample_bytes,
	       d.samples ? (double)d.sample_bytes / (double)d.samples : 0.0, d.mmaps, d.comms,
	       d.tasks, d.switches, d.wakeups, d.rounds,
	       d.files, d.unknown);
	if (d.samples)
		printf("tsc_span: %" PRIu64 "\n", d.last_tsc - d.first_tsc);
	/* _text and the functions the kernel samples fell in. */
	if (d.have_kallsyms)
		printf("kernel_functions: %" PRIu64 "\n",
		       d.kernel_symbols ? d.kernel_symbols - 1 : 0);
	if (d.flags_used & TAILOR_CFG_TAG_WORD)
		printf("tag_word_unreadable: %" PRIu64 "\n", d.tag_word_bad);
	if (d.flags_used & TAILOR_CFG_OTEL_CTX)
		printf("otel_context: %" PRIu64 " samples\n", d.otel);
	if (d.build_ids)
		printf("build_ids: %" PRIu64 "\n", d.build_ids);
	if (d.flags_used & TAILOR_CFG_CALLCHAIN)
		printf("stacks: %" PRIu64 " (%" PRIu64 " entries)\n", d.stacks, d.stack_entries);
	if (d.nr_threads)
		qsort(d.threads, d.nr_threads, sizeof(*d.threads), cmp_threads);
	printf("threads: %zu\n", d.nr_threads);
	for (i = 0; i < d.nr_threads && i < 16; i++)
		printf("thread: pid=%u tid=%u samples=%" PRIu64 "\n", d.threads[i].pid,
		       d.threads[i].tid, d.threads[i].samples);
	if (ret < 0) {
		printf("status: cut short: %s\n", tlr_reader_error(r));
		ret = EXIT_CUT;
	} else if (!d.have_end) {
		printf("status: cut short: no END record; recording was interrupted before it could finish (killed, crashed, or out of disk) after %" PRIu64 " samples\n",
		       d.samples);
		ret = EXIT_CUT;
	} else {
		printf("status: complete\n");
		ret = EXIT_OK;
	}
	free(d.threads);
	tlr_reader_close(r);
	return ret;
}

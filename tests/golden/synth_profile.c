// SPDX-License-Identifier: GPL-2.0-only
/*
 * synth_profile: a profile whose every sample is chosen, for golden tests
 * and the report benchmark.  Samples point into real ELF files with DWARF
 * (at the address of a given source line or symbol), carry given tags,
 * and are written as a tailor recording and, optionally, the same samples
 * as a perf.data that perf report and perf script read.
 *
 * usage: synth_profile -o REC [-p PERF_DATA] [-r REPEAT] [-R] [-P] [-2] SPEC
 *
 * SPEC: one group of samples per line, TAB-separated, '#' comments:
 *   COUNT  WHERE  TAG  TID  [ADDR  [WORD]]
 * WHERE: ELF:FILE:LINE (the first address of that line), ELF@SYMBOL,
 * kernel, kernel>WHERE (entered from that user location), or nomap (an
 * IP no mapping covers).  TAG is the tag register's value; ADDR, when
 * given and not 0, is the first data address (then +64 a sample); WORD,
 * the thread's tag word (tailor record --tag-word: the recording only,
 * perf.data has none).  A kernel sample
 * with a tag or an entry is written as the software clock writes one:
 * with the user registers at kernel entry (TAILOR_SF_USER_REGS), rip
 * among them once any group has an entry.
 *
 * Time: sample k of the expanded spec is at TSC 1000 * (k + 1), one tick
 * a nanosecond (tsc_mult 1, tsc_shift 0).  Samples alternate between two
 * CPUs, and each batch of CPU 1 is written before CPU 0's, in both files,
 * so neither is in time order -- as with real per-CPU buffers.  -R marks
 * a round after each pair of batches (ROUND, FINISHED_ROUND), as tailor
 * record and perf record do; without it the files have none, as
 * recordings of older tailors.  -P packs the recording's samples
 * (TLR_SAMPLES_PACKED), as tailor record writes them since format 2,
 * each batch with its summary (format 3); -2 writes format 2, without
 * the summaries, as tailor 0.6 did.  It
 * prints the address chosen for each group ("group N vaddr 0x...").
 */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uapi/tailor.h"
#include "tailor/recording.h"
#include "tailor/sample_pack.h"
#include "format/perf_abi.h"

#define MAX_ELFS	8
#define MAX_GROUPS	1024
#define BATCH		1024
#define PID		1000
#define KERNEL_IP	0xffffffff81000000ull
#define NOMAP_IP	0x10000ull
#define TAG_REG		TAILOR_REG_R15
#define IP_REG		TAILOR_REG_IP

struct elf_image {
	char path[1024];
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;
	GElf_Addr bias;
	uint64_t base;
};

struct group {
	uint64_t count, ip, vaddr, tag, addr, entry_ip, word;
	uint32_t tid;
};

static struct elf_image elfs[MAX_ELFS];
static int nr_elfs;
static struct group groups[MAX_GROUPS];
static int nr_groups;
static bool with_word;	/* some group gives a tag word */

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "synth_profile: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static struct elf_image *elf_of(const char *path)
{
	struct elf_image *e;
	int i;

	for (i = 0; i < nr_elfs; i++)
		if (!strcmp(elfs[i].path, path))
			return &elfs[i];
	if (nr_elfs == MAX_ELFS)
		die("too many ELF files (%s)", path);
	e = &elfs[nr_elfs];
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->dwfl = dwfl_begin(&callbacks);
	e->mod = e->dwfl ? dwfl_report_offline(e->dwfl, path, path, -1) : NULL;
	if (!e->mod)
		die("cannot read %s", path);
	dwfl_report_end(e->dwfl, NULL, NULL);
	e->elf = dwfl_module_getelf(e->mod, &e->bias);
	if (!e->elf)
		die("no ELF in %s", path);
	/* Where a PIE or shared object is loaded; fixed executables stay put. */
	{
		GElf_Ehdr eh;

		gelf_getehdr(e->elf, &eh);
		e->base = eh.e_type == ET_DYN ? 0x555500000000ull + 0x10000000ull * nr_elfs : 0;
	}
	nr_elfs++;
	return e;
}

static uint64_t line_vaddr(struct elf_image *e, const char *file, int line)
{
	Dwfl_Line **srcs = NULL;
	size_t n = 0, i;
	uint64_t best = UINT64_MAX;

	if (dwfl_module_getsrc_file(e->mod, file, line, 0, &srcs, &n) || !n)
		die("no code for line %s", file);
	for (i = 0; i < n; i++) {
		Dwarf_Addr a;
		int l;

		dwfl_lineinfo(srcs[i], &a, &l, NULL, NULL, NULL);
		if (l == line && a - e->bias < best)
			best = a - e->bias;
	}
	free(srcs);
	if (best == UINT64_MAX)
		die("no exact code for line %s", file);
	return best;
}

static uint64_t symbol_vaddr(struct elf_image *e, const char *name)
{
	int i, n = dwfl_module_getsymtab(e->mod);

	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(e->mod, i, &sym, &addr,
							NULL, NULL, NULL);

		if (s && !strcmp(s, name) && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
			return addr - e->bias;
	}
	die("no function %s", name);
	return 0;
}

static uint64_t resolved_vaddr, resolved_entry;

/*
 * The IP of a location; its address in the ELF goes to resolved_vaddr,
 * a kernel sample's entry IP to resolved_entry.
 */
static uint64_t resolve(char *where)
{
	char *at, *colon;
	struct elf_image *e;

	resolved_vaddr = 0;
	resolved_entry = 0;
	if (!strncmp(where, "kernel>", 7)) {
		uint64_t entry = resolve(where + 7);

		if (entry >= KERNEL_IP)
			die("an entry must be user code, not '%s'", where + 7);
		resolved_entry = entry;
		return KERNEL_IP;
	}
	if (!strcmp(where, "kernel"))
		return KERNEL_IP;
	if (!strcmp(where, "nomap"))
		return NOMAP_IP;
	at = strchr(where, '@');
	if (at) {
		*at = '\0';
		e = elf_of(where);
		resolved_vaddr = symbol_vaddr(e, at + 1);
		return e->base + resolved_vaddr;
	}
	colon = strchr(where, ':');
	if (!colon || !strrchr(colon + 1, ':'))
		die("bad location '%s'", where);
	*colon = '\0';
	e = elf_of(where);
	{
		char *last = strrchr(colon + 1, ':');

		*last = '\0';
		resolved_vaddr = line_vaddr(e, colon + 1, atoi(last + 1));
		return e->base + resolved_vaddr;
	}
}

static void read_spec(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f)
		die("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *fields[6] = {}, *save = NULL, *tok;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		for (tok = strtok_r(line, "\t", &save); tok && n < 6;
		     tok = strtok_r(NULL, "\t", &save))
			fields[n++] = tok;
		if (n < 4 || nr_groups == MAX_GROUPS)
			die("bad spec line in %s", path);
		groups[nr_groups] = (struct group){
			.count = strtoull(fields[0], NULL, 0),
			.tag = strtoull(fields[2], NULL, 0),
			.tid = (uint32_t)strtoul(fields[3], NULL, 0),
			.addr = n > 4 ? strtoull(fields[4], NULL, 0) : 0,
			.word = n > 5 ? strtoull(fields[5], NULL, 0) : 0,
		};
		with_word |= n > 5;
		groups[nr_groups].ip = resolve(fields[1]);
		groups[nr_groups].vaddr = resolved_vaddr;
		groups[nr_groups].entry_ip = resolved_entry;
		nr_groups++;
	}
	fclose(f);
}

/* Executable PT_LOAD segments of an ELF as mappings. */
struct mapping {
	uint64_t start, len, pgoff;
	const char *path;
};

static int mappings(struct mapping *out, int max)
{
	int i, n = 0;
	size_t j, ph;

	for (i = 0; i < nr_elfs; i++) {
		elf_getphdrnum(elfs[i].elf, &ph);
		for (j = 0; j < ph && n < max; j++) {
			GElf_Phdr p;

			if (!gelf_getphdr(elfs[i].elf, j, &p) || p.p_type != PT_LOAD ||
			    !(p.p_flags & PF_X))
				continue;
			out[n++] = (struct mapping){
				.start = elfs[i].base + (p.p_vaddr & ~0xfffull),
				.len = ((p.p_vaddr & 0xfff) + p.p_memsz + 0xfff) & ~0xfffull,
				.pgoff = p.p_offset & ~0xfffull,
				.path = elfs[i].path,
			};
		}
	}
	return n;
}

struct sample_out {
	uint64_t tsc, ip, tag, addr, entry_ip, word;
	uint32_t tid, cpu;
};

static bool with_entry;
static bool packed;
static uint32_t version = TLR_VERSION;

static uint32_t record_size(bool with_addr)
{
	return 32 + (with_entry ? 8 : 0) + (with_addr ? 8 : 0) + (with_word ? 8 : 0);
}

static void write_rec_batch(struct tlr_writer *w, const struct sample_out *s,
			    size_t n, bool with_addr)
{
	uint32_t size = record_size(with_addr);
	static uint8_t buf[BATCH * 56];
	struct tlr_samples h = { size, (uint32_t)n };
	const void *parts[3] = { &h, buf };
	size_t lens[3] = { sizeof(h), n * size }, i;
	int nr_parts = 2;

	for (i = 0; i < n; i++) {
		uint64_t *o = (uint64_t *)(buf + i * size);
		bool kernel = s[i].ip >= KERNEL_IP;
		int r = 3;

		o[0] = s[i].tsc;
		o[1] = s[i].ip;
		o[2] = tailor_who_pack(s[i].tid, PID, s[i].cpu,
				       (kernel ? TAILOR_SF_KERNEL : 0) |
				       /* The software clock's kernel samples: user regs. */
				       (kernel && (s[i].tag || s[i].entry_ip) ?
					TAILOR_SF_USER_REGS : 0) |
				       (s[i].addr ? TAILOR_SF_ADDR_VALID : 0));
		/* As the module: rip is the entry in the kernel, else the IP. */
		if (with_entry)
			o[r++] = kernel ? s[i].entry_ip : s[i].ip;
		o[r++] = s[i].tag;
		if (with_addr)
			o[r++] = s[i].addr;
		if (with_word)
			o[r] = s[i].word;
	}
	if (packed) {
		static uint8_t out[BATCH * 128];
		static struct tlr_samples_packed ph;
		static struct tlr_samples_summary sum;
		struct tlr_pack_state st;
		size_t len = 0;

		if (tlr_pack_begin(&st, size) || tlr_pack_bound((uint32_t)n, size) > sizeof(out))
			die("cannot pack %s", "the samples");
		for (i = 0; i < n; i++)
			len += tlr_pack_one(&st, buf + i * size, out + len);
		ph = (struct tlr_samples_packed){ .record_size = size, .count = (uint32_t)n,
						  .packed_size = (uint32_t)len };
		sum = st.sum;
		parts[0] = &ph;
		lens[0] = sizeof(ph);
		/* Format 3 states what the batch holds before its stream. */
		if (version >= 3) {
			parts[1] = &sum;
			lens[1] = sizeof(sum);
			nr_parts = 3;
		}
		parts[nr_parts - 1] = out;
		lens[nr_parts - 1] = len;
	}
	if (tlr_write(w, packed ? TLR_SAMPLES_PACKED : TLR_SAMPLES, parts, lens, nr_parts))
		die("writing %s failed", "the recording");
}

static void write_perf_sample(FILE *f, const struct sample_out *s, bool with_addr)
{
	struct perf_event_header h = {
		.type = PERF_RECORD_SAMPLE,
		.misc = s->ip >= KERNEL_IP ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
	};
	uint64_t body[10];
	int n = 0;

	body[n++] = s->ip;
	body[n++] = PID | (uint64_t)s->tid << 32;
	body[n++] = s->tsc;
	if (with_addr)
		body[n++] = s->addr;
	body[n++] = s->cpu;
	body[n++] = 1;				/* period */
	body[n++] = PERF_SAMPLE_REGS_ABI_64;
	body[n++] = s->tag;
	h.size = (uint16_t)(sizeof(h) + n * 8);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(body, 8, n, f);
}

/* CPU 1's batch, then CPU 0's, in both files; then a round mark if asked. */
static void write_batches(struct tlr_writer *w, FILE *perf, struct sample_out batch[2][BATCH],
			  const size_t fill[2], bool with_addr, bool rounds)
{
	int cpu;
	size_t i;

	for (cpu = 1; cpu >= 0; cpu--) {
		write_rec_batch(w, batch[cpu], fill[cpu], with_addr);
		for (i = 0; perf && i < fill[cpu]; i++)
			write_perf_sample(perf, &batch[cpu][i], with_addr);
	}
	if (!rounds)
		return;
	if (tlr_write(w, TLR_ROUND, NULL, NULL, 0))
		die("writing %s failed", "the recording");
	if (perf) {
		struct perf_event_header h = { .type = PERF_RECORD_FINISHED_ROUND,
					       .size = sizeof(h) };

		fwrite(&h, sizeof(h), 1, perf);
	}
}

static FILE *perf_begin(const char *path, bool with_addr, const struct mapping *m,
			int nr_maps)
{
	struct perf_file_header fh = { .size = sizeof(fh) };
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_INTR |
			       (with_addr ? PERF_SAMPLE_ADDR : 0),
		.sample_regs_intr = 1ull << TAG_REG,
		.sample_id_all = 1,
		.mmap = 1, .comm = 1, .task = 1, .mmap2 = 1,
	};
	struct perf_file_section ids = { 0, 0 };
	FILE *f = fopen(path, "w+");
	int i;

	if (!f)
		die("cannot create %s", path);
	memcpy(&fh.magic, "PERFILE2", 8);
	fh.attr_size = sizeof(attr) + sizeof(ids);
	fh.attrs.offset = sizeof(fh);
	fh.attrs.size = fh.attr_size;
	fh.data.offset = fh.attrs.offset + fh.attrs.size;
	fwrite(&fh, sizeof(fh), 1, f);
	fwrite(&attr, sizeof(attr), 1, f);
	fwrite(&ids, sizeof(ids), 1, f);
	{
		struct {
			struct perf_event_header h;
			uint32_t pid, tid;
			char comm[16];
			uint32_t spid, stid;
			uint64_t time;
			uint32_t cpu, res;
		} c = { { PERF_RECORD_COMM, 0, sizeof(c) }, PID, PID, "synth", PID, PID, 0, 0, 0 };

		fwrite(&c, sizeof(c), 1, f);
	}
	for (i = 0; i < nr_maps; i++) {
		size_t plen = (strlen(m[i].path) + 8) & ~7ul;
		struct {
			struct perf_event_header h;
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_gen;
			uint32_t prot, flags;
		} r = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 0 }, PID, PID,
			m[i].start, m[i].len, m[i].pgoff, 0, 0, 0, 0, 5 /* R|X */, 2 };
		char name[1032] = {};
		struct { uint32_t pid, tid; uint64_t time; uint32_t cpu, res; } id = { PID, PID, 0, 0, 0 };

		r.h.size = (uint16_t)(sizeof(r) + plen + sizeof(id));
		memcpy(name, m[i].path, strlen(m[i].path));
		fwrite(&r, sizeof(r), 1, f);
		fwrite(name, plen, 1, f);
		fwrite(&id, sizeof(id), 1, f);
	}
	return f;
}

static void perf_end(FILE *f)
{
	struct perf_file_header fh;
	long end = ftell(f);

	fseek(f, 0, SEEK_SET);
	if (fread(&fh, sizeof(fh), 1, f) != 1)
		die("rereading %s failed", "perf.data");
	fh.data.size = (uint64_t)end - fh.data.offset;
	fseek(f, 0, SEEK_SET);
	fwrite(&fh, sizeof(fh), 1, f);
	if (fclose(f))
		die("writing %s failed", "perf.data");
}

int main(int argc, char **argv)
{
	const char *rec_path = NULL, *perf_path = NULL;
	struct mapping maps[32];
	struct sample_out cpu_batch[2][BATCH];
	size_t fill[2] = { 0, 0 };
	uint64_t repeat = 1, k = 0, rep, j, per_group_addr[MAX_GROUPS] = {};
	struct tlr_writer *w;
	bool with_addr = false, rounds = false;
	FILE *perf = NULL;
	char meta[512];
	int c, g, nr_maps, i;

	while ((c = getopt(argc, argv, "o:p:r:RP2")) != -1) {
		switch (c) {
		case 'o':
			rec_path = optarg;
			break;
		case 'p':
			perf_path = optarg;
			break;
		case 'r':
			repeat = strtoull(optarg, NULL, 0);
			break;
		case 'R':
			rounds = true;
			break;
		case 'P':
			packed = true;
			break;
		case '2':
			version = 2;
			break;
		default:
			return 2;
		}
	}
	if (!rec_path || optind != argc - 1) {
		fprintf(stderr, "usage: synth_profile -o REC [-p PERF_DATA] [-r REPEAT] [-R] [-P] [-2] SPEC\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	read_spec(argv[optind]);
	for (g = 0; g < nr_groups; g++) {
		with_addr |= groups[g].addr != 0;
		with_entry |= groups[g].entry_ip != 0;
		printf("group %d ip 0x%" PRIx64 " vaddr 0x%" PRIx64 "\n", g,
		       groups[g].ip, groups[g].vaddr);
	}
	nr_maps = mappings(maps, 32);
	w = tlr_writer_create_version(rec_path, version);
	if (!w)
		die("cannot create %s", rec_path);
	snprintf(meta, sizeof(meta),
		 "format=tailor-recording 1\ntool=synth_profile\nevent=synthetic\n"
		 "tsc_khz=1000000\ntsc_khz_measured=1000000\ntsc_mult=1\ntsc_shift=0\n"
		 "regs_mask=0x%llx\nnr_regs=%d\nrecord_size=%u\nflags_used=%u\ntarget=pid\npid=%d\n",
		 1ull << TAG_REG | (with_entry ? 1ull << IP_REG : 0), with_entry ? 2 : 1,
		 record_size(with_addr),
		 (with_addr ? (unsigned int)TAILOR_CFG_DATA_ADDR : 0u) |
		 (with_word ? (unsigned int)TAILOR_CFG_TAG_WORD : 0u), PID);
	{
		const void *parts[1] = { meta };
		size_t lens[1] = { strlen(meta) + 1 };

		if (tlr_write(w, TLR_META, parts, lens, 1))
			die("writing %s failed", rec_path);
	}
	for (i = 0; i < nr_maps; i++) {
		struct tlr_mmap m = { .tsc = 0, .pid = PID, .tid = PID, .start = maps[i].start,
				      .len = maps[i].len, .pgoff = maps[i].pgoff, .prot = 5,
				      .time_kind = TLR_TIME_START };
		const void *parts[2] = { &m, maps[i].path };
		size_t lens[2] = { sizeof(m), strlen(maps[i].path) + 1 };

		if (tlr_write(w, TLR_MMAP, parts, lens, 2))
			die("writing %s failed", rec_path);
	}
	if (perf_path)
		perf = perf_begin(perf_path, with_addr, maps, nr_maps);
	for (rep = 0; rep < repeat; rep++) {
		for (g = 0; g < nr_groups; g++) {
			for (j = 0; j < groups[g].count; j++, k++) {
				int cpu = (int)(k & 1);
				struct sample_out *s = &cpu_batch[cpu][fill[cpu]++];

				*s = (struct sample_out){
					.tsc = 1000 * (k + 1), .ip = groups[g].ip,
					.tag = groups[g].tag, .tid = groups[g].tid,
					.entry_ip = groups[g].entry_ip,
					.cpu = (uint32_t)cpu,
					.addr = groups[g].addr ? groups[g].addr + 64 * per_group_addr[g]++ : 0,
					.word = groups[g].word,
				};
				if (fill[0] == BATCH) {
					write_batches(w, perf, cpu_batch, fill, with_addr, rounds);
					fill[0] = fill[1] = 0;
				}
			}
		}
	}
	write_batches(w, perf, cpu_batch, fill, with_addr, rounds);
	{
		char end[128];
		const void *parts[1] = { end };
		size_t lens[1];

		snprintf(end, sizeof(end), "reason=target-exited\nsamples=%" PRIu64 "\nlost=0\n", k);
		lens[0] = strlen(end) + 1;
		if (tlr_write(w, TLR_END, parts, lens, 1) || tlr_writer_close(w))
			die("writing %s failed", rec_path);
	}
	if (perf)
		perf_end(perf);
	for (i = 0; i < nr_elfs; i++)
		dwfl_end(elfs[i].dwfl);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sessions (userspace/lib/session.c, format/): recordings and perf.data
 * files written here, each CPU's data in batches out of time order as
 * real per-CPU buffers leave them, must deliver every event, typed, in
 * time order, to every consumer in turn; round marks must bound what is
 * held back; a round the writer broke is delivered anyway and counted; a
 * consumer can stop the delivery.  Built with ASan and UBSan.
 */
#include <errno.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "format/perf_abi.h"
#include "tailor/recording.h"
#include "tailor/session.h"
#include "uapi/tailor.h"

static char dir[] = "/tmp/session_test.XXXXXX";

/* ---- writing recordings ---- */

static const char meta[] =
	"format=tailor-recording 1\ntool=session_test\nevent=cpu-clock\nsource_used=timer\n"
	"timer_period_ns=250000\ntsc_mult=1\ntsc_shift=0\nregs_mask=0x800000\nrecord_size=32\n";

static struct tlr_writer *begin(const char *path)
{
	struct tlr_writer *w = tlr_writer_create(path);
	const void *parts[] = { meta };
	size_t lens[] = { sizeof(meta) };

	if (w)
		tlr_write(w, TLR_META, parts, lens, 1);
	return w;
}

/* Samples of @cpu at the times given, tag = time, one SAMPLES record. */
static void batch(struct tlr_writer *w, uint32_t cpu, const uint64_t *times, int n)
{
	uint64_t buf[64 * 4];
	struct tlr_samples h = { 32, (uint32_t)n };
	const void *parts[] = { &h, buf };
	size_t lens[] = { sizeof(h), (size_t)n * 32 };
	int i;

	for (i = 0; i < n; i++) {
		buf[4 * i] = times[i];
		buf[4 * i + 1] = 0x400000 + times[i];
		buf[4 * i + 2] = tailor_who_pack(100 + cpu, 100, cpu, 0);
		buf[4 * i + 3] = times[i];
	}
	tlr_write(w, TLR_SAMPLES, parts, lens, 2);
}

static void comm(struct tlr_writer *w, uint64_t time, const char *name)
{
	struct tlr_comm c = { .tsc = time, .pid = 100, .tid = 100, .flags = TLR_COMM_EXEC };
	const void *parts[] = { &c, name };
	size_t lens[] = { sizeof(c), strlen(name) + 1 };

	tlr_write(w, TLR_COMM, parts, lens, 2);
}

static void mmap_at(struct tlr_writer *w, uint64_t time, uint32_t kind)
{
	struct tlr_mmap m = { .tsc = time, .pid = 100, .tid = 100, .start = 0x400000,
			      .len = 0x1000, .prot = 5, .time_kind = kind };
	const void *parts[] = { &m, "/bin/true" };
	size_t lens[] = { sizeof(m), 10 };

	tlr_write(w, TLR_MMAP, parts, lens, 2);
}

static void task(struct tlr_writer *w, uint64_t time, uint32_t event)
{
	struct tlr_task t = { .tsc = time, .event = event, .pid = 200, .tid = 200,
			      .ppid = 100, .ptid = 100 };
	const void *parts[] = { &t };
	size_t lens[] = { sizeof(t) };

	tlr_write(w, TLR_TASK, parts, lens, 1);
}

static void round_mark(struct tlr_writer *w)
{
	tlr_write(w, TLR_ROUND, NULL, NULL, 0);
}

static void end(struct tlr_writer *w, uint64_t lost)
{
	char text[64];
	const void *parts[] = { text };
	size_t lens[1];

	snprintf(text, sizeof(text), "reason=target-exited\nlost=%llu\nstop_tsc=999\n",
		 (unsigned long long)lost);
	lens[0] = strlen(text) + 1;
	tlr_write(w, TLR_END, parts, lens, 1);
	tlr_writer_close(w);
}

/* ---- a consumer that writes down what it got ---- */

struct seen {
	struct tev_consumer events;
	char log[8192];
	size_t len;
	uint64_t last, backwards, samples, stop_after;
};

static void note(struct seen *s, uint64_t time, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct seen *s, uint64_t time, const char *fmt, ...)
{
	va_list ap;

	if (time < s->last)
		s->backwards++;
	s->last = time;
	va_start(ap, fmt);
	s->len += vsnprintf(s->log + s->len, sizeof(s->log) - s->len, fmt, ap);
	va_end(ap);
}

static int on_sample(struct tev_consumer *c, const struct tev_sample *e)
{
	struct seen *s = tev_container_of(c, struct seen, events);

	note(s, e->time, "s%llu.%u ", (unsigned long long)e->time, e->cpu);
	if (e->tag != e->time || !(e->flags & TEV_HAS_TAG))
		note(s, e->time, "(tag %llu) ", (unsigned long long)e->tag);
	return ++s->samples == s->stop_after ? 42 : 0;
}

static int on_mmap(struct tev_consumer *c, const struct tev_mmap *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "m%llu%s ",
	     (unsigned long long)e->time, e->at_start ? "*" : "");
	return 0;
}

static int on_comm(struct tev_consumer *c, const struct tev_comm *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "c%llu:%s%s ",
	     (unsigned long long)e->time, e->name, e->exec ? "!" : "");
	return 0;
}

static int on_fork(struct tev_consumer *c, const struct tev_task *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "f%llu ",
	     (unsigned long long)e->time);
	return 0;
}

static int on_exit_ev(struct tev_consumer *c, const struct tev_task *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "x%llu ",
	     (unsigned long long)e->time);
	return 0;
}

static int on_lost(struct tev_consumer *c, const struct tev_lost *e)
{
	struct seen *s = tev_container_of(c, struct seen, events);

	s->len += snprintf(s->log + s->len, sizeof(s->log) - s->len, "lost%llu ",
			   (unsigned long long)e->count);
	return 0;
}

static int on_switch(struct tev_consumer *c, const struct tev_switch *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "%s%llu.%d ",
	     e->out ? (e->preempted ? "preempt" : "out") : "in",
	     (unsigned long long)e->time, e->other_tid);
	return 0;
}

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	s->events = (struct tev_consumer){
		.sample = on_sample, .mmap = on_mmap, .comm = on_comm, .fork = on_fork,
		.exit = on_exit_ev, .lost = on_lost, .context_switch = on_switch,
	};
}

/* Open @path and deliver it to one logging consumer; 0 or what run returned. */
static int run(const char *path, struct seen *s, struct session_info *info)
{
	struct session_options o = { .tag_reg = 23 };
	struct tev_consumer *c[] = { &s->events };
	struct session *ses;
	char err[256];
	int ret;

	ses = session_open(path, &o, err, sizeof(err));
	check(ses != NULL);
	if (!ses) {
		printf("# %s\n", err);
		return -1;
	}
	ret = session_run(ses, c, 1);
	*info = *session_info(ses);
	session_close(ses);
	return ret;
}

static char *path_of(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

/* CPU 1's batch before CPU 0's, side-band between, no round marks. */
static void two_cpus_no_rounds(void)
{
	static const uint64_t c0[] = { 10, 30, 50, 70 }, c1[] = { 20, 40, 60, 80 };
	struct tlr_writer *w = begin(path_of("norounds.rec"));
	struct session_info info;
	struct seen s;

	mmap_at(w, 0, TLR_TIME_START);
	batch(w, 1, c1, 4);
	comm(w, 45, "engine");
	batch(w, 0, c0, 4);
	task(w, 25, TLR_TASK_FORK);
	task(w, 75, TLR_TASK_EXIT);
	end(w, 3);
	seen_init(&s);
	check_int(run(path_of("norounds.rec"), &s, &info), ==, 0);
	check_str(s.log, "m0* s10.0 s20.1 f25 s30.0 s40.1 c45:engine! s50.0 s60.1 s70.0 "
			 "x75 s80.1 lost3 ");
	check_uint(s.backwards, ==, 0);
	check_uint(info.out_of_order, ==, 0);
	check_uint(info.rounds, ==, 0);
	check_uint(info.nr_samples, ==, 8);
	check_uint(info.first_time, ==, 10);
	check_uint(info.last_time, ==, 80);
	check_uint(info.period, ==, 250000);
	check(info.period_is_ns);
	check(info.complete);
	/* Without marks everything waits for the end of the file. */
	check_uint(info.max_queued, ==, 12);
}

/* A round per pair of batches: the same order, less held back. */
static void rounds_bound_memory(void)
{
	struct tlr_writer *w = begin(path_of("rounds.rec"));
	struct session_info info;
	uint64_t c0[8], c1[8], t = 1;
	char want[4096] = "";
	size_t n = 0;
	struct seen s;
	int r, i;

	for (r = 0; r < 20; r++) {
		for (i = 0; i < 8; i++) {
			c0[i] = t++;
			c1[i] = t++;
			n += snprintf(want + n, sizeof(want) - n, "s%llu.0 s%llu.1 ",
				      (unsigned long long)c0[i], (unsigned long long)c1[i]);
		}
		batch(w, 1, c1, 8);
		batch(w, 0, c0, 8);
		round_mark(w);
	}
	end(w, 0);
	seen_init(&s);
	check_int(run(path_of("rounds.rec"), &s, &info), ==, 0);
	check_str(s.log, want);
	check_uint(info.rounds, ==, 20);
	check_uint(info.out_of_order, ==, 0);
	/* At most three rounds' worth (16 each) in hand, of 320 in the file. */
	check_uint(info.max_queued, <=, 48);
	check_uint(info.max_queued, >=, 16);
}

/*
 * The promise is weaker than "a round holds its time": an event may come
 * one round late (a sample still being written when its CPU was read),
 * as long as it is newer than everything before the previous mark.
 */
static void one_round_late(void)
{
	static const uint64_t a[] = { 100, 110 }, b[] = { 200, 210 }, c[] = { 205, 300 };
	struct tlr_writer *w = begin(path_of("late.rec"));
	struct session_info info;
	struct seen s;

	batch(w, 0, a, 2);
	round_mark(w);
	batch(w, 0, b, 2);
	round_mark(w);
	batch(w, 1, c, 2);	/* 205: newer than 110, the newest before the last mark */
	round_mark(w);
	end(w, 0);
	seen_init(&s);
	check_int(run(path_of("late.rec"), &s, &info), ==, 0);
	check_str(s.log, "s100.0 s110.0 s200.0 s205.1 s210.0 s300.1 ");
	check_uint(info.out_of_order, ==, 0);
}

/* A writer that breaks its round promise: late events come late, counted. */
static void broken_round(void)
{
	static const uint64_t a[] = { 100, 110 }, b[] = { 200, 210 }, c[] = { 300 },
			      late[] = { 105 };
	struct tlr_writer *w = begin(path_of("broken.rec"));
	struct session_info info;
	struct seen s;

	batch(w, 0, a, 2);
	round_mark(w);
	batch(w, 0, b, 2);
	round_mark(w);
	batch(w, 0, c, 1);
	round_mark(w);
	batch(w, 1, late, 1);	/* older than what round 2 let go */
	end(w, 0);
	seen_init(&s);
	check_int(run(path_of("broken.rec"), &s, &info), ==, 0);
	check_str(s.log, "s100.0 s110.0 s200.0 s210.0 s105.1 s300.0 ");
	check_uint(info.out_of_order, ==, 1);
	check_uint(s.samples, ==, 6);
}

/* Every consumer sees each event, in the order given; one can stop it all. */
static void consumers_in_order(void)
{
	static const uint64_t c0[] = { 1, 3 }, c1[] = { 2, 4 };
	struct session_options o = { .tag_reg = 23 };
	struct tlr_writer *w = begin(path_of("two.rec"));
	struct seen first, second;
	struct tev_consumer quiet = { 0 };	/* every callback left out */
	struct tev_consumer *c[] = { &first.events, &quiet, &second.events };
	struct session *ses;
	char err[256];

	batch(w, 1, c1, 2);
	batch(w, 0, c0, 2);
	end(w, 0);
	seen_init(&first);
	seen_init(&second);
	second.stop_after = 3;
	ses = session_open(path_of("two.rec"), &o, err, sizeof(err));
	check(ses != NULL);
	if (!ses)
		return;
	check_int(session_run(ses, c, 3), ==, 42);
	check_str(first.log, "s1.0 s2.1 s3.0 ");
	check_str(second.log, "s1.0 s2.1 s3.0 ");
	check_int(session_run(ses, c, 3), ==, -EINVAL);	/* once per session */
	session_close(ses);
}

/* A file cut in the middle of a record: what came before, said so. */
static void cut_short(void)
{
	static const uint64_t c0[] = { 1, 3, 5 }, c1[] = { 2, 4 };
	struct tlr_writer *w = begin(path_of("cut.rec"));
	struct session_info info;
	struct seen s;
	FILE *f;
	long size;

	batch(w, 0, c0, 3);
	batch(w, 1, c1, 2);
	end(w, 0);
	f = fopen(path_of("cut.rec"), "r+");
	check(f != NULL);
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	check_int(truncate(path_of("cut.rec"), size - 80), ==, 0);
	seen_init(&s);
	check_int(run(path_of("cut.rec"), &s, &info), ==, 0);
	check_str(s.log, "s1.0 s3.0 s5.0 ");
	check(!info.complete);
	check_contains(info.problem, "cut short");
}

/* ---- perf.data ---- */

static void perf_record(FILE *f, uint32_t type, uint16_t misc, const void *body, size_t len)
{
	struct perf_event_header h = { type, misc, (uint16_t)(sizeof(h) + len) };

	fwrite(&h, sizeof(h), 1, f);
	fwrite(body, len, 1, f);
}

/* sample_type IP | TID | TIME | CPU | REGS_INTR (r15), sample_id_all. */
static void perf_sample(FILE *f, uint32_t cpu, uint64_t time)
{
	uint64_t body[] = { 0x400000 + time, 100 | (uint64_t)(100 + cpu) << 32, time, cpu,
			    PERF_SAMPLE_REGS_ABI_64, time };

	perf_record(f, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body, sizeof(body));
}

/* A side-band record's trailer: TID, TIME, CPU. */
static void perf_trailer(uint8_t *at, uint32_t cpu, uint64_t time)
{
	uint64_t id[] = { 100 | (uint64_t)(100 + cpu) << 32, time, cpu };

	memcpy(at, id, sizeof(id));
}

static void perf_switch(FILE *f, uint32_t cpu, uint64_t time, bool out, uint32_t other)
{
	uint8_t body[8 + 24];
	uint32_t who[2] = { 100, other };

	memcpy(body, who, 8);
	perf_trailer(body + 8, cpu, time);
	perf_record(f, PERF_RECORD_SWITCH_CPU_WIDE,
		    out ? (1u << 13) | (1u << 14) : 0, body, sizeof(body));
}

static void perf_lost(FILE *f, uint32_t cpu, uint64_t time, uint64_t count)
{
	uint8_t body[16 + 24];
	uint64_t l[] = { 1, count };

	memcpy(body, l, 16);
	perf_trailer(body + 16, cpu, time);
	perf_record(f, PERF_RECORD_LOST, 0, body, sizeof(body));
}

/* A COMM exec of @pid (its main thread) at @time, named "engine". */
static void perf_exec(FILE *f, uint32_t pid, uint64_t time)
{
	uint8_t body[8 + 8 + 24] = { 0 };
	uint32_t who[2] = { pid, pid };

	memcpy(body, who, 8);
	memcpy(body + 8, "engine", 6);
	perf_trailer(body + 16, 0, time);
	memcpy(body + 16, (uint64_t[]){ pid | (uint64_t)pid << 32 }, 8);
	perf_record(f, PERF_RECORD_COMM, 1u << 13, body, sizeof(body));
}

static void write_perf_data(const char *path, bool rounds, uint32_t exec_pid, uint64_t exec_time)
{
	struct perf_file_header fh = { .size = sizeof(fh) };
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 250000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_REGS_INTR,
		.sample_regs_intr = 1ull << 23, .sample_id_all = 1,
	};
	struct perf_file_section ids = { 0, 0 };
	struct perf_event_header fin = { PERF_RECORD_FINISHED_ROUND, 0, sizeof(fin) };
	FILE *f = fopen(path, "w+");
	long data_end;
	int r;

	memcpy(&fh.magic, PERF_FILE_MAGIC, 8);
	fh.attr_size = sizeof(attr) + sizeof(ids);
	fh.attrs = (struct perf_file_section){ sizeof(fh), fh.attr_size };
	fh.data.offset = sizeof(fh) + fh.attr_size;
	fwrite(&fh, sizeof(fh), 1, f);
	fwrite(&attr, sizeof(attr), 1, f);
	fwrite(&ids, sizeof(ids), 1, f);
	if (exec_time)
		perf_exec(f, exec_pid, exec_time);
	for (r = 0; r < 3; r++) {
		uint64_t t = 1000 * (uint64_t)r;

		/* CPU 1's buffer, then CPU 0's, as perf record writes them. */
		perf_sample(f, 1, t + 20);
		perf_switch(f, 1, t + 30, true, 7);
		perf_sample(f, 1, t + 40);
		perf_sample(f, 0, t + 10);
		perf_lost(f, 0, t + 25, 2);
		perf_switch(f, 0, t + 35, false, 7);
		if (rounds)
			fwrite(&fin, sizeof(fin), 1, f);
	}
	data_end = ftell(f);
	fh.data.size = (uint64_t)data_end - fh.data.offset;
	fseek(f, 0, SEEK_SET);
	fwrite(&fh, sizeof(fh), 1, f);
	fclose(f);
}

/*
 * perf record -- COMMAND: the command's exec names the target process,
 * whose tag register is trusted.  The kernel enables the events before it
 * writes the exec's COMM, so the command's own first sample may come just
 * before it; a later exec, or another process's, is a child's.
 */
static void target_by_exec(void)
{
	static const struct { uint32_t pid; uint64_t time; uint32_t want; } cases[] = {
		{ 100, 5, 100 },	/* before the first sample (10) */
		{ 100, 15, 100 },	/* just after it, the sample being its own */
		{ 100, 2000000, 0 },	/* long after it: another exec of that process */
		{ 200, 15, 0 },		/* another process's exec after the first sample */
	};
	const char *path = path_of("exec.data");
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct session_info info;
		struct seen s;

		write_perf_data(path, false, cases[i].pid, cases[i].time);
		seen_init(&s);
		check_int(run(path, &s, &info), ==, 0);
		check_uint(info.target_pid, ==, cases[i].want);
	}
}

static void perf_data_in_order(bool rounds)
{
	const char *path = path_of(rounds ? "rounds.data" : "plain.data");
	struct session_info info;
	char want[2048] = "";
	size_t n = 0;
	struct seen s;
	int r;

	write_perf_data(path, rounds, 0, 0);
	for (r = 0; r < 3; r++) {
		unsigned long long t = 1000ull * r;

		n += snprintf(want + n, sizeof(want) - n,
			      "s%llu.0 s%llu.1 lost2 preempt%llu.7 in%llu.7 s%llu.1 ",
			      t + 10, t + 20, t + 30, t + 35, t + 40);
	}
	seen_init(&s);
	check_int(run(path, &s, &info), ==, 0);
	check_str(s.log, want);
	check_uint(info.rounds, ==, rounds ? 3 : 0);
	check_uint(info.out_of_order, ==, 0);
	check_uint(info.nr_samples, ==, 9);
	check_uint(info.lost, ==, 6);
	check_str(info.event, "cpu-clock");
	check(info.period_is_ns);
	check_uint(info.period, ==, 250000);
	if (rounds)
		check_uint(info.max_queued, <=, 12);
}

/* A struct seen's sample callback that logs a sample's tag and entry IP. */
static int log_flags(struct tev_consumer *c, const struct tev_sample *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "%s tag %llx%s entry %llx; ",
	     e->flags & TEV_KERNEL ? "k" : "u", (unsigned long long)e->tag,
	     e->flags & TEV_USER_TAG ? "" : " (kernel's)",
	     e->flags & TEV_HAS_ENTRY_IP ? (unsigned long long)e->entry_ip : 0ull);
	return 0;
}

/*
 * perf record --intr-regs=r15 --user-regs=ip,r15: a kernel sample's user
 * registers are the thread's at kernel entry, so its tag is the user's
 * r15 and the IP that entered the kernel is known; a kernel thread's
 * sample has none (abi 0) and keeps the interrupted r15, not a user tag.
 */
static void perf_data_user_regs(void)
{
	struct perf_file_header fh = { .size = sizeof(fh) };
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 250000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_REGS_INTR,
		.sample_regs_user = 1ull << 8 | 1ull << 23,
		.sample_regs_intr = 1ull << 23,
	};
	/* ip, pid/tid, time, user abi + ip + r15 (or abi 0), intr abi + r15 */
	const uint64_t user[] = { 0x401000, 100 | 100ull << 32, 10, PERF_SAMPLE_REGS_ABI_64,
				  0x401000, 5, PERF_SAMPLE_REGS_ABI_64, 5 };
	const uint64_t kernel[] = { 0xffffffff81000000ull, 100 | 100ull << 32, 20,
				    PERF_SAMPLE_REGS_ABI_64, 0x402000, 7, PERF_SAMPLE_REGS_ABI_64,
				    0xdead };
	const uint64_t kthread[] = { 0xffffffff81000100ull, 0, 30, 0, PERF_SAMPLE_REGS_ABI_64, 0xbeef };
	struct perf_file_section ids = { 0, 0 };
	const char *path = path_of("uregs.data");
	struct seen s = { .events = { .sample = log_flags } };
	struct tev_consumer *c[] = { &s.events };
	struct session_options o = { .tag_reg = 23 };
	struct session *ses;
	char err[256];
	FILE *f = fopen(path, "w");

	check(f != NULL);
	if (!f)
		return;
	memcpy(&fh.magic, PERF_FILE_MAGIC, 8);
	fh.attr_size = sizeof(attr) + sizeof(ids);
	fh.attrs = (struct perf_file_section){ sizeof(fh), fh.attr_size };
	fh.data.offset = sizeof(fh) + fh.attr_size;
	fh.data.size = 3 * sizeof(struct perf_event_header) + sizeof(user) + sizeof(kernel) +
		       sizeof(kthread);
	fwrite(&fh, sizeof(fh), 1, f);
	fwrite(&attr, sizeof(attr), 1, f);
	fwrite(&ids, sizeof(ids), 1, f);
	perf_record(f, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, user, sizeof(user));
	perf_record(f, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, kernel, sizeof(kernel));
	perf_record(f, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, kthread, sizeof(kthread));
	fclose(f);
	ses = session_open(path, &o, err, sizeof(err));
	check(ses != NULL);
	if (!ses) {
		printf("# %s\n", err);
		return;
	}
	check_int(session_run(ses, c, 1), ==, 0);
	session_close(ses);
	check_str(s.log, "u tag 5 entry 0; k tag 7 entry 402000; k tag beef (kernel's) entry 0; ");
}

/* struct seen's callbacks: samples by time and tid, and wakeups. */
static int log_wake_sample(struct tev_consumer *c, const struct tev_sample *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "s%llu.%u ",
	     (unsigned long long)e->time, e->tid);
	return 0;
}

static int log_wakeup(struct tev_consumer *c, const struct tev_wakeup *e)
{
	note(tev_container_of(c, struct seen, events), e->time, "w%llu.%u>%u@%d ",
	     (unsigned long long)e->time, e->tid, e->target_tid, e->target_cpu);
	return 0;
}

/* A tracepoint sample: IDENTIFIER, IP, TID, TIME, CPU, RAW (sched_wakeup_template). */
static void tp_sample(FILE *f, uint64_t id, uint64_t time, uint32_t tid, int32_t woken,
		      int32_t target_cpu)
{
	uint8_t body[5 * 8 + 4 + 44] = { 0 };
	uint64_t head[] = { id, 0xffffffff81000000ull, 200 | (uint64_t)tid << 32, time, 1 };
	uint32_t raw_size = 44;

	memcpy(body, head, sizeof(head));
	memcpy(body + 40, &raw_size, 4);
	memcpy(body + 44 + 8, "worker", 6);		/* comm[16] */
	memcpy(body + 44 + 24, &woken, 4);		/* pid */
	memcpy(body + 44 + 32, &target_cpu, 4);		/* target_cpu */
	perf_record(f, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, body, sizeof(body));
}

/* EVENT_DESC: u32 count, u32 attr size; per event attr, u32 nr_ids, string, ids. */
static void event_desc(FILE *f, const struct perf_event_attr *attrs, const char *const *names,
		       const uint64_t *ids, uint32_t n)
{
	uint32_t head[2] = { n, sizeof(*attrs) }, i;

	fwrite(head, sizeof(head), 1, f);
	for (i = 0; i < n; i++) {
		char name[64] = { 0 };
		uint32_t two[2] = { 1, sizeof(name) };

		snprintf(name, sizeof(name), "%s", names[i]);
		fwrite(&attrs[i], sizeof(*attrs), 1, f);
		fwrite(two, sizeof(two), 1, f);
		fwrite(name, sizeof(name), 1, f);
		fwrite(&ids[i], 8, 1, f);
	}
}

/*
 * perf record -e cpu-clock -e sched:sched_waking -e sched:sched_switch:
 * the wakeup tracepoint, named by EVENT_DESC, gives wakeups (waker, woken
 * tid, target CPU); another tracepoint's samples are no CPU samples; the
 * cpu-clock's are.  Without EVENT_DESC no tracepoint can be named: its
 * samples are still no CPU samples.
 */
static void perf_data_wakeups(bool with_desc)
{
	struct perf_event_attr attrs[3] = {
		{ .type = PERF_TYPE_SOFTWARE, .size = sizeof(attrs[0]),
		  .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 250000,
		  .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				 PERF_SAMPLE_TIME },
		{ .type = PERF_TYPE_TRACEPOINT, .size = sizeof(attrs[0]), .config = 300,
		  .sample_period = 1,
		  .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW },
	};
	static const char *const names[] = { "cpu-clock", "sched:sched_waking", "sched:sched_switch" };
	const uint64_t ids[] = { 11, 22, 33 };
	struct perf_file_header fh = { .size = sizeof(fh) };
	struct perf_file_section sec[3], desc;
	const char *path = path_of(with_desc ? "wake.data" : "wake-nodesc.data");
	struct seen s = { .events = { .sample = log_wake_sample, .wakeup = log_wakeup } };
	struct tev_consumer *c[] = { &s.events };
	struct session_options o = { .tag_reg = -1 };
	struct session *ses;
	char err[256];
	long data_end;
	FILE *f = fopen(path, "w+");
	uint32_t i;

	check(f != NULL);
	if (!f)
		return;
	attrs[2] = attrs[1];
	attrs[2].config = 301;
	memcpy(&fh.magic, PERF_FILE_MAGIC, 8);
	fh.attr_size = sizeof(attrs[0]) + sizeof(sec[0]);
	fh.attrs = (struct perf_file_section){ sizeof(fh), 3 * fh.attr_size };
	fwrite(&fh, sizeof(fh), 1, f);
	for (i = 0; i < 3; i++) {
		sec[i] = (struct perf_file_section){ sizeof(fh) + 3 * fh.attr_size + 8 * i, 8 };
		fwrite(&attrs[i], sizeof(attrs[i]), 1, f);
		fwrite(&sec[i], sizeof(sec[i]), 1, f);
	}
	fwrite(ids, sizeof(ids), 1, f);
	fh.data.offset = (uint64_t)ftell(f);
	{
		uint64_t cpu_sample[] = { 11, 0x401000, 200 | 201ull << 32, 10 };

		perf_record(f, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, cpu_sample,
			    sizeof(cpu_sample));
	}
	tp_sample(f, 22, 20, 201, 202, 1);
	tp_sample(f, 33, 30, 201, 0, 0);
	tp_sample(f, 22, 40, 202, 201, 0);
	data_end = ftell(f);
	fh.data.size = (uint64_t)data_end - fh.data.offset;
	if (with_desc) {
		fh.features[0] = 1ull << 12;	/* HEADER_EVENT_DESC */
		desc.offset = (uint64_t)data_end + sizeof(desc);
		fwrite(&desc, sizeof(desc), 1, f);
		event_desc(f, attrs, names, ids, 3);
		desc.size = (uint64_t)ftell(f) - desc.offset;
		fseek(f, data_end, SEEK_SET);
		fwrite(&desc, sizeof(desc), 1, f);
	}
	fseek(f, 0, SEEK_SET);
	fwrite(&fh, sizeof(fh), 1, f);
	fclose(f);
	ses = session_open(path, &o, err, sizeof(err));
	check(ses != NULL);
	if (!ses) {
		printf("# %s\n", err);
		return;
	}
	check_uint(session_info(ses)->nr_samples, ==, 1);
	check_uint(session_info(ses)->nr_wakeups, ==, with_desc ? 2 : 0);
	check_str(session_info(ses)->event, "cpu-clock");
	check_int(session_run(ses, c, 1), ==, 0);
	session_close(ses);
	check_str(s.log, with_desc ? "s10.201 w20.201>202@1 w40.202>201@0 " : "s10.201 ");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		TEST(check_contains(strerror(errno), "(none)"), "a scratch directory");
		return test_done();
	}
	TEST(two_cpus_no_rounds(), "a recording without rounds: every event, typed, in time order");
	TEST(rounds_bound_memory(), "round marks: the same order, at most a few rounds held back");
	TEST(one_round_late(), "an event one round late, as the promise allows: still in order");
	TEST(broken_round(), "an event older than a round let go: delivered late, counted");
	TEST(consumers_in_order(), "each consumer in turn, defaults for what it leaves out; a consumer stops the run");
	TEST(cut_short(), "a recording cut short delivers what it holds and says so");
	TEST(perf_data_in_order(false), "perf.data: samples, switches and lost counts in time order");
	TEST(perf_data_in_order(true), "perf.data with FINISHED_ROUND: the same, bounded");
	TEST(perf_data_user_regs(), "perf.data --user-regs=ip,r15: a kernel sample's tag and entry IP are the user's");
	TEST(perf_data_wakeups(true), "perf.data: sched_waking samples are wakeups, named by EVENT_DESC; other tracepoints no samples");
	TEST(perf_data_wakeups(false), "perf.data without EVENT_DESC: tracepoint samples are still no CPU samples");
	TEST(target_by_exec(), "perf.data: the command's exec names the target, a sample of its own just before it or not");
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	return test_done();
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sessions (tailor/session.h): a profile opened by its magic, its events
 * delivered in time order to consumers.
 *
 * Ordering.  perf's ordered-events queue copies every event and sorts it
 * into a list.  Here nothing is copied: a format reader hands out runs
 * (consecutive events of the file already in time order -- one CPU's
 * batch, say), runs are chained into streams (a run goes to the stream
 * whose newest event is the latest one not after the run's first), and
 * the streams are merged through a min-heap on the time of their next
 * event.  A file holds about as many streams at once as it has sources
 * (CPUs, side-band rings), so an event costs a comparison or two, and
 * the memory held is one small struct per run not yet delivered.
 *
 * Rounds bound that memory: at round mark N every event up to the newest
 * time read before mark N-1 is delivered, as perf does at
 * FINISHED_ROUND.  Without marks, everything waits for the end of the
 * file.  An event older than one already delivered (a recorder that broke
 * its round promise) is still delivered, and counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/reader.h"
#include "tailor/session.h"
#include "uapi/tailor.h"
#include "util/grow.h"

struct stream {
	/* The run being delivered: its next event, and how many are left. */
	const uint8_t *ev;
	uint64_t head;		/* time of ev */
	uint32_t left;
	uint32_t stride;
	uint8_t kind;
	uint64_t tail;		/* time of the newest event queued here */
	uint64_t seq;		/* creation order: ties go to the older */
	struct rd_run *runs;	/* runs queued behind the current one (FIFO) */
	size_t first_run, nr_runs, cap_runs;
	int heap_index;		/* -1: nothing to deliver */
};

struct session {
	struct format_reader *fr;
	struct tev_dispatch dispatch;
	struct stream **streams;	/* sorted by tail */
	size_t nr_streams, cap_streams;
	struct stream **heap;		/* pending streams, min head first */
	size_t nr_heap, cap_heap;
	uint64_t next_seq;
	uint64_t queued;		/* events read but not delivered */
	uint64_t last_delivered;
	bool ran;
};

/* ---- consumers ---- */

static int ignore_sample(struct tev_consumer *c, const struct tev_sample *e) { (void)c; (void)e; return 0; }
static int ignore_mmap(struct tev_consumer *c, const struct tev_mmap *e) { (void)c; (void)e; return 0; }
static int ignore_comm(struct tev_consumer *c, const struct tev_comm *e) { (void)c; (void)e; return 0; }
static int ignore_task(struct tev_consumer *c, const struct tev_task *e) { (void)c; (void)e; return 0; }
static int ignore_lost(struct tev_consumer *c, const struct tev_lost *e) { (void)c; (void)e; return 0; }
static int ignore_switch(struct tev_consumer *c, const struct tev_switch *e) { (void)c; (void)e; return 0; }
static int ignore_label(struct tev_consumer *c, const struct tev_label *e) { (void)c; (void)e; return 0; }
static int ignore_jit(struct tev_consumer *c, const struct tev_jit *e) { (void)c; (void)e; return 0; }
static int ignore_wakeup(struct tev_consumer *c, const struct tev_wakeup *e) { (void)c; (void)e; return 0; }

void tev_consumer_defaults(struct tev_consumer *c)
{
	if (!c->sample)
		c->sample = ignore_sample;
	if (!c->mmap)
		c->mmap = ignore_mmap;
	if (!c->comm)
		c->comm = ignore_comm;
	if (!c->fork)
		c->fork = ignore_task;
	if (!c->exit)
		c->exit = ignore_task;
	if (!c->lost)
		c->lost = ignore_lost;
	if (!c->context_switch)
		c->context_switch = ignore_switch;
	if (!c->label)
		c->label = ignore_label;
	if (!c->jit)
		c->jit = ignore_jit;
	if (!c->wakeup)
		c->wakeup = ignore_wakeup;
}

/* Only the callbacks that do something are called, in consumer order. */
#define ADD_CALLBACK(d, c, kind, ignore) do {				\
	if ((c)->kind && (c)->kind != (ignore))				\
		(d)->kind[(d)->nr_##kind++] = (c);			\
} while (0)

static void build_dispatch(struct tev_dispatch *d, struct tev_consumer *const *c,
			   int n)
{
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++) {
		ADD_CALLBACK(d, c[i], sample, ignore_sample);
		ADD_CALLBACK(d, c[i], mmap, ignore_mmap);
		ADD_CALLBACK(d, c[i], comm, ignore_comm);
		ADD_CALLBACK(d, c[i], fork, ignore_task);
		ADD_CALLBACK(d, c[i], exit, ignore_task);
		ADD_CALLBACK(d, c[i], lost, ignore_lost);
		ADD_CALLBACK(d, c[i], context_switch, ignore_switch);
		ADD_CALLBACK(d, c[i], label, ignore_label);
		ADD_CALLBACK(d, c[i], jit, ignore_jit);
		ADD_CALLBACK(d, c[i], wakeup, ignore_wakeup);
	}
}

/* ---- opening ---- */

struct session *session_open(const char *path, const struct session_options *o,
			     char *err, size_t errlen)
{
	struct format_reader *fr;
	struct session *s;
	char magic[8] = "";
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open: %m");
		return NULL;
	}
	got = read(fd, magic, sizeof(magic));
	close(fd);
	if (got == (ssize_t)sizeof(magic) && !memcmp(magic, "PERFILE2", 8)) {
		fr = perf_data_open(path, o->tag_reg, o->tsc_khz, o->event, err, errlen);
	} else if (got == (ssize_t)sizeof(magic) && !memcmp(magic, "TAILORRC", 8)) {
		fr = tailor_rec_open(path, o->tag_reg, err, errlen);
	} else {
		snprintf(err, errlen,
			 "neither a tailor recording nor a perf.data file (magic '%.8s'%s)",
			 got > 0 ? magic : "",
			 got < 8 ? ", file shorter than 8 bytes" : "");
		return NULL;
	}
	if (!fr)
		return NULL;
	/* A recording holds one sampling event: asked for another, say so. */
	if (o->event && strcmp(fr->info.format, "perf.data") &&
	    !format_event_named(fr->info.event, o->event)) {
		snprintf(err, errlen, "no sampling event '%s' here: a tailor recording holds one, %s",
			 o->event, fr->info.event);
		fr->ops->close(fr);
		return NULL;
	}
	/* A TSC frequency given for a file that lacks one (perf -k 12). */
	if (fr->info.time_unit == SESSION_TIME_TSC && !fr->info.mult && o->tsc_khz)
		session_khz_to_mult_shift(o->tsc_khz, &fr->info.mult, &fr->info.shift);
	s = calloc(1, sizeof(*s));
	if (!s) {
		fr->ops->close(fr);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->fr = fr;
	return s;
}

const struct session_info *session_info(const struct session *s)
{
	return &s->fr->info;
}

/* ---- the heap of streams with something to deliver ---- */

static bool before(const struct stream *a, const struct stream *b)
{
	return a->head < b->head || (a->head == b->head && a->seq < b->seq);
}

static void heap_set(struct session *s, size_t i, struct stream *st)
{
	s->heap[i] = st;
	st->heap_index = (int)i;
}

static void sift_up(struct session *s, size_t i)
{
	struct stream *st = s->heap[i];

	while (i) {
		size_t parent = (i - 1) / 2;

		if (!before(st, s->heap[parent]))
			break;
		heap_set(s, i, s->heap[parent]);
		i = parent;
	}
	heap_set(s, i, st);
}

static void sift_down(struct session *s, size_t i)
{
	struct stream *st = s->heap[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= s->nr_heap)
			break;
		if (child + 1 < s->nr_heap && before(s->heap[child + 1], s->heap[child]))
			child++;
		if (!before(s->heap[child], st))
			break;
		heap_set(s, i, s->heap[child]);
		i = child;
	}
	heap_set(s, i, st);
}

static int heap_push(struct session *s, struct stream *st)
{
	if (array_grow((void **)&s->heap, &s->cap_heap, s->nr_heap + 1, sizeof(*s->heap)))
		return -ENOMEM;
	heap_set(s, s->nr_heap++, st);
	sift_up(s, s->nr_heap - 1);
	return 0;
}

static void heap_pop_top(struct session *s)
{
	s->heap[0]->heap_index = -1;
	if (--s->nr_heap) {
		heap_set(s, 0, s->heap[s->nr_heap]);
		sift_down(s, 0);
	}
}

/* ---- streams ---- */

static void stream_start(struct stream *st, const struct rd_run *run)
{
	st->ev = run->first;
	st->head = run->first_time;
	st->left = run->count;
	st->stride = run->stride;
	st->kind = run->kind;
}

/* Position of the last stream whose tail is at most @t, or -1. */
static long best_fit(const struct session *s, uint64_t t)
{
	size_t lo = 0, hi = s->nr_streams;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->streams[mid]->tail <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* Keep streams[] sorted by tail after streams[@i]'s tail grew. */
static void resort_up(struct session *s, size_t i)
{
	struct stream *st = s->streams[i];

	while (i + 1 < s->nr_streams && s->streams[i + 1]->tail < st->tail) {
		s->streams[i] = s->streams[i + 1];
		i++;
	}
	s->streams[i] = st;
}

static int queue_run(struct session *s, const struct rd_run *run)
{
	long at = best_fit(s, run->first_time);
	struct stream *st;

	s->queued += run->count;
	if (s->queued > s->fr->info.max_queued)
		s->fr->info.max_queued = s->queued;
	if (at < 0) {
		/* Older than every stream's newest event: a stream of its own. */
		if (array_grow((void **)&s->streams, &s->cap_streams, s->nr_streams + 1,
			       sizeof(*s->streams)))
			return -ENOMEM;
		st = calloc(1, sizeof(*st));
		if (!st)
			return -ENOMEM;
		st->seq = s->next_seq++;
		st->heap_index = -1;
		memmove(s->streams + 1, s->streams, s->nr_streams * sizeof(*s->streams));
		s->streams[0] = st;
		s->nr_streams++;
		at = 0;
	}
	st = s->streams[at];
	st->tail = run->last_time;
	resort_up(s, (size_t)at);
	if (st->heap_index < 0 && !st->left) {
		stream_start(st, run);
		return heap_push(s, st);
	}
	if (array_grow((void **)&st->runs, &st->cap_runs, st->nr_runs + 1, sizeof(*st->runs)))
		return -ENOMEM;
	if (st->first_run + st->nr_runs == st->cap_runs) {
		/* Slide the FIFO to the front before it runs off the end. */
		memmove(st->runs, st->runs + st->first_run, st->nr_runs * sizeof(*st->runs));
		st->first_run = 0;
	}
	st->runs[st->first_run + st->nr_runs++] = *run;
	return 0;
}

/* Move @st past its current event; false when it has nothing left. */
static bool stream_advance(const struct session *s, struct stream *st)
{
	const struct format_reader *fr = s->fr;

	if (--st->left) {
		st->ev = st->stride ? st->ev + st->stride :
			 fr->ops->advance(fr, st->kind, st->ev);
		st->head = fr->ops->time(fr, st->kind, st->ev);
		return true;
	}
	if (!st->nr_runs)
		return false;
	stream_start(st, &st->runs[st->first_run]);
	st->first_run++;
	st->nr_runs--;
	return true;
}

static void drop_empty_streams(struct session *s)
{
	size_t i, n = 0;

	for (i = 0; i < s->nr_streams; i++) {
		struct stream *st = s->streams[i];

		if (st->heap_index < 0 && !st->left && !st->nr_runs) {
			free(st->runs);
			free(st);
		} else {
			s->streams[n++] = st;
		}
	}
	s->nr_streams = n;
}

/*
 * Deliver every queued event up to @limit, oldest first.  The stream on
 * top keeps delivering while it stays ahead of the next best, so the
 * heap moves once per switch between streams, not once per event.
 */
static int flush(struct session *s, uint64_t limit)
{
	struct format_reader *fr = s->fr;
	int ret;

	while (s->nr_heap && s->heap[0]->head <= limit) {
		struct stream *st = s->heap[0], *rival = NULL;

		if (s->nr_heap > 1)
			rival = s->heap[1];
		if (s->nr_heap > 2 && before(s->heap[2], rival))
			rival = s->heap[2];
		do {
			if (st->head < s->last_delivered)
				fr->info.out_of_order++;
			else
				s->last_delivered = st->head;
			s->queued--;
			ret = fr->ops->deliver(fr, st->kind, st->ev, &s->dispatch);
			if (ret)
				return ret;
			if (!stream_advance(s, st)) {
				heap_pop_top(s);
				break;
			}
		} while (st->head <= limit && (!rival || before(st, rival)));
		if (st->heap_index == 0)
			sift_down(s, 0);
	}
	drop_empty_streams(s);
	return 0;
}

int session_run(struct session *s, struct tev_consumer *const *consumers, int n)
{
	struct format_reader *fr = s->fr;
	uint64_t newest = 0, newest_before_round = 0;
	struct rd_run run;
	enum rd_next what;
	int ret = 0, i;

	if (s->ran || n < 0 || n > 8)
		return -EINVAL;
	s->ran = true;
	for (i = 0; i < n; i++)
		tev_consumer_defaults(consumers[i]);
	build_dispatch(&s->dispatch, consumers, n);
	while (!ret && (what = fr->ops->next(fr, &run)) != RD_EOF) {
		if (what == RD_ROUND) {
			/* Nothing older than the previous round's newest can still come. */
			ret = flush(s, newest_before_round);
			newest_before_round = newest;
			continue;
		}
		if (run.last_time > newest)
			newest = run.last_time;
		ret = queue_run(s, &run);
	}
	if (!ret)
		ret = flush(s, UINT64_MAX);
	if (!ret && fr->ops->finish)
		ret = fr->ops->finish(fr, &s->dispatch);
	return ret;
}

void session_close(struct session *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_streams; i++) {
		free(s->streams[i]->runs);
		free(s->streams[i]);
	}
	free(s->streams);
	free(s->heap);
	s->fr->ops->close(s->fr);
	free(s);
}

int session_file(struct session *s, const char *path, const void **data, size_t *len)
{
	if (!s->fr->ops->file)
		return -ENOENT;
	return s->fr->ops->file(s->fr, path, data, len);
}

/* ---- time ---- */

void session_khz_to_mult_shift(uint32_t khz, uint32_t *mult, uint32_t *shift)
{
	uint32_t sh = 24;

	/* The largest shift whose mult still fits 32 bits keeps precision. */
	while (sh && (1000000ull << sh) / (khz ? khz : 1) > UINT32_MAX)
		sh--;
	*shift = sh;
	*mult = khz ? (uint32_t)((1000000ull << sh) / khz) : 0;
}

uint64_t session_time_to_ns(const struct session_info *info, uint64_t delta)
{
	return tailor_tsc_to_ns(delta, info->mult, info->shift);
}

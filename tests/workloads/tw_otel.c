// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_otel MS THREADS: publishes OpenTelemetry's thread context as OTEP
 * 4947 has a tracer do (a thread-local pointer otel_thread_ctx_v1,
 * exported in .dynsym, to the thread's context record), and THREADS
 * threads each burn MS ms of CPU time in phases.  Phase p of thread t is
 * one of four states, p % 4:
 *
 *   0  a span: a record with the thread's trace id and the phase's span
 *      id, valid 1, published by swapping the pointer (the OTEP's first
 *      writer mode); r15 holds VALID_CODE(t, p)
 *   1  no context: the pointer NULL; r15 NONE_CODE(1)
 *   2  a record being changed: valid 0 and other ids (the second writer
 *      mode, caught in the middle); r15 NONE_CODE(2)
 *   3  a pointer to a page no one may read (PROT_NONE, kept so that
 *      nothing else is mapped there); r15 NONE_CODE(3)
 *
 * So a sample whose r15 is VALID_CODE(t, p) must carry exactly
 * trace_id(t) and span_id(t, p), and one whose r15 is NONE_CODE(s) no
 * context at all: the ground truth for tailor record's reading of it.
 * Prints "otel_ctx_offset=N", the pointer's offset from the thread
 * pointer as the program sees it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "tagged_loop.h"

/* The context record (OTEP 4947): byte-packed, at least 2-byte aligned. */
struct otel_thread_ctx_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
	uint8_t attrs_data[612];
} __attribute__((packed, aligned(8)));

#ifdef TW_OTEL_IN_LIBRARY
/*
 * tw_otel_lib: the pointer is libtw_otel_ctx.so's (tw_otel_ctx.c), as a
 * tracer library's would be, which reads it through TLSDESC (or, built
 * with the GNU dialect, __tls_get_addr).
 */
void tw_otel_publish(struct otel_thread_ctx_record *r);
void *tw_otel_pointer_address(void);
#define publish(r)		tw_otel_publish(r)
#define pointer_address()	tw_otel_pointer_address()
#else
__attribute__((visibility("default"), used))
__thread struct otel_thread_ctx_record *otel_thread_ctx_v1;
#define publish(r)		(otel_thread_ctx_v1 = (r))
#define pointer_address()	((void *)&otel_thread_ctx_v1)
#endif

#define VALID_CODE(t, p)	(0x7e1000000000ull | (uint64_t)(t) << 24 | (uint64_t)(p))
#define NONE_CODE(s)		(0x7e2000000000ull | (uint64_t)(s))

static uint64_t ms_per_thread;
static void *unmapped;	/* PROT_NONE */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The ids the test expects, from the thread and the phase. */
static void fill_ids(struct otel_thread_ctx_record *r, uint64_t t, uint64_t p)
{
	static const uint8_t trace[15] = { 0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
					   0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47 };

	memcpy(r->trace_id, trace, sizeof(trace));
	r->trace_id[15] = (uint8_t)(t + 1);
	r->span_id[0] = 0x53;
	r->span_id[1] = 0x70;
	r->span_id[2] = 0x61;
	r->span_id[3] = 0x6e;
	r->span_id[4] = (uint8_t)t;
	r->span_id[5] = (uint8_t)(p >> 16);
	r->span_id[6] = (uint8_t)(p >> 8);
	r->span_id[7] = (uint8_t)p;
}

static void *spin(void *arg)
{
	uint64_t t = (uintptr_t)arg, start = thread_cpu_ns(), p = 0;
	/* Two records, swapped: one is published while the other is built. */
	struct otel_thread_ctx_record *rec = calloc(2, sizeof(*rec));

	if (!rec)
		abort();
	while (thread_cpu_ns() - start < ms_per_thread * 1000000ull) {
		struct otel_thread_ctx_record *r = &rec[p & 1];
		uint64_t code;

		switch (p % 4) {
		case 0:
			publish(NULL);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			fill_ids(r, t, p);
			r->trace_flags = 1;
			r->valid = 1;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			publish(r);
			code = VALID_CODE(t, p);
			break;
		case 1:
			publish(NULL);
			code = NONE_CODE(1);
			break;
		case 2:
			r->valid = 0;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			publish(r);
			memset(r->trace_id, 0xee, sizeof(r->trace_id));
			memset(r->span_id, 0xee, sizeof(r->span_id));
			code = NONE_CODE(2);
			break;
		default:
			publish(unmapped);
			code = NONE_CODE(3);
			break;
		}
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		tagged_loop(code, 2000000);
		p++;
	}
	publish(NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	long i, n;
	char *tp;

	if (argc != 3) {
		fprintf(stderr, "usage: tw_otel MS THREADS\n");
		return 2;
	}
	ms_per_thread = strtoull(argv[1], NULL, 10);
	n = strtol(argv[2], NULL, 10);
	if (n < 1 || n > 64)
		return 2;
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unmapped == MAP_FAILED)
		return 3;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	printf("otel_ctx_offset=%lld\n", (long long)((char *)pointer_address() - tp));
	fflush(stdout);
	for (i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, spin, (void *)(uintptr_t)i))
			return 3;
	spin((void *)0);
	for (i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

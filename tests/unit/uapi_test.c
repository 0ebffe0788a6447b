// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uapi helpers userspace relies on: the who-word packing of samples,
 * the TSC-to-ns conversion and the mapped ring's consumer helpers, against
 * values computed independently.
 * Built with ASan and UBSan.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "uapi/tailor.h"

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: CHECK(%s) failed\n",		\
			__FILE__, __LINE__, #cond);			\
		failures++;						\
	}								\
} while (0)

static void who_roundtrip(void)
{
	static const uint32_t tids[] = { 0, 1, 4242, (1u << 22) - 1 };
	static const uint32_t cpus[] = { 0, 1, 255, 8191 };
	unsigned int i, j, f;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++)
			for (f = 0; f < 128; f += 37) {
				uint32_t pid = tids[3 - i];
				uint64_t w = tailor_who_pack(tids[i], pid,
							     cpus[j], f);

				CHECK(tailor_who_tid(w) == tids[i]);
				CHECK(tailor_who_pid(w) == pid);
				CHECK(tailor_who_cpu(w) == cpus[j]);
				CHECK(tailor_who_flags(w) == f);
			}
	/* Fields never bleed into each other. */
	CHECK(tailor_who_pack(~0u, 0, 0, 0) == (1ull << 22) - 1);
	CHECK(tailor_who_pack(0, 0, 0, ~0u) == 0x7full << 57);
	CHECK(TAILOR_WHO_FLAGS_SHIFT + 7 == 64);
	CHECK(TAILOR_WHO_CPU_SHIFT + 13 == TAILOR_WHO_FLAGS_SHIFT);
}

static void tsc_to_ns(void)
{
	/* 2.5 GHz: clocks_calc_mult_shift(2500000 kHz, NSEC_PER_MSEC). */
	const uint32_t mult = 1717986918u, shift = 32;

	CHECK(tailor_tsc_to_ns(0, mult, shift) == 0);
	CHECK(tailor_tsc_to_ns(2500000000ull, mult, shift) == 999999999 ||
	      tailor_tsc_to_ns(2500000000ull, mult, shift) == 1000000000);
	/* Ten years of cycles: the 128-bit product must not overflow. */
	CHECK(tailor_tsc_to_ns(788400000000000000ull, mult, shift) / 1000000000ull
	      == 315360000ull - 1 ||
	      tailor_tsc_to_ns(788400000000000000ull, mult, shift) / 1000000000ull
	      == 315360000ull);
}

static void layout(void)
{
	CHECK(sizeof(struct tailor_sample) == TAILOR_SAMPLE_BASE_SIZE);
	CHECK(sizeof(struct tailor_config) % 8 == 0);
	CHECK(sizeof(struct tailor_stats) % 8 == 0);
	CHECK(sizeof(struct tailor_info) % 8 == 0);
	/* IP + TSC + the tag register in 32 bytes. */
	CHECK(TAILOR_SAMPLE_BASE_SIZE + 8 == 32);
	CHECK(TAILOR_REGS_DEFAULT == 1ull << 23);
	CHECK(__builtin_popcountll(TAILOR_REGS_GPR) == 16);
	/* perf's numbering: the IP sits between the low GPRs and r8. */
	CHECK(TAILOR_REG_IP == 8 && !(TAILOR_REGS_GPR & 1ull << TAILOR_REG_IP));
	CHECK(TAILOR_REGS_CAPTURABLE == (TAILOR_REGS_GPR | 1ull << TAILOR_REG_IP));
	/* ABI 4 took the first reserved words; ABI 9 grew the struct at its end. */
	CHECK(sizeof(struct tailor_config) == 144);
	CHECK(offsetof(struct tailor_config, ring_mmap_bytes) == 112);
	CHECK(offsetof(struct tailor_config, otel_ctx_offset) == TAILOR_CONFIG_SIZE_VER0);
	CHECK(TAILOR_CFG_OTEL_CTX == 1u << 10 && TAILOR_OTEL_IDS_SIZE == 24);
	/* Every client of ABI 1 to 6 passed these sizes (ABI 7: extensible). */
	CHECK(TAILOR_CONFIG_SIZE_VER0 == 136);
	CHECK(TAILOR_STATS_SIZE_VER0 == 72);
	CHECK(TAILOR_INFO_SIZE_VER0 == 64);
	CHECK(offsetof(struct tailor_stats, kernel_ip_dropped) == TAILOR_STATS_SIZE_VER0);
	CHECK(sizeof(struct tailor_config) >= TAILOR_CONFIG_SIZE_VER0);
	CHECK(sizeof(struct tailor_stats) >= TAILOR_STATS_SIZE_VER0);
	CHECK(sizeof(struct tailor_info) >= TAILOR_INFO_SIZE_VER0);
	/* The ioctl numbers of ABI 1 to 6, whatever the structs grow to. */
	CHECK(TAILOR_IOC_INFO == 0xc040e600u);
	CHECK(TAILOR_IOC_CONFIGURE == 0xc088e601u);
	CHECK(TAILOR_IOC_START == 0xe602u);
	CHECK(TAILOR_IOC_STOP == 0xe603u);
	CHECK(TAILOR_IOC_STATS == 0xc048e604u);
	/* The reader's tail on its own cache line, away from head. */
	CHECK(offsetof(struct tailor_ring_control, head) == 0);
	CHECK(offsetof(struct tailor_ring_control, tail) == 64);
	CHECK(sizeof(struct tailor_ring_control) == 72);
}

/*
 * The consumer's helpers on a ring of 4 records of 24 bytes, laid out as
 * the module lays one out: records 5 to 9 wrap from slot 1 through slot 1
 * again, and the records read are the ones written there.
 */
static void ring_consumer(void)
{
	static union {
		struct tailor_ring_control ctl;
		uint64_t words[(4096 + 4 * 24) / 8];
	} page;
	struct tailor_ring_control *ctl = &page.ctl;
	uint64_t n, head, seen = 0;

	ctl->data_offset = 4096;
	ctl->record_size = 24;
	ctl->capacity = 4;
	ctl->tail = 6;
	ctl->head = 10;
	for (n = 6; n < 10; n++)	/* the producer: record n's first word is n */
		page.words[(4096 + (n & 3) * 24) / 8] = n;
	head = tailor_ring_head(ctl);
	CHECK(head == 10);
	for (n = ctl->tail; n != head; n++) {
		const uint64_t *rec = tailor_ring_at(ctl, n);

		CHECK((const char *)rec - (const char *)ctl == (long)(4096 + (n & 3) * 24));
		CHECK(*rec == n);
		seen++;
	}
	CHECK(seen == 4);
	tailor_ring_release(ctl, head);
	CHECK(ctl->tail == 10 && ctl->head == 10);
}

int main(void)
{
	printf("TAP version 13\n1..4\n");
	who_roundtrip();
	printf("%s 1 who packing\n", failures ? "not ok" : "ok");
	{
		int before = failures;

		tsc_to_ns();
		printf("%s 2 tsc to ns\n", failures > before ? "not ok" : "ok");
		before = failures;
		layout();
		printf("%s 3 abi layout\n", failures > before ? "not ok" : "ok");
		before = failures;
		ring_consumer();
		printf("%s 4 ring consumer helpers\n", failures > before ? "not ok" : "ok");
	}
	return failures ? 1 : 0;
}

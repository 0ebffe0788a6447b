// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packed samples (tailor/sample_pack.h): what goes in comes out, bit for
 * bit, for every shape of sample -- extreme values, every flag, threads
 * beyond the coder's memory, TSCs that go back, registers that change
 * every way -- and a stream that is not exactly one the packer wrote is
 * refused with where and what.  It also measures what the engine's kind of
 * samples cost, so a change that bloats the stream fails here.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tailor/sample_pack.h"
#include "uapi/tailor.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Pack @count samples, unpack them, compare; the packed size. */
static size_t roundtrip(const uint64_t *in, uint32_t count, uint32_t record_size)
{
	uint8_t *packed = malloc(tlr_pack_bound(count, record_size));
	uint64_t *out = malloc((size_t)count * record_size + 1);
	struct tlr_samples_summary sum, quick, want = { .min_tsc = UINT64_MAX };
	struct tlr_pack_state st;
	size_t len = 0;
	char err[160] = "";
	uint32_t i;

	check(packed && out);
	if (!packed || !out)
		return 0;
	check_int(tlr_pack_begin(&st, record_size), ==, 0);
	for (i = 0; i < count; i++)
		len += tlr_pack_one(&st, (const uint8_t *)in + (size_t)i * record_size,
				    packed + len);
	check_uint(len, <=, tlr_pack_bound(count, record_size));
	check_int(tlr_unpack(packed, len, count, record_size, out, &sum, err, sizeof(err)), ==, 0);
	check_str(err, "");
	check(!memcmp(in, out, (size_t)count * record_size));
	/* Checked only: the same verdict, the same summary, computed here too. */
	check_int(tlr_unpack(packed, len, count, record_size, NULL, &quick, err, sizeof(err)), ==,
		  0);
	for (i = 0; i < count; i++) {
		const struct tailor_sample *s = (const void *)((const uint8_t *)in +
							       (size_t)i * record_size);
		uint32_t sf = tailor_who_flags(s->who);

		want.min_tsc = s->tsc < want.min_tsc ? s->tsc : want.min_tsc;
		want.max_tsc = s->tsc > want.max_tsc ? s->tsc : want.max_tsc;
		want.flags_any |= sf;
		want.tag_word_bad += !!(sf & TAILOR_SF_TAG_WORD_BAD);
	}
	check_uint(sum.min_tsc, ==, want.min_tsc);
	check_uint(sum.max_tsc, ==, want.max_tsc);
	check_uint(sum.flags_any, ==, want.flags_any);
	check_uint(sum.tag_word_bad, ==, want.tag_word_bad);
	check(!memcmp(&sum, &quick, sizeof(sum)));
	free(packed);
	free(out);
	return len;
}

static void test_extremes(void)
{
	/* 40-byte samples: base, r15 and the entry IP. */
	static const uint64_t values[] = {
		0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x7fffffffffffffffull,
		0x8000000000000000ull, 0xffffffffffffffffull, 0xffffffff81000000ull,
		0x00007fffffffffffull,
	};
	const uint32_t nv = sizeof(values) / sizeof(values[0]);
	uint64_t in[5 * 11 * 11];
	uint32_t n = 0;

	for (uint32_t a = 0; a < nv; a++)
		for (uint32_t b = 0; b < nv; b++, n++) {
			in[5 * n + 0] = values[a];			/* tsc */
			in[5 * n + 1] = values[b];			/* ip */
			in[5 * n + 2] = tailor_who_pack((uint32_t)values[a], (uint32_t)values[b],
							(a * 7 + b) & 8191, (a + b) & 127);
			in[5 * n + 3] = values[(a + b) % nv];		/* r15 */
			in[5 * n + 4] = b % 3 ? values[b] : values[a];	/* entry ip */
		}
	roundtrip(in, n, 40);
}

static void test_random_shapes(void)
{
	for (uint32_t words = 0; words <= TLR_PACK_MAX_WORDS; words++) {
		uint32_t rs = TAILOR_SAMPLE_BASE_SIZE + 8 * words, count = 500;
		uint64_t *in = malloc((size_t)count * rs);

		for (uint32_t i = 0; i < count * rs / 8; i++) {
			uint64_t v = next();

			/* Mostly small steps, some repeats and zeros, some noise. */
			switch (v % 5) {
			case 0: in[i] = 0; break;
			case 1: in[i] = i ? in[i - 1] : v; break;
			case 2: in[i] = v >> (v % 64); break;
			default: in[i] = v; break;
			}
		}
		/* who words must be valid: 7 flag bits at the top. */
		for (uint32_t i = 0; i < count; i++) {
			uint64_t *s = in + (size_t)i * rs / 8;

			s[2] = tailor_who_pack((uint32_t)next(), (uint32_t)next(),
					       (uint32_t)next(), (uint32_t)next());
		}
		roundtrip(in, count, rs);
		free(in);
	}
}

/* More threads than the coder remembers, interleaved, in both modes. */
static void test_many_threads(void)
{
	uint64_t in[4 * 2000];

	for (uint32_t i = 0; i < 2000; i++) {
		uint32_t tid = 100 + (uint32_t)(next() % 23);
		uint32_t kernel = (next() % 4 == 0) ? TAILOR_SF_KERNEL : 0;

		in[4 * i + 0] = 1000000 + 250000ull * i - (next() % 3000);	/* goes back too */
		in[4 * i + 1] = (kernel ? 0xffffffff81000000ull : 0x401000) + tid * 64 +
				next() % 128;
		in[4 * i + 2] = tailor_who_pack(tid, 100, i % 2, kernel);
		in[4 * i + 3] = tid;
	}
	roundtrip(in, 2000, 32);
}

/*
 * The engine's samples: a timer at 4 kHz on a 2.5 GHz TSC with jitter,
 * one thread in a few hot loops, r15 naming one of a few operators, the
 * entry IP its own IP.  The goal is 12 bytes a sample with the
 * batch header; the stream alone must stay under 8.
 */
static void test_engine_like_size(void)
{
	const uint32_t count = 32768;
	uint64_t *in = malloc((size_t)count * 40);
	uint64_t tsc = 1ull << 40, ip = 0x7f0000401000ull, tag = 3;
	size_t len;

	for (uint32_t i = 0; i < count; i++) {
		tsc += 625000 + next() % 20000 - 10000;
		if (next() % 50 == 0)
			ip = 0x7f0000401000ull + next() % 8192;
		else
			ip += next() % 64 - 32;
		if (next() % 200 == 0)
			tag = 1 + next() % 6;
		in[5 * i + 0] = tsc;
		in[5 * i + 1] = ip;
		in[5 * i + 2] = tailor_who_pack(4242, 4242, 1, 0);
		in[5 * i + 3] = tag;
		in[5 * i + 4] = ip;
	}
	len = roundtrip(in, count, 40);
	printf("# engine-like samples: %.2f bytes each packed, 40 raw\n", (double)len / count);
	check_uint(len, <, 8ull * count);
	free(in);
}

/* Unpack, and check only: both must refuse, with the same words. */
static int unpack_err(const uint8_t *in, size_t len, uint32_t count, uint32_t rs, char *err)
{
	uint64_t out[64];
	char quick[160];
	int ret;

	ret = tlr_unpack(in, len, count, rs, count * rs <= sizeof(out) ? out : NULL, NULL, err, 160);
	check_int(tlr_unpack(in, len, count, rs, NULL, NULL, quick, sizeof(quick)), ==, ret);
	if (ret)
		check_str(quick, err);
	return ret;
}

static void test_refusals(void)
{
	uint64_t in[4] = { 12345, 0x401000, tailor_who_pack(7, 7, 0, 0), 9 };
	uint8_t packed[64], bad[64];
	struct tlr_pack_state st;
	char err[160];
	size_t len;

	tlr_pack_begin(&st, 32);
	len = tlr_pack_one(&st, in, packed);
	/* Cut anywhere: the stream ends inside the sample. */
	for (size_t cut = 0; cut < len; cut++) {
		check_int(unpack_err(packed, cut, 1, 32, err), ==, -1);
		check(strstr(err, "ends inside") != NULL);
	}
	/* A byte too many, or a second sample that is not there. */
	memcpy(bad, packed, len);
	bad[len] = 0;
	check_int(unpack_err(bad, len + 1, 1, 32, err), ==, -1);
	check(strstr(err, "1 bytes left") != NULL);
	check_int(unpack_err(packed, len, 2, 32, err), ==, -1);
	/* A mode for a register the record has not. */
	bad[0] = (uint8_t)(packed[0] | 0x30);
	check_int(unpack_err(bad, len, 1, 32, err), ==, -1);
	check(strstr(err, "control word") != NULL);
	/* A varint of eleven bytes. */
	memset(bad, 0xff, 11);
	bad[11] = 0;
	check_int(unpack_err(bad, 12, 1, 32, err), ==, -1);
	check(strstr(err, "more than 64 bits") != NULL);
	/* Flags of more than 7 bits. */
	bad[0] = 1;
	bad[1] = 0x80;
	check_int(unpack_err(bad, 8, 1, 32, err), ==, -1);
	check(strstr(err, "flags") != NULL);
	/* A who change with flag bits in it. */
	{
		uint8_t who[16] = { 2 };
		size_t n = 1;
		uint64_t v = 1ull << 60;

		while (v >= 0x80) {
			who[n++] = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		who[n++] = (uint8_t)v;
		check_int(unpack_err(who, n + 2, 1, 24, err), ==, -1);
		check(strstr(err, "flag bits") != NULL);
	}
	/* Sizes the format cannot hold. */
	check_int(tlr_pack_begin(&st, 20), ==, -1);
	check_int(tlr_pack_begin(&st, 36), ==, -1);
	check_int(tlr_pack_begin(&st, TAILOR_SAMPLE_BASE_SIZE + 8 * (TLR_PACK_MAX_WORDS + 1)), ==,
		  -1);
	check_int(unpack_err(packed, len, 1, 36, err), ==, -1);
	/* Nothing at all: zero samples in zero bytes is fine. */
	check_int(tlr_unpack(packed, 0, 0, 32, NULL, NULL, err, sizeof(err)), ==, 0);
}

int main(void)
{
	TEST(test_extremes(), "extreme values, every flag, round trip");
	TEST(test_random_shapes(), "0 to 31 register words, random values, round trip");
	TEST(test_many_threads(), "23 threads in both modes through 8 slots, TSCs going back");
	TEST(test_engine_like_size(), "the engine's kind of samples pack to under 8 bytes");
	TEST(test_refusals(), "cut, long, overlong and inconsistent streams refused");
	return test_done();
}

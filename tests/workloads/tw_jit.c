// SPDX-License-Identifier: GPL-2.0-only
/* The "generated code" tw_dlopen loads: a CPU burner in a shared object. */
#include <stdint.h>
#include <time.h>

void tw_generated_spin(uint64_t ms);

void tw_generated_spin(uint64_t ms)
{
	struct timespec ts;
	uint64_t start, now;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	do {
		for (int i = 0; i < 1000000; i++)
			x += i;	/* golden: jit */
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	} while (now - start < ms * 1000000ull);
}

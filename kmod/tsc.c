// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC calibration.  tailor.ko measures the TSC frequency itself at load,
 * against CLOCK_MONOTONIC_RAW, and reports it beside the kernel's
 * tsc_khz: the two disagree on some virtual machines and on CPUs whose
 * firmware-reported frequency is off, and timelines are only as good as
 * this number.  The ns conversion follows the kernel's cyc2ns scheme.
 */
#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/clocksource.h>
#include <linux/math64.h>
#include <linux/timekeeping.h>
#include <asm/tsc.h>
#include <linux/cpufeature.h>
#include "tailor.h"

#define CALIBRATION_MS		100
#define CALIBRATION_TRIES	5

struct tailor_tsc_calibration tailor_tsc;

/*
 * One (tsc, ns) pair: the TSC read on both sides of the clock read, so
 * the pair with the tightest bracket is the best estimate.
 */
static void tsc_clock_pair(u64 *tsc, u64 *ns)
{
	u64 best = U64_MAX;
	int i;

	for (i = 0; i < CALIBRATION_TRIES; i++) {
		unsigned long flags;
		u64 t0, t1, clk;

		local_irq_save(flags);
		t0 = rdtsc_ordered();
		clk = ktime_get_raw_ns();
		t1 = rdtsc_ordered();
		local_irq_restore(flags);
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = clk;
		}
	}
}

void tailor_tsc_calibrate(void)
{
	u64 tsc0, ns0, tsc1, ns1, khz;

	tsc_clock_pair(&tsc0, &ns0);
	msleep(CALIBRATION_MS);
	tsc_clock_pair(&tsc1, &ns1);

	khz = div64_u64((tsc1 - tsc0) * NSEC_PER_MSEC, ns1 - ns0);
	tailor_tsc.khz_kernel = tsc_khz;
	tailor_tsc.khz_measured = khz ? (u32)khz : tsc_khz;
	clocks_calc_mult_shift(&tailor_tsc.mult, &tailor_tsc.shift,
			       tailor_tsc.khz_measured, NSEC_PER_MSEC, 0);
	tailor_tsc.stable = boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
			    boot_cpu_has(X86_FEATURE_NONSTOP_TSC) &&
			    !check_tsc_unstable();
}

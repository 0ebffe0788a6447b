#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# record-overhead.sh - what recording costs, tailor against perf.
#
# In the test box (Debian 6.1, QEMU TCG, 2 vCPUs, software clock), runs a
# CPU-bound workload (tw_work: a fixed number of loop iterations on 1 or
# 2 threads, each its own busy vCPU) bare, under 'tailor record' (IP, TSC,
# r15, read in place from the mapped rings and packed), and under 'perf
# record -e cpu-clock' at the same frequency, plain and with
# --intr-regs=r15 (the same information as tailor), at 1, 4, 10 and 20
# kHz, several times each.  It prints per rate and thread count the
# median wall times, each profiler's overhead over the bare run, its
# bytes per sample and the samples it lost, and whether tailor's
# overhead is at most a quarter of perf's (with --intr-regs) and 10 kHz
# lost nothing.  A benchmark: it prints figures and never fails a build.
# Under TCG every figure is inflated; compare the rows.
#
# Usage: bench/record-overhead.sh [--freqs "HZ ..."] [--threads "N ..."]
#                                 [--iterations N] [--runs N] [--box 6.1|6.12]
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
freqs="1000 4000 10000 20000" threads="1 2" iterations=500000000 runs=3 box=6.1
while [ $# -gt 0 ]; do
	case $1 in
	--freqs) freqs=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--iterations) iterations=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--box) box=$2; shift 2 ;;
	*) echo "record-overhead: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
for v in $freqs $threads $iterations $runs; do
	case $v in
	'' | *[!0-9]*) echo "record-overhead: '$v' is not a number" >&2; exit 2 ;;
	esac
done

# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_payload record "$box"

cat >"$payload/run-in-box.sh" <<INBOX
#!/bin/sh
# Runs in the box: time each configuration, print one parseable line each:
# BENCH FREQ THREADS KIND SECONDS BYTES SAMPLES LOST THROTTLED MAX_RATE
. /tailor/bench-box.sh
insmod /tailor/tailor.ko || exit 1
# perf_count KIND: the perf.data's events of KIND (LOST, THROTTLE)
perf_count() {
	perf report -i /tmp/p.data --stats 2>/dev/null |
		sed -n "s/^ *\$1[A-Z_]* events: *\\([0-9]*\\).*/\\1/p" | awk '{ s += \$1 } END { print s + 0 }'
}
rate() { cat /proc/sys/kernel/perf_event_max_sample_rate; }
for th in $threads; do
	w="/tailor/workloads/tw_work $iterations \$th"
	for f in $freqs; do
		for i in \$(seq $runs); do
			t0=\$(now); \$w; t1=\$(now)
			echo "BENCH \$f \$th bare \$(el \$t0 \$t1) 0 0 0 0 \$(rate)"
			t0=\$(now)
			/tailor/bin/tailor record -q -F \$f -o /tmp/t.rec -- \$w
			t1=\$(now)
			/tailor/bin/tailor dump /tmp/t.rec >/tmp/t.dump
			echo "BENCH \$f \$th tailor \$(el \$t0 \$t1) \$(stat -c %s /tmp/t.rec)" \
				"\$(sed -n 's/^samples: //p' /tmp/t.dump) \$(sed -n 's/^end.lost: //p' /tmp/t.dump)" \
				"\$(sed -n 's/^end.throttled: //p' /tmp/t.dump) \$(rate)"
			t0=\$(now)
			perf record -q -e cpu-clock -F \$f -o /tmp/p.data -- \$w 2>/dev/null
			t1=\$(now)
			echo "BENCH \$f \$th perf \$(el \$t0 \$t1) \$(stat -c %s /tmp/p.data)" \
				"\$(perf script -i /tmp/p.data -F ip 2>/dev/null | wc -l) \$(perf_count LOST)" \
				"\$(perf_count THROTTLE) \$(rate)"
			t0=\$(now)
			perf record -q -e cpu-clock -F \$f --intr-regs=r15 -o /tmp/p.data -- \$w 2>/dev/null
			t1=\$(now)
			echo "BENCH \$f \$th perf+r15 \$(el \$t0 \$t1) \$(stat -c %s /tmp/p.data)" \
				"\$(perf script -i /tmp/p.data -F ip 2>/dev/null | wc -l) \$(perf_count LOST)" \
				"\$(perf_count THROTTLE) \$(rate)"
		done
	done
done
rmmod tailor
INBOX
bench_boot 7200

tr -d '\r' <"$out/console.log" | awk -v iters="$iterations" "$bench_median_awk"'
/^BENCH / {
	k = $2 " " $3 " " $4
	t[k, ++n[k]] = $5
	bytes[k] += $6; samples[k] += $7; lost[k] += $8; thr[k] += $9
	if ($10 != "" && (!minrate || $10 < minrate)) minrate = $10
	if (!seen[$2 " " $3]++) order[++nc] = $2 " " $3
}
END {
	if (!nc) { print "record-overhead: no results (see build/bench-record/console.log)"; exit 1 }
	printf "tw_work %s iterations a thread (test box, TCG, 2 vCPUs, software clock)\n", iters
	printf "%6s %3s %-9s %9s %9s %12s %8s %6s %9s\n", "Hz", "thr", "", "median s", "overhead",
	       "samples/run", "B/sample", "lost", "throttled"
	split("tailor perf perf+r15", names, " ")
	for (c = 1; c <= nc; c++) {
		b = median(order[c] " bare")
		printf "%6s %3s %-9s %9.3f %9s %12s %8s %6s\n", substr(order[c], 1, index(order[c], " ") - 1),
		       substr(order[c], index(order[c], " ") + 1), "bare", b, "-", "-", "-", "-"
		for (i = 1; i <= 3; i++) {
			k = order[c] " " names[i]
			m = median(k)
			ov[names[i]] = (m / b - 1) * 100
			printf "%6s %3s %-9s %9.3f %8.1f%% %12.0f %8.1f %6d %9d\n", "", "", names[i], m,
			       ov[names[i]], samples[k] / n[k], samples[k] ? bytes[k] / samples[k] : 0, lost[k],
			       thr[k]
		}
		ratio = 0
		if (ov["perf+r15"] > 0)
			ratio = ov["tailor"] / ov["perf+r15"]
		extra = ""
		if (substr(order[c], 1, index(order[c], " ") - 1) == 10000)
			extra = sprintf(", lost at 10 kHz: %d (goal 0)", lost[order[c] " tailor"])
		printf "%6s %3s tailor/perf+r15 overhead %.2f (goal <= 0.25)%s\n", "", "", ratio, extra
	}
	printf "kernel.perf_event_max_sample_rate: lowest seen %d\n", minrate
}'

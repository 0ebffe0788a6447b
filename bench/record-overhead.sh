#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# record-overhead.sh - what recording costs, tailor against perf.
#
# In the test box (Debian 6.1, QEMU TCG, software clock), runs the same
# CPU-bound workload (tw_work: a fixed number of loop iterations) bare,
# under 'tailor record' (IP, TSC, r15) and under 'perf record -e
# cpu-clock' at the same frequency, plain and with --intr-regs=r15 (the
# same information as tailor), and under 'tailor record --tag-word' (the
# per-thread word read at every sample too), several times each, and
# prints the median wall times, each profiler's overhead as a ratio to
# the bare run, and the bytes each recording takes per sample.  A benchmark: it prints figures and never
# fails a build.  Under TCG every figure is inflated; compare the rows.
#
# Usage: bench/record-overhead.sh [--freq HZ] [--iterations N] [--runs N] [--box 6.1|6.12]
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
freq=1000 iterations=2000000000 runs=3 box=6.1
while [ $# -gt 0 ]; do
	case $1 in
	--freq) freq=$2; shift 2 ;;
	--iterations) iterations=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--box) box=$2; shift 2 ;;
	*) echo "record-overhead: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_payload record "$box"

cat >"$payload/run-in-box.sh" <<INBOX
#!/bin/sh
# Runs in the box: time each configuration, print one parseable line each.
. /tailor/bench-box.sh
insmod /tailor/tailor.ko || exit 1
w="/tailor/workloads/tw_work $iterations"
for i in \$(seq $runs); do
	t0=\$(now); \$w; t1=\$(now)
	echo "BENCH bare \$(el \$t0 \$t1)"
	t0=\$(now)
	/tailor/bin/tailor record -q -F $freq -o /tmp/t.rec -- \$w
	t1=\$(now)
	n=\$(/tailor/bin/tailor dump /tmp/t.rec | sed -n 's/^samples: //p')
	echo "BENCH tailor \$(el \$t0 \$t1) \$(stat -c %s /tmp/t.rec) \$n"
	# The same, reading each sample's tag word (the last word of static TLS).
	t0=\$(now)
	/tailor/bin/tailor record -q -F $freq --tag-word -8 -o /tmp/t.rec -- \$w
	t1=\$(now)
	n=\$(/tailor/bin/tailor dump /tmp/t.rec | sed -n 's/^samples: //p')
	echo "BENCH tailor+word \$(el \$t0 \$t1) \$(stat -c %s /tmp/t.rec) \$n"
	t0=\$(now)
	perf record -q -e cpu-clock -F $freq -o /tmp/p.data -- \$w 2>/dev/null
	t1=\$(now)
	n=\$(perf script -i /tmp/p.data -F ip 2>/dev/null | wc -l)
	echo "BENCH perf \$(el \$t0 \$t1) \$(stat -c %s /tmp/p.data) \$n"
	t0=\$(now)
	perf record -q -e cpu-clock -F $freq --intr-regs=r15 -o /tmp/p.data -- \$w 2>/dev/null
	t1=\$(now)
	n=\$(perf script -i /tmp/p.data -F ip 2>/dev/null | wc -l)
	echo "BENCH perf+r15 \$(el \$t0 \$t1) \$(stat -c %s /tmp/p.data) \$n"
done
rmmod tailor
INBOX
bench_boot 1800

tr -d '\r' <"$out/console.log" | awk -v freq="$freq" -v iters="$iterations" "$bench_median_awk"'
/^BENCH / {
	t[$2, ++n[$2]] = $3
	if ($2 != "bare") { bytes[$2] += $4; samples[$2] += $5 }
}
END {
	if (!n["bare"]) { print "record-overhead: no results (see build/bench-record/console.log)"; exit 1 }
	b = median("bare")
	if (n["tailor"] && n["tailor+word"])
		extra_word = (median("tailor+word") - median("tailor")) / b * 100
	printf "tw_work %s iterations, %s Hz, %d runs each (test box, TCG, software clock)\n", iters, freq, n["bare"]
	printf "%-11s %10s %10s %14s %14s\n", "", "median s", "overhead", "samples/run", "bytes/sample"
	printf "%-11s %10.3f %10s %14s %14s\n", "bare", b, "-", "-", "-"
	split("tailor tailor+word perf perf+r15", names, " ")
	for (i = 1; i <= 4; i++) {
		k = names[i]
		m = median(k)
		printf "%-11s %10.3f %9.1f%% %14.0f %14.1f\n", k, m, (m / b - 1) * 100,
		       samples[k] / n[k], samples[k] ? bytes[k] / samples[k] : 0
	}
	printf "reading the tag word: %+.1f points of overhead over tailor without it\n", extra_word
}'

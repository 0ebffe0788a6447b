#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# switch-overhead.sh - what recording context switches costs.
#
# In the test box (Debian 6.1, QEMU TCG, software clock), runs a workload
# that switches often bare, under 'tailor record
# --no-switches' and 'tailor record' (switches from perf's side-band), and
# under 'perf record -e cpu-clock' without and with --switch-events, at the
# same frequency, several times each; prints the median wall times, the
# overheads as ratios to the bare run, the switches a second the recording
# saw, and the points switch tracking adds to each profiler.  The bare
# row's rate is the kernel's count of context switches; the others count
# records (a switch is an out and an in record; tailor+wakeups counts
# WAKEUP records, with --no-wakeups tailor+switches has none).  A benchmark:
# it prints figures and never fails a build.
#
# The workloads: 'lock' (default), tw_lock with short phases: every round
# each thread blocks on a barrier or the mutex, about 1.5k switches/s
# under TCG; 'pingpong', tw_pingpong: two threads on one CPU handing a
# byte over pipes, as many switches a second as the box makes, fewer
# with --work-ns (CPU time spun between hand-overs).  The bare run's
# switches/s are the kernel's count (getrusage).
#
# Usage: bench/switch-overhead.sh [--workload lock|pingpong] [--freq HZ]
#          [--rounds N] [--work-ns NS] [--runs N] [--box 6.1|6.12]
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
freq=1000 rounds="" runs=3 box=6.1 workload=lock work_ns=0
while [ $# -gt 0 ]; do
	case $1 in
	--workload) workload=$2; shift 2 ;;
	--work-ns) work_ns=$2; shift 2 ;;
	--freq) freq=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--box) box=$2; shift 2 ;;
	*) echo "switch-overhead: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

case $workload in
lock) w="tw_lock -r ${rounds:-5000} -p 20 -s 20 (2 threads)"
      cmd="/tailor/workloads/tw_lock -r ${rounds:-5000} -p 20 -s 20" ;;
pingpong) w="tw_pingpong -n ${rounds:-100000} -w $work_ns (2 threads, 1 CPU)"
      cmd="/tailor/workloads/tw_pingpong -n ${rounds:-100000} -w $work_ns" ;;
*) echo "switch-overhead: --workload is lock or pingpong, not '$workload'" >&2; exit 2 ;;
esac

# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_payload switch "$box"

cat >"$payload/run-in-box.sh" <<INBOX
#!/bin/sh
# Runs in the box: time each configuration, print one parseable line each.
. /tailor/bench-box.sh
insmod /tailor/tailor.ko || exit 1
w="$cmd"
for i in \$(seq $runs); do
	t0=\$(now); \$w >/tmp/w.out; t1=\$(now)
	echo "BENCH bare \$(el \$t0 \$t1) \$(sed -n 's/^switches=//p' /tmp/w.out | grep . || echo 0)"
	t0=\$(now)
	/tailor/bin/tailor record -q -F $freq --no-switches -o /tmp/t.rec -- \$w >/dev/null
	t1=\$(now)
	echo "BENCH tailor \$(el \$t0 \$t1) 0"
	t0=\$(now)
	/tailor/bin/tailor record -q -F $freq --no-wakeups -o /tmp/t.rec -- \$w >/dev/null
	t1=\$(now)
	n=\$(/tailor/bin/tailor dump /tmp/t.rec | sed -n 's/^switches: //p')
	echo "BENCH tailor+switches \$(el \$t0 \$t1) \$n"
	t0=\$(now)
	/tailor/bin/tailor record -q -F $freq -o /tmp/t.rec -- \$w >/dev/null
	t1=\$(now)
	n=\$(/tailor/bin/tailor dump /tmp/t.rec | sed -n 's/^wakeups: //p')
	echo "BENCH tailor+wakeups \$(el \$t0 \$t1) \$n"
	t0=\$(now)
	perf record -q -e cpu-clock -F $freq -o /tmp/p.data -- \$w >/dev/null 2>&1
	t1=\$(now)
	echo "BENCH perf \$(el \$t0 \$t1) 0"
	t0=\$(now)
	perf record -q -e cpu-clock -F $freq --switch-events -o /tmp/p.data -- \$w >/dev/null 2>&1
	t1=\$(now)
	n=\$(perf script -i /tmp/p.data --show-switch-events -F pid 2>/dev/null | grep -c PERF_RECORD_SWITCH)
	echo "BENCH perf+switches \$(el \$t0 \$t1) \$n"
done
rmmod tailor
INBOX
bench_boot 2400

tr -d '\r' <"$out/console.log" | awk -v freq="$freq" -v w="$w" "$bench_median_awk"'
/^BENCH / { t[$2, ++n[$2]] = $3; sw[$2] += $4 }
END {
	if (!n["bare"]) { print "switch-overhead: no results (see build/bench-switch/console.log)"; exit 1 }
	b = median("bare")
	printf "%s, %s Hz, %d runs each (test box, TCG, software clock)\n", w, freq, n["bare"]
	printf "%-16s %10s %10s %14s\n", "", "median s", "overhead", "records/s"
	printf "%-16s %10.3f %10s %14s\n", "bare", b, "-",
	       sw["bare"] ? sprintf("%.0f", sw["bare"] / n["bare"] / b) : "-"
	split("tailor tailor+switches tailor+wakeups perf perf+switches", names, " ")
	for (i = 1; i <= 5; i++) {
		k = names[i]
		m = median(k)
		printf "%-16s %10.3f %9.1f%% %14s\n", k, m, (m / b - 1) * 100,
		       sw[k] ? sprintf("%.0f", sw[k] / n[k] / m) : "-"
	}
	printf "recording switches adds %+.1f points to tailor (wakeups %+.1f more), %+.1f to perf\n",
	       (median("tailor+switches") - median("tailor")) / b * 100,
	       (median("tailor+wakeups") - median("tailor+switches")) / b * 100,
	       (median("perf+switches") - median("perf")) / b * 100
}'

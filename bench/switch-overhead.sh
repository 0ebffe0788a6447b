#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# switch-overhead.sh - what recording context switches costs.
#
# In the test box (Debian 6.1, QEMU TCG, software clock), runs a workload
# that switches often bare, under 'tailor record --no-switches', 'tailor
# record --no-wakeups' (switches from tailor.ko's scheduler probes, module
# ABI 5) and 'tailor record' (wakeups too), under bench/sideband-sink.c
# (perf's side-band switch and wakeup events, which tailor record used
# before ABI 5, with nobody reading them: the kernel's part of their cost)
# without switches, with switches and with wakeups too, and under 'perf record -e
# cpu-clock' without and with --switch-events, at the same frequency,
# several times each.  Prints the median of the workload's own wall time
# (its wall_ns: what the recording costs the workload) and of the whole
# command's (the profiler's start and finish too: perf's build-id pass),
# the overheads as ratios to the bare run, the records a second, and the
# points switch tracking adds.  The bare row's rate is the kernel's count
# of context switches; the others count records (a switch is an out and
# an in record; tailor+wakeups and sink+wakeups count wakeup records).
# A benchmark: it prints figures and never fails a build.
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
cc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$payload/bin/sideband-sink" "$top/bench/sideband-sink.c"

cat >"$payload/run-in-box.sh" <<INBOX
#!/bin/sh
# Runs in the box: time each configuration, print one parseable line each:
# BENCH name command-seconds workload-seconds count.
. /tailor/bench-box.sh
insmod /tailor/tailor.ko || exit 1
w="$cmd"
# run NAME COMMAND...: the workload's own wall_ns is in /tmp/w.out.
run() {
	shift
	t0=\$(now); "\$@" >/tmp/w.out 2>/tmp/w.err; t1=\$(now)
	ns=\$(sed -n 's/^wall_ns=//p' /tmp/w.out)
	work=\$(awk -v ns="\$ns" 'BEGIN { print ns / 1e9 }')
}
for i in \$(seq $runs); do
	run bare \$w
	echo "BENCH bare \$(el \$t0 \$t1) \$work \$(sed -n 's/^switches=//p' /tmp/w.out | grep . || echo 0)"
	run tailor /tailor/bin/tailor record -q -F $freq --no-switches -o /tmp/t.rec -- \$w
	echo "BENCH tailor \$(el \$t0 \$t1) \$work 0"
	run tailor+switches /tailor/bin/tailor record -q -F $freq --no-wakeups -o /tmp/t.rec -- \$w
	n=\$(/tailor/bin/tailor dump /tmp/t.rec | sed -n 's/^switches: //p')
	echo "BENCH tailor+switches \$(el \$t0 \$t1) \$work \$n"
	run tailor+wakeups /tailor/bin/tailor record -q -F $freq -o /tmp/t.rec -- \$w
	n=\$(/tailor/bin/tailor dump /tmp/t.rec | sed -n 's/^wakeups: //p')
	echo "BENCH tailor+wakeups \$(el \$t0 \$t1) \$work \$n"
	run sink /tailor/bin/sideband-sink -- \$w
	echo "BENCH sink \$(el \$t0 \$t1) \$work 0"
	run sink+switches /tailor/bin/sideband-sink --switches -- \$w
	n=\$(sed -n 's/^sink_switches=//p' /tmp/w.err)
	grep -q '^sink_full=no' /tmp/w.err || echo "sideband-sink: a ring filled"
	echo "BENCH sink+switches \$(el \$t0 \$t1) \$work \$n"
	run sink+wakeups /tailor/bin/sideband-sink --switches --wakeups -- \$w
	n=\$(sed -n 's/^sink_wakeups=//p' /tmp/w.err)
	grep -q '^sink_full=no' /tmp/w.err || echo "sideband-sink: a ring filled"
	echo "BENCH sink+wakeups \$(el \$t0 \$t1) \$work \$n"
	run perf perf record -q -e cpu-clock -F $freq -o /tmp/p.data -- \$w
	echo "BENCH perf \$(el \$t0 \$t1) \$work 0"
	run perf+switches perf record -q -e cpu-clock -F $freq --switch-events -o /tmp/p.data -- \$w
	n=\$(perf script -i /tmp/p.data --show-switch-events -F pid 2>/dev/null | grep -c PERF_RECORD_SWITCH)
	echo "BENCH perf+switches \$(el \$t0 \$t1) \$work \$n"
done
rmmod tailor
INBOX
bench_boot 2400

tr -d '\r' <"$out/console.log" | awk -v freq="$freq" -v w="$w" "$bench_median_awk"'
/^sideband-sink: / { print > "/dev/stderr" }
/^BENCH / { t[$2, ++n[$2]] = $4; t["cmd " $2, n[$2]] = $3; n["cmd " $2] = n[$2]; sw[$2] += $5 }
END {
	if (!n["bare"]) { print "switch-overhead: no results (see build/bench-switch/console.log)"; exit 1 }
	b = median("bare"); bc = median("cmd bare")
	printf "%s, %s Hz, %d runs each (test box, TCG, software clock)\n", w, freq, n["bare"]
	printf "%-16s %10s %10s %12s %10s %12s\n", "", "workload s", "overhead",
	       "command s", "overhead", "records/s"
	printf "%-16s %10.3f %10s %12.2f %10s %12s\n", "bare", b, "-", bc, "-",
	       sw["bare"] ? sprintf("%.0f", sw["bare"] / n["bare"] / b) : "-"
	split("tailor tailor+switches tailor+wakeups sink sink+switches sink+wakeups perf perf+switches", names, " ")
	for (i = 1; i <= 8; i++) {
		k = names[i]
		m = median(k); mc = median("cmd " k)
		printf "%-16s %10.3f %9.1f%% %12.2f %9.1f%% %12s\n", k, m, (m / b - 1) * 100,
		       mc, (mc / bc - 1) * 100,
		       sw[k] ? sprintf("%.0f", sw[k] / n[k] / m) : "-"
	}
	printf "points switch tracking adds to the workload: tailor %+.1f (wakeups %+.1f more),\n",
	       (median("tailor+switches") - median("tailor")) / b * 100,
	       (median("tailor+wakeups") - median("tailor+switches")) / b * 100
	printf "  the kernel alone (no reader) %+.1f (wakeups %+.1f more), perf %+.1f\n",
	       (median("sink+switches") - median("sink")) / b * 100,
	       (median("sink+wakeups") - median("sink+switches")) / b * 100,
	       (median("perf+switches") - median("perf")) / b * 100
}'

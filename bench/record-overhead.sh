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
# kHz, several times each.  Two more runs take the overhead apart: the
# clock's floor (bench/clock-floor.c: the same cpu-clock counter with its
# output paused, so every sample costs the interrupt and perf's overflow
# path and nothing else), and each profiler on an empty workload (tw_work
# with no iterations: what it costs to start and finish, whatever the
# rate).  It prints per rate and thread count the median wall times, each
# profiler's overhead over the bare run, its samples, bytes per sample,
# lost samples, fixed cost and cost per sample (overhead less the fixed
# cost, over the samples), and whether tailor's overhead is at most a
# quarter of perf's (with --intr-regs) and 10 kHz lost nothing, beside the
# floor's share of perf's overhead.  A benchmark: it prints figures and
# never fails a build.  Under TCG every figure is inflated; compare the
# rows.
#
# With --native, on this machine instead, real timing: tailor records
# through its BPF collector (TAILOR_COLLECTOR=bpf; needs root and a kernel
# with BTF), and the goal is the BPF collector's overhead at most half of
# perf's with --intr-regs, at most 12 bytes a sample, nothing lost at 10
# kHz.
#
# With --stacks, call stacks instead: the workload is tw_stacks (frame
# pointers, leaf_spin four calls deep), single-threaded, bare, under
# 'tailor record' without and with --call-graph fp, and under 'perf
# record -e cpu-clock' without and with -g (frame pointers), at the same
# rates; the last line per rate is each profiler's overhead with stacks
# over its overhead without (the paper: 529% for perf's stacks, the
# reason tag registers exist), and tailor's with stacks against perf's.
#
# Usage: bench/record-overhead.sh [--freqs "HZ ..."] [--threads "N ..."]
#                                 [--iterations N] [--runs N] [--box 6.1|6.12]
#                                 [--native] [--stacks]
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
freqs="1000 4000 10000 20000" threads="1 2" iterations= runs=3 box=6.1 stacks= native=
while [ $# -gt 0 ]; do
	case $1 in
	--stacks) stacks=1; shift ;;
	--native) native=1; shift ;;
	--freqs) freqs=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--iterations) iterations=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--box) box=$2; shift 2 ;;
	*) echo "record-overhead: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
# Some 2 s of work a thread: TCG runs the loop about 20 times slower.
[ -n "$iterations" ] || iterations=$([ -n "$native" ] && echo 8000000000 || echo 500000000)
for v in $freqs $threads $iterations $runs; do
	case $v in
	'' | *[!0-9]*) echo "record-overhead: '$v' is not a number" >&2; exit 2 ;;
	esac
done

kinds="tailor perf perf+r15 floor" empties="tailor perf+r15"
if [ -n "$stacks" ]; then
	kinds="tailor tailor+g perf perf+g" empties="tailor tailor+g perf perf+g" threads=1
fi

# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
if [ -n "$native" ]; then
	bench_native_payload record
	where="native, $(nproc) CPUs, kernel $(uname -r), tailor through BPF"
	load=: unload=:
	root=$payload
	export TAILOR_COLLECTOR=bpf
else
	bench_payload record "$box"
	where="test box, TCG, 2 vCPUs, software clock"
	load="insmod /tailor/tailor.ko || exit 1" unload="rmmod tailor"
	root=/tailor
fi
cc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$payload/bin/clock-floor" "$top/bench/clock-floor.c"

cat >"$payload/run-in-box.sh" <<INBOX
#!/bin/sh
# Runs in the box (or here): time each configuration, print one line each:
# BENCH FREQ THREADS KIND SECONDS BYTES SAMPLES LOST THROTTLED MAX_RATE
. $root/bench-box.sh
$load
# perf_count KIND: the perf.data's events of KIND (LOST, THROTTLE)
perf_count() {
	perf report -i /tmp/p.data --stats 2>/dev/null |
		sed -n "s/^ *\$1[A-Z_]* events: *\\([0-9]*\\).*/\\1/p" | awk '{ s += \$1 } END { print s + 0 }'
}
rate() { cat /proc/sys/kernel/perf_event_max_sample_rate; }
# tw_work's own time for its work (TW_WORK_TIME), 0 where none
export TW_WORK_TIME=/tmp/tw.time
work() { cat /tmp/tw.time 2>/dev/null || echo 0; rm -f /tmp/tw.time; }
# profile KIND WORKLOAD: one line for WORKLOAD under the profiler KIND
profile() {
	rm -f /tmp/tw.time
	case \$1 in
	bare)
		t0=\$(now); \$2; t1=\$(now)
		echo "BENCH \$f \$th \$3bare \$(el \$t0 \$t1) 0 0 0 0 \$(rate) \$(work)" ;;
	floor)
		t0=\$(now); $root/bin/clock-floor -F \$f -- \$2 2>/tmp/floor.err; t1=\$(now)
		# A failed run counts no samples, and the line keeps its fields.
		s=\$(sed -n 's/^floor_samples=//p' /tmp/floor.err)
		echo "BENCH \$f \$th \$3floor \$(el \$t0 \$t1) 0 \${s:-0} 0 0 \$(rate) \$(work)" ;;
	tailor | tailor+g)
		g=
		[ \$1 = tailor+g ] && g="--call-graph fp"
		t0=\$(now)
		$root/bin/tailor record -q -F \$f \$g -o /tmp/t.rec -- \$2
		t1=\$(now)
		$root/bin/tailor dump /tmp/t.rec >/tmp/t.dump
		echo "BENCH \$f \$th \$3\$1 \$(el \$t0 \$t1) \$(stat -c %s /tmp/t.rec)" \
			"\$(sed -n 's/^samples: //p' /tmp/t.dump) \$(sed -n 's/^end.lost: //p' /tmp/t.dump)" \
			"\$(sed -n 's/^end.throttled: //p' /tmp/t.dump) \$(rate) \$(work)" ;;
	perf | perf+r15 | perf+g)
		regs=
		[ \$1 = perf+r15 ] && regs=--intr-regs=r15
		[ \$1 = perf+g ] && regs=-g
		t0=\$(now)
		perf record -q -e cpu-clock -F \$f \$regs -o /tmp/p.data -- \$2 2>/dev/null
		t1=\$(now)
		echo "BENCH \$f \$th \$3\$1 \$(el \$t0 \$t1) \$(stat -c %s /tmp/p.data)" \
			"\$(perf script -i /tmp/p.data -F ip --hide-call-graph 2>/dev/null | wc -l) \$(perf_count LOST)" \
			"\$(perf_count THROTTLE) \$(rate) \$(work)" ;;
	esac
}
for th in $threads; do
	w="$root/workloads/tw_work $iterations \$th" w0="$root/workloads/tw_work 0 \$th"
	if [ -n "$stacks" ]; then
		w="$root/workloads/tw_stacks $iterations 0" w0="$root/workloads/tw_stacks 0 0"
	fi
	for f in $freqs; do
		for i in \$(seq $runs); do
			for k in bare $kinds; do
				profile \$k "\$w"
			done
			for k in bare $empties; do
				profile \$k "\$w0" empty-
			done
		done
	done
done
$unload
INBOX
if [ -n "$native" ]; then
	chmod +x "$payload/run-in-box.sh"
	"$payload/run-in-box.sh" >"$out/console.log" 2>&1
else
	bench_boot 7200
fi

tr -d '\r' <"$out/console.log" | awk -v iters="$iterations" -v kinds="$kinds" -v where="$where" \
	-v goal="$([ -n "$native" ] && echo 0.5 || echo 0.25)" \
	-v workload="$([ -n "$stacks" ] && echo tw_stacks || echo tw_work)" "$bench_median_awk"'
/^BENCH / {
	k = $2 " " $3 " " $4
	t[k, ++n[k]] = $5
	# The work'"'"'s own time (tw_work), as a key of its own: "w" k.
	if ($11 > 0) {
		kw = "w " k; t[kw, ++n[kw]] = $11
		if ($4 == "bare") { kw = "w all " $3 " bare"; t[kw, ++n[kw]] = $11 }
	}
	# Bare and empty runs do not depend on the rate: pooled per thread count.
	if ($4 ~ /bare$|^empty-/) { k2 = "all " $3 " " $4; t[k2, ++n[k2]] = $5 }
	bytes[k] += $6; samples[k] += $7; lost[k] += $8; thr[k] += $9
	if ($10 != "" && (!minrate || $10 < minrate)) minrate = $10
	if (!seen[$2 " " $3]++) order[++nc] = $2 " " $3
}
END {
	if (!nc) { print "record-overhead: no results (see build/bench-record/console.log)"; exit 1 }
	printf "%s %s iterations a thread (%s)\n", workload, iters, where
	printf "bare and fixed: medians of every rate'"'"'s runs with as many threads (the rate changes neither)\n"
	printf "fixed: the profiler on tw_work 0 less tw_work 0 bare; per sample: overhead less fixed, over the samples\n"
	printf "(the floor: its overhead over its samples, its start being a fork and an exec)\n"
	printf "in the run: the slowdown of the work itself (tw_work'"'"'s own clock), without the profiler'"'"'s start and stop\n"
	printf "%6s %3s %-9s %9s %9s %9s %11s %8s %6s %9s %8s %11s\n", "Hz", "thr", "", "median s", "overhead",
	       "in run", "samples/run", "B/sample", "lost", "throttled", "fixed s", "us/sample"
	nn = split(kinds, names, " ")
	for (c = 1; c <= nc; c++) {
		th = substr(order[c], index(order[c], " ") + 1)
		b = median("all " th " bare")
		b0 = median("all " th " empty-bare")
		wb = ("w all " th " bare") in n ? median("w all " th " bare") : 0
		printf "%6s %3s %-9s %9.3f %9s %9s %11s %8s %6s %9s %8s %11s\n", substr(order[c], 1, index(order[c], " ") - 1),
		       th, "bare", b, "-", "-", "-", "-", "-", "-", "-", "-"
		for (i = 1; i <= nn; i++) {
			k = order[c] " " names[i]
			m = median(k)
			ov[names[i]] = (m / b - 1) * 100
			inrun = "-"
			delete wov
			if (wb && ("w " k) in n) {
				wov[names[i]] = (median("w " k) / wb - 1) * 100
				inrun = sprintf("%.1f%%", wov[names[i]])
				win[names[i]] = wov[names[i]]
			}
			# No empty run (plain perf, the floor): no fixed cost to take off.
			fixed = per = "-"
			if (("all " th " empty-" names[i]) in n) {
				fixed = median("all " th " empty-" names[i]) - b0
				if (samples[k])
					per = sprintf("%.1f", (m - b - fixed) / (samples[k] / n[k]) * 1e6)
				fixed = sprintf("%.3f", fixed)
			} else if (names[i] == "floor" && samples[k]) {
				per = sprintf("%.1f", (m - b) / (samples[k] / n[k]) * 1e6)
			}
			printf "%6s %3s %-9s %9.3f %8.1f%% %9s %11.0f %8.1f %6d %9d %8s %11s\n", "", "", names[i], m,
			       ov[names[i]], inrun, samples[k] / n[k], samples[k] ? bytes[k] / samples[k] : 0, lost[k],
			       thr[k], fixed, per
		}
		if (kinds ~ /\+g/) {
			printf "%6s %3s with stacks over without: tailor %.2f, perf %.2f (the paper: 5.29 for perf); tailor+g/perf+g overhead %.2f\n",
			       "", "", (ov["tailor"] > 0 ? ov["tailor+g"] / ov["tailor"] : 0),
			       (ov["perf"] > 0 ? ov["perf+g"] / ov["perf"] : 0),
			       (ov["perf+g"] > 0 ? ov["tailor+g"] / ov["perf+g"] : 0)
			continue
		}
		ratio = floor = 0
		if (ov["perf+r15"] > 0) {
			ratio = ov["tailor"] / ov["perf+r15"]
			floor = ov["floor"] / ov["perf+r15"]
		}
		extra = ""
		if (substr(order[c], 1, index(order[c], " ") - 1) == 10000)
			extra = sprintf(", lost at 10 kHz: %d (goal 0)", lost[order[c] " tailor"])
		inratio = "-"
		if (win["perf+r15"] > 0)
			inratio = sprintf("%.2f", win["tailor"] / win["perf+r15"])
		printf "%6s %3s tailor/perf+r15 overhead %.2f, in the run %s (goal <= %s), floor/perf+r15 %.2f%s\n", "", "",
		       ratio, inratio, goal, floor, extra
		delete win
	}
	printf "kernel.perf_event_max_sample_rate: lowest seen %d\n", minrate
}'

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# report-throughput.sh [--samples N]: samples per second of tailor report,
# tailor timeline and each profile exporter (pprof, folded, chrome),
# beside perf report and perf script over a perf.data of the same
# samples, on this machine.
#
# The profile is synthetic (tests/golden/synth_profile) so that both tools
# read exactly the same samples: N samples (default 10 million) spread
# over the lines of tw_ops (a real binary with DWARF) and libtw_jit.so,
# with tags, in a tailor recording and a perf.data, each CPU's samples in
# batches out of time order and round marks after each pair, and packed,
# as tailor record and perf record write them; once more packed as format
# 2 did, without the batches' summaries, so that the first pass unpacks
# them; once more with the samples as raw records (format 1); once more
# without marks (older tailors'),
# which is merged whole.  Each tool runs once
# after a warm-up read of the files; times are wall clock.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
samples=10000000
while [ $# -gt 0 ]; do
	case $1 in
	--samples) samples=$2; shift 2 ;;
	*) echo "usage: $0 [--samples N]" >&2; exit 2 ;;
	esac
done
command -v perf >/dev/null || { echo "report-throughput.sh: perf not found (apt install linux-perf)" >&2; exit 1; }

make -s -C "$top" userspace workloads
make -s -C "$top/userspace" test-tools
wl=$top/build/workloads
src=$top/tests/workloads
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
line() { grep -n "golden: $2" "$1" | cut -d: -f1; }

"$wl/tw_ops" --dict "$work/ops.dict" 0 0 0
# 10 000 samples per repetition, over five locations and three tags.
{
	printf '2500\t%s\t0\t1000\n' "$wl/tw_ops:$src/tw_ops.c:$(line "$src/tw_ops.c" scan)"
	printf '4000\t%s\t2\t1000\n' "$wl/tw_ops:$src/tw_ops.c:$(line "$src/tw_ops.c" probe)"
	printf '2000\t%s\t3\t1001\n' "$wl/tw_ops:$src/tw_ops.c:$(line "$src/tw_ops.c" combine)"
	printf '1000\t%s\t3\t1001\n' "$wl/libtw_jit.so:$src/tw_jit.c:$(line "$src/tw_jit.c" jit)"
	printf '500\tkernel\t0\t1000\n'
} >"$work/spec"
repeat=$(( (samples + 9999) / 10000 ))
samples=$((repeat * 10000))
echo "building a profile of $samples samples..." >&2
"$top/build/userspace/synth_profile" -R -P -r "$repeat" -o "$work/p.rec" -p "$work/p.data" "$work/spec" >/dev/null
"$top/build/userspace/synth_profile" -R -P -2 -r "$repeat" -o "$work/p2.rec" "$work/spec" >/dev/null
"$top/build/userspace/synth_profile" -R -r "$repeat" -o "$work/raw.rec" "$work/spec" >/dev/null
"$top/build/userspace/synth_profile" -r "$repeat" -o "$work/old.rec" "$work/spec" >/dev/null
cat "$work/p.rec" "$work/p2.rec" "$work/p.data" "$work/raw.rec" "$work/old.rec" >/dev/null

tailor=$top/build/userspace/tailor
# time_it NAME CMD...: prints "NAME seconds samples/s"
time_it() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || { echo "$name failed" >&2; return 1; }
	t1=$(date +%s.%N)
	awk -v n="$name" -v a="$t0" -v b="$t1" -v s="$samples" \
		'BEGIN { printf "%-44s %8.2f s %12.0f samples/s\n", n, b - a, s / (b - a) }'
}

echo "$samples samples; $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "recording $(stat -c %s "$work/p.rec") bytes packed ($(stat -c %s "$work/p2.rec") as format 2), $(stat -c %s "$work/raw.rec") raw; perf.data $(stat -c %s "$work/p.data") bytes"
{
	time_it "tailor report (operators, recording)" "$tailor" report -i "$work/p.rec" -d "$work/ops.dict"
	time_it "tailor report (functions, recording)" "$tailor" report -i "$work/p.rec" -l function
	time_it "tailor timeline (1ms buckets, recording)" "$tailor" timeline -b 1ms -i "$work/p.rec" -d "$work/ops.dict"
	time_it "tailor report (operators, format 2 packed)" "$tailor" report -i "$work/p2.rec" -d "$work/ops.dict"
	time_it "tailor report (operators, raw samples)" "$tailor" report -i "$work/raw.rec" -d "$work/ops.dict"
	time_it "tailor report (operators, perf.data)" "$tailor" report -i "$work/p.data" -d "$work/ops.dict"
	time_it "tailor report (operators, recording without rounds)" "$tailor" report -i "$work/old.rec" -d "$work/ops.dict"
	for f in pprof folded chrome; do
		time_it "tailor report -f $f (recording)" "$tailor" report -i "$work/p.rec" -d "$work/ops.dict" -f $f -o "$work/out.$f"
	done
	time_it "perf report --stdio --sort sym" perf report --stdio --sort sym -i "$work/p.data"
	time_it "perf script" perf script -i "$work/p.data"
} | tee "$work/results"
awk '/^tailor report \(operators, recording\)/ { t = $(NF - 3) } /^perf script/ { p = $(NF - 3) }
     /^tailor report -f / { e[$4] = $(NF - 3) }
     END { if (t && p) printf "tailor report / perf script: %.1fx throughput\n", p / t
           for (f in e) printf "tailor report -f %s: %.2fx the table'"'"'s time\n", f, e[f] / t }' "$work/results"

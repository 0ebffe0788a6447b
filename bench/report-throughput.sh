#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# report-throughput.sh [--samples N] [--stack-samples N] [--build DIR]:
# samples per second of tailor report, tailor timeline and each profile
# exporter (pprof, folded, chrome), beside perf report and perf script
# over a perf.data of the same samples, on this machine; then the same on
# a profile with call stacks.
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
#
# Call stacks: tests/symbols/hot_lines.c, built by clang with frame
# pointers in every function, under perf record -g -e cpu-clock:u at
# 50 kHz (-c 20000) for about N samples (--stack-samples, default 2
# million).  On that perf.data: tailor report --children beside perf
# report --children --stdio (as it is, and with its call graphs off, -g
# none --sort sym, which prints what tailor does); tailor's table (no
# stacks kept) beside perf script; and each exporter (pprof, folded,
# chrome, json) beside the table, in time and in maximum RSS.  Each of
# these runs three times, after a warm-up read: the median time, with
# the RSS of that run (/usr/bin/time -f '%e %M').  Figures, never a
# verdict.
#
# --build DIR: build into DIR (make BUILD=DIR) instead of build/.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
samples=10000000
stack_samples=2000000
build=$top/build
while [ $# -gt 0 ]; do
	case $1 in
	--samples) samples=$2; shift 2 ;;
	--stack-samples) stack_samples=$2; shift 2 ;;
	--build) build=$(realpath -m "$2"); shift 2 ;;
	*) echo "usage: $0 [--samples N] [--stack-samples N] [--build DIR]" >&2; exit 2 ;;
	esac
done
for tool in perf clang /usr/bin/time; do
	command -v $tool >/dev/null || { echo "report-throughput.sh: $tool not found (scripts/setup.sh installs it)" >&2; exit 1; }
done

make -s -C "$top" BUILD="$build" userspace workloads
make -s -C "$top/userspace" O="$build/userspace" test-tools
wl=$build/workloads
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
"$build/userspace/synth_profile" -R -P -r "$repeat" -o "$work/p.rec" -p "$work/p.data" "$work/spec" >/dev/null
"$build/userspace/synth_profile" -R -P -2 -r "$repeat" -o "$work/p2.rec" "$work/spec" >/dev/null
"$build/userspace/synth_profile" -R -r "$repeat" -o "$work/raw.rec" "$work/spec" >/dev/null
"$build/userspace/synth_profile" -r "$repeat" -o "$work/old.rec" "$work/spec" >/dev/null
cat "$work/p.rec" "$work/p2.rec" "$work/p.data" "$work/raw.rec" "$work/old.rec" >/dev/null

tailor=$build/userspace/tailor
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

# ---- call stacks (perf record -g)
# hot_lines runs about 1250 samples a round at -c 20000.
rounds=$(( (stack_samples + 1249) / 1250 ))
echo "recording hot_lines under perf record -g ($rounds rounds)..." >&2
clang -std=gnu11 -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	"$top/tests/symbols/hot_lines.c" -o "$work/calls"
perf record -q -g -e cpu-clock:u -c 20000 -o "$work/g.data" -- "$work/calls" "$rounds" >/dev/null 2>&1
cat "$work/g.data" >/dev/null
g_samples=$("$tailor" report -i "$work/g.data" -f json 2>/dev/null |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])')
# measure NAME CMD...: prints "NAME seconds MB samples/s", the median of three runs.
measure() {
	local name=$1 i
	shift
	for i in 1 2 3; do
		/usr/bin/time -f '%e %M' -o "$work/time.$i" "$@" >/dev/null 2>"$work/err" ||
			{ echo "$name failed" >&2; cat "$work/err" >&2; return 1; }
	done
	sort -n "$work"/time.[123] | sed -n 2p |
		awk -v n="$name" -v s="$g_samples" \
			'{ printf "%-52s %8.2f s %8.1f MB %12.0f samples/s\n", n, $1, $2 / 1024, ($1 > 0 ? s / $1 : 0) }'
}
echo
echo "call stacks: $g_samples samples of hot_lines (perf record -g -e cpu-clock:u -c 20000); perf.data $(stat -c %s "$work/g.data") bytes"
{
	measure "tailor report (functions, table)" "$tailor" report -i "$work/g.data"
	measure "tailor report --children" "$tailor" report -i "$work/g.data" --children
	for f in pprof folded chrome json; do
		measure "tailor report -f $f" "$tailor" report -i "$work/g.data" -f $f -o "$work/g.$f"
	done
	measure "perf report --children --stdio" perf report -i "$work/g.data" --children --stdio
	measure "perf report --children --stdio -g none --sort sym" \
		perf report -i "$work/g.data" --children --stdio -g none --sort sym
	measure "perf script" perf script -i "$work/g.data"
} | tee "$work/g.results"
# Fields from the end: samples/s, "samples/s", MB, "MB", s, "s", then the name.
awk '{ t = $(NF - 5); m = $(NF - 3); $(NF - 5) = $(NF - 4) = $(NF - 3) = $(NF - 2) = $(NF - 1) = $NF = ""
       sub(/ +$/, ""); time[$0] = t; rss[$0] = m }
     END {
	table = "tailor report (functions, table)"; ch = "tailor report --children"
	printf "perf report --children --stdio / tailor report --children: %.1fx the time\n",
		time["perf report --children --stdio"] / time[ch]
	printf "perf report --children --stdio -g none --sort sym / tailor report --children: %.1fx the time\n",
		time["perf report --children --stdio -g none --sort sym"] / time[ch]
	printf "perf script / tailor report (table): %.1fx the time\n", time["perf script"] / time[table]
	n = split("pprof folded chrome json", f, " ")
	for (i = 1; i <= n; i++)
		printf "tailor report -f %s: %.2fx the table'"'"'s time, %.2fx its max RSS\n", f[i],
			time["tailor report -f " f[i]] / time[table], rss["tailor report -f " f[i]] / rss[table]
     }' "$work/g.results"

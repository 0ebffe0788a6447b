#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# readers_test.sh [BUILD_DIR]: tailor's exports opened by real readers
# nobody here wrote, in a real browser: speedscope (npm) in Debian's
# headless Chromium imports the Chrome trace and the folded stacks; the
# HTML report renders (screenshot: not blank, its plots drawn); go tool
# pprof reads the pprof.  Once on a synthetic profile whose every sample
# is known (counts compared), once on a real one: perf record of the
# example engine, natively; and speedscope imports the sampled call
# stacks of a perf record -g trace.  A reader that is missing fails the test
# (scripts/setup.sh installs them), it never skips.
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
tailor=$build/userspace/tailor
synth=$build/userspace/synth_profile
engine=$build/examples/tailor-engine
wl=$build/workloads
check_mjs=$top/tests/export/browser/check.mjs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
marker() { grep -n "golden: $2" "$1" | cut -d: -f1; }
fact() { sed -n "s/^$1: //p" "$2" | head -1; }

# browser NAME KIND FILE [EXTRA...]: check.mjs on FILE; facts in $work/NAME.out
browser() {
	local name=$1 kind=$2 file=$3
	shift 3
	node "$check_mjs" "$kind" "$file" --screenshot "$work/$name.png" "$@" \
		>"$work/$name.out" 2>"$work/$name.err"
}

for f in "$tailor" "$synth" "$engine" "$wl/tw_ops"; do
	[ -x "$f" ] || { not_ok "$f missing: make && make -C userspace test-tools"; tap_totals; exit 1; }
done

# ---- a synthetic profile: two threads, three operators, every count known
"$wl/tw_ops" --dict "$work/ops.dict" 0 0 0
src=$top/tests/workloads/tw_ops.c
{
	printf '3000\t%s\t0\t1000\n' "$wl/tw_ops:$src:$(marker "$src" scan)"
	printf '2000\t%s\t2\t1001\n' "$wl/tw_ops:$src:$(marker "$src" probe)"
	printf '1000\t%s\t3\t1000\n' "$wl/tw_ops:$src:$(marker "$src" combine)"
	printf '500\tkernel\t0\t1001\n'
} >"$work/spec"
"$synth" -R -o "$work/ops.rec" "$work/spec" >/dev/null
total=6500
"$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -f chrome -o "$work/trace.json" 2>/dev/null
"$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -f folded -o "$work/stacks.folded" 2>/dev/null
"$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" --html "$work/report.html" >/dev/null 2>&1

if browser trace speedscope "$work/trace.json"; then
	imp=$(fact importer "$work/trace.out") profiles=$(fact profiles "$work/trace.out")
	if [ "$imp" = "Trace Event Format profile" ] && [ "$profiles" = 2 ] &&
	   grep -q 'tid 1000 (tid 1000)"' "$work/trace.out"; then
		ok "speedscope imports the Chrome trace as a Trace Event Format profile, a track per thread"
	else
		not_ok "speedscope on the Chrome trace: importer '$imp', $profiles profiles" "$work/trace.out"
	fi
else
	not_ok "speedscope cannot import the Chrome trace" "$work/trace.err"
fi
if browser stacks speedscope "$work/stacks.folded"; then
	imp=$(fact importer "$work/stacks.out")
	if [ "$imp" = "collapsed stack format" ] &&
	   grep -Eq "weight=$total( |$)" "$work/stacks.out"; then
		ok "speedscope imports the folded stacks (collapsed stack format), all $total samples"
	else
		not_ok "speedscope on the folded stacks: importer '$imp'" "$work/stacks.out"
	fi
else
	not_ok "speedscope cannot import the folded stacks" "$work/stacks.err"
fi
if browser report html "$work/report.html"; then
	svgs=$(fact svgs "$work/report.out")
	# Two threads: the activity plot and the threads' lanes.
	if [ "${svgs:-0}" -ge 2 ]; then
		ok "the HTML report renders in Chromium: not blank, $svgs plots drawn (activity, lanes)"
	else
		not_ok "the HTML report rendered no plot" "$work/report.out"
	fi
else
	not_ok "the HTML report does not render" "$work/report.err"
fi

# ---- a real profile: perf record of the engine, natively
# With context switches: the trace gets its threads' state tracks, the
# HTML report its parallelism section.
if ! perf record -q -e cpu-clock -F 4000 --intr-regs=r15 --switch-events -o "$work/engine.data" -- \
	"$engine" -s 0.05 -d "$work/fig3.dict" -w "$work/gen" fig3 >"$work/engine.log" 2>&1; then
	not_ok "perf record of the example engine" "$work/engine.log"
	tap_totals
	exit 1
fi
"$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" -f json >"$work/table.json" 2>/dev/null
engine_total=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"])' \
	"$work/table.json" 2>/dev/null)
"$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" -f chrome -o "$work/engine.json" 2>/dev/null
"$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" -f folded -o "$work/engine.folded" 2>/dev/null
"$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" -f pprof -o "$work/engine.pb.gz" 2>/dev/null
"$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" --html "$work/engine.html" >/dev/null 2>&1
if browser engine-trace speedscope "$work/engine.json" &&
   [ "$(fact importer "$work/engine-trace.out")" = "Trace Event Format profile" ] &&
   grep -q 'tailor-engine' "$work/engine-trace.out" &&
   grep -q '(states)' "$work/engine-trace.out"; then
	ok "speedscope imports the engine's Chrome trace, its threads named after their processes, their states beside"
else
	not_ok "speedscope on the engine's Chrome trace" "$work/engine-trace.err"
fi
if browser engine-stacks speedscope "$work/engine.folded" &&
   grep -Eq "weight=$engine_total( |$)" "$work/engine-stacks.out"; then
	ok "speedscope imports the engine's folded stacks: $engine_total samples, as the table"
else
	not_ok "speedscope on the engine's folded stacks ($engine_total samples)" "$work/engine-stacks.out"
fi
if browser engine-report html "$work/engine.html"; then
	ok "the engine's HTML report renders in Chromium"
else
	not_ok "the engine's HTML report" "$work/engine-report.err"
fi
# ---- call stacks: perf record -g of hot_lines (frame pointers everywhere)
# The trace's sampled stacks are what speedscope imports of it (not the
# slices), a profile per thread: every frame, weighted by the time from
# each sample to the next -- so a frame only the thread's last sample has
# (or one with the next sample's timestamp) weighs nothing and is not
# among speedscope's frames.
if clang -std=gnu11 -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	"$top/tests/symbols/hot_lines.c" -o "$work/calls" >"$work/calls.log" 2>&1 &&
   perf record -q -g -e cpu-clock:u -c 250000 -o "$work/calls.data" -- "$work/calls" 20 \
	>>"$work/calls.log" 2>&1 &&
   "$tailor" report -i "$work/calls.data" -f chrome -o "$work/calls.json" 2>>"$work/calls.log"; then
	want=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
s = t["samples"]
frames, by_thread = t["stackFrames"], {}
for e in s:
    by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
seen = set()
for run in by_thread.values():
    for a, b in zip(run, run[1:]):
        f = str(a["sf"]) if b["ts"] > a["ts"] else None
        while f:
            seen.add((frames[f]["name"], frames[f]["category"]))
            f = str(frames[f]["parent"]) if "parent" in frames[f] else None
print(len(seen), s[-1]["ts"] - s[0]["ts"])' \
		"$work/calls.json" 2>>"$work/calls.log")
	if browser calls speedscope "$work/calls.json" &&
	   [ "$(fact importer "$work/calls.out")" = "Trace Event Format profile" ] &&
	   [ "$(fact profiles "$work/calls.out")" = 1 ] &&
	   [ "$(fact frames "$work/calls.out")" = "${want% *}" ] &&
	   grep -Eq "weight=${want#* } microseconds" "$work/calls.out"; then
		ok "speedscope imports a -g Chrome trace's sampled stacks: ${want% *} frames, ${want#* } us"
	else
		not_ok "speedscope on a -g Chrome trace's sampled stacks (frames, us: $want)" "$work/calls.out"
	fi
else
	not_ok "hot_lines under perf record -g, and its Chrome trace" "$work/calls.log"
fi
if command -v go >/dev/null &&
   go tool pprof -top -sample_index=samples "$work/engine.pb.gz" >"$work/top" 2>&1 &&
   grep -q "of $engine_total total" "$work/top"; then
	ok "go tool pprof reads the engine's profile: $engine_total samples, as the table"
else
	not_ok "go tool pprof on the engine's profile ($engine_total samples)" "$work/top"
fi

tap_totals

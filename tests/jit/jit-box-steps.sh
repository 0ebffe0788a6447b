#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# jit-box-steps.sh TAILOR DIR OUT: JITs nobody here wrote, under tailor
# record in the test box (busybox sh; tests/jit/jit_box_test.sh runs it).
# DIR holds hot.js and loops.bc.  For node --perf-prof (V8's jitdump) and
# --perf-basic-prof (its perf map), and for lli-14 running loops.bc with
# LLVM's perf listener, writes OUT/NAME.csv (tailor report of the
# recording, which holds the JIT's process alone: functions for node,
# lines for lli), OUT/NAME.dump (the
# recording's carried files, from tailor dump) and OUT/NAME.log (tailor
# record's and report's messages).
set -eu

tailor=$1 dir=$2 out=$3
mkdir -p "$out"

# record NAME CMD...: CMD under tailor record, in OUT/NAME/ (where V8
# writes its jitdump); prints the recorded pid.
record() {
	r_name=$1
	shift
	mkdir -p "$out/$r_name"
	if ! (cd "$out/$r_name" && "$tailor" record -o "$out/$r_name.rec" -- "$@" \
		>"$out/$r_name.out" 2>"$out/$r_name.log"); then
		echo "$r_name: tailor record failed" >&2
		cat "$out/$r_name.out" "$out/$r_name.log" >&2
		return 1
	fi
	"$tailor" dump "$out/$r_name.rec" | grep '^carried: ' >"$out/$r_name.dump" || true
	cat "$out/$r_name.log"
}

for mode in perf-prof perf-basic-prof; do
	echo "== tailor record -- node --$mode hot.js"
	start=$(date +%s)
	record "node-$mode" node "--$mode" "$dir/hot.js"
	echo "  $(($(date +%s) - start)) s"
	"$tailor" report -i "$out/node-$mode.rec" -l function -f csv --top 0 \
		>"$out/node-$mode.csv" 2>>"$out/node-$mode.log"
	head -n 4 "$out/node-$mode.csv"
done

echo "== tailor record -- lli-14 -jit-kind=mcjit loops.bc"
start=$(date +%s)
export JITDUMPDIR="$out/lli"
# One instruction per translation block, so that the loops' samples land
# where they ran (see jit_box_test.sh).
box-singlestep on
record lli lli-14 -jit-kind=mcjit "$dir/loops.bc"
box-singlestep off
unset JITDUMPDIR
echo "  $(($(date +%s) - start)) s"
"$tailor" report -i "$out/lli.rec" -l line -f csv --top 0 >"$out/lli.csv" 2>>"$out/lli.log"
head -n 4 "$out/lli.csv"

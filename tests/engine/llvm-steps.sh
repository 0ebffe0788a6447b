#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# llvm-steps.sh TAILOR ENGINE OUT: fig3 recorded with the tag word under
# each backend of the example engine, C and LLVM, in one boot (a
# profile-engine.sh --llvm STEPS script; busybox sh in the test box).
# Writes OUT/B.out (the engine's output), OUT/B.csv (the engine process's
# operator report of the query), OUT/B-all.csv (of the whole process),
# OUT/B.src (the query's samples on the generated file's lines),
# OUT/B-fn.csv (the process's function report), OUT/B.dump
# (tailor dump of the recording's header and carried files) and
# OUT/B.rec.log (tailor record's messages) for B = c, llvm.
#
# In the test box the recordings run with QEMU translating one instruction
# per block (box-singlestep, which boot.sh provides), so that a timer
# sample lands after the instruction it interrupted, not at the end of a
# block where each compiler's layout puts it.
#
# Environment: DEMO_ENGINE_ARGS, the engine's options for the run (split
# at spaces; default "-s 0.05 -n 10 -j 2 -r 0"); llvm_box_test.sh passes
# tests/lib/backend-shares.sh's run, with known work on each operator.
set -eu

tailor=$1 engine=$2 out=$3
engine_args=${DEMO_ENGINE_ARGS:--s 0.05 -n 10 -j 2 -r 0}
mkdir -p "$out"

# report OUTFILE ARGS...: tailor report of $b's recording, timed, under a
# time limit that says so when it is hit.
report() {
	r_out=$1
	shift
	r_start=$(date +%s)
	if ! timeout 300 "$tailor" report -i "$out/$b.rec" "$@" >"$out/$r_out"; then
		echo "tailor report -i $b.rec $*: failed or ran over 300 s"
		exit 1
	fi
	echo "  tailor report $*: $(($(date +%s) - r_start)) s"
}

# precise on|off: box-singlestep where there is one, that is, in the box.
precise() {
	if command -v box-singlestep >/dev/null; then
		box-singlestep "$1"
	fi
}

for b in c llvm; do
	echo "== tailor record --tag-word tailor_tag_word -- tailor-engine --backend $b fig3"
	precise on
	# shellcheck disable=SC2086 # the options, split at spaces
	"$tailor" record --tag-word tailor_tag_word -o "$out/$b.rec" -- \
		"$engine" --backend "$b" $engine_args -d "$out/$b.dict" \
		-w "$out/gen-$b" -t "$out/$b.times" fig3 >"$out/$b.out" 2>"$out/$b.rec.log" || {
		cat "$out/$b.out" "$out/$b.rec.log"
		exit 1
	}
	precise off
	grep '^check: \|^compiled in' "$out/$b.out"
	cat "$out/$b.rec.log"
	pid=$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$out/$b.times" | head -n 1)
	report "$b.csv" -d "$out/$b.dict" --pid "$pid" --query fig3 -f csv --top 0
	report "$b-all.csv" -d "$out/$b.dict" --pid "$pid" -f csv --top 0
	report "$b.src" -d "$out/$b.dict" --pid "$pid" --query fig3 -v source --source-file fig3.c
	report "$b-fn.csv" --pid "$pid" -l function -f csv --top 0
	"$tailor" dump "$out/$b.rec" | grep -i 'carried' >"$out/$b.dump" || true
	cat "$out/$b.csv"
done

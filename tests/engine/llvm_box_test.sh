#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# llvm_box_test.sh: the engine's LLVM backend under tailor record in the
# test box (6.1, TCG), against its C backend in the same boot
# (tests/engine/llvm-steps.sh).  The LLVM run gives the reference's
# result; its recording carries LLVM's jitdump; its report names the JIT's
# functions from it: they hold at least a quarter of the query's samples,
# and samples at addresses nothing names are under 1% of theirs (not
# compared with the C backend's count: in one boot LLVM's code ran twice
# as long as gcc's, 1867 samples against 693 (2026-11-24), in another
# 1027 against 786); and the shared runtime's samples are all
# attributed, which under LLVM only the tag word's task field does (clang
# cannot reserve r15): no sample left in the engine's binary or under a
# tag without a link.
#
# The operator shares of the two backends are within 5 points of each
# other, as natively (tests/engine/llvm_backend_test.sh), on that test's
# run (tests/lib/backend-shares.sh: the same known work on the scan, the
# join and the group-by, most of each operator's time) with 6
# repetitions.  Under TCG a share is the host's time to emulate each
# compiler's code, which varies from boot to boot: on fig3 as the demo
# runs it (-s 0.05 -j 2, no known work) GroupBy#4 took 50.2-54.8% under
# C and 50.4-55.9% under LLVM over six boots, and the worst gap was 1.2
# to 5.1 points over nine (2026-11-24 to 28); one boot ran the C
# backend six times at 51.3, 50.6, 50.4, 49.5, 49.3 and 48.6%.  With the
# known work the worst gap was 0.9, 0.9, 1.0, 1.3, 1.6 and 0.2 points in
# six boots (2026-11-28), so 5 points is the native test's bound with
# room, and still far below what a misattribution moves (a third of the
# samples per operator).  The recordings run with QEMU translating one
# instruction per block (box-singlestep): otherwise a timer interrupt
# waits for the end of the translation block, a sample lands after the
# block's last instruction, and where a block ends depends on the
# compiler's layout (fig3's divisions, which TCG emulates slowly, ended
# a block that gcc follows with the join's chain loop and clang with the
# group-by's own line: 8 to 13 points moved, 2026-11-23 and 24).
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/llvm-box-test
TAP_EXCERPT="tail"
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# shellcheck source=tests/lib/backend-shares.sh
. "$top/tests/lib/backend-shares.sh"
rm -rf "$out"
mkdir -p "$out"

if [ ! -f "$top/build/examples/tailor-engine-llvm.so" ] &&
   ! make -s -C "$top" examples >/dev/null 2>&1; then
	not_ok "the engine did not build"
	tap_totals
	exit 1
fi
if [ ! -f "$top/build/examples/tailor-engine-llvm.so" ]; then
	skip "no LLVM backend built (install llvm-14-dev)"
	tap_totals
	exit 0
fi

exports=()
for b in c llvm; do
	for f in "$b.out" "$b.csv" "$b-all.csv" "$b.src" "$b-fn.csv" "$b.dump" "$b.rec.log"; do
		exports+=(--export "$f")
	done
done
# The native comparison's run, with fewer repetitions: each is slow single-stepped.
DEMO_ENGINE_ARGS="${backend_shares_args[*]} -n 6" \
	"$top/scripts/profile-engine.sh" --box --llvm --out "$out" "${exports[@]}" -- \
	"$top/tests/engine/llvm-steps.sh" >"$out/box.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^check: ok' "$out/llvm.out" 2>/dev/null; then
	ok "tailor-engine --backend llvm under tailor record in the box: result checked"
else
	not_ok "the box run (exit $rc)" "$out/box.log"
	tap_totals
	exit 1
fi
if grep -q 'jitdump' "$out/llvm.dump"; then
	ok "the recording carries LLVM's jitdump ($(grep -m1 jitdump "$out/llvm.dump" | tr -s ' '))"
else
	not_ok "no jitdump carried in the LLVM run's recording" "$out/llvm.rec.log"
fi
# pipeline_samples FN_CSV: the samples of the generated pipeline functions
pipeline_samples() { awk -F, '$1 ~ /^tailor_pipeline_[0-9]+$/ { n += $3 } END { print n + 0 }' "$1"; }
named=$(pipeline_samples "$out/llvm-fn.csv")
c_named=$(pipeline_samples "$out/c-fn.csv")
unnamed=$(awk -F, '$2 == "unknown" { n += $3 } END { print n + 0 }' "$out/llvm-fn.csv")
query=$(awk -F, '$2 == "component" { n += $3 } END { print n + 0 }' "$out/llvm.csv")
if [ "$named" -gt 0 ] && [ $((named * 4)) -ge "$query" ] && [ $((unnamed * 100)) -lt "$named" ]; then
	ok "the JIT's functions are named from the carried jitdump: tailor_pipeline_* hold $named of the query's $query samples, $unnamed samples unnamed (the C backend's functions: $c_named)"
else
	not_ok "tailor_pipeline_* hold $named of the query's $query samples, $unnamed unnamed" "$out/llvm-fn.csv"
fi
# row_share CSV NAME: the share of the row named exactly NAME, 0 if none
row_share() { awk -F, -v n="$2" '$1 == n { s = $4 } END { print s + 0 }' "$1"; }
engine=$(row_share "$out/llvm-all.csv" "[tailor-engine]")
nolink=$(row_share "$out/llvm-all.csv" "[tag without link]")
if awk -v e="$engine" -v n="$nolink" 'BEGIN { exit !(e < 0.5 && n < 0.5) }'; then
	ok "under LLVM the runtime's samples are all attributed by the tag word ([tailor-engine] $engine%, [tag without link] $nolink%)"
else
	not_ok "under LLVM [tailor-engine] holds $engine% and [tag without link] $nolink%" "$out/llvm-all.csv"
fi
# share CSV NAME: the share of the row whose name starts with NAME
share() { awk -F, -v n="$2" 'index($1, n) == 1 { print $4; exit }' "$1"; }
if grep -q '^box-singlestep: on' "$out/box.log"; then
	worst=0 table=
	for op in "TableScan#1" "TableScan#2" "HashJoin#3" "GroupBy#4"; do
		l=$(share "$out/llvm.csv" "$op") c=$(share "$out/c.csv" "$op")
		table="$table, $op ${l:-none}% against ${c:-none}%"
		worst=$(awk -v l="${l:--100}" -v c="${c:--100}" -v w="$worst" \
			'BEGIN { d = l > c ? l - c : c - l; print (d > w ? d : w) }')
	done
	if awk -v w="$worst" 'BEGIN { exit !(w <= 5) }'; then
		ok "fig3's operator shares, LLVM against C, within 5 points (worst $worst)${table}"
	else
		not_ok "fig3's operator shares, LLVM against C, $worst points apart${table}" "$out/box.log"
	fi
else
	not_ok "the recordings did not run single-stepped (box-singlestep), so their shares are not comparable" "$out/box.log"
fi
tap_totals

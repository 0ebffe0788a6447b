#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# demo_test.sh: make demo's path end to end in the test box (6.1, TCG):
# tailor.ko records the example engine compiling and running query fig3
# with a C compiler in the box; the operator report must name every
# operator of the plan, the join and the group-by must carry at least a
# third of all samples (the rest: data generation, kernel, loading), the shared runtime's samples must be attributed by tag, and
# the HTML report must come back out of the box.  Then 'twojoins': both
# joins, running the same precompiled functions, get samples of their own.
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/demo-test
TAP_EXCERPT=tail
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
rm -rf "$out" "$top/build/demo/report.html"
mkdir -p "$out"

# samples OUT ROW: the samples column of an operator table row
samples() { awk -v row="$2" 'index($0, row) { print $2; exit }' "$1"; }

"$top/scripts/demo.sh" --box fig3 >"$out/fig3.out" 2>"$out/fig3.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^check: ok' "$out/fig3.out"; then
	ok "make demo: the box ran fig3 under tailor record, result checked"
else
	not_ok "make demo (exit $rc)" "$out/fig3.err"
fi
table=$out/table
sed -n '/^== operator report/,/^== annotated plan/p' "$out/fig3.out" >"$table"
missing=
for row in "TableScan#1 part" "TableScan#2 lineitem" "HashJoin#3" "GroupBy#4"; do
	grep -q "$row" "$out/fig3.out" || missing="$missing $row"
done
if [ -z "$missing" ]; then
	ok "the report and plan name every operator"
else
	not_ok "operators missing:$missing" "$out/fig3.out"
fi
total=$(sed -n 's/.*: \([0-9]*\) samples, event.*/\1/p' "$table" | head -n 1)
join=$(samples "$table" "HashJoin#3")
group=$(samples "$table" "GroupBy#4")
if [ -n "$total" ] && [ -n "$join" ] && [ -n "$group" ] && [ "$total" -gt 500 ] &&
   [ $((join + group)) -gt $((total / 3)) ]; then
	ok "join and group-by carry over a third of all samples ($join + $group of $total)"
else
	not_ok "join $join + group-by $group of $total samples" "$table"
fi
bytag=$(sed -n 's/^#   \([0-9]*\) samples.*attributed by the tag register.*/\1/p' "$table" | head -n 1)
if [ -n "$bytag" ] && [ "$bytag" -gt 0 ]; then
	ok "samples in the shared runtime are attributed by tag ($bytag)"
else
	not_ok "no samples attributed by tag" "$table"
fi
if grep -q '^# legend: .*HashJoin#3' "$out/fig3.out" && [ -s "$top/build/demo/report.html" ] &&
   grep -q '<svg' "$top/build/demo/report.html"; then
	ok "timeline printed; HTML report with its plots exported from the box"
else
	not_ok "timeline / HTML report" "$out/fig3.out"
fi

# The profile leaves the box for readers here: go tool pprof's per-operator
# counts are the box's table's; the trace's slices nest.
demo=$top/build/demo
if command -v go >/dev/null && [ -s "$demo/profile.pb.gz" ] &&
   go tool pprof -traces -sample_index=samples -tagfocus='operator=^HashJoin#3' "$demo/profile.pb.gz" \
	2>/dev/null | python3 "$top/tests/golden/export_check.py" traces >"$out/join.folded" &&
   [ "$(awk '{ s += $NF } END { print s + 0 }' "$out/join.folded")" = "$join" ] &&
   python3 "$top/tests/golden/export_check.py" nested "$demo/trace.json" >"$out/nest" 2>&1 &&
   [ "$(awk '{ s += $NF } END { print s + 0 }' "$demo/stacks.folded")" = "$total" ]; then
	ok "pprof, folded stacks and Chrome trace exported from the box: the join's $join samples in pprof, all $total folded, slices nested"
else
	not_ok "exports from the box (join $join of $total)" "$out/nest"
fi

"$top/scripts/demo.sh" --box twojoins >"$out/two.out" 2>"$out/two.err"
rc=$?
sed -n '/^== operator report/,/^== annotated plan/p' "$out/two.out" >"$table"
j4=$(samples "$table" "HashJoin#4")
j5=$(samples "$table" "HashJoin#5")
if [ $rc -eq 0 ] && [ -n "$j4" ] && [ -n "$j5" ] && [ "$j4" -gt 0 ] && [ "$j5" -gt 0 ]; then
	ok "twojoins: both joins get their own samples ($j4, $j5) though they share the runtime"
else
	not_ok "twojoins (exit $rc, joins '$j4' '$j5')" "$out/two.out"
fi
tap_totals

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
# make demo's own concurrent part must show each client's query runs and
# the workers' lanes with their states.  Last, two clients run fig3 and
# twojoins at once on two workers: every client's run of a query keeps
# the operator shares of the query alone.  make demo's EXPLAIN ANALYZE, by
# tailor.ko: every operator of fig3 with its time and its rows, the scans'
# rows the tables', the shares adding up to 100.  The recording's samples
# are packed to at most 12 bytes each.
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
# Packed samples (issue 17's goal): IP, TSC, r15, the entry IP and the
# tag word in at most 12 bytes a sample, record headers included.
bps=$(sed -n 's/^# recording: bytes_per_sample: //p' "$out/fig3.out")
nsamples=$(sed -n 's/^# recording: samples: //p' "$out/fig3.out")
if [ -n "$bps" ] && [ "${nsamples:-0}" -gt 500 ] && awk -v b="$bps" 'BEGIN { exit !(b > 0 && b <= 12) }'; then
	ok "the recording's samples take $bps bytes each, packed ($nsamples samples; 48 raw)"
else
	not_ok "the recording's samples take '$bps' bytes each ($nsamples samples)" "$out/fig3.out"
fi
table=$out/table
sed -n '/^== operator report of the engine/,/^== annotated plan/p' "$out/fig3.out" >"$table"
missing=
sed -n '/^== annotated plan/,/^== activity timeline/p' "$out/fig3.out" >"$out/plan"
for row in "TableScan#1 part" "TableScan#2 lineitem" "HashJoin#3" "GroupBy#4"; do
	grep -q "$row" "$table" || missing="$missing $row (report)"
	grep -q "$row" "$out/plan" || missing="$missing $row (plan)"
done
if [ -z "$missing" ]; then
	ok "the report and plan name every operator"
else
	not_ok "operators missing:$missing" "$out/fig3.out"
fi
total=$(sed -n 's/.*: \([0-9]*\) samples, event.*/\1/p' "$table" | head -n 1)
own=$(sed -n 's/^# filters left \([0-9]*\) samples.*/\1/p' "$table" | head -n 1)
join=$(samples "$table" "HashJoin#3")
group=$(samples "$table" "GroupBy#4")
if [ -n "$own" ] && [ -n "$join" ] && [ -n "$group" ] && [ "$own" -gt 500 ] &&
   [ $((join + group)) -gt $((own / 3)) ]; then
	ok "join and group-by carry over a third of the engine's samples ($join + $group of $own; $total with its compiler)"
else
	not_ok "join $join + group-by $group of the engine's $own samples" "$table"
fi
compiler=$(sed -n '/^== every process/,/^== operator report of the engine/p' "$out/fig3.out" |
	awk '$3 == "[cc1]" { print $2 }')
if [ -n "$compiler" ] && [ "$compiler" -gt 0 ] && [ -n "$own" ] && [ "$own" -lt "$total" ]; then
	ok "the C compiler the engine ran is in the profile, apart ([cc1]: $compiler samples)"
else
	not_ok "the compiler's processes in the profile ([cc1] '$compiler')" "$out/fig3.out"
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

# make demo's concurrent part: two clients running fig3 and twojoins at
# once on two workers; each client's run of each query is a row of its own
# (the tag word), and the lanes show the workers with a line of states.
sed -n '/^== samples per query run/,/^== each query run/p' "$out/fig3.out" >"$out/runs"
sed -n "/^== the workers' lanes/,\$p" "$out/fig3.out" >"$out/lanes"
runs=$(grep -cE '(fig3|twojoins) \(client [12]\)' "$out/runs")
workers=$(grep -cE '^ +[0-9]+ +[0-9]+ +worker ' "$out/lanes")
# A worker's lane, then its states: running ('=') some of the time.
states=$(awk '/^ +[0-9]+ +[0-9]+ +worker / { w = 1; next }
	w && length($0) > 20 && /^[ =~_]*=[ =~_]*$/ { n++ } { w = 0 } END { print n + 0 }' "$out/lanes")
if grep -q '^check: ok' "$out/fig3.out" && [ "$runs" -eq 4 ] && [ "$workers" -ge 2 ] &&
   [ "$states" -eq "$workers" ] && grep -q '^# states, ' "$out/lanes"; then
	ok "make demo's concurrent run: 4 query runs apart by the tag word; lanes of $workers workers, each with its states"
else
	not_ok "concurrent part of make demo ($runs query runs, $workers worker lanes, $states state lines)" "$out/lanes"
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
sed -n '/^== operator report of the engine/,/^== annotated plan/p' "$out/two.out" >"$table"
j4=$(samples "$table" "HashJoin#4")
j5=$(samples "$table" "HashJoin#5")
if [ $rc -eq 0 ] && [ -n "$j4" ] && [ -n "$j5" ] && [ "$j4" -gt 0 ] && [ "$j5" -gt 0 ]; then
	ok "twojoins: both joins get their own samples ($j4, $j5) though they share the runtime"
else
	not_ok "twojoins (exit $rc, joins '$j4' '$j5')" "$out/two.out"
fi
# Concurrent queries: fig3 and twojoins alone on two workers, then two
# clients running both at once on the same two workers.  Each client's run
# of a query is told apart by the tag word only (the same generated code
# serves both clients).
conc=$out/concurrent
names="alone-fig3 alone-twojoins mixed"
exports=()
for name in $names; do exports+=(--export "$name.folded" --export "$name.out" --export "$name.qcsv"); done
"$top/scripts/profile-engine.sh" --box --out "$conc" "${exports[@]}" -- \
	"$top/tests/engine/concurrent-steps.sh" >"$out/concurrent.log" 2>&1
rc=$?
checks=$(cat "$conc/mixed.out" 2>/dev/null | grep -c '^check: ok')
if [ $rc -eq 0 ] && [ "$checks" -eq 4 ]; then
	ok "2 clients x 2 queries on 2 workers under tailor record: all 4 results equal the reference"
else
	not_ok "concurrent run in the box (exit $rc, $checks checks ok)" "$out/concurrent.log"
fi
# shares FOLDED: "query<TAB>operator<TAB>percent of the query's samples"
# for the plan's operators (names with '#'), the query prefix dropped.
shares() {
	awk '{
		n = $NF; sub(/ [0-9]+$/, "")
		k = split($0, f, ";"); q = f[1]; op = k > 1 ? f[2] : "(none)"
		sub(/^[a-z0-9]+: /, "", op)
		tot[q] += n; if (op ~ /#/) s[q "\t" op] += n
	} END {
		for (key in s) { split(key, p, "\t"); printf "%s\t%s\t%.2f\n", p[1], p[2], 100 * s[key] / tot[p[1]] }
		for (q in tot) printf "%s\t(samples)\t%d\n", q, tot[q]
	}' "$1" | sort
}
if [ $rc -eq 0 ]; then
	{ shares "$conc/alone-fig3.folded"; shares "$conc/alone-twojoins.folded"; } >"$out/alone.shares"
	shares "$conc/mixed.folded" >"$out/mixed.shares"
	# For every run of a query by a client: its samples, and its operators'
	# largest distance from the shares of the query run alone.
	awk -F'\t' '
		NR == FNR { if ($2 != "(samples)") alone[$1 "\t" $2] = $3; next }
		{
			q = $1; base = q; sub(/ \(client [0-9]+\)$/, "", base)
			if (q == base) next
			if ($2 == "(samples)") { n[q] = $3; next }
			d = $3 - alone[base "\t" $2]; if (d < 0) d = -d
			if (d > worst[q]) { worst[q] = d; at[q] = $2 }
			seen[q] = 1
		}
		END { for (q in n) printf "%s\t%d\t%.2f\t%s\n", q, n[q], worst[q], at[q] }' \
		"$out/alone.shares" "$out/mixed.shares" | sort >"$out/distance"
fi
runs=$(wc -l <"$out/distance" 2>/dev/null || echo 0)
# Told apart by the tag word alone, each client's run of a query must get
# samples of its own, and none of the other query's operators: a run
# attributed by the shared code's links alone would give every sample to
# the first run.  (0.02% of one run, one sample, was seen in 3 runs.)
foreign=$(awk -F'\t' '
	NR == FNR { if ($2 != "(samples)") ops[$1 "\t" $2] = 1; next }
	{
		q = $1; sub(/ \(client [0-9]+\)$/, "", q)
		if (q == $1 || $2 == "(samples)") next
		if (!((q "\t" $2) in ops)) bad[$1] += $3
	}
	END { for (r in bad) if (bad[r] >= 0.5) { printf "%s%s %.2f%%", s, r, bad[r]; s = "; " } }' \
	"$out/alone.shares" "$out/mixed.shares" 2>/dev/null)
if [ $rc -eq 0 ] && [ "$runs" -eq 4 ] && [ -z "$foreign" ] &&
   awk -F'\t' '$2 < 1000 { bad = 1 } END { exit bad }' "$out/distance"; then
	ok "each client's run of a query: 1000+ samples of its own, no other query's operators"
else
	cat "$out/alone.shares" "$out/mixed.shares" "$out/distance" >"$out/why" 2>/dev/null
	not_ok "per-client runs told apart by the tag word (foreign operators: ${foreign:-none})" "$out/why"
fi
# The operator shares of each run against the query run alone, printed,
# not judged: on this TCG box the same query alone differs by up to 6.6
# points between runs (fig3's HashJoin#3: 58.7 to 65.3% in three runs,
# 2026-11-23), and concurrency shifts real cost too (a run that overlapped
# twojoins took 34% more CPU by the engine's own clock, its hash join most).
# EXPLAIN ANALYZE: the operator lines between its header and the runtime line.
sed -n '/^EXPLAIN ANALYZE fig3/,/^(the query/p' "$out/fig3.out" >"$out/explain"
lineitem=$(sed -n 's/^data: .*: \([0-9]*\) lineitem.*/\1/p' "$out/fig3.out" | head -n 1)
part=$(sed -n 's/^data: .*, \([0-9]*\) part,.*/\1/p' "$out/fig3.out" | head -n 1)
ea=$(awk -v lineitem="${lineitem:-x}" -v part="${part:-x}" '
	/^ *[A-Za-z]+#[0-9]/ && $(NF-3) == "ms" {
		ops++; share += $(NF-2)
		if ($0 ~ /TableScan#[0-9]+ lineitem/ && $NF == lineitem) scans++
		if ($0 ~ /TableScan#[0-9]+ part/ && $NF == part) scans++
	}
	/^\(the query/ { share += $(NF-1) }
	END { printf "%d %d %.1f", ops, scans, share }' "$out/explain")
read -r ea_ops ea_scans ea_share <<<"$ea"
if grep -q '^profile: tailor record at ' "$out/explain" && [ "$ea_ops" -eq 4 ] &&
   [ "$ea_scans" -eq 2 ] && awk -v s="$ea_share" 'BEGIN { exit !(s >= 99.5 && s <= 100.5) }'; then
	ok "EXPLAIN ANALYZE by tailor.ko: 4 operators with times and rows, the scans' rows the tables', shares add to $ea_share%"
else
	echo "operators $ea_ops, scans with their table's rows $ea_scans, shares $ea_share; lineitem $lineitem, part $part" >>"$out/explain"
	not_ok "make demo's EXPLAIN ANALYZE" "$out/explain"
fi
if [ -s "$out/distance" ]; then
	echo "# operator shares against the query alone, largest distance per run: $(awk -F'\t' '{ printf "%s%s %d samples, %.1f points (%s)", s, $1, $2, $3, $4; s = "; " }' "$out/distance")"
fi

tap_totals

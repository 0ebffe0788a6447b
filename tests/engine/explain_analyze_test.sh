#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# explain_analyze_test.sh [BUILD_DIR]: tailor-engine --count-rows and
# --explain-analyze, natively (perf record -e cpu-clock; tailor.ko where
# loaded is the other profiler it picks, run in the test box by make demo).
#   - --count-rows: every query at two scales counts rows that pass the
#     engine's own check (scans against their tables, the group-by's input
#     against the result's count(*), its output against the result).
#   - --explain-analyze: the plan with every operator, rows equal to the
#     counted run's operator by operator, samples equal to tailor report's
#     operator table of the kept recording, a runtime line of no negative
#     samples, shares that add up to 100 and times to the measured CPU
#     time (by construction, but for a bad parse); and it measures: the oracle's
#     known work added to the lineitem scan makes that scan the costliest
#     operator, at a share at least the known work's share of the CPU time
#     less 10 points.
#   - -w DIR keeps the recording, dictionary and times; bad use (two
#     queries, clients, -d, a bad --profiler or --extra) is refused
#     with exit 2 and a message naming it; a profiler that cannot run
#     fails with exit 1 and says so.
# TAILOR_ENGINE: the engine to test (the ASan/UBSan build, say).
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/engine-test.sh
. "$top/tests/lib/engine-test.sh"
# The tailor --explain-analyze runs.
export TAILOR=$tailor
require "$engine" "$tailor"

# The fixed queries, as --help lists them.
nr_queries=$("$engine" --help | sed -n '/^queries (/,/^$/p' | grep -c '^  [a-z0-9]')
for scale in 0.002 0.03; do
	"$engine" --count-rows -s "$scale" -r 0 -w "$work/gen" all >"$work/count.out" 2>&1
	rc=$?
	checks=$(grep -c '^check: row counts ok' "$work/count.out")
	if [ "$rc" -eq 0 ] && [ "$nr_queries" -ge 6 ] && [ "$checks" -eq "$nr_queries" ]; then
		ok "--count-rows, scale $scale: the rows of all $nr_queries queries pass their check"
	else
		not_ok "--count-rows, scale $scale: exit $rc, $checks of $nr_queries row checks ok" \
			"$work/count.out"
	fi
done

# explain FILE ARGS...: tailor-engine --explain-analyze ARGS, stdout and
# stderr into FILE; its exit status.
explain() {
	local out=$1
	shift
	"$engine" --explain-analyze "$@" >"$out" 2>&1
}

if ! command -v perf >/dev/null || ! perf record -q -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
	skip "--explain-analyze under perf (no perf record -e cpu-clock here)"
	tap_totals
	exit $?
fi

# The plan's rows: "name ... ms share% samples rows" (indented by depth).
# Prints the lines "name|ms|share|samples|rows" for the operators.
plan_rows() {
	awk '/^operator  / { on = 1; next }
	     on && /^\(the query/ { print "runtime|" $(NF-3) "|" $(NF-1) "|" $NF "|"; on = 0; next }
	     on && NF >= 6 && $(NF-3) == "ms" {
		name = $0; sub(/^ +/, "", name); sub(/ +[0-9.]+ ms .*/, "", name)
		print name "|" $(NF-4) "|" $(NF-2) "|" $(NF-1) "|" $NF
	     }' "$1"
}

for q in fig3 q1 sfja; do
	explain "$work/$q.out" --profiler perf -s 0.03 -n 10 -w "$work/$q" "$q"
	rc=$?
	plan_rows "$work/$q.out" >"$work/$q.rows"
	# The counted rows of the same query, from a plain run, as N:rows.
	"$engine" --count-rows -s 0.03 -r 0 -w "$work/gen" -t "$work/$q.times" "$q" >/dev/null 2>&1
	want=$(sed -n 's/.* op_rows=\([0-9:,]*\).*/\1/p' "$work/$q.times" | tr ',' '\n' | sort | tr '\n' ' ')
	got=$(grep -v '^runtime|' "$work/$q.rows" |
		sed -n 's/^[A-Za-z]*#\([0-9]*\)[^|]*|[^|]*|[^|]*|[^|]*|\([0-9]*\)$/\1:\2/p' | sort | tr '\n' ' ')
	nops=$(grep -vc '^runtime|' "$work/$q.rows")
	# Each operator's samples as printed, against tailor report's own
	# operator table of the kept recording (fields from the end: a name
	# with a comma is quoted).
	mismatch=$(awk -F'|' 'FILENAME ~ /rows$/ { if ($1 != "runtime") printed[$1] = $4; next }
		FNR > 1 { n = split($0, g, ","); name = $0; sub(/,[^,]*,[^,]*,[^,]*$/, "", name)
			  gsub(/^"|"$/, "", name); table[name] = g[n - 1] }
		END { for (o in printed) if (printed[o] != table[o] + 0) printf "%s printed %s, table %s; ", o, printed[o], table[o] }' \
		"$work/$q.rows" "$work/$q/operators.csv")
	runtime=$(sed -n 's/^runtime|[^|]*|[^|]*|\(-*[0-9]*\)|$/\1/p' "$work/$q.rows")
	cpu=$(sed -n 's/^execution: \([0-9.]*\) ms CPU.*/\1/p' "$work/$q.out")
	sums=$(awk -F'|' -v cpu="${cpu:-0}" '{ share += $3; ms += $2 }
		END { printf "%.1f %.2f %.2f", share, ms, cpu }' "$work/$q.rows")
	read -r share_sum ms_sum cpu_ms <<<"$sums"
	if [ "$rc" -eq 0 ] && [ "$nops" -ge 3 ] && [ -n "$runtime" ] && [ "$runtime" -ge 0 ] &&
	   [ -n "$want" ] && [ "$got" = "$want" ] && [ -z "$mismatch" ] &&
	   awk -v s="$share_sum" -v m="$ms_sum" -v c="$cpu_ms" \
		'BEGIN { exit !(s >= 99.5 && s <= 100.5 && c > 0 && m >= c * 0.99 - 0.02 && m <= c * 1.01 + 0.02) }'; then
		ok "--explain-analyze $q: $nops operators, rows by operator $got, samples as tailor report's table, shares add to $share_sum%, times to $ms_sum of $cpu_ms ms"
	else
		echo "exit $rc; $nops operators; rows '$got', counted '$want'; runtime samples '$runtime'; samples: ${mismatch:-as the table}; shares $share_sum%, times $ms_sum of $cpu_ms ms" >>"$work/$q.out"
		TAP_EXCERPT="tail" not_ok "--explain-analyze $q: the plan, its rows, samples, shares and times" "$work/$q.out"
	fi
done

if [ -s "$work/fig3/profile.data" ] && [ -s "$work/fig3/query.dict" ] && [ -s "$work/fig3/times" ] &&
   grep -q "^files (recording, dictionary, times, generated code): $work/fig3\$" "$work/fig3.out"; then
	ok "-w DIR keeps the recording, the dictionary and the times, and says where"
else
	ls -la "$work/fig3" >>"$work/fig3.out" 2>&1
	TAP_EXCERPT="tail" not_ok "-w DIR keeps the run's files" "$work/fig3.out"
fi

# Known work on the lineitem scan (TableScan#2 in fig3): the engine's
# calibrated figure for it, against the scan's profiled time.
explain "$work/extra.out" --profiler perf -s 0.03 -n 10 -x 2=300 -w "$work/extra" fig3
rc=$?
plan_rows "$work/extra.out" >"$work/extra.rows"
known_ms=$(sed -n 's/.* exec_cpu_ns=\([0-9]*\).* extra_ns=\([0-9]*\).*/\1 \2/p' "$work/extra/times")
top_row=$(grep -v '^runtime|' "$work/extra.rows" | sort -t'|' -k3 -g -r | head -1)
if [ "$rc" -eq 0 ] && [ -n "$known_ms" ] && [ "${top_row%%|*}" = "TableScan#2 lineitem" ] &&
   awk -F'|' -v k="$known_ms" -v row="$top_row" 'BEGIN {
	split(k, t, " "); split(row, f, "|")
	known_share = 100 * t[2] / t[1]
	printf "# scan share %.1f%%, known work %.1f%% of the CPU time\n", f[3], known_share
	exit !(f[3] >= known_share - 10)
   }'; then
	ok "--extra 2=300: the lineitem scan is the costliest operator, its share at least the known work's less 10 points"
else
	echo "exit $rc; costliest '$top_row'; exec_cpu_ns and extra_ns: '$known_ms'" >>"$work/extra.out"
	TAP_EXCERPT="tail" not_ok "--extra 2=300 shows on the lineitem scan" "$work/extra.out"
fi

# Bad use: exit 2, a message naming the problem.
refused() {	# refused WHAT MESSAGE-PATTERN ARGS...
	local what=$1 pattern=$2
	shift 2
	explain "$work/bad.out" "$@"
	local rc=$?
	if [ "$rc" -eq 2 ] && grep -q -e "$pattern" "$work/bad.out"; then
		ok "refused: $what"
	else
		echo "exit $rc" >>"$work/bad.out"
		not_ok "refused: $what (exit 2 and '$pattern')" "$work/bad.out"
	fi
}
refused "two queries" "takes one query" fig3 q1
refused "--clients 2" "runs one client" -c 2 fig3
refused "-d with it" "writes its own dictionary" -d "$work/x.dict" fig3
refused "--profiler bogus" "invalid --profiler 'bogus'" --profiler bogus fig3
refused "--extra on no operator of the query" "no operator 'bogus'" -x bogus=5 fig3

# A profiler that cannot run: perf not on the PATH.  Its temporary
# directory goes too.
mkdir -p "$work/bin" "$work/tmp"
TMPDIR=$work/tmp PATH=$work/bin explain "$work/noperf.out" --profiler perf -s 0.002 fig3
rc=$?
if [ "$rc" -eq 1 ] && grep -q "the profiled run (perf record) failed (exit 127) -- is perf installed" "$work/noperf.out" &&
   [ -z "$(ls -A "$work/tmp")" ]; then
	ok "no perf: exit 1, the message says so, no files left"
else
	{ echo "exit $rc; left:"; ls -A "$work/tmp"; } >>"$work/noperf.out"
	not_ok "no perf: exit 1 and a message" "$work/noperf.out"
fi

tap_totals

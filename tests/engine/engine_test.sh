#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# engine_test.sh [BUILD_DIR]: the example engine, natively (no module
# needed).  Every query at two scales equals its reference evaluation;
# the oracle's extra work changes no result and lands only in the lines of
# the operator it targets; every generated line is linked to exactly one
# task; and tailor report, fed samples placed on chosen generated lines and
# runtime functions with chosen tags (synth_profile), attributes them to
# the operators the dictionary says -- the two joins of 'twojoins' apart,
# though they run the same precompiled function.  Bad options fail with a
# message.  tailor runs built with ASan and UBSan; so does the engine
# when TAILOR_ENGINE names such a build (scripts/check.sh does both).
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
engine=${TAILOR_ENGINE:-$build/examples/tailor-engine}
tailor=$build/userspace/san/tailor
synth=$build/userspace/synth_profile
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# check NAME CMD...: ok if CMD succeeds
check() { local name=$1; shift; if "$@" >"$work/why" 2>&1; then ok "$name"; else not_ok "$name" "$work/why"; fi; }

for f in "$engine" "$tailor" "$synth"; do
	if [ ! -x "$f" ]; then
		echo "not ok 1 - $f missing: make examples && make -C userspace test-tools"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
		exit 1
	fi
done

queries=$("$engine" --help | awk '/^queries/ {q = 1; next} q && /^$/ {exit} q {print $1}')
if [ "$(echo $queries)" = "fig3 twojoins q1 sfja" ]; then
	ok "--help lists the queries"
else
	not_ok "--help lists the queries (got: $(echo $queries))"
fi

# Every query, at a tiny scale (min table sizes) and a larger one.
for scale in 0.001 0.03; do
	"$engine" -s "$scale" -w "$work/s$scale" all >"$work/all.out" 2>&1
	rc=$?
	checks=$(grep -c '^check: ok' "$work/all.out")
	if [ $rc -eq 0 ] && [ "$checks" -eq 4 ]; then
		ok "scale $scale: all 4 results equal their reference evaluation"
	else
		not_ok "scale $scale: exit $rc, $checks of 4 checks ok" "$work/all.out"
	fi
done

# The oracle's knob, on each operator of sfja.
dict=$work/sfja.dict
for op in 1 2 3 4 5; do
	d=$work/x$op
	if ! "$engine" -x "$op=50" -d "$d.dict" -w "$d" sfja >"$d.out" 2>&1 ||
	   ! grep -q '^check: ok' "$d.out"; then
		not_ok "--extra $op=50: the result is unchanged" "$d.out"
		continue
	fi
	# The lines holding the work loop, and the operators their tasks belong to.
	lines=$(grep -n 'extra_units +=' "$d/sfja.c" | cut -d: -f1)
	owners=$(for l in $lines; do
		awk -F'\t' -v key="$d/sfja.c:$l" '
			$1 == "component" && $2 == "operator" { opname[$3] = $4 }
			$1 == "link" && $2 == "task" && $4 == "operator" { taskop[$3] = $5 }
			$1 == "link" && $2 == "line" && $3 == key { task = $5 }
			END { print opname[taskop[task]] }' "$d.dict"
	done | sort -u)
	if [ -n "$lines" ] && [ "$(wc -l <<<"$owners")" -eq 1 ] && [[ $owners == *"#$op "* ]]; then
		ok "--extra $op=50: same result; the work is in operator $op's lines only"
	else
		not_ok "--extra $op=50: work lines '$(echo $lines)' belong to '$owners'"
	fi
done

# Every line of generated code inside a pipeline function is linked, once.
if ! "$engine" -s 0.001 -d "$dict" -w "$work/d" fig3 twojoins q1 sfja >"$work/d.out" 2>&1; then
	not_ok "the engine writes the dictionary of all queries" "$work/d.out"
fi
for c in "$work"/d/*.c; do
	awk -v f="$c" '/^void tailor_pipeline_/ {inside = 1} inside {print f ":" NR} /^}$/ {inside = 0}' "$c"
done >"$work/code-lines"
awk -F'\t' '$1 == "link" && $2 == "line" {print $3}' "$dict" | sort | uniq -c |
	awk '$1 != 1 {print "linked " $1 " times: " $2}' >"$work/multi"
awk -F'\t' '$1 == "link" && $2 == "line" {print $3}' "$dict" | sort -u >"$work/linked"
sort -u "$work/code-lines" | comm -23 - "$work/linked" | sed 's/^/not linked: /' >>"$work/multi"
if [ -s "$work/code-lines" ] && [ ! -s "$work/multi" ]; then
	ok "every line of every pipeline function is linked to exactly one task ($(wc -l <"$work/code-lines") lines)"
else
	not_ok "line links" "$work/multi"
fi
# Each task leads to one operator and one pipeline.
awk -F'\t' '$1 == "component" && $2 == "task" {t[$3] = 1}
	$1 == "link" && $2 == "task" {up[$3 "," $4]++}
	END {for (k in t) if (up[k ",operator"] != 1 || up[k ",pipeline"] != 1) print "task " k}' \
	"$dict" >"$work/tasks"
if [ ! -s "$work/tasks" ]; then ok "every task links to one operator and one pipeline"; else not_ok "task links" "$work/tasks"; fi

# Attribution of samples on chosen places, with the engine's own dictionary.
task_id() { awk -F'\t' -v name="$1" '$1 == "component" && $2 == "task" && $4 == name {print $3}' "$dict"; }
line_of() { grep -n -F -- "$2" "$work/d/$1.c" | head -n 1 | cut -d: -f1; }
j4=$(task_id "twojoins: HashJoin#4 o_orderkey = l_orderkey probe")
j5=$(task_id "twojoins: HashJoin#5 c_custkey = o_custkey probe")
gen=$(task_id "[runtime] data generation")
agg_line=$(line_of fig3 'agg4[1] += l_extendedprice / l_quantity;')
probe_line=$(line_of fig3 'match3 = ctx->rt->join_lookup')
if [ -z "$j4" ] || [ -z "$j5" ] || [ -z "$gen" ] || [ -z "$agg_line" ] || [ -z "$probe_line" ]; then
	not_ok "the dictionary names the tasks, the generated code has the lines"
else
	printf '%s\t%s\t%s\t%s\n' \
		300 "$work/d/fig3.so:$work/d/fig3.c:$agg_line" 0 1 \
		200 "$work/d/fig3.so:$work/d/fig3.c:$probe_line" 0 1 \
		170 "$engine@join_lookup" "$j4" 1 \
		130 "$engine@join_lookup" "$j5" 1 \
		90 "$engine@group_find" 0 1 \
		60 "$engine@database_generate" "$gen" 1 >"$work/spec"
	cat >"$work/want" <<-EOT
	fig3: GroupBy#4 l_suppkey,300
	fig3: HashJoin#3 p_partkey = l_partkey,200
	twojoins: HashJoin#4 o_orderkey = l_orderkey,170
	twojoins: HashJoin#5 c_custkey = o_custkey,130
	[tailor-engine],90
	[runtime] data generation,60
	EOT
	if "$synth" -o "$work/syn.rec" "$work/spec" >"$work/why" 2>&1 &&
	   "$tailor" report -f csv -i "$work/syn.rec" -d "$dict" 2>"$work/err" |
	   tail -n +2 | awk -F, '{print $1 "," $3}' | sort >"$work/got"; then
		sort "$work/want" >"$work/want.sorted"
		if diff -u "$work/want.sorted" "$work/got" >"$work/diff"; then
			ok "report: generated lines, tagged shared runtime and engine phases land on their operators"
		else
			not_ok "report attribution" "$work/diff"
		fi
	else
		not_ok "synth_profile / report" "$work/why"
	fi
fi

# Bad input: a message naming the problem, exit 2, no output files.
bad_input() {
	local want=$1; shift
	"$engine" "$@" -w "$work/bad" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$work/err" && [ ! -e "$work/bad" ]; then
		ok "rejects $* ($want)"
	else
		not_ok "rejects $* (exit $rc)" "$work/err"
	fi
}
bad_input "no query 'q99'" q99
bad_input "invalid --scale '0'" -s 0
bad_input "invalid --extra 'join'" -x join
bad_input "no operator 'nosuch'" -x nosuch=5 fig3
bad_input "invalid --repeat" -n 0

# A compiler that fails is reported, with the file it failed on.
"$engine" --cc false -w "$work/cc" fig3 >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "'false' failed to compile .*fig3.c" "$work/err"; then
	ok "a failing compiler is reported with the file"
else
	not_ok "a failing compiler (exit $rc)" "$work/err"
fi

tap_totals

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
# shellcheck source=tests/lib/engine-test.sh
. "$top/tests/lib/engine-test.sh"
tailor=$build/userspace/san/tailor
synth=$build/userspace/synth_profile
# Runs without -w leave their generated code for the report in
# $TMPDIR/tailor-engine.*: here, gone with $work.
export TMPDIR=$work
# check NAME CMD...: ok if CMD succeeds
check() { local name=$1; shift; if "$@" >"$work/why" 2>&1; then ok "$name"; else not_ok "$name" "$work/why"; fi; }

require "$engine" "$tailor" "$synth"

queries=$("$engine" --help | awk '/^queries/ {q = 1; next} q && /^$/ {exit} q {print $1}')
if [ "$(echo $queries)" = "fig3 twojoins q1 sfja groups terms" ]; then
	ok "--help lists the queries"
else
	not_ok "--help lists the queries (got: $(echo $queries))"
fi

# Every query, at a tiny scale (min table sizes) and a larger one.
for scale in 0.001 0.03; do
	"$engine" -s "$scale" -w "$work/s$scale" all >"$work/all.out" 2>&1
	rc=$?
	checks=$(grep -c '^check: ok' "$work/all.out")
	if [ $rc -eq 0 ] && [ "$checks" -eq 6 ]; then
		ok "scale $scale: all 6 results equal their reference evaluation"
	else
		not_ok "scale $scale: exit $rc, $checks of 6 checks ok" "$work/all.out"
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
	lines=$(grep -n 'extra_units\[m->worker \* [0-9]*\] +=' "$d/sfja.c" | cut -d: -f1)
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
	awk -v f="$c" '/^void tailor_(pipeline|finish)_/ {inside = 1} inside {print f ":" NR} /^}$/ {inside = 0}' "$c"
done >"$work/code-lines"
awk -F'\t' '$1 == "link" && $2 == "line" {print $3}' "$dict" | sort | uniq -c |
	awk '$1 != 1 {print "linked " $1 " times: " $2}' >"$work/multi"
awk -F'\t' '$1 == "link" && $2 == "line" {print $3}' "$dict" | sort -u >"$work/linked"
sort -u "$work/code-lines" | comm -23 - "$work/linked" | sed 's/^/not linked: /' >>"$work/multi"
if [ -s "$work/code-lines" ] && [ ! -s "$work/multi" ]; then
	ok "every line of every pipeline and finish function is linked to exactly one task ($(wc -l <"$work/code-lines") lines)"
else
	not_ok "line links" "$work/multi"
fi
# Each task leads to one operator and one pipeline.
awk -F'\t' '$1 == "component" && $2 == "task" {t[$3] = 1}
	$1 == "link" && $2 == "task" {up[$3 "," $4]++}
	END {for (k in t) if (up[k ",operator"] != 1 || up[k ",pipeline"] != 1) print "task " k}' \
	"$dict" >"$work/tasks"
if [ ! -s "$work/tasks" ]; then ok "every task links to one operator and one pipeline"; else not_ok "task links" "$work/tasks"; fi

# A call into the shared runtime is a line of its task, and runs under the
# tag of that task's runtime task: "<task> (runtime)", of the same operator
# and pipeline, with no line of its own.  A profile by task then tells the
# generated code from the runtime (what --feedback's level model needs).
for c in "$work"/d/*.c; do
	awk -v f="$c" 'match($0, /TAILOR_TAGGED\([0-9]+UL/) {
		print f ":" FNR "\t" substr($0, RSTART + 14, RLENGTH - 16) }' "$c"
done >"$work/calls"
awk -F'\t' 'FILENAME == ARGV[1] { call[$1] = $2; next }
	$1 == "component" && $2 == "task" { name[$3] = $4 }
	$1 == "link" && $2 == "task" { up[$3 "," $4] = $5 }
	$1 == "link" && $2 == "line" { owner[$3] = $5; has_lines[$5] = 1 }
	END {
		for (line in call) {
			t = owner[line]; r = call[line]; n++
			if (name[r] != name[t] " (runtime)")
				print line ": runs under " r " \"" name[r] "\", a line of \"" name[t] "\""
			else if (up[r ",operator"] != up[t ",operator"] || up[r ",pipeline"] != up[t ",pipeline"])
				print line ": " name[r] " is not of its caller'"'"'s operator and pipeline"
			else if (r in has_lines)
				print line ": " name[r] " has lines"
		}
		if (n < 10) print "only " n " runtime calls"
	}' "$work/calls" "$dict" >"$work/runtime-calls"
if [ ! -s "$work/runtime-calls" ]; then
	ok "every runtime call ($(wc -l <"$work/calls")) runs under its task's runtime task, of the same operator and pipeline"
else
	not_ok "runtime calls and their tasks" "$work/runtime-calls"
fi

# Attribution of samples on chosen places, with the engine's own dictionary.
task_id() { awk -F'\t' -v name="$1" '$1 == "component" && $2 == "task" && $4 == name {print $3}' "$dict"; }
line_of() { grep -n -F -- "$2" "$work/d/$1.c" | head -n 1 | cut -d: -f1; }
j4=$(task_id "twojoins: HashJoin#4 o_orderkey = l_orderkey probe (runtime)")
j5=$(task_id "twojoins: HashJoin#5 c_custkey = o_custkey probe (runtime)")
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

# Parallel: the same results whatever the workers and clients.  Results
# are sorted by key, so a run's printed rows are comparable across runs.
rows_of() { grep -E '^ +-?[0-9]' "$1"; }
if "$engine" -s 0.01 -r 1000 -j 1 all >"$work/j1.out" 2>&1 &&
   "$engine" -s 0.01 -r 1000 -j 4 all >"$work/j4.out" 2>&1 &&
   [ "$(grep -c '^check: ok' "$work/j4.out")" -eq 6 ] &&
   diff <(rows_of "$work/j1.out") <(rows_of "$work/j4.out") >"$work/diff" &&
   [ "$(rows_of "$work/j1.out" | wc -l)" -gt 100 ]; then
	ok "1 and 4 worker threads: every result row equal, and equal to the reference"
else
	not_ok "1 and 4 worker threads give the same results" "$work/diff"
fi
# The group-by merge (--merge): locked and partitioned give the rows of
# the reference for every query at every worker count; 'groups' has a
# group for nearly every row, and the default is the locked one.
merged=1
for merge in locked partitioned; do
	for j in 1 2 4; do
		"$engine" -s 0.01 -r 100000 -j "$j" --merge "$merge" -t "$work/m.times" all \
			>"$work/m-$merge-$j.out" 2>&1 &&
		[ "$(grep -c '^check: ok' "$work/m-$merge-$j.out")" -eq 6 ] &&
		[ "$(grep -c -E " merge=$merge merge_wall_ns=[0-9]+ repeat=1 opt=[0-9:O,]+( terms=[0-9:.,]+)?$" "$work/m.times")" -eq 6 ] &&
		diff <(rows_of "$work/m-locked-1.out") <(rows_of "$work/m-$merge-$j.out") >"$work/diff" || {
			merged=0
			cp "$work/m-$merge-$j.out" "$work/mwhy"
			cat "$work/diff" >>"$work/mwhy"
		}
	done
done
groups=$(rows_of "$work/m-locked-1.out" | wc -l)
"$engine" -s 0.001 -r 0 groups >"$work/m-default.out" 2>&1
if [ $merged -eq 1 ] && [ "$groups" -gt 50000 ] && grep -q -- "--merge locked" "$work/m-default.out"; then
	ok "--merge locked and partitioned, 1, 2 and 4 workers: the same rows, equal to the reference ($groups rows of all 6 queries)"
else
	not_ok "--merge modes give the reference's rows" "$work/mwhy"
fi
cl=$work/cl
if "$engine" -s 0.01 -c 3 -j 2 -n 2 -d "$cl.dict" -t "$cl.times" -w "$cl" all >"$cl.out" 2>&1 &&
   [ "$(grep -c '^check: ok' "$cl.out")" -eq 18 ] && ! grep -q FAILED "$cl.out"; then
	ok "3 clients x 6 queries on 2 workers: all 18 results equal their reference evaluation"
else
	not_ok "3 clients on 2 workers" "$cl.out"
fi
# Each client's run of a query is a query component; the plan's operators
# link to every run of it; the times name each run's component id.
awk -F'\t' '
	$1 == "component" && $2 == "query" { q[$3] = $4 }
	$1 == "component" && $2 == "operator" && $4 ~ /^fig3: / { op[$3] = 1 }
	$1 == "link" && $2 == "operator" && ($3 in op) && $4 == "query" { n[$3]++; to[$3 "," q[$5]] = 1 }
	$1 == "tag-word" { word = word (word ? ", " : "") $2 " " $3 " " $4 }
	END {
		# The query execution; the task, which the LLVM backend stores there.
		if (word != "query 0 16, task 16 16") print "tag-word fields: " word
		for (o in op) {
			if (n[o] != 3) print "operator " o " links to " n[o] " queries"
			for (c = 1; c <= 3; c++)
				if (!((o ",fig3 (client " c ")") in to)) print "operator " o ": no fig3 (client " c ")"
		}
	}' "$cl.dict" >"$work/why" 2>&1
awk -F'\t' '$1 == "component" && $2 == "query" { print $3 " " $4 }' "$cl.dict" | sort >"$work/qdict"
sed -n 's/^query=\([a-z0-9]*\) client=\([0-9]*\) query_id=\([0-9]*\) .*/\3 \1 (client \2)/p' "$cl.times" |
	sort >"$work/qtimes"
if [ -s "$cl.dict" ] && [ ! -s "$work/why" ] && [ "$(wc -l <"$work/qtimes")" -eq 18 ] &&
   [ -z "$(comm -13 "$work/qdict" "$work/qtimes")" ]; then
	ok "dictionary: a query component per client run, operators linked to all, the word declared"
else
	{ cat "$work/why"; comm -13 "$work/qdict" "$work/qtimes"; } >"$work/why2"
	not_ok "dictionary of a concurrent run" "$work/why2"
fi
# Two runs of the same code, told apart only by the tag word.
run_of() { awk -F'\t' -v name="$1" '$1 == "component" && $2 == "query" && $4 == name {print $3}' "$cl.dict"; }
probe=$(grep -n -F 'match3 = ctx->rt->join_lookup' "$cl/fig3.c" | head -n 1 | cut -d: -f1)
f1=$(run_of "fig3 (client 1)") f3=$(run_of "fig3 (client 3)") t2=$(run_of "twojoins (client 2)")
if [ -n "$probe" ] && [ -n "$f1" ] && [ -n "$f3" ] && [ -n "$t2" ]; then
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' \
		250 "$cl/fig3.so:$cl/fig3.c:$probe" 0 11 0 "$f1" \
		150 "$cl/fig3.so:$cl/fig3.c:$probe" 0 12 0 "$f3" \
		80 "$engine@join_lookup" 0 12 0 "$t2" >"$work/wspec"
	cat >"$work/wwant" <<-EOT
	fig3 (client 1),250
	fig3 (client 3),150
	twojoins (client 2),80
	EOT
	if "$synth" -o "$work/w.rec" "$work/wspec" >"$work/why" 2>&1 &&
	   "$tailor" report -f csv -l query -i "$work/w.rec" -d "$cl.dict" 2>"$work/err" |
	   tail -n +2 | awk -F, '{print $1 "," $3}' | sort >"$work/wgot" &&
	   diff -u "$work/wwant" "$work/wgot" >"$work/diff"; then
		ok "report -l query: the same generated line, two clients' runs apart by the tag word"
	else
		cat "$work/why" "$work/err" >>"$work/diff" 2>/dev/null
		not_ok "report -l query by the tag word" "$work/diff"
	fi
else
	not_ok "the concurrent run's dictionary names fig3's runs, fig3.c has the probe"
fi

# perf record follows the processes the engine forks (its C compiler),
# whose r15 is no tag: their samples must never reach the engine's
# components.  The components' rows equal those of the engine's own pid.
pr=$work/perf
if ! command -v perf >/dev/null || ! perf record -q -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
	skip "a compiler's samples stay out of the components (no perf record -e cpu-clock here)"
elif perf record -q -e cpu-clock -F 4000 --intr-regs=r15 -o "$pr.data" -- \
	"$engine" -s 0.02 -n 4 -d "$pr.dict" -w "$pr" -t "$pr.times" fig3 >"$pr.out" 2>&1 &&
   pid=$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$pr.times") && [ -n "$pid" ] &&
   "$tailor" report -f csv --top 0 -i "$pr.data" -d "$pr.dict" >"$pr.all" 2>"$work/err" &&
   "$tailor" report -f csv --top 0 -i "$pr.data" -d "$pr.dict" --pid "$pid" >"$pr.own" 2>>"$work/err"; then
	comps() { awk -F, '$2 == "component" { print $1 "," $3 }' "$1" | sort; }
	children=$(awk -F, '$1 ~ /^\[(cc1|.*-as|.*-ld.*|.*gcc.*|collect2)\]$/ { n += $3 } END { print n + 0 }' "$pr.all")
	if diff <(comps "$pr.all") <(comps "$pr.own") >"$work/diff" && [ "$children" -gt 0 ]; then
		ok "perf.data with the compiler's processes: its $children samples stay out of the engine's components"
	else
		cat "$pr.all" >>"$work/diff"
		not_ok "a compiler's samples reached components ($children compiler samples)" "$work/diff"
	fi
else
	not_ok "perf record of the engine" "$pr.out"
fi

# A dictionary belongs to a program: the engine's names its modules (the
# engine, fig3.so) by path and build-id, as readelf reads them; applied
# to another program's profile, or to one mapping another build of the
# engine, it is refused, naming what it describes.
if [ -s "$pr.dict" ] && [ -s "$pr.data" ]; then
	bid() { readelf -n "$1" | awk '/Build ID:/ { print $3 }'; }
	want=$(printf 'module\t%s\t%s\nmodule\t%s\t%s\n' "$(readlink -f "$engine")" \
		"$(bid "$engine")" "$pr/fig3.so" "$(bid "$pr/fig3.so")")
	other=$work/other.data
	# Another build: its first byte changed.
	awk '{ if ($1 == "module" && !done) { $3 = (substr($3, 1, 2) == "00" ? "ff" : "00") substr($3, 3); done = 1 }
	       print }' OFS='\t' \
		"$pr.dict" >"$work/rebuilt.dict"
	if [ "$(head -1 "$pr.dict")" = $'tailor-dictionary\t2' ] &&
		[ "$(grep '^module' "$pr.dict")" = "$want" ] &&
		perf record -q -e cpu-clock -F 4000 --intr-regs=r15 -o "$other" -- \
		dd if=/dev/zero of=/dev/null bs=4k count=100000 >"$work/why" 2>&1 &&
		! "$tailor" report -i "$other" -d "$pr.dict" >"$work/out" 2>"$work/err" &&
		grep -qF "$pr.dict describes $(readlink -f "$engine") (build-id $(bid "$engine")), $pr/fig3.so (build-id $(bid "$pr/fig3.so")); $other maps none of them: the dictionary of another program" "$work/err" &&
		[ ! -s "$work/out" ] &&
		! "$tailor" report -i "$pr.data" -d "$work/rebuilt.dict" >"$work/out" 2>>"$work/err" &&
		grep -qF "maps it as build-id $(bid "$engine"): the dictionary of another build" "$work/err"; then
		ok "the dictionary names the engine and fig3.so by build-id; refused for another program's profile, and for another build"
	else
		{ echo "want:"; echo "$want"; echo "dictionary:"; grep '^module' "$pr.dict"; cat "$work/err"; } >>"$work/why"
		not_ok "the dictionary names the engine and fig3.so by build-id; refused for another program's profile, and for another build" \
			"$work/why"
	fi
fi

# Tags count in the processes that map the dictionary's modules, and
# nowhere else: under sh, the engine (not the recorded process) keeps
# its tags, and another program keeping a task's id in r15 (r15_noise,
# built with -ffixed-r15) reaches no component.
nz=$work/noise
if [ -s "$pr.dict" ] && gcc -O1 -g -ffixed-r15 "$top/tests/engine/r15_noise.c" -o "$nz" \
	2>"$work/why" &&
	task=$(awk -F'\t' '$1 == "component" && $2 == "task" { print $3; exit }' "$pr.dict") &&
	perf record -q -e cpu-clock -F 4000 --intr-regs=r15 -o "$nz.data" -- sh -c \
	"'$engine' -s 0.02 -n 20 -d '$nz.dict' -w '$nz.gen' -t '$nz.times' fig3 >'$nz.out' & '$nz' $task 0.5 >'$nz.pid'; wait" \
	>>"$work/why" 2>&1 &&
	npid=$(sed -n 's/^pid=//p' "$nz.pid") && [ -n "$npid" ] &&
	epid=$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$nz.times") && [ -n "$epid" ] &&
	"$tailor" report -i "$nz.data" -d "$nz.dict" -l task -f json --top 0 --pid "$npid" \
	>"$nz.noise.json" 2>>"$work/why" &&
	"$tailor" report -i "$nz.data" -d "$nz.dict" -l task -f json --top 0 --pid "$epid" \
	>"$nz.engine.json" 2>>"$work/why" &&
	python3 - "$nz.noise.json" "$nz.engine.json" >>"$work/why" 2>&1 <<'EOF'
import json, sys
noise, engine = (json.load(open(f)) for f in sys.argv[1:3])
by_tag = lambda d: sum(n["samples"] for n in d["notes"] if n["note"].startswith("attributed by the tag"))
components = lambda d: sum(r["samples"] for r in d["rows"] if r["kind"] == "component")
print("r15_noise: %d samples, %d in components; the engine: %d by its tags" %
      (noise["total"], components(noise), by_tag(engine)))
assert noise["total"] >= 500 and components(noise) == 0 and by_tag(engine) > 0
EOF
then
	ok "tags count where the dictionary's modules are mapped: $(tail -1 "$work/why")"
else
	not_ok "tags count where the dictionary's modules are mapped, and nowhere else" "$work/why"
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
bad_input "invalid --threads '0'" -j 0
bad_input "invalid --clients '17'" -c 17
bad_input "invalid --merge 'bogus': expected locked or partitioned" --merge bogus

# A compiler that fails is reported, with the file it failed on.
"$engine" --cc false -w "$work/cc" fig3 >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "'false' failed to compile .*fig3.c" "$work/err"; then
	ok "a failing compiler is reported with the file"
else
	not_ok "a failing compiler (exit $rc)" "$work/err"
fi

tap_totals

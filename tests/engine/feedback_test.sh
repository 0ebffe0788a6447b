#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# feedback_test.sh [BUILD_DIR]: tailor-engine --feedback, natively, with a
# profile from perf record -e cpu-clock --intr-regs=r15 read by tailor
# report --level pipeline --format json.
#   - the loop: the profile names every sampled pipeline and what a sample
#     stands for; a run fed it keeps its results, prints one choice per
#     pipeline, writes them to --times (opt=), and compiles each pipeline's
#     functions at that level (their optimize attributes), with
#     -march=native exactly when one is at -O3 (the compiler's arguments,
#     through a --cc that logs them);
#   - the model: a pipeline's level never falls as its samples grow, and
#     spans -O0 (no samples) to -O3 (hours of them); a profile taken at
#     -O0 with twice the samples, said so by --feedback-times, stands for
#     the same CPU time at -O2 (the priors' factor of 2);
#   - the runtime: in a profile by task, samples of a pipeline's runtime
#     tasks (the shared runtime's work for it) do not raise its level;
#   - memory: given a second profiled run, at -O3, the level goes back to
#     -O2 if that run measured -O3 slower, and stays if faster; a profile
#     of another query in the history changes nothing;
#   - names: a profile of one query serves a run of two (names prefixed
#     with the query), and one of another query changes nothing, saying so;
#   - bad input: not JSON (with the offset), another level, no sample_ns,
#     samples that are not CPU time,
#     a bad --times line, a missing file: exit 1 and a message naming
#     the file; --feedback-times alone, before its --feedback or twice
#     for one, or --backend llvm: exit 2.
# TAILOR_ENGINE: the engine to test (the ASan/UBSan build, say).
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/engine-test.sh
. "$top/tests/lib/engine-test.sh"
require "$engine" "$tailor"
require_perf

# A C compiler that logs its arguments, one run a line.
cat >"$work/cc" <<EOF
#!/bin/sh
echo "\$*" >>"$work/cc.log"
exec ${CC:-cc} "\$@"
EOF
chmod +x "$work/cc"

field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -1; }

# The loop's first step: a profiled run of sfja at the default level.
if ! perf record -q -e cpu-clock -F 4000 --intr-regs=r15 --user-regs=ip,r15 \
	-o "$work/perf.data" -- "$engine" -s 0.03 -d "$work/q.dict" -t "$work/times0" \
	-w "$work/gen0" sfja >"$work/run0.out" 2>&1 ||
	! "$tailor" report -i "$work/perf.data" -d "$work/q.dict" --level pipeline -f json \
	>"$work/profile.json" 2>"$work/report.err"; then
	cat "$work/report.err" >>"$work/run0.out"
	not_ok "a profiled run of sfja and its report" "$work/run0.out"
	tap_totals
	exit 1
fi
if python3 - "$work/profile.json" "$work/times0" >"$work/profile.check" 2>&1 <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["level"] == "pipeline", p["level"]
# -F 4000 on each CPU: a sample stands for 250 us, however many CPUs ran.
assert p["profile"]["sample_ns"] == 250000, p["profile"]["sample_ns"]
assert p["profile"]["sample_ns_is_cpu_time"] is True
pipes = [r for r in p["rows"] if r["name"].startswith("pipeline ")]
assert pipes and max(r["samples"] for r in pipes) > 0, "no pipeline sampled"
opt = [f for f in open(sys.argv[2]).read().split() if f.startswith("opt=")][0]
assert opt == "opt=1:O2,2:O2,3:O2", opt
EOF
then
	ok "a profile of sfja names its sampled pipelines and sample_ns 250000 (-F 4000); without feedback --times says opt=1:O2,2:O2,3:O2"
else
	not_ok "the profile or the times of a run without feedback" "$work/profile.check"
fi

# run NAME ARGS...: the engine with --cc logging; stdout+stderr in NAME.out.
run() {
	local name=$1
	shift
	: >"$work/cc.log"
	"$engine" --cc "$work/cc" -w "$work/gen-$name" -t "$work/$name.times" "$@" \
		>"$work/$name.out" 2>&1
}

# levels_agree NAME: opt= of --times, the functions' attributes and
# -march=native all say the same; prints "ok"/"not ok" lines.
levels_agree() {
	local name=$1 opt k level c native=no
	opt=$(field "$work/$name.times" opt)
	[ "$(echo "$opt" | tr ',' '\n' | grep -c '^[1-3]:O[0-3]$')" -eq 3 ] ||
		{ echo "not ok: opt=$opt is not 3 pipelines' levels"; return; }
	c=$(ls "$work/gen-$name"/*.c)
	for kl in ${opt//,/ }; do
		k=${kl%%:*}
		level=${kl#*:}
		[ "$level" = O3 ] && native=yes
		for fn in tailor_pipeline_ tailor_finish_; do
			grep -q "^__attribute__((optimize(\"$level\"))) void $fn$((k - 1))(" "$c" ||
				{ echo "not ok: $fn$((k - 1)) is not at $level in $c"; return; }
		done
	done
	if grep -q -- -march=native "$work/cc.log"; then
		[ $native = yes ] || { echo "not ok: -march=native without a pipeline at O3"; return; }
	else
		[ $native = no ] || { echo "not ok: a pipeline at O3 without -march=native"; return; }
	fi
	echo "ok"
}

run fb -s 0.03 --feedback "$work/profile.json" --feedback-times "$work/times0" sfja
rc=$?
choices=$(grep -c '^feedback: sfja pipeline [123]: ' "$work/fb.out")
agree=$(levels_agree fb)
if [ $rc -eq 0 ] && grep -q '^check: ok' "$work/fb.out" && [ "$choices" -eq 3 ] &&
	[ "$agree" = ok ]; then
	ok "--feedback on sfja: results checked, 3 choices ($(field "$work/fb.times" opt)), attributes and -march=native as --times says"
else
	not_ok "--feedback on sfja: exit $rc, $choices choices, levels: $agree" "$work/fb.out"
fi

# with_samples FILE N: the profile with pipeline 2's samples set to N,
# and without pipeline 3's row: never sampled.
with_samples() {
	python3 - "$work/profile.json" "$2" >"$1" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
rows = [r for r in p["rows"] if not r["name"].startswith("pipeline 3:")]
for r in rows:
    if r["name"].startswith("pipeline 2:"):
        r["samples"] = float(sys.argv[2])
        break
else:
    sys.exit("no row of pipeline 2")
p["rows"] = rows
json.dump(p, sys.stdout)
EOF
}

# The model, as samples grow: levels never fall, and span -O0 to -O3.
levels=""
for count in 0 20 200 2000 20000 2000000; do
	with_samples "$work/p$count.json" $count
	run "m$count" -s 0.002 -r 0 --feedback "$work/p$count.json" sfja
	levels="$levels $(sed -n 's/^feedback: sfja pipeline 2: .*: -\(O[0-3]\).*/\1/p' "$work/m$count.out")"
done
# shellcheck disable=SC2086 # $levels: one argument a level
if python3 -c 'import sys; l = sys.argv[1:]; assert len(l) == 6 and l == sorted(l) and l[0] == "O0" and l[-1] == "O3", l' $levels 2>"$work/mono.err"; then
	ok "pipeline 2's level as its samples grow from 0 to 2000000:$levels"
else
	not_ok "pipeline 2's levels as its samples grow:$levels (never falling, O0 to O3)" "$work/mono.err"
fi
if grep -q '^feedback: sfja pipeline 3: 0 samples.*: -O0 ' "$work/m2000000.out"; then
	ok "a pipeline the profile does not name (never sampled) is compiled at -O0"
else
	not_ok "a pipeline the profile does not name is not at -O0" "$work/m2000000.out"
fi
m3=$(levels_agree m2000000)
if [ "$m3" = ok ] && grep -q -- -march=native "$work/cc.log"; then
	ok "a pipeline at -O3: its attributes, and -march=native for the file"
else
	not_ok "a pipeline at -O3: $m3" "$work/m2000000.out"
fi

# --feedback-times: 400 samples at -O0 stand for 200 at -O2 (the priors'
# factor of 2).
with_samples "$work/p400.json" 400
sed 's/opt=[^ ]*/opt=1:O2,2:O0,3:O2/' "$work/times0" >"$work/times-o0"
run t0 -s 0.002 -r 0 --feedback "$work/p400.json" --feedback-times "$work/times-o0" sfja
at_o2() { sed -n 's/^feedback: sfja pipeline 2: .* (\([0-9.]*\) ms at -O2).*/\1/p' "$work/$1.out"; }
if [ "$(at_o2 t0)" = 50.00 ] && [ "$(at_o2 m200)" = 50.00 ] &&
	grep -q '^feedback: sfja pipeline 2: 400 samples, 100.00 ms CPU a run at -O0 (50.00 ms at -O2)' "$work/t0.out"; then
	ok "400 samples at -O0 stand for what 200 at -O2 do: 50.00 ms at -O2"
else
	not_ok "400 samples at -O0: $(at_o2 t0) ms at -O2; 200 at -O2: $(at_o2 m200) (want 50.00)" "$work/t0.out"
fi

# Memory: a level some run measured is judged by what it measured.  With
# 2000000 samples at -O2 pipeline 2 goes to -O3 on the priors (above); a
# second run at -O3 that took 20% longer than the first brings it back to
# -O2, and one that took 20% less keeps it at -O3.
sed 's/opt=[^ ]*/opt=1:O2,2:O3,3:O2/' "$work/times0" >"$work/times-o3"
for after in 2400000 1600000; do
	with_samples "$work/p$after.json" $after
	run "h$after" -s 0.002 -r 0 --feedback "$work/p2000000.json" --feedback-times "$work/times0" \
		--feedback "$work/p$after.json" --feedback-times "$work/times-o3" sfja
done
hist_level() { sed -n 's/^feedback: sfja pipeline 2: .*: -\(O[0-3]\).*/\1/p' "$work/$1.out"; }
if [ "$(hist_level h2400000)" = O2 ] && [ "$(hist_level h1600000)" = O3 ] &&
	grep -q '^feedback: sfja pipeline 2: 2400000 samples, .* at -O3 .*, measured -O2 [0-9.]* ms, -O3 [0-9.]* ms: -O2 ' "$work/h2400000.out"; then
	ok "two profiled runs: -O3 measured slower than -O2 goes back to -O2, measured faster stays at -O3"
else
	not_ok "two profiled runs: -O3 20% slower gave -$(hist_level h2400000), 20% faster -$(hist_level h1600000) (want O2, O3)" "$work/h2400000.out"
fi

# The runtime: a profile by task tells the generated code from the shared
# runtime's work for it ("... (runtime)" tasks), which no level changes.
# 2000000 samples in pipeline 2's runtime and 200 in its generated code
# choose as the 200 alone do; 2000200 in the generated code choose -O3.
# Two workers: the level model divides a split pipeline's time by them.
# by_task_profile OUT GENERATED RUNTIME: rows for pipeline 2's tasks only.
by_task_profile() {
	python3 - "$work/by_task.json" "$work/q.dict" "$2" "$3" >"$1" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
comp, link = {}, {}
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "component" and len(f) >= 4:
        comp[(f[1], f[2])] = f[3]
    elif f[0] == "link" and f[1] == "task" and f[3] == "pipeline":
        link[f[2]] = f[4]
tasks = [comp[("task", t)] for t, pl in link.items()
         if comp.get(("pipeline", pl), "").startswith("pipeline 2:")]
runtime = [t for t in tasks if t.endswith(" (runtime)")]
generated = [t for t in tasks if t not in runtime]
assert runtime and generated, tasks
p["rows"] = [{"name": generated[0], "kind": "component", "samples": float(sys.argv[3])},
             {"name": runtime[0], "kind": "component", "samples": float(sys.argv[4])}]
json.dump(p, sys.stdout)
EOF
}
if "$tailor" report -i "$work/perf.data" -d "$work/q.dict" --level task -f json \
	>"$work/by_task.json" 2>"$work/by_task.err" &&
	by_task_profile "$work/gen200.json" 200 0 2>>"$work/by_task.err" &&
	by_task_profile "$work/rt2000000.json" 200 2000000 2>>"$work/by_task.err" &&
	by_task_profile "$work/gen2000200.json" 2000200 0 2>>"$work/by_task.err"; then
	for f in gen200 rt2000000 gen2000200; do
		run "$f" -s 0.002 -r 0 -j 2 --feedback "$work/$f.json" sfja
	done
	rt=$(hist_level rt2000000) gen=$(hist_level gen200) hot=$(hist_level gen2000200)
	if [ -n "$gen" ] && [ "$rt" = "$gen" ] && [ "$gen" != O3 ] && [ "$hot" = O3 ] &&
		grep -q '^feedback: sfja pipeline 2: 200 samples, .*, 2000000 samples, [0-9.]* ms a run in the runtime (at any level), ' \
		"$work/rt2000000.out"; then
		ok "by task: 2000000 samples in pipeline 2's runtime beside 200 in its generated code choose as the 200 alone (-$gen); 2000200 in its generated code, -O3"
	else
		cat "$work/gen200.out" "$work/gen2000200.out" >>"$work/rt2000000.out"
		not_ok "by task: with runtime samples -$rt, the 200 alone -$gen, 2000200 generated -$hot (want the first two equal, not O3; the third O3)" \
			"$work/rt2000000.out"
	fi
else
	not_ok "a profile by task of sfja, pipeline 2 made to order" "$work/by_task.err"
fi

# A profile that names none of the query's pipelines (of another query) in
# the history changes nothing: the choices equal those of the rest alone.
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); [r.update(name="pipeline 1: Elsewhere#1 scan") for r in p["rows"]]; json.dump(p, sys.stdout)' \
	"$work/p2000000.json" >"$work/elsewhere.json"
run alone -s 0.002 -r 0 --feedback "$work/p2000000.json" --feedback-times "$work/times0" sfja
run mixed -s 0.002 -r 0 --feedback "$work/elsewhere.json" --feedback "$work/p2000000.json" \
	--feedback-times "$work/times0" sfja
if [ "$(grep -c '^feedback: sfja pipeline' "$work/alone.out")" -eq 3 ] &&
	diff <(grep '^feedback: sfja pipeline' "$work/alone.out") \
		<(grep '^feedback: sfja pipeline' "$work/mixed.out") >"$work/mixed.diff"; then
	ok "a profile of another query in the history changes no choice"
else
	not_ok "a profile of another query in the history changed the choices" "$work/mixed.diff"
fi

# Names: a profile of sfja serves a run of two queries; one of fig3 does not.
if run two -s 0.002 -r 0 --feedback "$work/profile.json" sfja q1 && [ "$(grep -c '^feedback: sfja pipeline' "$work/two.out")" -eq 3 ] &&
	grep -q '^feedback: q1: the profile names none of its 2 pipelines' "$work/two.out" &&
	[ "$(grep -c '^check: ok' "$work/two.out")" -eq 2 ]; then
	ok "a profile of sfja in a run of sfja and q1: sfja's pipelines found by name, q1 left as without feedback"
else
	not_ok "a profile of sfja in a run of sfja and q1" "$work/two.out"
fi
if run other -s 0.002 -r 0 --feedback "$work/profile.json" fig3 && grep -q '^feedback: fig3: the profile names none' "$work/other.out" &&
	[ "$(field "$work/other.times" opt)" = 1:O2,2:O2,3:O2 ] && ! grep -q optimize "$work"/gen-other/*.c; then
	ok "a profile of another query: said so, compiled as without feedback"
else
	not_ok "a profile of another query" "$work/other.out"
fi

# refused EXIT PATTERN NAME ARGS...: the engine exits EXIT with PATTERN on stderr.
refused() {
	local want=$1 pattern=$2 name=$3 rc
	shift 3
	"$engine" -s 0.002 -w "$work/gen-bad" "$@" >"$work/bad.out" 2>&1
	rc=$?
	if [ $rc -eq "$want" ] && grep -q -- "$pattern" "$work/bad.out"; then
		ok "refused: $name (exit $rc)"
	else
		not_ok "not refused as it should be: $name (exit $rc, want $want and '$pattern')" \
			"$work/bad.out"
	fi
}
printf '{"profile": {"sample_ns": 1}, "level": "pipeline", "rows": [' >"$work/cut.json"
refused 1 "cut.json: not JSON: offset [0-9]*: the document ends where a value should be" "a profile cut short" \
	--feedback "$work/cut.json" sfja
"$tailor" report -i "$work/perf.data" -d "$work/q.dict" --level operator -f json \
	>"$work/operator.json" 2>/dev/null
refused 1 "a profile at level 'operator'; --feedback needs 'task' or 'pipeline'" "a profile at another level" \
	--feedback "$work/operator.json" sfja
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); del p["profile"]["sample_ns"]; json.dump(p, sys.stdout)' \
	"$work/profile.json" >"$work/old.json"
refused 1 'old.json: no "profile"."sample_ns"' "a profile without sample_ns" \
	--feedback "$work/old.json" sfja
sed 's/ opt=[^ ]*//' "$work/times0" >"$work/bad.times"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["profile"]["sample_ns_is_cpu_time"]=False; json.dump(p, sys.stdout)' \
	"$work/profile.json" >"$work/events.json"
refused 1 "events.json: its samples are not CPU time" "a profile of an event that is not a clock" \
	--feedback "$work/events.json" sfja
refused 1 "bad.times: line 1: not a line of tailor-engine --times" "times without opt=" \
	--feedback "$work/profile.json" --feedback-times "$work/bad.times" sfja
refused 1 "cannot open the profile $work/nothing.json" "a missing profile" \
	--feedback "$work/nothing.json" sfja
refused 2 "--feedback-times $work/times0 needs --feedback PROFILE before it" "--feedback-times alone" \
	--feedback-times "$work/times0" sfja
refused 2 "--feedback-times $work/times0 needs --feedback PROFILE before it" "--feedback-times before its --feedback" \
	--feedback-times "$work/times0" --feedback "$work/profile.json" sfja
refused 2 "--feedback-times $work/times-o3: the --feedback before it has its times already" \
	"two --feedback-times for one --feedback" \
	--feedback "$work/profile.json" --feedback-times "$work/times0" --feedback-times "$work/times-o3" sfja
if [ -f "$(dirname "$engine")/tailor-engine-llvm.so" ]; then
	refused 2 "not with --backend llvm" "--feedback with --backend llvm" \
		--backend c --feedback "$work/profile.json" --backend llvm sfja
fi
tap_totals

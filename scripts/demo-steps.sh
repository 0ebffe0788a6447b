#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# demo-steps.sh TAILOR ENGINE OUT [QUERY]: the demo itself, wherever it
# runs (natively with tailor.ko loaded, or in the test box under busybox
# sh, hence POSIX sh): record the example engine running QUERY (default
# fig3) with its Tagging Dictionary, then print the operator report, the
# annotated plan and the activity timeline, and write the HTML report to
# OUT/report.html and the profile for other readers: OUT/profile.pb.gz
# (go tool pprof), OUT/stacks.folded (flame graphs) and OUT/trace.json
# (ui.perfetto.dev, speedscope).  Only the engine's own threads are
# sampled: the C compiler it runs is another process.
#
# Environment: DEMO_SCALE (default 0.05), DEMO_REPEAT (default 10).
set -eu

tailor=$1 engine=$2 out=$3 query=${4:-fig3}
scale=${DEMO_SCALE:-0.05}
repeat=${DEMO_REPEAT:-10}
mkdir -p "$out"

echo "== tailor record -- tailor-engine $query (scale $scale, executed $repeat times)"
# Its messages after the run: on a console, record's live status line
# would run into the engine's output.
if ! "$tailor" record -o "$out/$query.rec" -- \
	"$engine" -s "$scale" -n "$repeat" -r 5 -d "$out/$query.dict" -w "$out/generated" \
	"$query" 2>"$out/record.log"; then
	cat "$out/record.log" >&2
	exit 1
fi
cat "$out/record.log"

report() {
	"$tailor" report -i "$out/$query.rec" -d "$out/$query.dict" "$@"
}
echo
echo "== operator report (tailor report --level operator)"
report --level operator
echo
echo "== annotated plan (tailor report --view plan)"
report --view plan
echo
echo "== activity timeline of the operators (tailor timeline)"
report --view timeline --html "$out/report.html"
echo
echo "== the profile for other readers (tailor report --format pprof|folded|chrome)"
report --format pprof -o "$out/profile.pb.gz"
report --format folded -o "$out/stacks.folded"
report --format chrome -o "$out/trace.json"

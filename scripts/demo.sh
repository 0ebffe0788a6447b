#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# demo.sh - make demo: profile the example engine and print its reports.
#
# Where tailor.ko is loaded, natively; elsewhere in the test box (see
# profile-engine.sh), scripts/demo-steps.sh records query QUERY (default
# fig3) of the example engine and prints the operator report, the
# annotated plan and the activity timeline.  The profile for go tool
# pprof, flame graphs and trace viewers lands in build/demo/ too, and the
# full HTML report in build/demo/report.html, whose path is printed last.
#
# Usage: scripts/demo.sh [--box|--native] [QUERY]
# Environment: DEMO_SCALE, DEMO_REPEAT (see demo-steps.sh).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
opts=() query=fig3
for a in "$@"; do
	case $a in
	--box | --native) opts+=("$a") ;;
	-h | --help) sed -n '/^# Usage:/,/^# Environment/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "demo.sh: unknown option '$a' (--box, --native, QUERY)" >&2; exit 2 ;;
	*) query=$a ;;
	esac
done
"$top/scripts/profile-engine.sh" "${opts[@]}" --out "$top/build/demo" \
	--export report.html --export profile.pb.gz --export stacks.folded \
	--export trace.json -- "$top/scripts/demo-steps.sh" "$query"
echo
echo "pprof: go tool pprof -http=: $top/build/demo/profile.pb.gz"
echo "flame graph: $top/build/demo/stacks.folded (speedscope, flamegraph.pl)"
echo "trace: $top/build/demo/trace.json (ui.perfetto.dev, speedscope)"
echo "HTML report: $top/build/demo/report.html"

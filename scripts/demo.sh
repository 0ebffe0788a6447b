#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# demo.sh - make demo: profile the example engine and print its reports.
#
# Natively where tailor record can sample (tailor.ko loaded, or its BPF
# collector as root on a kernel with BTF); elsewhere in the test box (see
# profile-engine.sh), scripts/demo-steps.sh records query QUERY (default
# fig3) of the example engine and prints the operator report, the
# annotated plan and the activity timeline.  The profile for go tool
# pprof, flame graphs and trace viewers lands in build/demo/ too, and the
# full HTML report in build/demo/report.html, whose path is printed last.
#
# --backend llvm: the engine compiles with LLVM's ORC JIT in its process,
# into anonymous memory (the box then holds clang-14 and libLLVM); the
# report names that code through the jitdump the recording carries.
#
# Usage: scripts/demo.sh [--box|--native] [--backend c|llvm] [QUERY]
# Environment: DEMO_SCALE, DEMO_REPEAT (see demo-steps.sh).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
opts=() query=fig3
export DEMO_BACKEND=c
while [ $# -gt 0 ]; do
	case $1 in
	--box | --native) opts+=("$1") ;;
	--backend)
		case ${2:-} in
		c) ;;
		llvm) opts+=(--llvm) ;;
		*) echo "demo.sh: --backend wants c or llvm, not '${2:-}'" >&2; exit 2 ;;
		esac
		DEMO_BACKEND=$2
		shift ;;
	-h | --help) sed -n '/^# Usage:/,/^# Environment/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "demo.sh: unknown option '$1' (--box, --native, --backend, QUERY)" >&2; exit 2 ;;
	*) query=$1 ;;
	esac
	shift
done
"$top/scripts/profile-engine.sh" "${opts[@]}" --out "$top/build/demo" \
	--export report.html --export profile.pb.gz --export stacks.folded \
	--export trace.json -- "$top/scripts/demo-steps.sh" "$query"
echo
echo "pprof: go tool pprof -http=: $top/build/demo/profile.pb.gz"
echo "flame graph: $top/build/demo/stacks.folded (speedscope, flamegraph.pl)"
echo "trace: $top/build/demo/trace.json (ui.perfetto.dev, speedscope)"
echo "HTML report: $top/build/demo/report.html"

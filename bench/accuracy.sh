#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# accuracy.sh [--box|--native|--perf]: the accuracy oracle's tables (see
# accuracy-steps.sh for the method and its ACCURACY_* settings).
#   (default)  with tailor record: natively where it can sample
#              (tailor.ko, or its BPF collector as root on a kernel with
#              BTF), else in the test box (TCG); the box's perf profiles
#              the same baselines for a side-by-side of the operators'
#              shares
#   --box      in the test box even where tailor record samples here
#   --native   with tailor record on this machine, or fail
#   --perf     on this machine without the module: perf record -e
#              cpu-clock --intr-regs=r15, read by tailor report -- where
#              timing is real (no emulation)
# The tables are also left in build/bench/accuracy[-perf]/accuracy.txt.
# A benchmark: it prints figures and judges nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --perf ]; then
	shift
	[ $# -eq 0 ] || { echo "${0##*/}: --perf takes no other arguments" >&2; exit 2; }
	out=$top/build/bench/accuracy-perf
	echo "== building tailor and the example engine" >&2
	make -s -C "$top" userspace examples >&2
	rm -rf "$out/work"
	ACCURACY_PROFILER=perf "$top/bench/accuracy-steps.sh" "$top/build/userspace/tailor" \
		"$top/build/examples/tailor-engine" "$out/work"
	cp "$out/work/accuracy.txt" "$out/work/runs.txt" "$out/"
	exit 0
fi
# About 60 runs: under TCG each takes 10-30 s.
export TAILOR_BOX_TIMEOUT=${TAILOR_BOX_TIMEOUT:-3600}
exec "$top/scripts/profile-engine.sh" "$@" --out "$top/build/bench/accuracy" \
	--export accuracy.txt --export runs.txt --export shares.txt -- "$top/bench/accuracy-steps.sh"

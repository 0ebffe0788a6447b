#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# report-symbols.sh [--rounds N]: how long tailor report takes to name
# thousands of distinct functions in large stripped libraries, beside perf
# report on the same perf.data.
#
# The profile: the example engine's LLVM backend compiling every query N
# times (default 4) at a tiny scale, so that most samples fall in libLLVM
# (45k dynamic symbols) and libclang-cpp, recorded with perf record -e
# cpu-clock at 20 kHz.  A report names each distinct function once; before
# symtab_index.c, libdwfl walked the whole symbol table for each.  Times
# are wall clock, each tool run once after a warm-up read of the file.
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
rounds=4
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds N]" >&2; exit 2 ;;
	esac
done
command -v perf >/dev/null || { echo "report-symbols.sh: perf not found (apt install linux-perf)" >&2; exit 1; }
make -s -C "$top" userspace examples
engine=$top/build/examples/tailor-engine
tailor=$top/build/userspace/tailor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

queries=()
for _ in $(seq "$rounds"); do queries+=(all); done
perf record -q -e cpu-clock -F 20000 -o "$work/perf.data" -- \
	"$engine" --backend llvm -s 0.001 -w "$work/w" "${queries[@]}" >"$work/engine.out" 2>&1 ||
	{ cat "$work/engine.out" >&2; exit 1; }
cat "$work/perf.data" >/dev/null

# seconds CMD...: wall-clock seconds of one run, output dropped.
seconds() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }'
}
"$tailor" report -i "$work/perf.data" -l function -f csv --top 0 >"$work/functions.csv"
functions=$(($(wc -l <"$work/functions.csv") - 1))
samples=$(awk -F, 'NR > 1 { n += $3 } END { print n + 0 }' "$work/functions.csv")
echo "# $samples samples, $functions distinct functions ($(date -u +%F), $(nproc) CPUs)"
echo "| | seconds |"
echo "| --- | --- |"
echo "| tailor report -l function | $(seconds "$tailor" report -i "$work/perf.data" -l function -f csv --top 0) |"
echo "| perf report --stdio --sort dso,sym | $(seconds perf report -i "$work/perf.data" --stdio --sort dso,sym) |"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# backend-shares.sh: the run-to-run spread of each operator's share of
# fig3's samples under the engine's C and LLVM backends, natively with
# perf record -e cpu-clock.  The runs are those of
# tests/engine/llvm_backend_test.sh (tests/lib/backend-shares.sh: the same
# known work on the scan, the join and the group-by), the backends
# alternating; that test's tolerance and run count come from this spread.
#
# Prints one line per run (backend, run, seconds, then operator=samples/share%)
# and, per backend and operator, the mean, standard deviation, minimum and
# maximum of the shares.  Settings: SHARES_RUNS (30 per backend).
# Output: also build/bench/backend-shares/shares.txt.
# A benchmark: it prints figures and judges nothing.
set -euo pipefail
export LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/lib/backend-shares.sh
. "$top/tests/lib/backend-shares.sh"
[ $# -eq 0 ] || { echo "usage: ${0##*/} (SHARES_RUNS=N runs per backend)" >&2; exit 2; }
runs=${SHARES_RUNS:-30}
[ "$runs" -ge 2 ] 2>/dev/null || { echo "${0##*/}: SHARES_RUNS must be 2 or more" >&2; exit 2; }
out=$top/build/bench/backend-shares
tailor=$top/build/userspace/tailor
engine=$top/build/examples/tailor-engine
command -v perf >/dev/null || { echo "${0##*/}: needs perf (linux-perf)" >&2; exit 1; }
echo "== building tailor and the example engine" >&2
make -s -C "$top" userspace examples >&2
[ -f "$top/build/examples/tailor-engine-llvm.so" ] ||
	{ echo "${0##*/}: no LLVM backend (install llvm-14-dev and rebuild)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"

for r in $(seq 1 "$runs"); do
	for b in c llvm; do
		start=$(date +%s%N)
		perf record -q -e cpu-clock -F 4000 -o "$out/$b.data" -- \
			"$engine" --backend "$b" "${backend_shares_args[@]}" \
			-w "$out/gen-$b" -d "$out/$b.dict" -t "$out/$b.times" fig3 \
			>"$out/$b.log" 2>&1 || { echo "${0##*/}: run failed: $out/$b.log" >&2; exit 1; }
		end=$(date +%s%N)
		pid=$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$out/$b.times" | head -n 1)
		"$tailor" report -i "$out/$b.data" -d "$out/$b.dict" --query fig3 -f csv \
			--top 0 --pid "$pid" >"$out/$b.csv" 2>"$out/report.log" ||
			{ echo "${0##*/}: tailor report failed: $out/report.log" >&2; exit 1; }
		awk -F, -v b="$b" -v r="$r" -v s="$(((end - start) / 1000000))" '
			NR == 1 { printf "%s %d %.1fs", b, r, s / 1000 }
			$1 ~ /^(TableScan#2|HashJoin#3|GroupBy#4) / {
				printf " %s=%s/%.2f%%", substr($1, 1, index($1, " ") - 1), $3, $4
			}
			END { print "" }' "$out/$b.csv"
	done
done | tee "$out/shares.txt"

echo
awk '{
	for (i = 4; i <= NF; i++) {
		split($i, kv, "[=/%]")
		k = $1 " " kv[1]
		n[k]++; s[k] += kv[3]; q[k] += kv[3] * kv[3]
		if (!(k in lo) || kv[3] < lo[k]) lo[k] = kv[3]
		if (!(k in hi) || kv[3] > hi[k]) hi[k] = kv[3]
	}
}
END {
	printf "%-18s %5s %7s %6s %7s %7s\n", "backend operator", "runs", "mean%", "sd", "min%", "max%"
	for (k in n) {
		m = s[k] / n[k]
		v = (q[k] - n[k] * m * m) / (n[k] - 1)
		printf "%-18s %5d %7.2f %6.2f %7.2f %7.2f\n", k, n[k], m, sqrt(v > 0 ? v : 0), lo[k], hi[k]
	}
}' "$out/shares.txt" | sort | tee -a "$out/shares.txt"

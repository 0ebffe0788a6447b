#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# box_bottleneck_test.sh [OUT]: the planted serialization point found by
# tailor itself -- tailor.ko sampling, and its switches and wakeups (ABI
# 5) -- in the test box (Debian 6.1, 2 vCPUs, TCG), as
# bottleneck_test.sh finds it natively with perf.  The engine runs 'groups'
# on 2 workers, --merge locked and partitioned alternating, DEMO_RUNS
# times each (tests/parallel/bottleneck-steps.sh); bottleneck_checks.py
# judges the view's JSON and the engine's times: GroupBy in the merge
# ranks first when locked, its critical CMetric share at least halves when
# partitioned, and the merge's wall time falls (the query's is printed).
#
# Writes its work to OUT (default build/box-bottleneck).  Prints TAP.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build/box-bottleneck}
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
export DEMO_RUNS=${DEMO_RUNS:-3}

exports=()
for i in $(seq 1 "$DEMO_RUNS"); do
	for m in locked partitioned; do
		exports+=(--export "$m$i.json" --export "$m$i.times" --export "$m$i.out")
	done
done
rm -rf "$out"
mkdir -p "$out"
"$top/scripts/profile-engine.sh" --box --out "$out" "${exports[@]}" -- \
	"$top/tests/parallel/bottleneck-steps.sh" >"$out/box.log" 2>&1
rc=$?
checked=$(cat "$out"/*.out 2>/dev/null | grep -c '^check: ok')
if [ $rc -eq 0 ] && [ "$checked" -eq $((2 * DEMO_RUNS)) ]; then
	ok "the box ran 'groups' $DEMO_RUNS times per --merge mode under tailor record, results checked, each read by --view parallelism"
else
	TAP_EXCERPT="tail" not_ok "the box run (exit $rc, $checked results checked ok)" "$out/box.log"
	tap_totals
	exit 1
fi
if python3 "$top/tests/parallel/bottleneck_checks.py" "$out" "$DEMO_RUNS" >"$out/checks" \
	2>"$out/why"; then
	tap_from <"$out/checks"
else
	not_ok "bottleneck_checks.py ran to its end" "$out/why"
fi
tap_totals

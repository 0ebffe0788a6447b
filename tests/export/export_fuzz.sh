#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# export_fuzz.sh [ROUNDS] [SEED]: random profiles through every exporter
# and back through a reader of each format that tailor did not write:
# go tool pprof (the pprof, its stacks must equal the folded ones, its
# total the table's), Python's json (the Chrome trace: valid, slices
# nested per thread, counters summing to the samples).  Each profile is
# chosen by a seeded generator (reproducible: the failing seed and spec are
# printed): random groups of samples on lines of real binaries, in the
# kernel or nowhere, with random tags and threads, with and without round
# marks.  Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-25}
seed=${2:-20261122}
build=$top/build
tailor=$build/userspace/san/tailor
synth=$build/userspace/synth_profile
wl=$build/workloads
check=$top/tests/golden/export_check.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
marker() { grep -n "golden: $2" "$1" | cut -d: -f1; }

for f in "$tailor" "$synth" "$wl/tw_ops"; do
	[ -x "$f" ] || { not_ok "$f missing: make && make -C userspace test-tools"; tap_totals; exit 1; }
done
command -v go >/dev/null || { not_ok "go tool pprof missing (scripts/setup.sh installs golang-go)"; tap_totals; exit 1; }
export GOCACHE=$work/gocache

"$wl/tw_ops" --dict "$work/ops.dict" 0 0 0
ops=$top/tests/workloads/tw_ops.c jit=$top/tests/workloads/tw_jit.c
places=("$wl/tw_ops:$ops:$(marker "$ops" scan)" "$wl/tw_ops:$ops:$(marker "$ops" probe)"
	"$wl/tw_ops:$ops:$(marker "$ops" combine)" "$wl/libtw_jit.so:$jit:$(marker "$jit" jit)"
	kernel nomap "$wl/tw_ops@op_scan")
tags=(0 2 3 0x63 0x10003 1)

RANDOM=$seed
bad=0
for r in $(seq 1 "$rounds"); do
	groups=$((RANDOM % 12 + 1))
	: >"$work/spec"
	for _ in $(seq 1 "$groups"); do
		printf '%d\t%s\t%s\t%d\n' $((RANDOM % 700 + 1)) "${places[RANDOM % ${#places[@]}]}" \
			"${tags[RANDOM % ${#tags[@]}]}" $((1000 + RANDOM % 3)) >>"$work/spec"
	done
	flags=""
	[ $((RANDOM % 2)) = 1 ] && flags=-R
	if ! "$synth" $flags -o "$work/p.rec" "$work/spec" >/dev/null 2>"$work/err"; then
		not_ok "round $r: synth_profile failed" "$work/err"
		bad=1
		continue
	fi
	problem=""
	total=$("$tailor" report -i "$work/p.rec" -d "$work/ops.dict" -f json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])')
	"$tailor" report -i "$work/p.rec" -d "$work/ops.dict" -f folded 2>/dev/null | sort >"$work/folded"
	"$tailor" report -i "$work/p.rec" -d "$work/ops.dict" -f pprof -o "$work/p.pb.gz" 2>/dev/null
	"$tailor" report -i "$work/p.rec" -d "$work/ops.dict" -f chrome -o "$work/p.json" 2>/dev/null
	go tool pprof -traces -sample_index=samples "$work/p.pb.gz" 2>"$work/err" |
		python3 "$check" traces | sort >"$work/traces"
	cmp -s "$work/folded" "$work/traces" || problem="pprof stacks differ from the folded ones"
	[ "$(awk '{ s += $NF } END { print s + 0 }' "$work/folded")" = "$total" ] ||
		problem="$problem; folded counts do not sum to $total"
	python3 "$check" nested "$work/p.json" >"$work/nest" 2>&1 || problem="$problem; $(head -1 "$work/nest")"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = sum(sum(e["args"].values()) for e in d["traceEvents"] if e["ph"] == "C")
sys.exit(0 if c == int(sys.argv[2]) and d["otherData"]["samples"] == int(sys.argv[2]) else 1)
' "$work/p.json" "$total" || problem="$problem; chrome counters do not sum to $total"
	if [ -z "$problem" ]; then
		ok "round $r ($groups groups, $total samples${flags:+, rounds}): pprof, folded and chrome agree through their readers"
	else
		not_ok "round $r (seed $seed): $problem" "$work/spec"
		bad=1
	fi
done
tap_totals

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# bottleneck-steps.sh TAILOR ENGINE OUT: the example engine's query
# 'groups' on 2 workers, --merge locked and partitioned alternating,
# RUNS times each, every run under tailor record (with the tag word) and
# read by tailor report --view parallelism (a profile-engine.sh STEPS
# script: busybox sh in the test box).  Writes OUT/MODE<i>.json (the
# view's JSON), OUT/MODE<i>.times (the engine's times) and
# OUT/MODE<i>.out (its output, with its result check).
#
# Environment: DEMO_SCALE (default 0.05), DEMO_REPEAT (default 4),
# DEMO_RUNS (default 3).
set -eu

tailor=$1 engine=$2 out=$3
scale=${DEMO_SCALE:-0.05}
repeat=${DEMO_REPEAT:-4}
runs=${DEMO_RUNS:-3}
mkdir -p "$out"

i=1
while [ "$i" -le "$runs" ]; do
	for m in locked partitioned; do
		echo "== $m$i: tailor record -- tailor-engine -s $scale -n $repeat -j 2 --merge $m groups"
		"$tailor" record -q --tag-word tailor_tag_word -o "$out/$m$i.rec" -- \
			"$engine" -s "$scale" -n "$repeat" -j 2 -r 0 --merge "$m" \
			-d "$out/$m$i.dict" -w "$out/gen-$m$i" -t "$out/$m$i.times" groups \
			>"$out/$m$i.out" 2>&1 || {
			cat "$out/$m$i.out"
			exit 1
		}
		grep '^check: \|wall' "$out/$m$i.out"
		"$tailor" report -i "$out/$m$i.rec" -d "$out/$m$i.dict" --query groups \
			-v parallelism -f json -o "$out/$m$i.json"
		rm -f "$out/$m$i.rec"
	done
	i=$((i + 1))
done

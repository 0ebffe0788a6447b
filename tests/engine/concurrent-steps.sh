#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# concurrent-steps.sh TAILOR ENGINE OUT: the example engine's queries run
# alone, then by two clients at once on the same two workers, each run
# recorded with the tag word (a profile-engine.sh STEPS script; busybox sh
# in the test box).  Writes OUT/NAME.out (the engine's output, with its
# result checks), OUT/NAME.folded (samples per query and operator:
# tailor report --format folded --stack query,operator) and OUT/NAME.qcsv
# (samples per query) for NAME = alone-fig3, alone-twojoins, mixed.
#
# Environment: DEMO_SCALE (default 0.05), DEMO_REPEAT (default 12).
set -eu

tailor=$1 engine=$2 out=$3
scale=${DEMO_SCALE:-0.05}
repeat=${DEMO_REPEAT:-12}
mkdir -p "$out"

run() {
	name=$1
	shift
	echo "== $name: tailor-engine -j 2 $*"
	"$tailor" record -q --tag-word tailor_tag_word -o "$out/$name.rec" -- \
		"$engine" -s "$scale" -n "$repeat" -r 0 -j 2 -d "$out/$name.dict" \
		-w "$out/gen-$name" "$@" >"$out/$name.out" 2>&1 || {
		cat "$out/$name.out"
		exit 1
	}
	grep -c '^check: ok' "$out/$name.out" | sed 's/$/ results checked ok/'
	"$tailor" report -i "$out/$name.rec" -d "$out/$name.dict" -f folded \
		--stack query,operator -o "$out/$name.folded"
	"$tailor" report -i "$out/$name.rec" -d "$out/$name.dict" -l query -f csv \
		--top 0 >"$out/$name.qcsv"
	cat "$out/$name.qcsv"
}
run alone-fig3 fig3
run alone-twojoins twojoins
# Client 1 runs fig3 then twojoins, client 2 twojoins then fig3.
run mixed -c 2 fig3 twojoins

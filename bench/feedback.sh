#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# feedback.sh: profiles fed back into compilation (tailor-engine
# --feedback), measured on this machine with perf record -e cpu-clock
# --intr-regs=r15 (no module needed), for every fixed query at two scales.
#
# For each query and scale:
#   1. the loop: a run at the default level (-O2) is profiled and reported
#      (tailor report --level task --by-query -f json); the next run compiles
#      with --feedback PROFILE --feedback-times TIMES of every run before
#      it (the engine judges a level some run measured by what it
#      measured, and orders filters' terms), under perf again, and so on
#      until a run's levels and terms' order (opt=, terms=) equal the run's
#      before it: that count of feedback runs is "iterations" (at most
#      FEEDBACK_MAX_ITER; "no" if they never repeat, the last levels are
#      then measured);
#   2. the measurement: FEEDBACK_ROUNDS rounds, each a run without and a
#      run with the loop's last profile and times (the order alternating
#      round by round, so that a drift of the host hits both), no profiler
#      attached: compile time (the C compiler and dlopen), execution wall
#      time, and their total, the query's latency.
# The table gives the median of the rounds, and the total's minimum; the
# last column says whether feedback's median total is better, and by how
# much.  Goal (issue 16): better on at least half the queries, never more
# than 5% worse on any.
#
# Settings: FEEDBACK_SCALES (default "0.05 0.5"), FEEDBACK_QUERIES
# (default all fixed queries), FEEDBACK_ROUNDS (7), FEEDBACK_MAX_ITER (5),
# FEEDBACK_FREQ (4000).  Output: the table on stdout and in
# build/bench/feedback/feedback.txt; every run's files under work/.
# A benchmark: it prints figures and judges nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
[ $# -eq 0 ] || { echo "usage: ${0##*/} (settings in FEEDBACK_* variables; see the script)" >&2; exit 2; }
scales=${FEEDBACK_SCALES:-0.05 0.5}
queries=${FEEDBACK_QUERIES:-fig3 twojoins q1 sfja groups terms}
rounds=${FEEDBACK_ROUNDS:-7}
max_iter=${FEEDBACK_MAX_ITER:-5}
[ "$max_iter" -ge 1 ] 2>/dev/null || { echo "${0##*/}: FEEDBACK_MAX_ITER must be 1 or more" >&2; exit 2; }
freq=${FEEDBACK_FREQ:-4000}
out=$top/build/bench/feedback
tailor=$top/build/userspace/tailor
engine=$top/build/examples/tailor-engine
command -v perf >/dev/null || { echo "${0##*/}: needs perf (linux-perf)" >&2; exit 1; }
echo "== building tailor and the example engine" >&2
make -s -C "$top" userspace examples >&2
rm -rf "$out"
mkdir -p "$out/work"

field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -1; }
# What feedback chose, as one word: the levels, and the terms' order if any.
choice() {
	local terms
	terms=$(field "$1" terms)
	echo "$(field "$1" opt)${terms:+/$terms}"
}

# profiled DIR ITER [ENGINE ARGS...]: a run under perf, its times and profile.
profiled() {
	local dir=$1 i=$2
	shift 2
	perf record -q -e cpu-clock -F "$freq" --intr-regs=r15 --user-regs=ip,r15 \
		-o "$dir/perf$i.data" -- "$engine" -d "$dir/q$i.dict" -t "$dir/times$i" \
		-w "$dir/gen$i" "$@" >"$dir/run$i.log" 2>&1 ||
		{ echo "${0##*/}: profiled run failed: $dir/run$i.log" >&2; exit 1; }
	"$tailor" report -i "$dir/perf$i.data" -d "$dir/q$i.dict" --level task \
		--by-query -f json >"$dir/profile$i.json" 2>"$dir/report$i.log" ||
		{ echo "${0##*/}: tailor report failed: $dir/report$i.log" >&2; exit 1; }
}

# timed DIR NAME [ENGINE ARGS...]: one unprofiled run; "compile_ns exec_wall_ns".
timed() {
	local dir=$1 name=$2
	shift 2
	"$engine" -t "$dir/$name.times" -w "$dir/gen-$name" "$@" >"$dir/$name.log" 2>&1 ||
		{ echo "${0##*/}: run failed: $dir/$name.log" >&2; exit 1; }
	echo "$(field "$dir/$name.times" compile_ns) $(field "$dir/$name.times" exec_wall_ns)"
}

results=$out/rounds.txt
: >"$results"
for scale in $scales; do
	for q in $queries; do
		dir=$out/work/$q-$scale
		mkdir -p "$dir"
		echo "== $q at scale $scale: the loop" >&2
		profiled "$dir" 0 -s "$scale" "$q"
		levels=$(choice "$dir/times0")
		iter=no
		history=()
		for i in $(seq 1 "$max_iter"); do
			history+=(--feedback "$dir/profile$((i - 1)).json"
				--feedback-times "$dir/times$((i - 1))")
			profiled "$dir" "$i" -s "$scale" "${history[@]}" "$q"
			now=$(choice "$dir/times$i")
			echo "   iteration $i: $now" >&2
			if [ "$now" = "$levels" ] && [ "$i" -gt 1 ]; then
				iter=$((i - 1))
				break
			fi
			levels=$now
		done
		# Every profile up to the last run's: they chose its levels.
		fb=("${history[@]}")
		echo "== $q at scale $scale: $rounds rounds without and with feedback ($levels)" >&2
		for r in $(seq 1 "$rounds"); do
			if [ $((r % 2)) = 1 ]; then
				a=$(timed "$dir" "base$r" -s "$scale" "$q")
				b=$(timed "$dir" "fb$r" -s "$scale" "${fb[@]}" "$q")
			else
				b=$(timed "$dir" "fb$r" -s "$scale" "${fb[@]}" "$q")
				a=$(timed "$dir" "base$r" -s "$scale" "$q")
			fi
			echo "$q $scale $iter $levels base $a" >>"$results"
			echo "$q $scale $iter $levels feedback $b" >>"$results"
		done
	done
done

{
	echo "# tailor-engine --feedback, $(date -u +%Y-%m-%d), $(nproc) CPUs," \
		"$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $rounds rounds"
	echo "# times in ms: median of the rounds (compile, execution wall, total), and the total's minimum"
	# shellcheck disable=SC2154 # from bench-lib.sh
	awk "$bench_median_awk"'
	{
		k = $1 " " $2; mode = $5
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k; iter[k] = $3; lv[k] = $4 }
		c = $6 / 1e6; e = $7 / 1e6
		t[k SUBSEP mode "c", ++n[k SUBSEP mode "c"]] = c
		t[k SUBSEP mode "e", ++n[k SUBSEP mode "e"]] = e
		t[k SUBSEP mode "t", ++n[k SUBSEP mode "t"]] = c + e
		if (!((k, mode) in lo) || c + e < lo[k, mode]) lo[k, mode] = c + e
	}
	END {
		printf "%-9s %5s %4s %-28s | %7s %7s %7s %7s | %7s %7s %7s %7s | %s\n", "query",
			"scale", "iter", "levels (pipe:level)/terms", "compile", "exec", "total",
			"min", "compile", "exec", "total", "min", "feedback vs without"
		printf "%-9s %5s %4s %-28s | %-31s | %-31s |\n", "", "", "", "", "without feedback (-O2)",
			"with feedback"
		for (i = 1; i <= nk; i++) {
			k = order[i]; split(k, kq, " ")
			bt = median(k SUBSEP "baset"); ft = median(k SUBSEP "feedbackt")
			d = (ft - bt) / bt * 100
			if (d < 0) better++
			if (d > 5) worse++
			printf "%-9s %5s %4s %-28s | %7.1f %7.1f %7.1f %7.1f | %7.1f %7.1f %7.1f %7.1f | %+.1f%% %s\n",
				kq[1], kq[2], iter[k], lv[k],
				median(k SUBSEP "basec"), median(k SUBSEP "basee"), bt, lo[k, "base"],
				median(k SUBSEP "feedbackc"), median(k SUBSEP "feedbacke"), ft,
				lo[k, "feedback"], d, (d < 0 ? "better" : (d > 5 ? "WORSE by more than 5%" : "worse"))
		}
		printf "\nfeedback better on %d of %d (goal: at least half); more than 5%% worse on %d (goal: none)\n",
			better, nk, worse
	}' "$results"
} | tee "$out/feedback.txt"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# demo-steps.sh TAILOR ENGINE OUT [QUERY]: the demo itself, wherever it
# runs (natively with tailor.ko loaded, or in the test box under busybox
# sh, hence POSIX sh): record the example engine running QUERY (default
# fig3) with its Tagging Dictionary, then print the operator report, the
# annotated plan and the activity timeline, and write the HTML report to
# OUT/report.html and the profile for other readers: OUT/profile.pb.gz
# (go tool pprof), OUT/stacks.folded (flame graphs) and OUT/trace.json
# (ui.perfetto.dev, speedscope).  The engine runs its queries on a pool of
# worker threads; the C compiler processes it starts are sampled too, each
# under its own pid and name.  The thread's tag word names the query run.
# Last, two clients run fig3 and twojoins at once on the same two workers:
# the samples per query run, each query's operators, and the workers'
# lanes (which query and operator each ran over time, and its states from
# the context switches).  And EXPLAIN ANALYZE from samples: the engine runs
# QUERY again under tailor record and prints its plan with each operator's
# time, share and rows.
#
# Environment: DEMO_SCALE (default 0.05), DEMO_REPEAT (default 10),
# DEMO_CLIENTS (default 1: clients running the query at once),
# DEMO_BACKEND (default c: the engine's --backend).
set -eu

tailor=$1 engine=$2 out=$3 query=${4:-fig3}
scale=${DEMO_SCALE:-0.05}
repeat=${DEMO_REPEAT:-10}
clients=${DEMO_CLIENTS:-1}
backend=${DEMO_BACKEND:-c}
mkdir -p "$out"

# watched STDOUT LOG ARGS...: tailor record ARGS, its stdout to STDOUT (-
# for ours) and stderr to LOG; with WATCHED_CMD set, that command and
# ARGS instead (the engine recording itself).  A recording still running after 300 s
# (each takes under 20 s in the box) is shown from inside -- every thread
# of tailor, the engine and its compiler with its state, wait channel and
# kernel stack, the blocked tasks, the kernel's last messages -- and then
# killed, so that a hang says where it is before the box's time limit
# ends everything.  (Both recordings once never ended in CI: the whole box
# had hung in live kernel patching, see tests/box/hold-static-keys.c.)
watched() {
	w_stdout=$1 w_log=$2
	shift 2
	if [ -z "${WATCHED_CMD:-}" ]; then
		set -- "$tailor" record "$@"
	else
		set -- "$WATCHED_CMD" "$@"
	fi
	if [ "$w_stdout" = - ]; then
		"$@" 2>"$w_log" &
	else
		"$@" >"$w_stdout" 2>"$w_log" &
	fi
	w_pid=$!
	w_waited=0
	while kill -0 "$w_pid" 2>/dev/null && [ "$w_waited" -lt 300 ]; do
		sleep 1
		w_waited=$((w_waited + 1))
	done
	if kill -0 "$w_pid" 2>/dev/null; then
		echo "demo: tailor record has not ended after ${w_waited} s; its processes:" >&2
		for p in /proc/[0-9]*; do
			case $(cat "$p/comm" 2>/dev/null) in tailor*|cc*|as|ld|collect2|worker*) ;; *) continue ;; esac
			echo "  ${p#/proc/} $(cat "$p/comm" 2>/dev/null):" \
			     "$(grep -E '^(State|PPid|Threads|SigPnd|ShdPnd)' "$p/status" 2>/dev/null | tr '\n\t' '  ')" >&2
			for t in "$p"/task/*; do
				echo "    ${t##*/} $(cat "$t/comm" 2>/dev/null):" \
				     "$(sed -n 's/^State:[[:space:]]*//p' "$t/status" 2>/dev/null)" \
				     "wchan $(cat "$t/wchan" 2>/dev/null)" >&2
				sed 's/^/      /' "$t/stack" 2>/dev/null | head -n 12 >&2 || true
			done
		done
		echo "  blocked tasks (sysrq w):" >&2
		{ echo w >/proc/sysrq-trigger; } 2>/dev/null && dmesg | tail -n 60 | sed 's/^/    /' >&2
		[ "$w_stdout" = - ] || cat "$w_stdout" >&2
		cat "$w_log" >&2
		kill -9 "$w_pid" 2>/dev/null || true
		return 1
	fi
	if ! wait "$w_pid"; then
		[ "$w_stdout" = - ] || cat "$w_stdout" >&2
		cat "$w_log" >&2
		return 1
	fi
}

echo "== tailor record --tag-word tailor_tag_word -- tailor-engine --backend $backend $query (scale $scale, executed $repeat times, $clients client(s))"
# Its messages after the run: on a console, record's live status line
# would run into the engine's output.
watched - "$out/record.log" --tag-word tailor_tag_word -o "$out/$query.rec" -- \
	"$engine" --backend "$backend" -s "$scale" -n "$repeat" -c "$clients" -r 5 \
	-d "$out/$query.dict" -w "$out/generated" -t "$out/times" "$query" || exit 1
cat "$out/record.log"
# What the samples take in the file, packed (format 2): tailor dump.
"$tailor" dump "$out/$query.rec" | sed -n 's/^\(samples\|sample_bytes\|bytes_per_sample\): /# recording: \1: /p'

report() {
	"$tailor" report -i "$out/$query.rec" -d "$out/$query.dict" "$@"
}
# The engine's process; the compiler's processes it ran are in the file too.
pid=$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$out/times" | head -n 1)
echo
echo "== every process: the engine, and the C compiler it ran (tailor report --level operator --top 8)"
report --level operator --top 8
echo
echo "== operator report of the engine (tailor report --level operator --pid $pid)"
report --level operator --pid "$pid"
echo
echo "== annotated plan (tailor report --view plan --pid $pid)"
report --view plan --pid "$pid"
echo
echo "== activity timeline of the operators (tailor timeline)"
report --view timeline --html "$out/report.html"
echo
echo "== the profile for other readers (tailor report --format pprof|folded|chrome)"
report --format pprof -o "$out/profile.pb.gz"
report --format folded -o "$out/stacks.folded"
report --format chrome -o "$out/trace.json"

echo
echo "== two clients at once, fig3 and twojoins on the same 2 workers (tailor-engine -j 2 -c 2)"
watched "$out/concurrent.out" "$out/record-concurrent.log" \
	--tag-word tailor_tag_word -o "$out/concurrent.rec" -- \
	"$engine" --backend "$backend" -s "$scale" -n "$repeat" -j 2 -c 2 -r 0 \
	-d "$out/concurrent.dict" \
	-w "$out/generated-concurrent" -t "$out/concurrent.times" fig3 twojoins || exit 1
grep '^check: \|execution' "$out/concurrent.out"
cat "$out/record-concurrent.log"
concurrent() {
	"$tailor" report -i "$out/concurrent.rec" -d "$out/concurrent.dict" --pid "$cpid" "$@"
}
cpid=$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$out/concurrent.times" | head -n 1)
echo
echo "== samples per query run: each client's run apart, by the tag word (tailor report --level query --pid $cpid)"
concurrent --level query
echo
echo "== each query run's operators (tailor report --by-query --top 5 --pid $cpid)"
concurrent --by-query --top 5
echo
echo "== the workers' lanes, with their states from the context switches (tailor report --view lanes --pid $cpid)"
concurrent --view lanes
echo
echo "== EXPLAIN ANALYZE from samples (tailor-engine --explain-analyze $query)"
# The engine records itself with this tailor (tailor.ko is here).
export TAILOR="$tailor"
WATCHED_CMD=$engine
watched - "$out/explain.log" --explain-analyze --profiler tailor --backend "$backend" \
	-s "$scale" -n "$repeat" "$query" || exit 1
WATCHED_CMD=

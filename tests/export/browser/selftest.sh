#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Self-test of check.mjs: runs each subcommand on tiny hand-written inputs,
# some that the readers must accept and some they must reject, and prints
# TAP.  Needs the readers installed (install.sh); without them every test
# fails, none is skipped.
#
#   tests/export/browser/selftest.sh        (KEEP=1 keeps the temp dir)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check=$here/check.mjs
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tailor-browser-selftest.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
	echo "# keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

# ---------------------------------------------------------------- inputs

# Chrome trace event format, JSON object form: metadata names one process
# and two threads; complete events ("X", ts/dur in microseconds) nest
# strictly within each thread; a counter ("C") that flame graphs ignore.
cat >"$tmp/trace.json" <<'EOF'
{"traceEvents": [
 {"ph": "M", "name": "process_name", "pid": 7, "tid": 7, "args": {"name": "demo"}},
 {"ph": "M", "name": "thread_name", "pid": 7, "tid": 7, "args": {"name": "main"}},
 {"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": "worker"}},
 {"ph": "X", "name": "main", "cat": "cpu", "pid": 7, "tid": 7, "ts": 0, "dur": 1000},
 {"ph": "X", "name": "parse", "cat": "cpu", "pid": 7, "tid": 7, "ts": 100, "dur": 300},
 {"ph": "X", "name": "lex", "cat": "cpu", "pid": 7, "tid": 7, "ts": 150, "dur": 100},
 {"ph": "X", "name": "eval", "cat": "cpu", "pid": 7, "tid": 7, "ts": 500, "dur": 400},
 {"ph": "X", "name": "work", "cat": "cpu", "pid": 7, "tid": 8, "ts": 200, "dur": 600},
 {"ph": "X", "name": "hash", "cat": "cpu", "pid": 7, "tid": 8, "ts": 300, "dur": 200},
 {"ph": "C", "name": "rss", "pid": 7, "tid": 7, "ts": 0, "args": {"kB": 1024}},
 {"ph": "C", "name": "rss", "pid": 7, "tid": 7, "ts": 500, "args": {"kB": 4096}}
],
 "displayTimeUnit": "ms"}
EOF

# Brendan Gregg's collapsed stacks: "frame;frame;frame count".
cat >"$tmp/stacks.folded" <<'EOF'
main;parse;lex 10
main;eval 30
main;parse 5
worker;hash 7
EOF

# Truncated JSON: no importer claims it.
head -c 150 "$tmp/trace.json" >"$tmp/broken.json"

# Well-formed JSON, but the events overlap instead of nesting: speedscope
# imports it only after repairing the stack, which check.mjs rejects.
cat >"$tmp/overlap.json" <<'EOF'
{"traceEvents": [
 {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
 {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 10}
]}
EOF

# A self-contained page with an inline SVG bar chart.
cat >"$tmp/chart.html" <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>tailor bar chart</title></head>
<body>
<h1>Samples per function</h1>
<svg xmlns="http://www.w3.org/2000/svg" width="320" height="160" viewBox="0 0 320 160">
 <line x1="30" y1="140" x2="310" y2="140" stroke="black"/>
 <rect x="40" y="40" width="50" height="100" fill="#d9534f"/>
 <rect x="110" y="80" width="50" height="60" fill="#f0ad4e"/>
 <rect x="180" y="110" width="50" height="30" fill="#5cb85c"/>
 <text x="45" y="155" font-size="10">main</text>
 <text x="115" y="155" font-size="10">eval</text>
 <text x="185" y="155" font-size="10">lex</text>
</svg>
</body>
</html>
EOF

cat >"$tmp/blank.html" <<'EOF'
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body></body></html>
EOF

# ----------------------------------------------------------------- tests

n=0
pass=0
fail=0

# run WANT_RC DESCRIPTION GREP... -- ARGS...: run check.mjs ARGS, expect exit
# status WANT_RC and every extended regex GREP in its output.
run() {
	local want=$1 desc=$2 rc=0 t0 ms out pat ok=1 why=
	shift 2
	local pats=()
	while [ "$1" != -- ]; do
		pats+=("$1")
		shift
	done
	shift
	n=$((n + 1))
	t0=$(date +%s%N)
	out=$(node "$check" "$@" 2>&1) || rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$rc" -ne "$want" ]; then
		ok=0
		why="exit $rc, wanted $want"
	fi
	for pat in "${pats[@]}"; do
		if ! grep -Eq -- "$pat" <<<"$out"; then
			ok=0
			why="${why:+$why; }no line matching /$pat/"
		fi
	done
	# shellcheck disable=SC2001 # prefix every line of a multi-line string
	sed 's/^/# /' <<<"$out"
	if [ "$ok" = 1 ]; then
		pass=$((pass + 1))
		echo "ok $n - $desc (${ms} ms)"
	else
		fail=$((fail + 1))
		echo "not ok $n - $desc (${ms} ms): $why"
	fi
}

echo "TAP version 13"
echo "1..7"
run 0 "speedscope imports a Chrome trace with two threads" \
	'^importer: Trace Event Format profile$' '^profiles: 2$' \
	'^profile 1: "demo \(pid 7\), main \(tid 7\)" calls=4 ' \
	'^profile 2: "demo \(pid 7\), worker \(tid 8\)" calls=2 ' -- \
	speedscope "$tmp/trace.json" --screenshot "$tmp/trace.png"
run 0 "speedscope imports collapsed stacks" \
	'^importer: collapsed stack format$' '^frames: 6$' 'weight=52 ' -- \
	speedscope "$tmp/stacks.folded" --screenshot "$tmp/folded.png"
run 1 "speedscope check fails on a truncated file" \
	'could not import .*broken\.json: Unrecognized format' -- \
	speedscope "$tmp/broken.json"
run 1 "speedscope check fails on overlapping events it must repair" \
	'^warning: .*Tried to end' -- \
	speedscope "$tmp/overlap.json"
run 0 "html check passes a page with an SVG bar chart" \
	'^svgs: 1$' '^svg 1: 320x160 shapes=4$' -- \
	html "$tmp/chart.html" --screenshot "$tmp/chart.png"
run 1 "html check fails on a blank page" \
	'rendered blank' -- \
	html "$tmp/blank.html" --screenshot "$tmp/blank.png"
# A missing reader must fail (exit 2), never skip.
TAILOR_READERS=$tmp/no-readers run 2 "check fails when the readers are not installed" \
	'not installed.*install\.sh' -- \
	speedscope "$tmp/stacks.folded"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]

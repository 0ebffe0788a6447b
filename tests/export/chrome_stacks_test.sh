#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# chrome_stacks_test.sh [BUILD_DIR]: the Chrome trace's sampled call
# stacks (perf record -g), natively.  tests/symbols/hot_lines.c is built
# by clang with frame pointers in every function (gcc 12 sets up none in
# a leaf that needs none) and recorded with perf record -g (and context
# switches: the trace then begins at the command's exec, before the first
# sample); so is the example engine, its plan above the stacks; Python's json
# reads the trace, rebuilds each sample's stack from the stackFrames'
# parents and holds it to what is known: the multiset of stacks is
# tailor's folded stacks (which tests/symbols/perf_compare_test.sh holds
# to perf script's), one sample per sample of the table, each inside the
# profile and inside its thread's slice of its leaf, in time order,
# its frames shared.  Without call stacks the trace has neither.
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
tailor=$build/userspace/tailor
engine=$build/examples/tailor-engine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"

for f in "$tailor" "$engine"; do
	[ -x "$f" ] || { not_ok "$f missing: make"; tap_totals; exit 1; }
done
for tool in perf python3 clang; do
	command -v $tool >/dev/null || { not_ok "$tool missing (scripts/setup.sh installs it)"; tap_totals; exit 1; }
done

if ! clang -std=gnu11 -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	"$top/tests/symbols/hot_lines.c" -o "$work/calls" >"$work/log" 2>&1 ||
   ! perf record -q -g --switch-events -e cpu-clock:u -c 250000 -o "$work/calls.data" -- "$work/calls" 40 \
	>>"$work/log" 2>&1 ||
   ! perf record -q -e cpu-clock:u -c 250000 -o "$work/flat.data" -- "$work/calls" 10 \
	>>"$work/log" 2>&1; then
	not_ok "hot_lines with frame pointers, under perf record with and without -g" "$work/log"
	tap_totals
	exit 1
fi
# The profile's span in microseconds, from perf's own first and last samples.
perf script -i "$work/calls.data" -F time 2>/dev/null |
	awk '{ t = $1 + 0; if (!n++) first = t; last = t }
	     END { printf "%.0f\n", (last - first) * 1e6 }' >"$work/span"

# stacks_check TRACE FOLDED TOTAL SPAN_US LEAF_LEVEL PATTERN MIN [CATEGORIES]:
# the facts of the header, as "ok ..." and "not ok ...: why" lines; at
# least MIN stacks match the regex PATTERN, and the root frames of those
# have the comma-separated CATEGORIES (the plan's levels).
stacks_check() {
	python3 - "$@" <<'EOF'
import json, re, sys
from collections import Counter, defaultdict

trace_path, folded_path, leaf_level = sys.argv[1], sys.argv[2], sys.argv[5]
total, span = int(sys.argv[3]), int(sys.argv[4])
pattern, least = re.compile(sys.argv[6]), int(sys.argv[7])
categories = sys.argv[8].split(",") if len(sys.argv) > 8 else []
try:
    t = json.load(open(trace_path))
except ValueError as e:
    print("not ok the trace is JSON: %s" % e)
    sys.exit()
frames, samples = t.get("stackFrames"), t.get("samples")
if not isinstance(frames, dict) or not isinstance(samples, list):
    print("not ok the trace has stackFrames and samples: keys %s" % sorted(t))
    sys.exit()

# Frames: ids from 1, every parent among them, each (parent, name, category) once.
bad = [k for k, f in frames.items()
       if not k.isdigit() or int(k) < 1 or not isinstance(f.get("name"), str) or
       not isinstance(f.get("category"), str) or
       ("parent" in f and str(f["parent"]) not in frames)]
keys = Counter((f.get("parent"), f["name"], f["category"]) for f in frames.values())
shared = [k for k, n in keys.items() if n > 1]
if bad or shared:
    print("not ok frames: ids from 1, parents among them, each (parent, name, category) once: "
          "bad %s, repeated %s" % (bad[:3], shared[:3]))
else:
    print("ok frames: ids from 1, parents among them, each (parent, name, category) once "
          "(%d frames for %d samples)" % (len(frames), len(samples)))

def stack(sf):
    path, seen = [], set()
    while sf is not None:
        if sf in seen:
            return None
        seen.add(sf)
        path.append(frames[str(sf)])
        sf = path[-1].get("parent")
    return path[::-1]

ours = Counter()
broken, miscategorized = 0, set()
for s in samples:
    path = stack(s.get("sf")) if str(s.get("sf")) in frames else None
    if path is None:
        broken += 1
        continue
    st = ";".join(f["name"] for f in path)
    ours[st] += 1
    if pattern.search(st) and [f["category"] for f in path[:len(categories)]] != categories:
        miscategorized.add(st)
folded = Counter()
for l in open(folded_path):
    st, n = l.rstrip("\n").rsplit(" ", 1)
    folded[st] += int(n)
matching = sum(1 for st in folded if pattern.search(st))
if broken or ours != folded or matching < least:
    diff = sorted(set(ours) ^ set(folded) | {k for k in ours if ours[k] != folded[k]})
    print("not ok each sample's stack, rebuilt from the frames' parents, as the folded stacks: "
          "%d broken, %d stacks match /%s/, differing: %s" %
          (broken, matching, pattern.pattern,
           ["%s: trace %d, folded %d" % (k, ours[k], folded[k]) for k in diff[:5]]))
else:
    print("ok each sample's stack, rebuilt from the frames' parents, as the folded stacks "
          "(%d stacks, %d match /%s/)" % (len(folded), matching, pattern.pattern))
if categories:
    if miscategorized:
        print("not ok the plan's frames have their levels as categories (%s): not in %s" %
              (",".join(categories), sorted(miscategorized)[:3]))
    else:
        print("ok the plan's frames have their levels as categories (%s)" % ",".join(categories))
if len(samples) != total or sum(folded.values()) != total:
    print("not ok one sample event per sample: %d events, %d folded, the table %d" %
          (len(samples), sum(folded.values()), total))
else:
    print("ok one sample event per sample: %d, as the table" % total)

# Times: whole microseconds within the profile, each thread's in order.
# The profile begins at the first sample, which is the first slice's
# beginning: 0, or later where thread states begin at the command's exec.
begin = min(e["ts"] for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "state")
out, last, disorder = [], {}, 0
for s in samples:
    ts = s.get("ts")
    if not isinstance(ts, int) or ts < begin or ts > begin + span + 1:
        out.append(ts)
    key = (s.get("pid"), s.get("tid"))
    if isinstance(ts, int) and ts < last.get(key, 0):
        disorder += 1
    last[key] = ts
named = [s for s in samples if s.get("name") != t["otherData"]["event"] or s.get("weight") != 1]
if out or disorder or named:
    print("not ok every sample's ts within the profile (%d..%d us), in order per thread, "
          "named after the event: %d outside %s, %d out of order, %d misnamed" %
          (begin, begin + span, len(out), out[:3], disorder, len(named)))
else:
    print("ok every sample's ts within the profile (%d..%d us), in order per thread, "
          "named after the event" % (begin, begin + span))

# Each sample inside its thread's slice of its leaf (a function, a line).
slices = defaultdict(list)
for e in t["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == leaf_level:
        slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
outside = []
for s in samples:
    leaf = frames[str(s["sf"])]["name"]
    if not any(b <= s["ts"] <= e and n == leaf for b, e, n in slices[(s["pid"], s["tid"])]):
        outside.append((s["ts"], leaf))
if outside:
    print("not ok each sample inside its thread's slice of its %s: %d outside, %s" %
          (leaf_level, len(outside), outside[:3]))
else:
    print("ok each sample inside its thread's slice of its %s" % leaf_level)
EOF
}

total=$("$tailor" report -i "$work/calls.data" -f json 2>"$work/why" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])' 2>>"$work/why")
for stack in function function,line; do
	if "$tailor" report -i "$work/calls.data" -f chrome --stack $stack -o "$work/$stack.json" \
		2>"$work/why" &&
	   "$tailor" report -i "$work/calls.data" -f folded --stack $stack -o "$work/$stack.folded" \
		2>>"$work/why" && [ -n "$total" ]; then
		shopt -s lastpipe
		stacks_check "$work/$stack.json" "$work/$stack.folded" "$total" "$(cat "$work/span")" \
			"${stack##*,}" ';main;' 3 |
			sed "s/^\(not \)\{0,1\}ok /&--stack $stack: /" | tap_from
		shopt -u lastpipe
	else
		not_ok "--stack $stack: tailor report -f chrome and -f folded of the -g profile" "$work/why"
	fi
done
# The default stack, and the trace's slices still nested per thread.
if "$tailor" report -i "$work/calls.data" -f chrome -o "$work/default.json" 2>"$work/why" &&
   cmp -s "$work/default.json" "$work/function.json" &&
   python3 "$top/tests/golden/export_check.py" nested "$work/default.json" >"$work/why" 2>&1; then
	ok "the default stack at --level function is --stack function; the slices still nest per thread"
else
	not_ok "the default stack at --level function is --stack function; the slices still nest per thread" \
		"$work/why"
fi
# The example engine's plan above the callers: query, pipeline, operator,
# then the call stack (its compiled query's, the C compiler's, the kernel's).
if perf record -q -g -e cpu-clock -F 4000 --intr-regs=r15 -o "$work/engine.data" -- \
	"$engine" -s 0.05 -d "$work/fig3.dict" -w "$work/gen" fig3 >"$work/why" 2>&1 &&
   "$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" -f chrome -o "$work/engine.json" \
	2>>"$work/why" &&
   "$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" -f folded --stack query,pipeline,operator,function \
	-o "$work/engine.folded" 2>>"$work/why" &&
   engine_total=$("$tailor" report -i "$work/engine.data" -d "$work/fig3.dict" -f json 2>>"$work/why" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])') &&
   perf script -i "$work/engine.data" -F time 2>/dev/null |
	awk '{ t = $1 + 0; if (!n++) first = t; last = t }
	     END { printf "%.0f\n", (last - first) * 1e6 }' >"$work/engine.span"; then
	shopt -s lastpipe
	stacks_check "$work/engine.json" "$work/engine.folded" "$engine_total" "$(cat "$work/engine.span")" \
		function '^fig3;pipeline' 2 query,pipeline,operator | sed "s/^\(not \)\{0,1\}ok /&the engine, with its plan: /" | tap_from
	shopt -u lastpipe
else
	not_ok "the example engine under perf record -g, its Chrome trace and folded stacks" "$work/why"
fi
# Without call stacks, neither.
if "$tailor" report -i "$work/flat.data" -f chrome -o "$work/flat.json" 2>"$work/why" &&
   python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
sys.exit("stackFrames" in t or "samples" in t or not t["traceEvents"])' "$work/flat.json" 2>>"$work/why"; then
	ok "without call stacks (perf record without -g): no stackFrames, no samples"
else
	not_ok "without call stacks (perf record without -g): no stackFrames, no samples" "$work/why"
fi

tap_totals

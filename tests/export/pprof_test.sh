#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# pprof_test.sh: tailor's pprof export read by go tool pprof as a real
# profiler's, natively, against perf and binutils on the same perf.data:
#   - tests/symbols/hot_lines.c built with gcc -O1 -g and clang -O1 -g
#     (clang: no .debug_aranges), profiled with perf record -e cpu-clock:u
#     -c 250000 (the clang build with -g, frame pointers kept):
#       * go tool pprof -raw lists a Mapping of the program, first (pprof
#         takes mapping[0] for the main binary), with its path and the
#         build-id readelf -n gives; -top no longer says "Main binary
#         filename not available";
#       * -list shows hot_lines.c's own source lines (not the ELF's bytes)
#         with samples, and the listed flat adds up to the function's flat
#         in -top;
#       * -lines -top: each file:line's flat is the samples tailor's own
#         --level line table gives it (which perf_compare_test.sh holds to
#         perf's srcline);
#       * -g: -top -noinlines has each function's flat and cum of perf
#         report --children's self and children (see below for -top);
#   - tests/symbols/inlined.c built with gcc -O2 -g, where step() is
#     inlined into mix(), inlined into run(): -raw lists the location of
#     step's hot line with three lines, innermost first, each function at
#     its line (the call sites' for the outer ones); -top's flat and cum
#     of each function are those of addr2line -i -f on the same samples'
#     addresses.
#
# Where pprof and perf differ by design, and what is asserted:
#   - pprof gives an inlined function a node of its own: -top's flat of
#     code inlined into two_parts (inlined_part) is inlined_part's, and
#     two_parts keeps the rest; its cum is all of it.  perf report --sort
#     sym names a sample by the symbol table alone, so its self of
#     two_parts is both.  So -top -noinlines (pprof's attribution to the
#     outermost function, the symbol's) is perf report --children's,
#     exactly, and -top is the inline truth: per function, the samples
#     whose innermost frame (addr2line -i) it is.
#   - perf's srcline --inline would give that truth, but perf 6.1 as
#     Debian builds it (no libbfd: it runs addr2line) prints one line per
#     address in perf script -F srcline --inline and no inlined frames in
#     perf report --inline; so the chains are asked of binutils' addr2line
#     -i -f, the program perf runs for them, at the addresses perf script
#     gives (symbol + offset, the symbol's address from nm).
#
# Needs perf, python3, gcc, clang, go and binutils; scripts/setup.sh
# installs them.  Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# shellcheck source=tests/lib/perf-stacks.sh
. "$top/tests/lib/perf-stacks.sh"
tailor=${TAILOR:-$top/build/userspace/tailor}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOCACHE="$work/gocache"

needs "$tailor" perf python3 gcc clang go addr2line readelf nm

pprof() {
	go tool pprof -sample_index=samples "$@"
}

# sampled_chains NAME: per sample of the program NAME (in $work), the
# inline chain at its address as addr2line -i -f gives it: "func@file:line"
# a frame, innermost first, tab-separated; one line a sample.
sampled_chains() {
	perf script -i "$work/$1.data" -F ip,sym,symoff,dso >"$work/$1.script" 2>/dev/null
	python3 - "$work/$1" "$work/$1.script" <<'EOF'
import re, subprocess, sys
prog = sys.argv[1]
syms = {}
for l in subprocess.run(["nm", "--defined-only", prog], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 3:
        syms[f[2]] = int(f[0], 16)
addrs = []
for l in open(sys.argv[2]):
    m = re.match(r"\s*[0-9a-f]+\s+(\S+)\+0x([0-9a-f]+)\s+\((.*)\)\s*$", l)
    if m and m.group(3) == prog and m.group(1) in syms:
        addrs.append(syms[m.group(1)] + int(m.group(2), 16))
chains = {}
uniq = sorted(set(addrs))
if uniq:
    # -a: each address's line before its frames, a function line and a file:line each.
    out = subprocess.run(["addr2line", "-i", "-f", "-a", "-e", prog] + ["%x" % a for a in uniq],
                         capture_output=True, text=True).stdout.splitlines()
    for l in out:
        if l.startswith("0x"):
            cur = chains[int(l, 16)] = []
        else:
            cur.append(l)
for a in addrs:
    c = chains.get(a, [])
    frames = ["%s@%s" % (c[i], re.sub(r" \(discriminator \d+\)$", "", c[i + 1]))
              for i in range(0, len(c) - 1, 2)]
    print("\t".join(frames))
EOF
}

# build NAME CC SOURCE FLAGS...: a program in $work/NAME.
build() {
	local name=$1 cc=$2 src=$3
	shift 3
	$cc -std=gnu11 "$@" -g "$top/tests/symbols/$src" -o "$work/$name" 2>"$work/$name.cc"
}

# record NAME CALLGRAPH ROUNDS: perf record of $work/NAME, with -g if CALLGRAPH is.
record() {
	perf record -q -e cpu-clock:u -c 250000 ${2:+-g} -o "$work/$1.data" -- \
		"$work/$1" "$3" >"$work/$1.rec" 2>&1
}

# The checks every program gets: mapping, main binary, -lines -top.
common_checks() {
	local name=$1 id
	id=$(readelf -n "$work/$name" | awk '/Build ID:/ { print $3 }')
	if pprof -raw "$work/$name.pb.gz" >"$work/$name.raw" 2>"$work/$name.raw.err" &&
		[ -n "$id" ] &&
		sed -n '/^Mappings/,$p' "$work/$name.raw" | grep -qE "^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $work/$name $id \[FN\]\[FL\]\[LN\]\[IN\]"; then
		ok "$name: go tool pprof -raw lists the program's mapping first, with its path and build-id $id, functions, files, lines and inline frames"
	else
		sed -n '/^Mappings/,$p' "$work/$name.raw" >>"$work/$name.raw.err"
		not_ok "$name: go tool pprof -raw lists the program's mapping first, with its path and build-id" \
			"$work/$name.raw.err"
	fi
	if pprof -top "$work/$name.pb.gz" >"$work/$name.top" 2>&1 &&
		grep -q "^Type: samples" "$work/$name.top" &&
		! grep -q "Main binary filename not available" "$work/$name.top" &&
		! grep -q "symbolization" "$work/$name.top"; then
		ok "$name: go tool pprof -top finds the main binary and symbolizes nothing again"
	else
		not_ok "$name: go tool pprof -top finds the main binary and symbolizes nothing again" \
			"$work/$name.top"
	fi
	# -lines -top's flat per file:line, against tailor's line table.
	if pprof -lines -top -nodefraction=0 -nodecount=1000 "$work/$name.pb.gz" \
		>"$work/$name.lines" 2>&1 &&
		"$tailor" report -i "$work/$name.data" --level line -f json --top 0 \
		>"$work/$name.line.json" 2>"$work/why" &&
		python3 - "$work/$name.lines" "$work/$name.line.json" >>"$work/why" 2>&1 <<'EOF'
import collections, json, os, re, sys
# pprof prints file names cleaned (./elf/../sysdeps/x.h as sysdeps/x.h, Go's
# filepath.Clean); tailor's are as the line table joins them: both cleaned.
clean = lambda k: "%s:%s" % (os.path.normpath(k.rsplit(":", 1)[0]), k.rsplit(":", 1)[1])
got = collections.Counter()
for l in open(sys.argv[1]):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+\S.*?\s(\S+:\d+)( \(inline\))?$", l)
    if m and int(m.group(1)):
        got[clean(m.group(2))] += int(m.group(1))
want = collections.Counter()
for r in json.load(open(sys.argv[2]))["rows"]:
    if r["kind"] == "line":
        want[clean(r["name"])] += r["samples"]
bad = ["%s: pprof %d, tailor %d" % (k, got.get(k, 0), want.get(k, 0))
       for k in sorted(set(got) | set(want)) if got.get(k, 0) != want.get(k, 0)]
print("%d lines, %d samples" % (len(want), sum(want.values())))
assert len(want) >= 3 and not bad, "\n".join(bad)
EOF
	then
		ok "$name: go tool pprof -lines -top's flat per file:line is tailor's --level line table ($(tail -1 "$work/why"))"
	else
		cat "$work/$name.lines" >>"$work/why"
		not_ok "$name: go tool pprof -lines -top's flat per file:line is tailor's --level line table" \
			"$work/why"
	fi
}

# list_checks NAME FUNCTION CODE: -list FUNCTION shows CODE, a line of
# hot_lines.c, with samples, and its flat adds up to -top's.
list_checks() {
	local name=$1 fn=$2 code=$3
	if pprof -list "^$fn\$" "$work/$name.pb.gz" >"$work/$name.$fn.list" 2>&1 &&
		pprof -top -nodefraction=0 -nodecount=1000 "$work/$name.pb.gz" >"$work/$name.top" 2>&1 &&
		python3 - "$work/$name.$fn.list" "$work/$name.top" "$fn" "$code" >"$work/why" 2>&1 <<'EOF'
import re, sys
lst, topf, fn, code = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
assert re.search(r"^ROUTINE =+ %s in \S*/tests/symbols/hot_lines\.c$" % re.escape(fn), lst, re.M), \
    "no routine of hot_lines.c"
flat, code_samples = 0, 0
for l in lst.splitlines():
    m = re.match(r"\s*(\d+|\.)\s+(\d+|\.)\s+(\d+):(.*)$", l)
    if m:
        f = 0 if m.group(1) == "." else int(m.group(1))
        flat += f
        if code in m.group(4):
            code_samples += f
assert "\x7fELF" not in lst
top = 0
for l in open(topf):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(.*)$", l)
    if m and m.group(2).strip() == fn:
        top = int(m.group(1))
print("%s: listed flat %d, -top flat %d, %d on '%s'" % (fn, flat, top, code_samples, code))
assert code_samples > 0 and flat == top and top > 0
EOF
	then
		ok "$name: go tool pprof -list $fn shows hot_lines.c's source with its samples ($(cat "$work/why"))"
	else
		cat "$work/$name.$fn.list" >>"$work/why"
		not_ok "$name: go tool pprof -list $fn shows hot_lines.c's source with its samples" "$work/why"
	fi
}

# inline_checks NAME FUNCTION...: -top's flat and cum of each FUNCTION
# (and -noinlines' of the outermost) against addr2line -i on the samples.
inline_checks() {
	local name=$1
	shift
	sampled_chains "$name" >"$work/$name.chains"
	if pprof -top -nodefraction=0 -nodecount=1000 "$work/$name.pb.gz" >"$work/$name.top" 2>&1 &&
		pprof -top -noinlines -nodefraction=0 -nodecount=1000 "$work/$name.pb.gz" \
		>"$work/$name.noinl" 2>&1 &&
		python3 - "$work/$name.top" "$work/$name.noinl" "$work/$name.chains" "$@" \
		>"$work/why" 2>&1 <<'EOF'
import collections, re, sys
def top(path):
    t = {}
    for l in open(path):
        m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*?)( \(inline\))?$", l)
        if m:
            t[m.group(3).strip()] = (int(m.group(1)), int(m.group(2)))
    return t
got, noinl = top(sys.argv[1]), top(sys.argv[2])
flat, cum, outer = collections.Counter(), collections.Counter(), collections.Counter()
for l in open(sys.argv[3]):
    frames = [f.split("@")[0] for f in l.rstrip("\n").split("\t") if f]
    if not frames:
        continue
    flat[frames[0]] += 1
    outer[frames[-1]] += 1
    for f in set(frames):
        cum[f] += 1
bad, shown = [], []
for fn in sys.argv[4:]:
    g = got.get(fn, (0, 0))
    shown.append("%s %d/%d" % (fn, g[0], g[1]))
    if g != (flat[fn], cum[fn]):
        bad.append("%s: pprof -top flat %d cum %d, addr2line -i %d %d" % (fn, g[0], g[1], flat[fn], cum[fn]))
    if fn in outer and noinl.get(fn, (0, 0))[0] != outer[fn]:
        bad.append("%s: pprof -top -noinlines flat %d, addr2line's outermost %d" % (fn, noinl.get(fn, (0, 0))[0], outer[fn]))
print("flat/cum " + ", ".join(shown))
assert sum(flat.values()) >= 200 and not bad, "\n".join(bad)
EOF
	then
		ok "$name: go tool pprof -top's flat and cum of each function, inlined ones too, are addr2line -i's on the same samples ($(tail -1 "$work/why"))"
	else
		{ cat "$work/$name.top"; sort "$work/$name.chains" | uniq -c; } >>"$work/why"
		not_ok "$name: go tool pprof -top's flat and cum of each function, inlined ones too, are addr2line -i's on the same samples" \
			"$work/why"
	fi
}

# ---- hot_lines.c: gcc, and clang with call stacks
for b in "hot-gcc:gcc::-O1" "hot-clang:clang:-g:-O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"; do
	IFS=: read -r name cc g flags <<<"$b"
	# shellcheck disable=SC2086
	if ! build "$name" $cc hot_lines.c $flags; then
		not_ok "$name: hot_lines.c builds" "$work/$name.cc"
		continue
	fi
	if ! record "$name" "$g" 40 ||
		! "$tailor" report -i "$work/$name.data" -f pprof --stack function \
		-o "$work/$name.pb.gz" >"$work/why" 2>&1; then
		cat "$work/$name.rec" >>"$work/why"
		not_ok "$name: perf record, tailor report -f pprof" "$work/why"
		continue
	fi
	common_checks "$name"
	list_checks "$name" one_part "x = CHAIN(x);"
	list_checks "$name" three_parts "x = CHAIN(x - i);"
	# two_parts: its own loop's lines; inlined_part's are its own function's.
	list_checks "$name" two_parts "x = CHAIN(x + i);"
	inline_checks "$name" one_part two_parts inlined_part three_parts
	[ -n "$g" ] || continue
	# perf report --children's self and children: pprof's -noinlines (above).
	perf report -i "$work/$name.data" --children --stdio --sort sym -g none 2>/dev/null |
		awk '/^ +[0-9.]+% +[0-9.]+% / { c = $1; s = $2; $1 = $2 = $3 = ""; sub(/^ +/, "");
			sub(/%/, "", c); sub(/%/, "", s); print $0 "\t" s "\t" c }' >"$work/$name.children"
	nm --defined-only "$work/$name" | awk '$2 ~ /^[tT]$/ { print $3 }' >"$work/$name.own"
	if pprof -top -noinlines -nodefraction=0 -nodecount=1000 "$work/$name.pb.gz" \
		>"$work/$name.noinl" 2>&1 &&
		python3 - "$work/$name.noinl" "$work/$name.children" "$work/$name.own" >"$work/why" 2>&1 <<'EOF'
import re, sys
top = {}
for l in open(sys.argv[1]):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$", l)
    if m:
        top[m.group(3).strip()] = (int(m.group(1)), int(m.group(2)))
total = sum(f for f, c in top.values())
own = set(l.strip() for l in open(sys.argv[3]))
bad, n = [], 0
for l in open(sys.argv[2]):
    name, s, c = l.rstrip("\n").split("\t")
    if name not in own:
        continue
    n += 1
    f, cum = top.get(name, (0, 0))
    if abs(100.0 * f / total - float(s)) > 0.006 or abs(100.0 * cum / total - float(c)) > 0.006:
        bad.append("%s: pprof flat %d cum %d of %d, perf self %s%% children %s%%" % (name, f, cum, total, s, c))
print("%d functions, %d samples" % (n, total))
assert n >= 4 and not bad, "\n".join(bad)
EOF
	then
		ok "$name -g: go tool pprof -top -noinlines has perf report --children's self and children ($(tail -1 "$work/why"))"
	else
		cat "$work/$name.noinl" "$work/$name.children" >>"$work/why"
		not_ok "$name -g: go tool pprof -top -noinlines has perf report --children's self and children" \
			"$work/why"
	fi
done

# ---- inlined.c: three functions, two of them inlined, at one address
name=inlined
if build $name gcc inlined.c -O2 && record $name "" 60 &&
	"$tailor" report -i "$work/$name.data" -f pprof --stack function -o "$work/$name.pb.gz" >"$work/why" 2>&1; then
	common_checks $name
	# The location of step's line: step, then mix at its call, then run at mix's.
	src=$top/tests/symbols/inlined.c
	l_step=$(grep -n 'return CHAIN(x ^ i);' "$src" | cut -d: -f1)
	l_mix=$(grep -n 'x = step(x, i);' "$src" | cut -d: -f1)
	l_run=$(grep -n 'x = mix(x, n);' "$src" | cut -d: -f1)
	if awk -v a="step $src:$l_step s=0" -v b="mix $src:$l_mix s=0" -v c="run $src:$l_run s=0" '
		/^Mappings/ { exit }
		{ sub(/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ /, ""); sub(/^ +/, "") }
		prev2 == a && prev == b && $0 == c { found = 1 }
		{ prev2 = prev; prev = $0 }
		END { exit !found }' "$work/$name.raw"; then
		ok "$name: -raw lists step's location with three lines: step at $l_step, mix at $l_mix, run at $l_run, innermost first"
	else
		not_ok "$name: -raw lists step's location with three lines, innermost first" "$work/$name.raw"
	fi
	inline_checks $name step mix run
	# The --level function table (perf's sym) is -top -noinlines: run's, all of it.
	if "$tailor" report -i "$work/$name.data" --level function -f json >"$work/$name.fn.json" \
		2>"$work/why" &&
		want=$(perf script -i "$work/$name.data" -F ip,sym 2>/dev/null | awk '$2 == "run"' | wc -l) &&
		got=$(awk '$NF == "run" { print $1 }' "$work/$name.noinl") &&
		[ "$want" -ge 200 ] && [ "$got" = "$want" ]; then
		ok "$name: go tool pprof -top -noinlines gives run perf script's $want samples of its symbol"
	else
		echo "perf: $want, pprof -noinlines: $got" >>"$work/why"
		not_ok "$name: go tool pprof -top -noinlines gives run perf script's samples of its symbol" "$work/why"
	fi
else
	cat "$work/$name.cc" "$work/$name.rec" >>"$work/why" 2>/dev/null
	not_ok "$name: inlined.c builds with gcc -O2, perf records it, tailor exports it" "$work/why"
fi

tap_totals

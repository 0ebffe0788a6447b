#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# jit_test.sh [BUILD_DIR]: code in anonymous memory, named through the
# JIT's own files, natively with perf (no module needed).  Each profile
# is recorded once with 'perf record -k mono -e cpu-clock' and read by
# both tailor and perf ('perf inject --jit', then 'perf report'), so the
# two must agree within 1 point of share (rounding, and perf's split of a
# function over the ELF files inject makes, summed here by name):
#
#  1. tw_jitcode (tests/workloads/tw_jitcode.c: hand-made machine code,
#     libtailor's jitdump writer): its five functions, with a move and an
#     address reused by a second function, at function and line level;
#     'second' gets about what 'first' gets at the same address (a perf
#     map, without times, would give it nothing);
#  2. the same profile copied with its dump to another directory, the
#     originals gone: the same report; the dump missing: a note that
#     counts every sample of JIT code as unnamed; the dump cut short: the
#     cut named by its offset, the code loaded before it still named;
#  3. node --perf-prof (V8's jitdump) and --perf-basic-prof (its perf
#     map): the top JavaScript functions;
#  4. C compiled by clang -g to IR and run by lli (LLVM's perf listener):
#     tailor's line-level report has the loop lines, and equals perf's
#     srcline once the dump's lines are moved back by the 0x40 that
#     LLVM's listener adds for perf's sake (jit_code.c says why).
#
# Skips, with a message, what this machine lacks (perf with -k mono, node,
# lli and clang).  Expects build/workloads/tw_jitcode and
# build/userspace/tailor from make; builds nothing.  TAILOR=... picks
# another tailor binary.  Prints TAP and a "# Totals:" line.
set -uo pipefail
shopt -s lastpipe	# "... | tap_from" counts in this shell
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
tw=$build/workloads/tw_jitcode
tailor=${TAILOR:-$build/userspace/tailor}
work=$(mktemp -d)
# The JITs write perf maps to /tmp under their pid; those are removed too.
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do rm -f "/tmp/perf-$p.map"; done
	rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"

# compare KIND TAILOR_CSV PERF_REPORT [NAMES...]: every name (default: the
# top 5 of either side) within 1 point; prints ok/not ok lines.  Where
# libc has several names for one address, tailor names it as libdwfl
# does and perf by its own rule (__libc_malloc against malloc, 2026-11-24,
# when node's malloc got 1.09% of the samples): such names count as one,
# the group's first by name.
compare() {
	python3 - "$@" <<'PY'
import csv, os, re, subprocess, sys
kind, tcsv, prep = sys.argv[1:4]
names = sys.argv[4:]
alias = {}
try:
    libc = subprocess.run(['sh', '-c', 'ldd /bin/true | sed -n "s/.*libc.so.6 => \\([^ ]*\\).*/\\1/p"'],
                          capture_output=True, text=True).stdout.strip()
    groups = {}
    for line in subprocess.run(['nm', '-D', '--defined-only', libc], capture_output=True,
                               text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'TtWwi':
            groups.setdefault(f[0], []).append(f[2].split('@')[0])
    for g in groups.values():
        for n in g:
            alias[n] = min(g)
except OSError:
    pass
def key(n):
    # perf prints a source line by the file's base name
    return os.path.basename(n) if kind.endswith('line') else alias.get(n, n)
t = {}
for r in csv.DictReader(open(tcsv)):
    # Kernel functions are not compared (perf's [k] lines are left out
    # below): with kernel symbols tailor names them as perf does.
    if r.get('object') == '[kernel.kallsyms]':
        continue
    t[key(r['name'])] = t.get(key(r['name']), 0) + float(r['share'])
p = {}
for line in open(prep):
    # kernel rows: tailor has one [kernel] row, perf names the functions
    m = re.match(r'\s*([\d.]+)%\s+(?:\[\.\]\s+)?(.*\S)\s*$', line)
    if m and not line.startswith('#') and '[k]' not in line:
        p[key(m.group(2))] = p.get(key(m.group(2)), 0) + float(m.group(1))
if not names:
    top = lambda d: sorted(d, key=d.get, reverse=True)[:5]
    # perf's kernel srclines are symbol+offset, tailor's [kernel]: not compared
    names = [n for n in dict.fromkeys(top(t) + top(p)) if not n.startswith('[')
             and (t.get(n, 0) >= 1 or p.get(n, 0) >= 1)
             and (not kind.endswith('line') or re.search(r':\d+$', n))]
bad = [f'{n}: tailor {t.get(n, 0):.2f}%, perf {p.get(n, 0):.2f}%' for n in names
       if abs(t.get(n, 0) - p.get(n, 0)) > 1]
what = ', '.join(f'{n} {t.get(n, 0):.1f}%' for n in names)
if not names:
    print(f'not ok {kind}: nothing to compare')
elif bad:
    print(f'not ok {kind}: ' + '; '.join(bad))
else:
    print(f'ok {kind} shares equal perf\'s within 1 point: {what}')
PY
}

# share CSV NAME: a row's share in tailor's CSV, 0 if none.
share() {
	awk -F, -v n="$2" '$1 == n { s += $4 } END { print s + 0 }' "$1"
}

if ! perf record -q -k mono -e cpu-clock -o "$work/probe.data" -- true >/dev/null 2>&1; then
	skip "perf cannot record cpu-clock with -k mono here"
	tap_totals
	exit
fi
if [ ! -x "$tw" ] || [ ! -x "$tailor" ]; then
	not_ok "$tw or $tailor missing: make userspace workloads"
	tap_totals
	exit 1
fi

# ---- 1. tw_jitcode ----
jc=$work/jc
mkdir -p "$jc"
perf record -q -k mono -e cpu-clock -F 2000 -o "$jc/perf.data" -- \
	"$tw" -d "$jc" -n 30 -m -r >"$jc/out" 2>"$jc/err"
pid=$(sed -n 's/^pid=//p' "$jc/out")
pids+=("$pid")
dump=$jc/jit-$pid.dump
if [ -z "$pid" ] || [ ! -s "$dump" ]; then
	not_ok "tw_jitcode ran and left its dump" "$jc/err"
	tap_totals
	exit 1
fi
"$tailor" report -i "$jc/perf.data" -l function -f csv >"$jc/functions.csv" 2>"$jc/report.err"
"$tailor" report -i "$jc/perf.data" -l line -f csv >"$jc/lines.csv" 2>>"$jc/report.err"
perf inject --jit -i "$jc/perf.data" -o "$jc/jit.data" 2>"$jc/inject.err"
perf report -i "$jc/jit.data" --stdio --sort sym -F overhead,sym >"$jc/perf-functions" 2>/dev/null
perf report -i "$jc/jit.data" --stdio --sort srcline -F overhead,srcline >"$jc/perf-lines" 2>/dev/null
compare function "$jc/functions.csv" "$jc/perf-functions" hot mover cold first second | tap_from
compare line "$jc/lines.csv" "$jc/perf-lines" | tap_from
first=$(share "$jc/functions.csv" first) second=$(share "$jc/functions.csv" second)
if awk -v f="$first" -v s="$second" 'BEGIN { exit !(f > 2 && s > 0.6 * f && s < 1.6 * f) }'; then
	ok "an address reused: 'first' $first% before, 'second' $second% after, by the loads' times"
else
	not_ok "an address reused: 'first' $first%, 'second' $second% (about equal expected)" "$jc/functions.csv"
fi

# ---- 2. elsewhere, missing, cut ----
jit_samples=$(awk -F, '$1 ~ /^(hot|cold|first|second|mover)$/ { s += $3 } END { print s }' \
	"$jc/functions.csv")
cp "$jc/perf.data" "$dump" "$work/" && rm -f "$dump" "/tmp/perf-$pid.map"
"$tailor" report -i "$work/perf.data" -l function -f csv >"$work/moved.csv" 2>"$work/moved.err"
if cmp -s "$work/moved.csv" "$jc/functions.csv"; then
	ok "the dump beside the profile on another path: the same report"
else
	diff "$jc/functions.csv" "$work/moved.csv" >"$work/diff"
	not_ok "the dump beside the profile on another path" "$work/diff"
fi
mv "$work/jit-$pid.dump" "$work/dump.saved"
"$tailor" report -i "$work/perf.data" -l function -f csv >"$work/missing.csv" 2>"$work/missing.err"
rc=$?
if [ $rc = 0 ] && grep -q "jitdump $dump: No such file or directory.*; $jit_samples samples in process $pid's anonymous memory unnamed" \
	"$work/missing.err" && [ "$(share "$work/missing.csv" hot)" = 0 ]; then
	ok "the dump missing: said so, with all $jit_samples samples of its code counted"
else
	not_ok "the dump missing (rc=$rc, $jit_samples samples expected in the note)" "$work/missing.err"
fi
# Cut in the middle of the third load's record: cold and hot stay named.
cut=$(python3 - "$work/dump.saved" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, loads = struct.unpack_from('<I', d, 8)[0], 0
while off + 16 <= len(d):
    kind, size = struct.unpack_from('<II', d, off)
    if kind == 0:
        loads += 1
        if loads == 3:
            print(off + size // 2)
            break
    off += size
PY
)
head -c "$cut" "$work/dump.saved" >"$work/jit-$pid.dump"
"$tailor" report -i "$work/perf.data" -l function -f csv >"$work/cut.csv" 2>"$work/cut.err"
rc=$?
if [ $rc = 0 ] && grep -q "jitdump $work/jit-$pid.dump: offset [0-9]*: truncated: a record runs past the end" \
	"$work/cut.err" && [ "$(share "$work/cut.csv" hot)" = "$(share "$jc/functions.csv" hot)" ] &&
	[ "$(share "$work/cut.csv" first)" = 0 ]; then
	ok "the dump cut at byte $cut: the cut named by offset, the code loaded before it still named"
else
	not_ok "the dump cut at byte $cut (rc=$rc)" "$work/cut.err"
fi

# ---- 3. node ----
if command -v node >/dev/null; then
	cat >"$work/hot.js" <<'JS'
function hot(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
function cold(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 3) % 1000033; return s; }
let t = 0;
for (let r = 0; r < 40; r++) { t += hot(3000000); t += cold(1000000); }
console.log(t);
JS
	for mode in perf-prof perf-basic-prof; do
		d=$work/$mode
		mkdir -p "$d"
		(cd "$d" && perf record -q -k mono -e cpu-clock -F 2000 -o perf.data -- \
			node "--$mode" "$work/hot.js" >/dev/null 2>err)
		pids+=("$(perf script -i "$d/perf.data" -F pid 2>/dev/null | head -1 | tr -d ' ')")
		"$tailor" report -i "$d/perf.data" -l function -f csv >"$d/functions.csv" 2>"$d/report.err"
		if [ $mode = perf-prof ]; then
			perf inject --jit -i "$d/perf.data" -o "$d/jit.data" 2>"$d/inject.err"
			perf report -i "$d/jit.data" --stdio --sort sym -F overhead,sym >"$d/perf" 2>/dev/null
		else
			perf report -i "$d/perf.data" --stdio --sort sym -F overhead,sym >"$d/perf" 2>/dev/null
		fi
		compare "node --$mode function" "$d/functions.csv" "$d/perf" | tap_from
		if grep -q '^JS:\*hot ' "$d/functions.csv"; then
			ok "node --$mode: the optimized 'hot' named as V8 names it"
		else
			not_ok "node --$mode: no JS:*hot row" "$d/functions.csv"
		fi
	done
else
	skip "node missing: apt install nodejs"
fi

# ---- 4. lli ----
if command -v lli >/dev/null && command -v clang >/dev/null; then
	d=$work/lli
	mkdir -p "$d"
	cat >"$d/loops.c" <<'C'
#include <stdio.h>
static unsigned long hot(unsigned long n) { unsigned long x = 0; for (unsigned long i = 0; i < n; i++) x = x * 3 + i; return x; }
static unsigned long cold(unsigned long n) { unsigned long x = 1; for (unsigned long i = 0; i < n; i++) x = x * 5 + i; return x; }
int main(void) { unsigned long s = 0; for (int r = 0; r < 20; r++) { s += hot(30000000); s += cold(10000000); } printf("%lu\n", s); return 0; }
C
	clang -g -O1 -emit-llvm -c "$d/loops.c" -o "$d/loops.bc"
	(cd "$d" && JITDUMPDIR=$d perf record -q -k mono -e cpu-clock -F 2000 -o perf.data -- \
		lli -jit-kind=mcjit loops.bc >/dev/null 2>err)
	"$tailor" report -i "$d/perf.data" -l line -f csv >"$d/lines.csv" 2>"$d/report.err"
	h=$(share "$d/lines.csv" "$d/loops.c:2") c=$(share "$d/lines.csv" "$d/loops.c:3")
	if awk -v h="$h" -v c="$c" 'BEGIN { exit !(h > 40 && c > 10 && h > c) }'; then
		ok "lli: the loop lines named, hot's line 2 $h%, cold's line 3 $c%"
	else
		not_ok "lli: hot's line 2 $h%, cold's line 3 $c% (most on 2, some on 3 expected)" "$d/lines.csv"
	fi
	# perf's own answer, once the listener's 0x40 is taken out of the dump.
	dumpfile=$(find "$d" -name 'jit-*.dump' | head -1)
	python3 - "$dumpfile" <<'PY'
import struct, sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
off = struct.unpack_from('<I', d, 8)[0]
while off + 16 <= len(d):
    kind, size = struct.unpack_from('<II', d, off)
    if kind == 2:
        n, e = struct.unpack_from('<Q', d, off + 24)[0], off + 32
        for _ in range(n):
            struct.pack_into('<Q', d, e, struct.unpack_from('<Q', d, e)[0] - 0x40)
            e = d.index(0, e + 16) + 1
    off += size
open(p, 'wb').write(d)
PY
	perf inject --jit -i "$d/perf.data" -o "$d/jit.data" 2>"$d/inject.err"
	perf report -i "$d/jit.data" --stdio --sort srcline -F overhead,srcline >"$d/perf" 2>/dev/null
	compare "lli line" "$d/lines.csv" "$d/perf" loops.c:2 loops.c:3 loops.c:4 | tap_from
else
	skip "lli or clang missing: apt install llvm clang"
fi
tap_totals

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# perf_compare_test.sh: tailor report's function and line tables against
# perf's own reading of the same perf.data, natively, for the builds an
# engineer brings: tests/symbols/hot_lines.c built with gcc and with clang
# (DWARF 4 and 5; clang emits no .debug_aranges, so libdw alone finds no
# unit for an address), each profiled once with perf record -e cpu-clock:u.
#   - lines: every line of hot_lines.c has the samples of perf script's
#     srcline (--full-source-path), and they hold most of the run (a build
#     whose lines nobody finds would agree with nothing); other lines that
#     differ are printed (perf misnames some of glibc's, see below);
#   - functions: every function's samples equal those of perf script's
#     sym, demangled as perf does (C++ builds; Rust and D symbols too);
#   - events: a perf.data of two (cpu-clock, page-faults) gives each its
#     own profile, perf's for that event, and names the other;
#   - call stacks (perf record -g, and --call-graph lbr in a perf.data
#     written here), kernel functions, the vDSO, names of
#     C++, Rust and D; objects and processes (perf's comm,dso,sym); a
#     stripped program, and its debug file found by build-id; periods
#     weighed as perf report's overhead weighs them; node's JIT code;
#     PLT entries.
# User mode only: kernel symbols are another test's.  Needs perf, python3,
# gcc and clang (scripts/setup.sh installs them).
#
# Prints TAP and a "# Totals:" line.
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

needs "$tailor" perf python3 gcc clang

# perf_counts DATA FIELD [PERF OPTION]: "COUNT KEY" per distinct key of
# perf script's FIELD (sym or srcline) over the samples with one.
perf_counts() {
	perf script -i "$1" --full-source-path -F "ip,$2" ${3:+"$3"} 2>/dev/null | awk -v field="$2" '
		field == "sym" && $1 ~ /^[0-9a-f]+$/ && NF >= 2 { $1 = ""; n[substr($0, 2)]++ }
		field == "srcline" && /^ +[0-9a-f]+$/ { want = 1; next }
		field == "srcline" && want { want = 0; sub(/^ +/, ""); if ($0 ~ /:[1-9][0-9]*$/ && $0 !~ /^(\?\?|\[)/) n[$0]++ }
		END { for (k in n) print n[k] "\t" k }'
}

# compare PROGRAM KIND TAILOR_JSON PERF_COUNTS [RAW=READABLE...]: the
# rows of KIND (line, function) against perf's counts, exactly, for the
# program's own lines and functions; a name perf leaves RAW is expected
# READABLE.
compare() {
	# Its functions: raw, and as c++filt -p (binutils) reads them.
	nm --defined-only "$work/$1" | awk '$2 ~ /^[tTwW]$/ { print $3 }' >"$work/$1.nm"
	c++filt -p <"$work/$1.nm" | paste "$work/$1.nm" - >"$work/$1.own"
	python3 - "$3" "$4" "$2" "$work/$1.own" "${@:5}" >"$work/why" 2>&1 <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
kind = sys.argv[3]
own = [l.rstrip("\n").split("\t") for l in open(sys.argv[4])]
readable = dict(a.split("=", 1) for a in sys.argv[5:])
# A function of one name in two objects is two rows; perf's sym, one.
got = {}
for r in p["rows"]:
    if r["kind"] == kind:
        got[r["name"]] = got.get(r["name"], 0) + r["samples"]
want = {}
for l in open(sys.argv[2]):
    n, k = l.rstrip("\n").split("\t", 1)
    if k != "[unknown]":
        want[readable.get(k, k)] = int(n)
# The program's own lines and functions are judged; elsewhere perf may be
# the one wrong, and such rows are printed.  In glibc's DWARF 5 (ld.so's
# debug file) perf's srcline, through binutils' addr2line, names the
# unit's file (dl-get-cpu-features.c:327) where the line table, readelf
# and llvm-dwarfdump --lookup say dl-cacheinfo.h:327; tailor reads the
# table.  Where libc has several symbols at one address (an IFUNC, its
# weak alias and its local resolver), tailor names it as libdwfl does
# (wcsnlen) and perf by its own ranking (__wcsnlen_ifunc).
own_names = set(n for pair in own for n in pair) | set(readable.get(r, r) for r, _ in own)
# perf 6.1 names the program's PLT entries _init (it stretches _init, which
# has no size, over the PLT; the PLT test below holds tailor's NAME@plt to
# the addresses): tailor's _init and NAME@plt rows, summed, are perf's _init.
program = sys.argv[4].rsplit("/", 1)[1][:-len(".own")]
for r in p["rows"]:
    if (kind == "function" and r["kind"] == kind and r["name"].endswith("@plt") and
            r.get("object") == program):
        got[r["name"]] -= r["samples"]
        got["_init"] = got.get("_init", 0) + r["samples"]
got = {k: v for k, v in got.items() if v}
ours = (lambda k: k.rsplit(":", 1)[0].endswith("/hot_lines.c") if kind == "line" else
        k in own_names)
diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
print("%d %ss, %d samples by perf; tailor %d samples" % (len(want), kind, sum(want.values()),
                                                          sum(got.values())))
for k in diff[:12]:
    print("  %s%s: tailor %s, perf %s" % ("" if ours(k) else "(not judged) ", k, got.get(k, 0),
                                          want.get(k, 0)))
judged = [k for k in diff if ours(k)]
assert not judged, "%d of %d rows differ" % (len(judged), len(set(got) | set(want)))
EOF
}

# build NAME CC FLAGS...: hot_lines built as $work/NAME.
build() {
	local name=$1 cc=$2
	shift 2
	$cc "$@" -O1 -g "$top/tests/symbols/hot_lines.c" -o "$work/$name" 2>"$work/$name.cc"
}

# C++ builds name their static functions _ZL8one_partm: demangled as perf
# shows them (one_part), or the function rows would not meet perf's.
for b in "gcc:gcc -std=gnu11" "clang-dwarf5:clang -std=gnu11 -gdwarf-5" \
	"clang-dwarf4:clang -std=gnu11 -gdwarf-4" "g++:g++ -x c++ -std=gnu++17" \
	"clang++:clang++ -x c++ -std=gnu++17"; do
	name=${b%%:*}
	# shellcheck disable=SC2086
	if ! build "$name" ${b#*:}; then
		not_ok "$name: hot_lines.c builds" "$work/$name.cc"
		continue
	fi
	data=$work/$name.data
	if ! perf record -q -e cpu-clock:u -F 4000 -o "$data" -- "$work/$name" 60 \
		>"$work/$name.rec" 2>&1; then
		not_ok "$name: perf record" "$work/$name.rec"
		continue
	fi
	aranges=$(readelf -S "$work/$name" | grep -c '\.debug_aranges')
	for level in line function; do
		field=$([ $level = line ] && echo srcline || echo sym)
		perf_counts "$data" $field >"$work/$name.$field"
		if ! "$tailor" report -i "$data" --level $level -f json >"$work/$name.$level.json" \
			2>"$work/why"; then
			not_ok "$name: tailor report --level $level" "$work/why"
			continue
		fi
		what=$([ $level = line ] && echo "every line of hot_lines.c" || echo "every function")
		if compare "$name" $level "$work/$name.$level.json" "$work/$name.$field"; then
			ok "$name ($aranges .debug_aranges): $what has perf's samples ($(head -1 "$work/why"))"
		else
			not_ok "$name ($aranges .debug_aranges): $what has perf's samples" "$work/why"
		fi
	done
	# The lines are found at all: most samples are in hot_lines.c's.
	if python3 - "$work/$name.line.json" >"$work/why" 2>&1 <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
n = sum(r["samples"] for r in p["rows"] if r["name"].rsplit(":", 1)[0].endswith("/hot_lines.c"))
print("%d of %d samples" % (n, p["total"]))
assert p["total"] >= 200 and n >= 0.8 * p["total"], "%d of %d samples" % (n, p["total"])
EOF
	then
		ok "$name: hot_lines.c's lines hold most samples ($(cat "$work/why"))"
	else
		not_ok "$name: hot_lines.c's lines hold most samples" "$work/why"
	fi
done

# Two events in one file: a profile per event, perf's for each, never
# mixed; the first by default, the other named in the header; an event
# the file lacks is refused with the ones it has.
if gcc -std=gnu11 -O1 -g "$top/tests/symbols/hot_lines.c" -o "$work/two" 2>"$work/two.cc" &&
	perf record -q -e cpu-clock:u -F 4000 -e 'page-faults/period=16/u' -o "$work/two.data" \
	-- "$work/two" 40 8 >"$work/two.rec" 2>&1; then
	# The first event's profile is asked for by default (no --event).
	for event in cpu-clock page-faults; do
		perf script -i "$work/two.data" -F event,ip,sym 2>/dev/null | awk -v e="$event" '
			{ name = $1; sub(/:$/, "", name); base = name; sub(/[:\/].*/, "", base) }
			base == e && NF >= 3 { $1 = ""; $2 = ""; sub(/^  /, ""); n[$0]++ }
			base != e { other[name]++ }
			END { for (k in n) print n[k] "\t" k
			      for (k in other) print k " (" other[k] " samples)" >"/dev/stderr" }' \
			>"$work/two.$event" 2>"$work/two.$event.other"
		if "$tailor" report -i "$work/two.data" --event $event --level function -f json \
			>"$work/two.$event.json" 2>"$work/why" &&
			"$tailor" report -i "$work/two.data" \
			$([ $event = cpu-clock ] || echo "--event $event") >"$work/two.$event.txt" \
			2>>"$work/why" &&
			compare two function "$work/two.$event.json" "$work/two.$event" &&
			grep -qF "# also sampled, each a profile of its own (--event NAME): $(cat "$work/two.$event.other")" \
				"$work/two.$event.txt"; then
			ok "two events in one perf.data: $event's profile is perf's for it alone ($(head -1 "$work/why")), the other named: $(cat "$work/two.$event.other")"
		else
			{ echo "perf: other events $(cat "$work/two.$event.other")"; head -3 "$work/two.$event.txt"; } \
				>>"$work/why"
			not_ok "two events in one perf.data: $event's profile is perf's for it alone, the other named" \
				"$work/why"
		fi
	done
	if ! "$tailor" report -i "$work/two.data" --event cycles >/dev/null 2>"$work/why" &&
		grep -q "no sampling event 'cycles' in this perf.data; it has: cpu-clock:u page-faults/period=16/u" \
		"$work/why"; then
		ok "--event cycles on a file without it: refused, naming the events it has"
	else
		not_ok "--event cycles on a file without it: refused, naming the events it has" "$work/why"
	fi
else
	cat "$work/two.rec" >>"$work/two.cc"
	not_ok "hot_lines with page faults builds and perf records two events" "$work/two.cc"
fi

# Call stacks (perf record -g, frame pointers): the folded stacks of
# functions are perf script's collapsed (stackcollapse-perf's way, without
# the command), and go tool pprof -top's flat and cum, and --children's
# self and total, are perf report --children's self and children for the
# program's functions.  Not judged elsewhere: perf names a caller by its
# return address, tailor by the call (one byte back), as addr2line and
# pprof do; they differ where a call ends its function -- ld.so's _start
# calls _dl_start and "returns" to _dl_start_user, which perf names.  A
# fixed period (-c): perf weighs samples by their periods, equal then.
# pprof -top gives an inlined function (hot_lines.c's inlined_part) its
# own flat, as its location's inline frames say; -noinlines counts it in
# the function it was inlined into, as perf report --sort sym does.
# clang: gcc 12 sets up no frame in a leaf that needs none, whatever the
# flags, so its caller (main) would be missing from both tools' stacks.
if clang -std=gnu11 -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	"$top/tests/symbols/hot_lines.c" -o "$work/calls" \
	2>"$work/calls.cc" &&
	perf record -q -g -e cpu-clock:u -c 250000 -o "$work/calls.data" -- "$work/calls" 40 \
	>"$work/calls.rec" 2>&1; then
	perf_collapsed "$work/calls.data" | grep ';main;' >"$work/calls.perf-folded"
	# The program's stacks (through main): ld.so's start is not judged (below).
	if "$tailor" report -i "$work/calls.data" -f folded --stack function 2>"$work/why" |
		grep ';main;' | sort >"$work/calls.folded" &&
		[ "$(wc -l <"$work/calls.folded")" -ge 3 ] && grep -q ';three_parts ' "$work/calls.folded" &&
		diff "$work/calls.perf-folded" "$work/calls.folded" >>"$work/why"; then
		ok "perf record -g: folded stacks are perf script's collapsed ($(wc -l <"$work/calls.folded") stacks)"
	else
		{ echo "perf:"; cat "$work/calls.perf-folded"; echo "tailor:"; cat "$work/calls.folded"; } >>"$work/why"
		not_ok "perf record -g: folded stacks are perf script's collapsed" "$work/why"
	fi
	perf report -i "$work/calls.data" --children --stdio --sort sym -g none 2>/dev/null |
		awk '/^ +[0-9.]+% +[0-9.]+% / { c = $1; s = $2; $1 = $2 = $3 = ""; sub(/^ +/, "");
			sub(/%/, "", c); sub(/%/, "", s); print $0 "\t" s "\t" c }' >"$work/calls.perf-children"
	if "$tailor" report -i "$work/calls.data" -f pprof --stack function -o "$work/calls.pb.gz" \
		2>"$work/why" &&
		go tool pprof -top -noinlines -sample_index=samples -nodefraction=0 -nodecount=1000 \
		"$work/calls.pb.gz" >"$work/calls.top" 2>>"$work/why" &&
		nm --defined-only "$work/calls" | awk '$2 ~ /^[tT]$/ { print $3 }' >"$work/calls.own" &&
		python3 - "$work/calls.top" "$work/calls.perf-children" "$work/calls.own" >>"$work/why" 2>&1 <<'EOF'
import re, sys
top = {}
for l in open(sys.argv[1]):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$", l)
    if m:
        top[m.group(3).strip()] = (int(m.group(1)), int(m.group(2)))
total = sum(f for f, c in top.values())
perf = {}
for l in open(sys.argv[2]):
    name, self_, children = l.rstrip("\n").split("\t")
    perf[name] = (float(self_), float(children))
own = set(l.strip() for l in open(sys.argv[3]))
bad = []
for name, (s, c) in perf.items():
    if name not in own:
        continue
    f, cum = top.get(name, (0, 0))
    # perf prints two decimals of each share.
    if abs(100.0 * f / total - s) > 0.006 or abs(100.0 * cum / total - c) > 0.006:
        bad.append("%s: pprof flat %d cum %d of %d, perf self %.2f%% children %.2f%%" % (name, f, cum, total, s, c))
print("%d functions of the program, %d samples" % (len(own & set(perf)), total))
assert len(own & set(perf)) >= 4 and not bad, "\n".join(bad)
EOF
	then
		ok "perf record -g: go tool pprof -top's flat and cum are perf report --children's self and children ($(tail -1 "$work/why"))"
	else
		cat "$work/calls.top" "$work/calls.perf-children" >>"$work/why"
		not_ok "perf record -g: go tool pprof -top's flat and cum are perf report --children's self and children" \
			"$work/why"
	fi
	if "$tailor" report -i "$work/calls.data" --children -f json >"$work/calls.children.json" \
		2>"$work/why" &&
		python3 - "$work/calls.children.json" "$work/calls.perf-children" "$work/calls.own" \
		>>"$work/why" 2>&1 <<'EOF'
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["rows"]}
own = set(l.strip() for l in open(sys.argv[3]))
bad, n = [], 0
for l in open(sys.argv[2]):
    name, self_, children = l.rstrip("\n").split("\t")
    if name not in own:
        continue
    r = rows.get(name, {"share": 0, "total_share": 0})
    n += 1
    if abs(r["share"] - float(self_)) > 0.006 or abs(r["total_share"] - float(children)) > 0.006:
        bad.append("%s: tailor self %.2f%% total %.2f%%, perf %s%% %s%%" % (name, r["share"],
                   r["total_share"], self_, children))
print("%d functions of the program" % n)
assert n >= 4 and not bad, "\n".join(bad)
EOF
	then
		ok "perf record -g: --children's self and total are perf report --children's ($(tail -1 "$work/why"))"
	else
		cat "$work/calls.children.json" >>"$work/why"
		not_ok "perf record -g: --children's self and total are perf report --children's" "$work/why"
	fi
	if ! "$tailor" report -i "$work/calls.data" --children -v source >/dev/null 2>"$work/why" &&
		grep -q -- "--children is a column of the table view" "$work/why" &&
		! "$tailor" report -i "$work/gcc.data" --children >/dev/null 2>"$work/why" &&
		grep -q "has no call stacks for --children: record with perf record -g" "$work/why"; then
		ok "--children without call stacks, or off the table view: refused, saying why"
	else
		not_ok "--children without call stacks, or off the table view: refused, saying why" "$work/why"
	fi
else
	cat "$work/calls.rec" >>"$work/calls.cc"
	not_ok "hot_lines with frame pointers under perf record -g" "$work/calls.cc"
fi

# A program rebuilt since the recording: the perf.data's BUILD_ID feature
# names the build that ran, perf record kept a copy of it in its build-id
# cache (HOME here: $work/home/.debug), and perf report reads that copy;
# so must tailor, every function perf's, and say so.  Without the copy,
# perf names the samples by address; tailor leaves them in one row
# [rebuilt], with perf's count, and says why -- never names them from the
# build on disk (-O2, its functions elsewhere).
mkdir -p "$work/home"
if gcc -std=gnu11 -O0 -g "$top/tests/workloads/tw_stacks.c" -o "$work/rebuilt" \
	2>"$work/rebuilt.cc" &&
	HOME=$work/home perf record -q -e cpu-clock:u -c 250000 -o "$work/rebuilt.data" -- \
		"$work/rebuilt" 100000000 1000 >"$work/rebuilt.rec" 2>&1 &&
	gcc -std=gnu11 -O2 -g "$top/tests/workloads/tw_stacks.c" -o "$work/rebuilt" \
		2>>"$work/rebuilt.cc"; then
	HOME=$work/home perf_counts "$work/rebuilt.data" sym >"$work/rebuilt.sym"
	if HOME=$work/home "$tailor" report -i "$work/rebuilt.data" --level function -f json \
		>"$work/rebuilt.json" 2>"$work/rebuilt.err" &&
		grep -q "rebuilt is another build now (build-id .* then, .* now): named from the recorded build's copy $work/home/.debug/.build-id/" \
			"$work/rebuilt.err" &&
		compare rebuilt function "$work/rebuilt.json" "$work/rebuilt.sym" &&
		grep -q "leaf_spin" "$work/rebuilt.sym"; then
		ok "a program rebuilt since the recording: named from perf's build-id cache, every function perf's ($(head -1 "$work/why"))"
	else
		cat "$work/rebuilt.err" >>"$work/why"
		not_ok "a program rebuilt since the recording: named from perf's build-id cache, every function perf's" \
			"$work/why"
	fi
	rm -rf "$work/home/.debug"
	want=$(HOME=$work/home perf script -i "$work/rebuilt.data" -F ip,sym,dso 2>/dev/null |
		grep -c "($work/rebuilt)$")
	if HOME=$work/home "$tailor" report -i "$work/rebuilt.data" --level function -f csv \
		>"$work/rebuilt.csv" 2>"$work/rebuilt.err" &&
		grep -q "rebuilt is another build now (build-id .* then, .* now) and no copy of the recorded build was found" \
			"$work/rebuilt.err" &&
		[ "$want" -gt 100 ] &&
		[ "$(awk -F, '$1 == "[rebuilt]" { print $3 }' "$work/rebuilt.csv")" = "$want" ] &&
		! grep -q "^leaf_spin," "$work/rebuilt.csv"; then
		ok "without a copy: the program's $want samples one row [rebuilt], as perf leaves them unnamed, and why"
	else
		{ echo "perf: $want samples in the program"; cat "$work/rebuilt.err";
		  head -5 "$work/rebuilt.csv"; } >"$work/why"
		not_ok "a program rebuilt since the recording, without a copy: one row, and why" "$work/why"
	fi
else
	cat "$work/rebuilt.rec" >>"$work/rebuilt.cc"
	not_ok "tw_stacks built, recorded and rebuilt" "$work/rebuilt.cc"
fi

# LBR call stacks (perf record --call-graph lbr): no machine here has an
# LBR, so the perf.data is written with every sample chosen
# (lbr_profile.py): the callchain's user frames are a frame-pointer walk's
# garbage, the branch stack the calls main -> outer -> middle -> leaf_spin
# of a program without PIE, the call instructions found by objdump.  perf
# script takes the LBR for the user's frames; tailor's folded stacks must
# be its collapsed ones, that chain.
if gcc -std=gnu11 -O0 -g -no-pie "$top/tests/workloads/tw_stacks.c" -o "$work/lbr" \
	2>"$work/lbr.cc" &&
	/usr/bin/python3 "$top/tests/symbols/lbr_profile.py" "$work/lbr" "$work/lbr.data" \
		main,outer,middle,leaf_spin 7 >"$work/lbr.want" 2>>"$work/lbr.cc"; then
	perf_collapsed "$work/lbr.data" >"$work/lbr.perf-folded"
	if "$tailor" report -i "$work/lbr.data" -f folded --stack function 2>"$work/why" |
		sort >"$work/lbr.folded" &&
		[ "$(cat "$work/lbr.folded")" = "$(cat "$work/lbr.want") 7" ] &&
		diff "$work/lbr.perf-folded" "$work/lbr.folded" >>"$work/why"; then
		ok "perf record --call-graph lbr: the LBR's calls are the user's frames, as perf script takes them ($(cat "$work/lbr.folded"))"
	else
		{ echo "want $(cat "$work/lbr.want") 7; perf:"; cat "$work/lbr.perf-folded";
		  echo "tailor:"; cat "$work/lbr.folded"; } >>"$work/why"
		not_ok "perf record --call-graph lbr: the LBR's calls are the user's frames" "$work/why"
	fi
else
	not_ok "a program without PIE and its LBR perf.data" "$work/lbr.cc"
fi

# Kernel functions (perf record without :u, as root): named from
# /proc/kallsyms where the file was recorded on this host and kernel, as
# perf names them; the header says which symbols were used; --kallsyms
# FILE gives the same from a copy; a copy with its addresses hidden
# (kptr_restrict) is refused, saying so.
if [ "$(id -u)" = 0 ] && perf record -q -e cpu-clock -F 4000 -o "$work/kernel.data" -- \
	dd if=/dev/zero of=/dev/null bs=64 count=200000 >"$work/kernel.rec" 2>&1; then
	perf script -i "$work/kernel.data" -F ip,sym,dso 2>/dev/null |
		awk '$NF == "([kernel.kallsyms])" && NF == 3 { n[$2]++ } END { for (k in n) print n[k] "\t" k }' \
		>"$work/kernel.perf"
	cp /proc/kallsyms "$work/kallsyms"
	awk '{ $1 = "0000000000000000"; print }' /proc/kallsyms >"$work/kallsyms-hidden"
	if "$tailor" report -i "$work/kernel.data" -f json --top 0 >"$work/kernel.json" 2>"$work/why" &&
		"$tailor" report -i "$work/kernel.data" >"$work/kernel.txt" 2>>"$work/why" &&
		grep -q "^# kernel symbols: /proc/kallsyms (recorded on this host, kernel $(uname -r))" \
		"$work/kernel.txt" &&
		python3 - "$work/kernel.json" "$work/kernel.perf" >>"$work/why" 2>&1 <<'EOF'
import json, sys
rows = {r["name"]: r["samples"] for r in json.load(open(sys.argv[1]))["rows"]}
perf = {}
for l in open(sys.argv[2]):
    n, k = l.rstrip("\n").split("\t")
    perf[k] = int(n)
bad = ["%s: tailor %d, perf %d" % (k, rows.get(k, 0), n) for k, n in perf.items() if rows.get(k, 0) != n]
print("%d kernel functions, %d samples" % (len(perf), sum(perf.values())))
assert len(perf) >= 5 and not bad, "\n".join(bad[:12])
EOF
	then
		ok "kernel functions named as perf names them, from /proc/kallsyms of this host ($(tail -1 "$work/why"))"
	else
		cat "$work/kernel.txt" >>"$work/why"
		not_ok "kernel functions named as perf names them, from /proc/kallsyms of this host" "$work/why"
	fi
	if "$tailor" report -i "$work/kernel.data" --kallsyms "$work/kallsyms" -f json --top 0 \
		>"$work/kernel2.json" 2>"$work/why" &&
		cmp -s <(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rows"])' "$work/kernel.json") \
		<(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rows"])' "$work/kernel2.json") &&
		! "$tailor" report -i "$work/kernel.data" --kallsyms "$work/kallsyms-hidden" >/dev/null \
		2>"$work/why" &&
		grep -q "every address is 0 (kernel.kptr_restrict hides them" "$work/why"; then
		ok "--kallsyms FILE: a copy names them alike; one with its addresses hidden is refused, saying why"
	else
		not_ok "--kallsyms FILE: a copy names them alike; one with its addresses hidden is refused, saying why" \
			"$work/why"
	fi
else
	skip "kernel symbols: root is needed to read /proc/kallsyms's addresses"
fi

# Code in the vDSO, which has no file to read: one row, [vdso], with the
# samples perf gives that object.
if gcc -std=gnu11 -O1 "$top/tests/symbols/vdso_calls.c" -o "$work/vdso" 2>"$work/vdso.cc" &&
	perf record -q -e cpu-clock:u -F 4000 -o "$work/vdso.data" -- "$work/vdso" \
	>"$work/vdso.rec" 2>&1 &&
	"$tailor" report -i "$work/vdso.data" -f json >"$work/vdso.json" 2>"$work/why"; then
	want=$(perf script -i "$work/vdso.data" -F ip,dso 2>/dev/null | grep -c '(\[vdso\])$')
	got=$(python3 -c 'import json, sys
print(sum(r["samples"] for r in json.load(open(sys.argv[1]))["rows"] if r["name"] == "[vdso]"))' \
		"$work/vdso.json")
	if [ "$want" -gt 100 ] && [ "$got" = "$want" ] && ! grep -q '\[\[vdso\]\]' "$work/vdso.json"; then
		ok "code in the vDSO: one row [vdso] with perf's $want samples"
	else
		not_ok "code in the vDSO: one row [vdso] with perf's samples (perf $want, tailor $got)" "$work/vdso.json"
	fi
else
	cat "$work/vdso.rec" "$work/why" >>"$work/vdso.cc"
	not_ok "vdso_calls.c builds, perf records it, tailor reports it" "$work/vdso.cc"
fi

# A raw r15 is no tag: in a program no dictionary describes (xz keeps its
# own values in r15), samples are no more apart in the exports than in
# the table.  Keyed by r15, 90k samples of xz gave 47k pprof labels.
if command -v xz >/dev/null && command -v go >/dev/null; then
	head -c 3000000 /dev/urandom | base64 >"$work/xz.in"
	if perf record -q -e cpu-clock:u -F 4000 --intr-regs=r15 -o "$work/xz.data" -- \
		xz -T1 -6 -c "$work/xz.in" >/dev/null 2>"$work/why" &&
		"$tailor" report -i "$work/xz.data" -f pprof -o "$work/xz.pb.gz" 2>>"$work/why" &&
		"$tailor" report -i "$work/xz.data" -f folded >"$work/xz.folded" 2>>"$work/why" &&
		go tool pprof -raw "$work/xz.pb.gz" >"$work/xz.raw" 2>>"$work/why"; then
		labels=$(grep -c 'tag:' "$work/xz.raw")
		samples=$(grep -c -E '^ +[0-9]+ +[0-9]+: ' "$work/xz.raw")
		stacks=$(wc -l <"$work/xz.folded")
		# One thread: a pprof sample per stack, none apart by r15.
		if [ "$labels" = 0 ] && [ "$samples" = "$stacks" ]; then
			ok "a raw r15 is no tag: xz's pprof has no tag label, a sample per folded stack ($stacks)"
		else
			echo "tag labels $labels, pprof samples $samples, folded stacks $stacks" >>"$work/why"
			not_ok "a raw r15 is no tag: no tag label, a pprof sample per folded stack" "$work/why"
		fi
	else
		not_ok "xz under perf record --intr-regs=r15, its pprof read by go tool pprof" "$work/why"
	fi
else
	skip "xz and go are needed (scripts/setup.sh installs them)"
fi

# Names of C++, Rust (legacy and v0) and D, from their symbols.  perf 6.1
# leaves D's raw: tailor gives the D ABI's reading (libiberty's, with the
# parameters it always prints).  With --no-demangle, perf script
# --no-demangle's names.
d_raw=_D8tailored5probeFmZm d_readable="tailored.probe(ulong)"
if gcc -std=gnu11 -O1 -g "$top/tests/symbols/mangled_names.c" -o "$work/mangled" \
	2>"$work/mangled.cc" &&
	perf record -q -e cpu-clock:u -F 4000 -o "$work/mangled.data" -- "$work/mangled" 300 \
	>"$work/mangled.rec" 2>&1; then
	for how in demangled raw; do
		opt=$([ $how = raw ] && echo --no-demangle)
		perf_counts "$work/mangled.data" sym $opt >"$work/mangled.$how"
		if "$tailor" report -i "$work/mangled.data" --level function -f json $opt \
			>"$work/mangled.$how.json" 2>"$work/why" &&
			grep -q "$([ $how = raw ] && echo "_ZN3eng3ops4JoinImE5probeEm" ||
				echo "eng::ops::Join<unsigned long>::probe")" "$work/mangled.$how" &&
			compare mangled function "$work/mangled.$how.json" "$work/mangled.$how" \
				$([ $how = demangled ] && echo "$d_raw=$d_readable"); then
			ok "C++, Rust legacy and v0, D symbols ${opt:-demangled}: perf's names and samples$([ $how = demangled ] && echo ", D's as its ABI reads it") ($(head -1 "$work/why"))"
		else
			cat "$work/mangled.$how" >>"$work/why"
			not_ok "C++, Rust legacy and v0, D symbols ${opt:-demangled}: perf's names and samples" "$work/why"
		fi
	done
else
	cat "$work/mangled.rec" >>"$work/mangled.cc"
	not_ok "mangled_names.c builds and perf records it" "$work/mangled.cc"
fi

# Objects and processes: two processes of one program under two names
# (and the shell that started them); each row is perf's comm,dso,sym --
# perf script's comm, dso and sym per sample -- exactly.
if gcc -std=gnu11 -O1 -g "$top/tests/symbols/hot_lines.c" -o "$work/left" 2>"$work/procs.cc" &&
	cp "$work/left" "$work/right" &&
	perf record -q -e cpu-clock:u -F 4000 -o "$work/procs.data" -- \
	sh -c "'$work/left' 25 & '$work/right' 25; wait" >"$work/procs.rec" 2>&1; then
	perf script -i "$work/procs.data" -F comm,ip,sym,dso 2>/dev/null | awk '
		match($0, /\(([^()]*)\)$/) {
			dso = substr($0, RSTART + 1, RLENGTH - 2); sub(/.*\//, "", dso)
			rest = substr($0, 1, RSTART - 1); comm = $1
			sub(/^ *[^ ]+ +[0-9a-f]+ /, "", rest); sub(/ +$/, "", rest)
			if (rest != "[unknown]") n[comm "\t" dso "\t" rest]++
		}
		END { for (k in n) print n[k] "\t" k }' | sort >"$work/procs.perf"
	if "$tailor" report -i "$work/procs.data" -f json --top 0 >"$work/procs.json" 2>"$work/why" &&
		"$tailor" report -i "$work/procs.data" >"$work/procs.txt" 2>>"$work/why" &&
		grep -qE "^# [23] processes had samples: a row per process and function" "$work/procs.txt" &&
		grep -qE '^ +[0-9.]+% +[0-9]+  left +left +three_parts$' "$work/procs.txt" &&
		python3 - "$work/procs.json" "$work/procs.perf" >>"$work/why" 2>&1 <<'EOF'
import json, sys
got = {}
for r in json.load(open(sys.argv[1]))["rows"]:
    if r["kind"] == "function":
        got["\t".join((r["process"], r["object"], r["name"]))] = r["samples"]
want = {}
for l in open(sys.argv[2]):
    n, k = l.rstrip("\n").split("\t", 1)
    want[k] = int(n)
bad = ["%s: tailor %s, perf %s" % (k.replace("\t", " "), got.get(k, 0), want.get(k, 0))
       for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k)]
procs = set(k.split("\t")[0] for k in want)
print("%d rows of %d processes, %d samples" % (len(want), len(procs), sum(want.values())))
assert len(want) >= 6 and {"left", "right"} <= procs and not bad, "\n".join(bad)
EOF
	then
		ok "objects and processes: each row is perf's comm,dso,sym ($(tail -1 "$work/why"))"
	else
		cat "$work/procs.txt" "$work/procs.perf" >>"$work/why"
		not_ok "objects and processes: each row is perf's comm,dso,sym" "$work/why"
	fi
else
	cat "$work/procs.rec" >>"$work/procs.cc"
	not_ok "two processes of hot_lines under perf record" "$work/procs.cc"
fi

# A stripped program: its row says so and where names would come from;
# with its debug file split off by objcopy and found by build-id under
# --debug-dir (libdw's .build-id/xx/rest.debug), each function has the
# samples perf gives it on the same perf.data with the unstripped file
# in place (recorded with -N, so that perf reads the file, not a copy
# in its build-id cache).
mkdir -p "$work/stripped"
if gcc -std=gnu11 -O1 -g "$top/tests/symbols/hot_lines.c" -o "$work/stripped/full" \
	2>"$work/stripped.cc" &&
	objcopy --only-keep-debug "$work/stripped/full" "$work/stripped/debug" &&
	objcopy --strip-all "$work/stripped/full" "$work/stripped/hot" &&
	perf record -N -q -e cpu-clock:u -F 4000 -o "$work/stripped.data" -- \
	"$work/stripped/hot" 30 >"$work/stripped.rec" 2>&1; then
	id=$(readelf -n "$work/stripped/hot" | awk '/Build ID:/ { print $3 }')
	mkdir -p "$work/debugs/.build-id/${id:0:2}"
	mv "$work/stripped/debug" "$work/debugs/.build-id/${id:0:2}/${id:2}.debug"
	if "$tailor" report -i "$work/stripped.data" >"$work/stripped.txt" 2>"$work/why" &&
		grep -qE '^ +[0-9.]+% +[0-9]+  hot +\[hot\]$' "$work/stripped.txt" &&
		grep -qF "samples in $work/stripped/hot: no symbols (stripped); --level instruction gives their addresses" \
		"$work/stripped.txt" && ! grep -q three_parts "$work/stripped.txt"; then
		ok "a stripped program: one row [hot], and a note saying it has no symbols and where they would come from"
	else
		cat "$work/stripped.txt" >>"$work/why"
		not_ok "a stripped program: one row [hot], and a note saying it has no symbols" "$work/why"
	fi
	cp "$work/stripped/hot" "$work/stripped/hot.s"
	cp "$work/stripped/full" "$work/stripped/hot"
	perf_counts "$work/stripped.data" sym >"$work/stripped.sym"
	cp "$work/stripped/hot.s" "$work/stripped/hot"
	if "$tailor" report -i "$work/stripped.data" --debug-dir "$work/debugs" -f json \
		>"$work/stripped.json" 2>"$work/why" &&
		grep -q three_parts "$work/stripped.sym" &&
		compare stripped/full function "$work/stripped.json" "$work/stripped.sym"; then
		ok "its debug file by build-id (--debug-dir): every function has perf's samples from the unstripped file ($(head -1 "$work/why"))"
	else
		cat "$work/stripped.sym" >>"$work/why"
		not_ok "its debug file by build-id (--debug-dir): every function has perf's samples from the unstripped file" \
			"$work/why"
	fi
	if ! "$tailor" report -i "$work/stripped.data" --debug-dir "$work/stripped.data" \
		>/dev/null 2>"$work/why" && grep -q -- "--debug-dir .*: not a directory" "$work/why"; then
		ok "--debug-dir on a file: refused, saying so"
	else
		not_ok "--debug-dir on a file: refused, saying so" "$work/why"
	fi
else
	cat "$work/stripped.rec" >>"$work/stripped.cc"
	not_ok "hot_lines stripped by objcopy and recorded" "$work/stripped.cc"
fi

# Periods: page-faults at a frequency (perf record -F) give each sample
# the faults since the last, from 1 to thousands; perf report's overhead
# weighs by them, and so do tailor's shares: each (comm, dso, sym) row's
# share is perf report's, to its two decimals.  Where both name a row
# alike -- libc's fork has two symbols, and tailor picks as libdwfl does
# -- most of the weight must be so named.  Code without a symbol (in
# Debian's stripped python3.11) is a row per address in perf's table and
# one per object in tailor's ([python3.11]): their sums are compared.
# Debian's python3 itself: a version manager's shim would run programs
# of its own first.
if perf record -q -e page-faults -F 500 -o "$work/faults.data" -- /usr/bin/python3 -c \
	'a = [bytearray(4096 * 50) for i in range(3000)]' >"$work/faults.rec" 2>&1; then
	perf report -i "$work/faults.data" --stdio --sort comm,dso,sym -t '|' 2>/dev/null |
		awk -F'|' '/^ *[0-9.]+%/ { gsub(/ +/, "", $2); gsub(/ +$/, "", $3); gsub(/ +$/, "", $4)
			sub(/^ +/, "", $1); sub(/%.*/, "", $1); sub(/^\[.\] /, "", $4)
			print $1 "\t" $2 "\t" $3 "\t" $4 }' >"$work/faults.perf"
	if "$tailor" report -i "$work/faults.data" -f json --top 0 >"$work/faults.json" 2>"$work/why" &&
		"$tailor" report -i "$work/faults.data" >"$work/faults.txt" 2>>"$work/why" &&
		grep -q "^# shares weigh each sample by its period" "$work/faults.txt" &&
		python3 - "$work/faults.json" "$work/faults.perf" >>"$work/why" 2>&1 <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
procs = any("process" in r for r in d["rows"])
got = {}
for r in d["rows"]:
    got[(r.get("process", ""), r["object"], r["name"])] = r["share"]
judged = bad = 0.0
lines = []
# Code without a symbol: perf has a row per address (0x22d26f), tailor one
# per object ([python3.11]); their sums are compared.
perf_rows = {}
for l in open(sys.argv[2]):
    share, comm, dso, sym = l.rstrip("\n").split("\t")
    if re.match(r"0x[0-9a-f]+$", sym):
        sym = "[%s]" % dso
    key = (comm, dso, sym)
    total, n = perf_rows.get(key, (0.0, 0))
    perf_rows[key] = (total + float(share), n + 1)
for (comm, dso, sym), (share, n) in perf_rows.items():
    share = "%.2f" % share
    key = (comm if procs else "", dso, sym)
    if key not in got:
        lines.append("  (not judged) %s %s %s: perf %s%%, tailor has no such row" % (comm, dso, sym, share))
        continue
    judged += float(share)
    # Two decimals each side; a sum of n of perf's, each rounded.
    if abs(got[key] - float(share)) > 0.001 + 0.005 * n:
        bad += 1
        lines.append("  %s %s %s: tailor %.2f%%, perf %s%%" % (comm, dso, sym, got[key], share))
print("\n".join(lines[:12]))
print("%.2f%% of perf's overhead in rows named alike, each row's share equal" % judged)
assert d["weight"] == "period" and judged >= 90 and not bad
EOF
	then
		ok "page-faults at a frequency: shares weigh the samples' periods, each row perf report's overhead ($(tail -1 "$work/why"))"
	else
		cat "$work/faults.txt" "$work/faults.perf" >>"$work/why"
		not_ok "page-faults at a frequency: shares weigh the samples' periods, each row perf report's overhead" \
			"$work/why"
	fi
else
	not_ok "perf record -e page-faults -F 500 of /usr/bin/python3" "$work/faults.rec"
fi

# node --perf-basic-prof: V8's code named through its perf map, node's
# builtins and C++ through its symbols -- every (object, function) row has
# perf script's samples.  libc's are printed, not judged: where it has
# several symbols at one address (malloc and __libc_malloc), tailor names
# it as libdwfl does and perf by its own ranking; nor the vDSO's (below).
if command -v node >/dev/null; then
	cat >"$work/hot.js" <<'JS'
function hot(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
function cold(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 3) % 1000033; return s; }
let t = 0;
for (let r = 0; r < 40; r++) { t += hot(3000000); t += cold(1000000); }
console.log(t);
JS
	# In $work: V8 may leave isolate-*.log files where it runs.
	if (cd "$work" && perf record -q -e cpu-clock:u -F 4000 -o "$work/node.data" -- \
		node --perf-basic-prof "$work/hot.js" >"$work/node.rec" 2>&1) &&
		perf script -i "$work/node.data" -F ip,sym,dso 2>/dev/null | awk '
			match($0, /\(([^()]*)\)$/) {
				dso = substr($0, RSTART + 1, RLENGTH - 2); sub(/.*\//, "", dso)
				rest = substr($0, 1, RSTART - 1); sub(/^ *[0-9a-f]+ /, "", rest); sub(/ +$/, "", rest)
				if (rest != "[unknown]") n[dso "\t" rest]++
			}
			END { for (k in n) print n[k] "\t" k }' >"$work/node.perf" &&
		"$tailor" report -i "$work/node.data" -f json --top 0 >"$work/node.json" 2>"$work/why" &&
		python3 - "$work/node.json" "$work/node.perf" >>"$work/why" 2>&1 <<'EOF'
import json, sys
got = {}
for r in json.load(open(sys.argv[1]))["rows"]:
    if r["kind"] == "function":
        got[(r["object"], r["name"])] = r["samples"]
want = {}
for l in open(sys.argv[2]):
    n, dso, sym = l.rstrip("\n").split("\t", 2)
    want[(dso, sym)] = int(n)
# The vDSO is one row, [vdso]: tailor has no file of it to name its
# functions by (perf reads the copy its build-id cache keeps).
judged = lambda k: k[0] not in ("libc.so.6", "[vdso]")
diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
for k in diff[:12]:
    print("  %s%s %s: tailor %s, perf %s" % ("" if judged(k) else "(not judged) ", k[0], k[1],
                                             got.get(k, 0), want.get(k, 0)))
n = sum(v for k, v in want.items() if judged(k))
print("%d functions, %d of %d samples judged" % (len(want), n, sum(want.values())))
assert not [k for k in diff if judged(k)] and n >= 0.9 * sum(want.values())
assert any(s.startswith("JS:*hot ") for _, s in want) and any(s.startswith("JS:*hot ") for _, s in got)
EOF
	then
		ok "node --perf-basic-prof: every (object, function) row has perf's samples ($(tail -1 "$work/why"))"
	else
		cat "$work/node.rec" >>"$work/why"
		not_ok "node --perf-basic-prof: every (object, function) row has perf's samples" "$work/why"
	fi
	rm -f /tmp/perf-"$(perf script -i "$work/node.data" -F pid 2>/dev/null | head -1 | tr -d ' ')".map
else
	skip "node is needed (scripts/setup.sh installs nodejs)"
fi

# PLT entries, which no symbol covers: named NAME@plt by their .rela.plt
# relocation, as perf names them where it can.  perf 6.1 names this
# program's labs@plt "_init": _init has no size, perf stretches it to the
# next symbol, over the PLT.  The truth is by address: a non-PIE build
# runs at its link addresses, and the samples whose IP lies in .plt past
# its header entry are labs@plt's -- or in .plt.sec, where a toolchain
# that builds for IBT (-fcf-protection) puts the entries calls reach.
if gcc -std=gnu11 -O1 -g -fno-builtin -no-pie "$top/tests/symbols/plt_calls.c" -o "$work/plt" \
	2>"$work/plt.cc" &&
	perf record -q -e cpu-clock:u -F 4000 -o "$work/plt.data" -- "$work/plt" 200 \
	>"$work/plt.rec" 2>&1; then
	want=$(perf script -i "$work/plt.data" -F ip 2>/dev/null | python3 -c '
import subprocess, sys
secs = {}
for l in subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    f = l.replace("[", " ").replace("]", " ").split()
    if len(f) > 5 and f[1] in (".plt", ".plt.sec"):
        secs[f[1]] = (int(f[3], 16), int(f[5], 16))
start, size = secs.get(".plt.sec") or secs[".plt"]
s = start + (0 if ".plt.sec" in secs else 16)
print(sum(1 for l in sys.stdin if l.strip() and s <= int(l.split()[0], 16) < start + size))' "$work/plt")
	got=$("$tailor" report -i "$work/plt.data" -f json --top 0 2>"$work/why" | python3 -c '
import json, sys
print(sum(r["samples"] for r in json.load(sys.stdin)["rows"] if r["name"] == "labs@plt"))')
	if [ "$want" -ge 100 ] && [ "$got" = "$want" ]; then
		ok "a PLT entry: labs@plt, with the $want samples whose IP is in it"
	else
		{ echo "samples in .plt's labs entry $want, tailor's labs@plt $got, in all $(perf script -i "$work/plt.data" -F ip 2>/dev/null | wc -l)"
		  readelf -SW "$work/plt" | grep plt; "$tailor" report -i "$work/plt.data"; } >>"$work/why" 2>&1
		not_ok "a PLT entry: labs@plt, with the samples whose IP is in it" "$work/why"
	fi
else
	cat "$work/plt.rec" >>"$work/plt.cc"
	not_ok "plt_calls.c builds (non-PIE) and perf records it" "$work/plt.cc"
fi

tap_totals

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# dwarf_unwind_test.sh: call stacks of code built without frame pointers
# (perf record --call-graph dwarf, unwound by tailor from the sampled user
# registers and stack bytes) and kernel callers named from kallsyms,
# against perf's own reading of the same perf.data, natively:
#   - tests/symbols/hot_lines.c built with gcc and with clang, -O1 -g
#     -fomit-frame-pointer (no function of it sets up rbp), profiled with
#     perf record --call-graph dwarf -e cpu-clock:u at a fixed period:
#     tailor's folded stacks through main are perf script's collapsed
#     ones, exactly, and reach _start; go tool pprof -top's flat and cum,
#     and --children's self and total, are perf report --children's self
#     and children for the program's functions;
#   - a copy of only 256 bytes of stack: the walk stops where the copy
#     ends, at the frames perf finds (less its end marker, below);
#   - as root, kernel callers: dd under perf record -g -e cpu-clock, and
#     under --call-graph dwarf without :u, has perf's kernel frames by
#     name in every stack.
# Needs perf, python3 and gcc (clang, go: their checks are skipped
# without them); scripts/setup.sh installs them.
#
# Compared with perf script --no-inline and perf report --no-inline:
# perf adds a frame for each function inlined at an address ("inlined_part
# (inlined)"), and names the outermost by its DWARF name where that
# differs from the symbol's ("__libc_start_main_impl (inlined)" for
# __libc_start_main@@GLIBC_2.34); tailor's stacks have a frame per
# address, named by the symbol table.  The stacks that differ only there
# are counted in a comment, not judged.
#
# perf 6.1 as Debian builds it unwinds with libunwind, not libdw (perf
# script -v says "unwind: find_proc_info"); where its walk differs from
# tailor's, the difference is printed and explained here, never hidden:
#   - where the stack copy ends before the outermost frame, libunwind's
#     last step "succeeds" with an IP of 0, which perf takes one back and
#     prints as a root frame "ffffffffffffffff [unknown]"; tailor stops
#     at the last frame whose return address lies in the copy.  Only that
#     root frame, at exactly that address, is taken off perf's stacks, and
#     counted: in the 256-byte case, and in dd's under --call-graph dwarf
#     (glibc's buffered_vfprintf keeps an 8 KiB buffer on its stack, more
#     than perf's default copy of 8 KiB leaves room for).
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

needs "$tailor" perf python3 gcc objdump

# folded DATA: tailor's folded stacks of functions, sorted.
folded() {
	"$tailor" report -i "$1" -f folded --stack function 2>"$work/why" | sort
}

# children DATA NAME: perf report --children's "NAME<TAB>SELF<TAB>CHILDREN"
# per symbol into $work/NAME.perf-children, and the program's own
# functions into $work/NAME.own.  perf keeps a row per object, and two
# objects have a _start (the program's, the one every stack through main
# begins at, and ld.so's); tailor and pprof one per name: the checks add
# perf's rows of a name, which no stack passes twice.
children() {
	perf report -i "$1" --no-inline --children --stdio --sort sym -g none 2>/dev/null |
		awk '/^ +[0-9.]+% +[0-9.]+% / { c = $1; s = $2; $1 = $2 = $3 = ""; sub(/^ +/, "");
			sub(/%/, "", c); sub(/%/, "", s); print $0 "\t" s "\t" c }' >"$work/$2.perf-children"
	nm --defined-only "$work/$2" | awk '$2 ~ /^[tT]$/ { print $3 }' >"$work/$2.own"
}

# pprof_top_is_perfs NAME: go tool pprof -top's flat and cum of tailor's
# pprof are perf report --children's self and children (perf prints two
# decimals of each share).  -noinlines: a function's samples in code
# inlined into it are its own, as perf report counts them.
pprof_top_is_perfs() {
	"$tailor" report -i "$work/$1.data" -f pprof --stack function -o "$work/$1.pb.gz" \
		2>"$work/why" &&
	go tool pprof -top -noinlines -sample_index=samples -nodefraction=0 -nodecount=1000 \
		"$work/$1.pb.gz" >"$work/$1.top" 2>>"$work/why" &&
	python3 - "$work/$1.top" "$work/$1.perf-children" "$work/$1.own" >>"$work/why" 2>&1 <<'EOF'
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
    s, c = perf.get(name, (0.0, 0.0))
    perf[name] = (s + float(self_), c + float(children))
own = set(l.strip() for l in open(sys.argv[3]))
bad = []
for name, (s, c) in perf.items():
    if name not in own:
        continue
    f, cum = top.get(name, (0, 0))
    if abs(100.0 * f / total - s) > 0.006 or abs(100.0 * cum / total - c) > 0.006:
        bad.append("%s: pprof flat %d cum %d of %d, perf self %.2f%% children %.2f%%" % (name, f, cum, total, s, c))
print("%d functions of the program, %d samples" % (len(own & set(perf)), total))
assert len(own & set(perf)) >= 4 and not bad, "\n".join(bad)
EOF
}

# children_are_perfs NAME: tailor's --children self and total are perf's.
children_are_perfs() {
	"$tailor" report -i "$work/$1.data" --children -f json >"$work/$1.children.json" \
		2>"$work/why" &&
	python3 - "$work/$1.children.json" "$work/$1.perf-children" "$work/$1.own" \
		>>"$work/why" 2>&1 <<'EOF'
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["rows"]}
own = set(l.strip() for l in open(sys.argv[3]))
perf = {}
for l in open(sys.argv[2]):
    name, self_, children = l.rstrip("\n").split("\t")
    s, c = perf.get(name, (0.0, 0.0))
    perf[name] = (s + float(self_), c + float(children))
bad, n = [], 0
for name, (self_, children) in perf.items():
    if name not in own:
        continue
    r = rows.get(name, {"share": 0, "total_share": 0})
    n += 1
    if abs(r["share"] - self_) > 0.006 or abs(r["total_share"] - children) > 0.006:
        bad.append("%s: tailor self %.2f%% total %.2f%%, perf %.2f%% %.2f%%" % (name, r["share"],
                   r["total_share"], self_, children))
print("%d functions of the program" % n)
assert n >= 4 and not bad, "\n".join(bad)
EOF
}

# seconds CMD...: the wall time CMD takes, in seconds with ms.
seconds() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000000)).$(printf %03d $(((t1 - t0) / 1000000 % 1000)))"
}

builds="gcc"
if command -v clang >/dev/null; then
	builds="gcc clang"
else
	skip "clang: not installed (scripts/setup.sh installs it)"
fi
for cc in $builds; do
	name=dwarf-$cc
	if ! $cc -std=gnu11 -O1 -g -fomit-frame-pointer "$top/tests/symbols/hot_lines.c" \
		-o "$work/$name" 2>"$work/$name.cc"; then
		not_ok "$cc -fomit-frame-pointer: hot_lines.c builds" "$work/$name.cc"
		continue
	fi
	# No frame pointer to follow: no function of the program sets up rbp.
	fp=$(objdump -d --no-show-raw-insn "$work/$name" | awk '
		/^[0-9a-f]+ <(main|one_part|two_parts|three_parts)>:/ { f = 1; next }
		/^$/ { f = 0 }
		f && /mov +%rsp,%rbp/ { n++ } END { print n + 0 }')
	if [ "$fp" != 0 ]; then
		not_ok "$cc -fomit-frame-pointer: no function of hot_lines sets up a frame pointer ($fp do)"
		continue
	fi
	data=$work/$name.data
	if ! perf record -q --call-graph dwarf -e cpu-clock:u -c 250000 -o "$data" -- \
		"$work/$name" 40 >"$work/$name.rec" 2>&1; then
		not_ok "$cc: perf record --call-graph dwarf" "$work/$name.rec"
		continue
	fi
	perf_collapsed "$data" --no-inline | grep ';main;' >"$work/$name.perf-folded"
	# The stacks that differ from perf's with its inline frames: counted, not judged.
	inline_differ=$(perf_collapsed "$data" | grep ';main;' |
		comm -13 - "$work/$name.perf-folded" | wc -l)
	if folded "$data" | grep ';main;' >"$work/$name.folded" &&
		[ "$(wc -l <"$work/$name.folded")" -ge 3 ] &&
		grep -q ';three_parts ' "$work/$name.folded" &&
		! grep -v '^_start;' "$work/$name.folded" >>"$work/why" &&
		diff "$work/$name.perf-folded" "$work/$name.folded" >>"$work/why"; then
		ok "$cc -fomit-frame-pointer, --call-graph dwarf: folded stacks are perf script's collapsed, from _start ($(wc -l <"$work/$name.folded") stacks, $(awk '{ n += $NF } END { print n }' "$work/$name.folded") samples)"
		echo "# $cc: $inline_differ of them differ from perf script's with perf's inline frames (not judged)"
	else
		{ echo "perf:"; cat "$work/$name.perf-folded"; echo "tailor:"; cat "$work/$name.folded"; } >>"$work/why"
		not_ok "$cc -fomit-frame-pointer, --call-graph dwarf: folded stacks are perf script's collapsed, from _start" \
			"$work/why"
	fi
	children "$data" "$name"
	if ! command -v go >/dev/null; then
		skip "$cc: go tool pprof is needed (scripts/setup.sh installs go)"
	elif pprof_top_is_perfs "$name"; then
		ok "$cc --call-graph dwarf: go tool pprof -top's flat and cum are perf report --children's self and children ($(tail -1 "$work/why"))"
	else
		cat "$work/$name.top" "$work/$name.perf-children" >>"$work/why"
		not_ok "$cc --call-graph dwarf: go tool pprof -top's flat and cum are perf report --children's self and children" \
			"$work/why"
	fi
	if children_are_perfs "$name"; then
		ok "$cc --call-graph dwarf: --children's self and total are perf report --children's ($(tail -1 "$work/why"))"
	else
		cat "$work/$name.children.json" >>"$work/why"
		not_ok "$cc --call-graph dwarf: --children's self and total are perf report --children's" \
			"$work/why"
	fi
	# Figures, never pass/fail: reading the same file, stacks and all.
	echo "# $cc: $(stat -c %s "$data") bytes, $(folded "$data" | awk '{ n += $NF } END { print n }') samples:" \
		"tailor report -f folded $(seconds "$tailor" report -i "$data" -f folded --stack function) s," \
		"tailor report $(seconds "$tailor" report -i "$data") s," \
		"perf report --stdio $(seconds perf report -i "$data" --stdio) s," \
		"perf script $(seconds perf script -i "$data") s"
done

# A short copy of the stack: the walk ends where the copy does.  The
# program's stacks (through main) are judged: libc's exit path, sampled
# now and then, has functions of several names at one address, which
# tailor names as libdwfl does and perf by its own ranking
# (__libc_cleanup_push_defer, __GI___libc_cleanup_push_defer).
name=short
if gcc -std=gnu11 -O1 -g -fomit-frame-pointer "$top/tests/symbols/hot_lines.c" -o "$work/$name" \
	2>"$work/$name.cc" &&
	perf record -q --call-graph dwarf,256 -e cpu-clock:u -c 250000 -o "$work/$name.data" -- \
	"$work/$name" 20 >"$work/$name.rec" 2>&1; then
	perf_collapsed "$work/$name.data" --end "$work/dropped" --no-inline | grep -E '(^|;)main;' >"$work/$name.perf-folded"
	dropped=$(cat "$work/dropped")
	if folded "$work/$name.data" | grep -E '(^|;)main;' >"$work/$name.folded" &&
		grep -q ';main;three_parts ' "$work/$name.folded" &&
		! grep -q '^_start;' "$work/$name.folded" &&
		diff "$work/$name.perf-folded" "$work/$name.folded" >>"$work/why"; then
		ok "--call-graph dwarf,256: stacks end where the copy does, at perf's frames ($(wc -l <"$work/$name.folded") stacks; perf's libunwind end frame taken off $dropped of them)"
	else
		{ echo "perf:"; cat "$work/$name.perf-folded"; echo "tailor:"; cat "$work/$name.folded"; } >>"$work/why"
		not_ok "--call-graph dwarf,256: stacks end where the copy does, at perf's frames" "$work/why"
	fi
else
	cat "$work/$name.rec" >>"$work/$name.cc"
	not_ok "hot_lines under perf record --call-graph dwarf,256" "$work/$name.cc"
fi

# Kernel callers (as root, without :u): named from this host's
# /proc/kallsyms as perf names them, in object [kernel.kallsyms].  Every
# kernel frame is judged -- its name, its object and where it stands --
# and how many user frames each stack has; the user frames' names are
# another test's (perf_compare_test.sh), and differ here in three known
# ways: of libc's several symbols at one address perf picks its own
# (__GI___libc_write for __write); perf calls code with no symbol
# [unknown] where tailor names its object ([dd], dd is stripped); perf
# names a caller by its return address (_dl_start_user) where tailor
# names the call (_start).  So each side's stacks are read with each
# frame's object -- perf script's dso, and go tool pprof -raw's file of
# tailor's pprof -- and a frame outside the kernel is compared as "-"
# (by name alone, libc's strnlen would pass for the kernel's).  The
# stacks equal as they are, names and all, are counted in a comment.
#
# beyond_frameless PERF TAILOR N: PERF's stacks (kernel_stacks) are
# TAILOR's, but for stacks of N samples that tailor has in addition: the
# samples perf printed with no frame.  The difference on stdout.
beyond_frameless() {
	python3 - "$@" <<'EOF'
import sys
def stacks(path):
    d = {}
    for l in open(path):
        k, n = l.rstrip("\n").rsplit(" ", 1)
        d[k] = int(n)
    return d
perf, tailor, n = stacks(sys.argv[1]), stacks(sys.argv[2]), int(sys.argv[3])
more = {k: tailor.get(k, 0) - perf.get(k, 0) for k in set(perf) | set(tailor)}
for k in sorted(k for k in more if more[k]):
    print("%s: perf %d, tailor %d" % (k, perf.get(k, 0), tailor.get(k, 0)))
assert all(v >= 0 for v in more.values()) and sum(more.values()) == n, \
    "tailor has %d samples more, perf %d with no frame" % (sum(more.values()), n)
EOF
}

# kernel_stacks perf|tailor FILE [end]: "STACK COUNT" per stack, root
# first, kernel frames by name and others "-", from perf script -F
# tid,time,ip,sym,dso --ns or from go tool pprof -raw; with end,
# libunwind's end frame taken off perf's, counted on stderr.  A sample
# perf prints with no frame at all, not even its own IP (perf discards a
# callchain it finds corrupt), is no stack of perf's: its time (ns) goes
# to FILE.frameless, to be shown.
kernel_stacks() {
	python3 - "$@" <<'EOF'
import re, sys
side, path, end = sys.argv[1], sys.argv[2], len(sys.argv) > 3
stacks, dropped = {}, 0
def add(frames, n):
    # frames leaf first, each (name, kernel)
    key = ";".join(name if kernel else "-" for name, kernel in reversed(frames))
    stacks[key] = stacks.get(key, 0) + n
if side == "perf":
    frames, time, frameless = [], None, []
    def sample_end():
        global dropped
        if end and frames and frames[-1][2] == "ffffffffffffffff":
            frames.pop()
            dropped += 1
        if frames:
            add([(n, k) for n, k, _ in frames], 1)
        elif time is not None:
            frameless.append(time)
    for l in open(path).read().split("\n"):
        h = re.match(r"\s*\d+\s+(\d+)\.(\d+):\s*$", l)
        if h:
            sample_end()
            frames, time = [], h.group(1) + h.group(2)
        elif l.strip():
            m = re.match(r"\s*([0-9a-f]+) (.*) \((.*)\)$", l)
            frames.append((m.group(2), m.group(3) == "[kernel.kallsyms]", m.group(1)))
    sample_end()
    open(path + ".frameless", "w").write("".join(t + "\n" for t in frameless))
else:
    # A location: "ID: ADDRESS [M=MAPPING] FUNCTION FILE:LINE s=0", lines of
    # functions inlined there after it; kernel code by its mapping's file
    # or, without one, its function's.
    samples, rest = open(path).read().split("\nLocations\n")
    locations, _, mappings = rest.partition("\nMappings\n")
    kernel_maps = set(m.group(1) for m in re.finditer(r"^(\d+): \S+ \[kernel\.kallsyms\]", mappings, re.M))
    locs = {}
    for m in re.finditer(r"^ +(\d+): 0x[0-9a-f]+ (?:M=(\d+) )?(.*) (\S*):\d+ s=\d+$", locations, re.M):
        locs[m.group(1)] = (m.group(3), m.group(2) in kernel_maps or m.group(4) == "[kernel.kallsyms]")
    for m in re.finditer(r"^ +(\d+) +\d+: ([\d ]+)$", samples, re.M):
        add([locs[i] for i in m.group(2).split()], int(m.group(1)))
for k in sorted(stacks):
    print("%s %d" % (k, stacks[k]))
if end:
    print(dropped, file=sys.stderr)
EOF
}

if [ "$(id -u)" != 0 ]; then
	skip "kernel callers: root is needed to read /proc/kallsyms's addresses"
elif ! command -v go >/dev/null; then
	skip "kernel callers: go tool pprof is needed (scripts/setup.sh installs go)"
else
	for kind in g dwarf; do
		how=$([ $kind = g ] && echo "-g" || echo "--call-graph dwarf")
		name=kernel-$kind
		data=$work/$name.data
		# shellcheck disable=SC2086
		if ! perf record -q $how -e cpu-clock -c 100000 -o "$data" -- \
			dd if=/dev/zero of=/dev/null bs=64 count=300000 >"$work/$name.rec" 2>&1; then
			not_ok "perf record $how -e cpu-clock dd" "$work/$name.rec"
			continue
		fi
		perf script -i "$data" --no-inline --ns -F tid,time,ip,sym,dso 2>/dev/null \
			>"$work/$name.script"
		end=$([ $kind = dwarf ] && echo end)
		kernel_stacks perf "$work/$name.script" ${end:+"$end"} \
			>"$work/$name.perf-kernel" 2>"$work/dropped"
		dropped=$(cat "$work/dropped")
		perf_collapsed "$data" --no-inline >"$work/$name.perf-folded"
		if "$tailor" report -i "$data" -f pprof --stack function -o "$work/$name.pb.gz" \
			2>"$work/$name.why" &&
			go tool pprof -raw "$work/$name.pb.gz" >"$work/$name.raw" 2>>"$work/$name.why" &&
			kernel_stacks tailor "$work/$name.raw" >"$work/$name.kernel" 2>>"$work/$name.why" &&
			folded "$data" >"$work/$name.folded"; then
			kstacks=$(grep -c 'entry_SYSCALL_64' "$work/$name.kernel")
			same=$(comm -12 "$work/$name.perf-folded" "$work/$name.folded" | wc -l)
			frameless=$(wc -l <"$work/$name.script.frameless")
			if [ "$kstacks" -ge 5 ] &&
				grep -q ';do_syscall_64;ksys_write;vfs_write' "$work/$name.folded" &&
				beyond_frameless "$work/$name.perf-kernel" "$work/$name.kernel" "$frameless" \
					>>"$work/$name.why"; then
				ok "perf record $how, kernel callers: every kernel frame perf's, by name, in [kernel.kallsyms] ($(wc -l <"$work/$name.kernel") stacks, $kstacks through a system call$([ $kind = dwarf ] && echo "; perf's libunwind end frame taken off $dropped")$([ "$frameless" = 0 ] || echo "; $frameless printed by perf with no frame, not judged"))"
				echo "# $how: $same of $(wc -l <"$work/$name.perf-folded") stacks equal perf's as they are, user frames' names and all"
				if [ "$frameless" != 0 ]; then
					echo "# samples perf printed with no frame, tailor's stacks for them and their raw callchains:"
					beyond_frameless "$work/$name.perf-kernel" "$work/$name.kernel" "$frameless" |
						sed 's/^/#   /'
					perf script -i "$data" -D 2>/dev/null | awk -v times="$(tr '\n' ' ' <"$work/$name.script.frameless")" '
						BEGIN { n = split(times, t, " "); for (i = 1; i <= n; i++) want[t[i]] = 1 }
						/PERF_RECORD_SAMPLE/ { show = ($1 in want); if (show) print "#   " $0; next }
						show && /^\.\.\.\.\. / { print "#   " $0; next }
						show && !/^\.\.\./ { show = 0 }'
				fi
			else
				{ echo "perf:"; cat "$work/$name.perf-kernel"; echo "tailor:";
				  cat "$work/$name.kernel"; } >>"$work/$name.why"
				not_ok "perf record $how, kernel callers: every kernel frame perf's, by name, in [kernel.kallsyms]" \
					"$work/$name.why"
			fi
		else
			not_ok "perf record $how: tailor's pprof read by go tool pprof -raw" "$work/$name.why"
		fi
	done
fi

tap_totals

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# golden_test.sh [BUILD_DIR]: tailor report on profiles whose ground truth
# is exact.  tests/golden/ops.golden lists groups of samples -- where each
# falls (a source line of a real binary with DWARF, a symbol, the kernel,
# no mapping), its tag and thread -- and the row every level must give
# it.  synth_profile writes those samples as a tailor recording and as a
# perf.data; each view's CSV must equal what the table implies, computed
# here independently of tailor.  tailor runs built with ASan and UBSan.
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
tailor=$build/userspace/san/tailor
synth=$build/userspace/synth_profile
wl=$build/workloads
src_ops=$top/tests/workloads/tw_ops.c
src_jit=$top/tests/workloads/tw_jit.c
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# same NAME EXPECTED ACTUAL
same() {
	if diff -u "$2" "$3" >"$work/diff"; then ok "$1"; else not_ok "$1" "$work/diff"; fi
}
# run NAME CMD...: keep stdout in $work/out, stderr in $work/err, status in $rc
run() { "$@" >"$work/out" 2>"$work/err"; rc=$?; }

for f in "$tailor" "$synth" "$wl/tw_ops" "$wl/libtw_jit.so"; do
	if [ ! -x "$f" ] && [ ! -f "$f" ]; then
		echo "not ok 1 - $f missing: make userspace workloads && make -C userspace test-tools"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
		exit 1
	fi
done

marker() { grep -n "golden: $2" "$1" | cut -d: -f1; }
cp "$wl/libtw_jit.so" "$work/libtw_nodebug.so" && strip -g "$work/libtw_nodebug.so"
"$wl/tw_ops" --dict "$work/ops.dict" 0 0 0

where_of() {
	case $1 in
	ops:*) echo "$wl/tw_ops:$src_ops:$(marker "$src_ops" "${1#ops:}")" ;;
	jit:*) echo "$wl/libtw_jit.so:$src_jit:$(marker "$src_jit" "${1#jit:}")" ;;
	nodebug@*) echo "$work/libtw_nodebug.so@${1#nodebug@}" ;;
	*) echo "$1" ;;
	esac
}
line_of() {
	case $1 in
	ops:*) echo "$src_ops:$(marker "$src_ops" "${1#ops:}")" ;;
	jit:*) echo "$src_jit:$(marker "$src_jit" "${1#jit:}")" ;;
	*) echo "$1" ;;
	esac
}
object_of() {
	case $1 in
	ops:*) echo tw_ops ;;
	jit:*) echo libtw_jit.so ;;
	nodebug@*) echo libtw_nodebug.so ;;
	esac
}

# truth: count, tag, tid, operator, pipeline, function, line, where-kind
: >"$work/spec"
: >"$work/truth"
while IFS='|' read -r count where tag tid op pipe fn line; do
	trim() { local s=$1; s=${s#"${s%%[! ]*}"}; echo "${s%"${s##*[! ]}"}"; }
	count=$(trim "$count"); where=$(trim "$where"); tag=$(trim "$tag")
	tid=$(trim "$tid"); op=$(trim "$op"); pipe=$(trim "$pipe")
	fn=$(trim "$fn"); line=$(trim "$line")
	printf '%s\t%s\t%s\t%s\n' "$count" "$(where_of "$where")" "$tag" "$tid" >>"$work/spec"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$count" "$tag" "$tid" "$op" "$pipe" \
		"$fn" "$(line_of "$line")" "$where" >>"$work/truth"
done < <(grep -v '^#' "$top/tests/golden/ops.golden" | grep .)

if "$synth" -o "$work/ops.rec" -p "$work/ops.data" "$work/spec" >"$work/groups" 2>"$work/err"; then
	ok "synth_profile wrote the recording and the perf.data"
else
	not_ok "synth_profile" "$work/err"
fi

# The instruction level's row: object+0xVADDR function, from the address chosen.
paste "$work/truth" <(awk '{print $6}' "$work/groups") | while IFS=$'\t' read -r c tag tid op pipe fn line where vaddr; do
	obj=$(object_of "$where")
	if [ -n "$obj" ]; then name="$obj+$vaddr $fn"; else name=$line; fi
	printf '%s\t%s\n' "$c" "$name"
done >"$work/truth-instruction"

# expected COLUMN [FILTER]: name,samples summed from the truth, by name
expected() {
	awk -F'\t' -v col="$1" -v filter="${2:-}" '
		filter == "" || $3 == filter { sum[$col] += $1 }
		END { for (k in sum) print k "," sum[k] }' "$work/truth" | sort
}
# actual ARGS...: name,samples of tailor report --format csv
actual() {
	"$tailor" report -f csv "$@" 2>"$work/err" | tail -n +2 | awk -F, '{print $1 "," $3}' | sort
}

for level in operator:4 pipeline:5 function:6 line:7; do
	expected "${level#*:}" >"$work/exp"
	actual -i "$work/ops.rec" -d "$work/ops.dict" -l "${level%:*}" >"$work/act"
	same "level ${level%:*}: every row's samples as the ground truth says" "$work/exp" "$work/act"
done
awk -F'\t' '{ sum[$2] += $1 } END { for (k in sum) print k "," sum[k] }' \
	"$work/truth-instruction" | sort >"$work/exp"
actual -i "$work/ops.rec" -l instruction >"$work/act"
same "level instruction: rows by address, samples exact" "$work/exp" "$work/act"

"$tailor" report -f csv -i "$work/ops.rec" -d "$work/ops.dict" >"$work/rec.csv" 2>/dev/null
"$tailor" report -f csv -i "$work/ops.data" -d "$work/ops.dict" >"$work/perf.csv" 2>/dev/null
if [ -s "$work/rec.csv" ]; then
	same "perf.data (perf record --intr-regs=r15 layout) gives the same operator report" \
		"$work/rec.csv" "$work/perf.csv"
else
	not_ok "operator report of the recording is empty"
fi

# The notes count each reason exactly.
run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict"
notes_ok=1
for want in "3200:attributed by the tag register" "300:in shared code with no tag set" \
	"200:carry a tag that names no component" "100:on lines of a dictionary's files that it does not link" \
	"120:in code without line information" "50:outside every recorded mapping" \
	"120:in $work/libtw_nodebug.so, which has no line information"; do
	count=${want%%:*} text=${want#*:}
	grep -Eq "^#   $count samples( \([0-9.]+%\))? ($text)" "$work/out" || { notes_ok=0; echo "# missing note: $want"; }
done
attributed=$(awk -F'\t' '$4 !~ /^\[/ { s += $1 } END { print s }' "$work/truth")
total=$(awk -F'\t' '{ s += $1 } END { print s }' "$work/truth")
grep -q "^# level: operator; $attributed of $total samples" "$work/out" || { notes_ok=0; echo "# attributed line wrong"; }
if [ $notes_ok = 1 ] && [ $rc = 0 ]; then ok "notes: each unattributed reason counted exactly, $attributed of $total attributed"
else not_ok "notes" "$work/out"; fi

# Timeline: sample k (0-based, in table order) is k us after the first.
expand() {	# one line per sample: k, tid, operator
	awk -F'\t' '{ for (i = 0; i < $1; i++) print k++ "\t" $3 "\t" $4 }' "$work/truth"
}
expand | awk -F'\t' '{ c[int($1 / 100) "," $3]++ } END { for (k in c) print k "," c[k] }' | sort >"$work/exp"
"$tailor" timeline -f csv -b 100us -i "$work/ops.rec" -d "$work/ops.dict" 2>"$work/err" |
	tail -n +2 | awk -F, '{ print $1 "," $3 "," $4 }' | sort >"$work/act"
same "timeline: 100us buckets hold exactly the samples of their time, across CPUs" "$work/exp" "$work/act"
sum=$(awk -F, '{ s += $3 } END { print s }' "$work/act")
[ "$sum" = "$total" ] && ok "timeline: the buckets sum to all $total samples" ||
	not_ok "timeline: buckets sum to $sum, not $total"
"$tailor" timeline -f csv -b 100us -i "$work/ops.data" -d "$work/ops.dict" 2>/dev/null |
	tail -n +2 | awk -F, '{ print $1 "," $3 "," $4 }' | sort >"$work/act2"
same "timeline of the perf.data equals the recording's" "$work/act" "$work/act2"

# Filters.
expected 4 1001 >"$work/exp"
actual -i "$work/ops.rec" -d "$work/ops.dict" --tid 1001 >"$work/act"
same "--tid 1001: only that thread's samples" "$work/exp" "$work/act"
expand | awk -F'\t' '$1 >= 1000 && $1 < 2000 { c[$3]++ } END { for (k in c) print k "," c[k] }' | sort >"$work/exp"
actual -i "$work/ops.rec" -d "$work/ops.dict" --time 1ms:2ms >"$work/act"
same "--time 1ms:2ms: only the samples of that window" "$work/exp" "$work/act"

# Plan: agg <- join <- scan; inclusive shares add up the subtree.
scan=$(expected 4 | awk -F, '$1 == "scan" { print $2 }')
join=$(expected 4 | awk -F, '$1 == "join" { print $2 }')
agg=$(expected 4 | awk -F, '$1 == "agg" { print $2 }')
printf 'agg,,0,%s,%s\njoin,agg,1,%s,%s\nscan,join,2,%s,%s\n' "$agg" $((agg + join + scan)) \
	"$join" $((join + scan)) "$scan" "$scan" >"$work/exp"
"$tailor" report -v plan -f csv -i "$work/ops.rec" -d "$work/ops.dict" 2>/dev/null |
	tail -n +2 | cut -d, -f1-5 >"$work/act"
same "plan: parents, depth, self and inclusive samples" "$work/exp" "$work/act"

# Annotated source: per line, samples and the operator owning most of them.
awk -F'\t' '$7 ~ /:[0-9]+$/ { s[$7] += $1; o[$7 SUBSEP $4] += $1 }
	END { for (k in o) { split(k, p, SUBSEP); if (o[k] > best[p[1]]) { best[p[1]] = o[k]; own[p[1]] = p[2] } }
	      for (l in s) { n = split(l, f, ":"); print f[1] "," f[2] "," s[l] "," own[l] } }' \
	"$work/truth" | sort >"$work/exp"
"$tailor" report -v source -f csv -i "$work/ops.rec" -d "$work/ops.dict" 2>/dev/null |
	tail -n +2 | awk -F, '{ print $1 "," $2 "," $3 "," $5 }' | sort >"$work/act"
same "source: samples and owner of every sampled line" "$work/exp" "$work/act"
run "$tailor" report -v source -i "$work/ops.rec" -d "$work/ops.dict" --source-file tw_ops.c
scan_line=$(marker "$src_ops" scan)
if grep -Eq "^ *[0-9.]+% +$scan /?scan +$scan_line\| .*golden: scan" "$work/out" ||
   grep -Eq "$scan +scan +$scan_line\| .*golden: scan" "$work/out"; then
	ok "source (text): the scan loop's line shows its samples and owner beside the code"
else
	not_ok "source (text)" "$work/out"
fi

# Memory: data addresses per operator over time.
printf '100\t%s\t0\t1000\t0x100000\n100\t%s\t2\t1000\t0x200000\n' \
	"$(where_of ops:scan)" "$(where_of ops:probe)" >"$work/mem.spec"
"$synth" -o "$work/mem.rec" -p "$work/mem.data" "$work/mem.spec" >/dev/null
awk 'BEGIN { for (k = 0; k < 200; k++) printf "%d,0x%x,%s\n", 1000 * k,
	(k < 100 ? 1048576 + 64 * k : 2097152 + 64 * (k - 100)), (k < 100 ? "scan" : "join") }' >"$work/exp"
"$tailor" report -v memory -f csv -i "$work/mem.rec" -d "$work/ops.dict" 2>/dev/null | tail -n +2 >"$work/act"
same "memory: every data address with its time and operator" "$work/exp" "$work/act"
"$tailor" report -v memory -f csv -i "$work/mem.data" -d "$work/ops.dict" 2>/dev/null | tail -n +2 >"$work/act"
same "memory from perf.data (PERF_SAMPLE_ADDR) equals the recording's" "$work/exp" "$work/act"

# The HTML report stands alone.
run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" --html "$work/r.html" --svg "$work/t.svg"
if [ $rc = 0 ] && grep -q '<svg' "$work/r.html" && grep -q '>scan<' "$work/r.html" &&
   grep -q 'Annotated source' "$work/r.html" && ! grep -Eq '(src|href)=' "$work/r.html" &&
   grep -q '</svg>' "$work/t.svg"; then
	ok "--html writes a self-contained report (no external reference); --svg the timeline"
else
	not_ok "--html/--svg" "$work/err"
fi

# Bad input: named, counted, never a crash.
head -c $(( $(stat -c %s "$work/ops.rec") * 2 / 3 )) "$work/ops.rec" >"$work/cut.rec"
run "$tailor" report -i "$work/cut.rec" -d "$work/ops.dict"
if [ $rc = 3 ] && grep -q 'cut short' "$work/err" && grep -Eq 'reporting the [0-9]+ samples' "$work/err" &&
   grep -q '^# level: operator' "$work/out"; then
	ok "a recording cut short: reported up to the cut, said so, exit 3"
else
	not_ok "cut recording (rc=$rc)" "$work/err"
fi
# Exports: folded stacks, pprof read by go tool pprof, Chrome trace.
check=$top/tests/golden/export_check.py
python3 "$check" folded "$work/truth" >"$work/exp"
"$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -f folded >"$work/act" 2>"$work/err"
same "folded: operator;function;file:line stacks, each with its exact count" "$work/exp" "$work/act"
"$tailor" report -i "$work/ops.data" -d "$work/ops.dict" -f folded >"$work/act" 2>"$work/err"
same "folded from the perf.data equals the recording's" "$work/exp" "$work/act"
python3 "$check" folded "$work/truth" pipeline,function >"$work/exp"
"$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -f folded --stack pipeline,function >"$work/act" 2>"$work/err"
same "folded --stack pipeline,function: the levels asked for, exact" "$work/exp" "$work/act"
"$synth" -R -o "$work/rounds.rec" -p "$work/rounds.data" "$work/spec" >/dev/null 2>&1
"$tailor" report -i "$work/rounds.rec" -d "$work/ops.dict" -f folded >"$work/act" 2>"$work/err"
python3 "$check" folded "$work/truth" >"$work/exp"
same "folded from a recording with round marks equals the truth" "$work/exp" "$work/act"

if ! command -v go >/dev/null; then
	not_ok "pprof: go tool pprof is missing (scripts/setup.sh installs golang-go)"
else
	export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOCACHE="$work/gocache"
	run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -f pprof -o "$work/ops.pb.gz"
	go tool pprof -traces -sample_index=samples "$work/ops.pb.gz" >"$work/traces" 2>"$work/err"
	python3 "$check" traces <"$work/traces" >"$work/act"
	python3 "$check" folded "$work/truth" >"$work/exp"
	same "pprof: go tool pprof -traces reads every stack with its exact count" "$work/exp" "$work/act"
	gunzip -t "$work/ops.pb.gz" 2>"$work/err" && grep -q '^Type: samples' "$work/traces" &&
		ok "pprof: a gzip file that go tool pprof reads as a profile" ||
		not_ok "pprof: not gzip'd, or not a profile" "$work/err"
	go tool pprof -top -sample_index=samples "$work/ops.pb.gz" >"$work/top" 2>"$work/err"
	grep -q "of $total total" "$work/top" && ok "pprof -top: $total samples in all, as the table" ||
		not_ok "pprof -top total" "$work/top"
	"$tailor" report -f csv -i "$work/ops.rec" -d "$work/ops.dict" 2>/dev/null | tail -n +2 |
		awk -F, '$2 == "component" { print $1 "," $3 }' | sort >"$work/exp"
	: >"$work/act"
	while IFS=, read -r op count; do
		got=$(go tool pprof -traces -sample_index=samples -tagfocus="operator=^$op\$" \
			"$work/ops.pb.gz" 2>/dev/null | python3 "$check" traces | awk '{ s += $NF } END { print s + 0 }')
		echo "$op,$got" >>"$work/act"
	done <"$work/exp"
	same "pprof -tagfocus=operator=X: each operator's samples equal tailor's table" "$work/exp" "$work/act"
	go tool pprof -tags -sample_index=samples "$work/ops.pb.gz" 2>/dev/null |
		awk '/^ *tag: Total/ { on = 1; next } /^ *[a-z]+: Total/ { on = 0 } on && NF >= 3 { print $NF "," int($1) }' |
		sort >"$work/act"
	awk -F'\t' '$8 != "kernel" { c[$2] += $1 } END { for (t in c) printf "%d,%d\n", t, c[t] }' "$work/truth" |
		sort >"$work/exp"
	same "pprof tag labels: numeric, kept when 0 (num_unit set), counts exact" "$work/exp" "$work/act"
fi

"$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -f chrome -o "$work/ops.json" 2>"$work/err"
if python3 "$check" chrome "$work/ops.json" "$work/truth" >"$work/diff"; then
	ok "chrome: per-thread runs of each operator and function, exact and strictly nested; counters sum to all"
else
	not_ok "chrome trace" "$work/diff"
fi

# Where an export goes, and what happens when it cannot.
run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -f pprof -o /nonexistent/dir/p.pb.gz
if [ $rc = 1 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q 'cannot write /nonexistent/dir/p.pb.gz' "$work/err"; then
	ok "an unwritable -o: one sentence, exit 1"
else
	not_ok "unwritable -o (rc=$rc)" "$work/err"
fi
run "$tailor" report -i "$work/cut.rec" -d "$work/ops.dict" -f folded
cut_total=$(awk '{ s += $NF } END { print s + 0 }' "$work/out")
if [ $rc = 3 ] && grep -q 'cut short' "$work/err" && grep -q "reporting the $cut_total samples" "$work/err"; then
	ok "a cut recording exports what it holds ($cut_total samples), says so, exit 3"
else
	not_ok "cut recording export (rc=$rc)" "$work/err"
fi

echo garbage >"$work/garbage"
run "$tailor" report -i "$work/garbage"
[ $rc = 1 ] && grep -q 'neither a tailor recording nor a perf.data' "$work/err" &&
	ok "a file of neither format: exit 1, named" || not_ok "garbage input (rc=$rc)" "$work/err"
printf 'tailor-dictionary\t1\nlevel\toperator\nlink\tline\tx.c:1\toperator\t7\n' >"$work/bad.dict"
run "$tailor" report -i "$work/ops.rec" -d "$work/bad.dict"
[ $rc = 1 ] && grep -q 'bad.dict:3:' "$work/err" &&
	ok "a broken dictionary: exit 1, with its line number" || not_ok "broken dictionary (rc=$rc)" "$work/err"
run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -l stage
[ $rc = 2 ] && grep -q "no dictionary declares the level 'stage'" "$work/err" &&
	ok "an unknown level: exit 2, named" || not_ok "unknown level (rc=$rc)" "$work/err"
# A dictionary from another build: its lines are off by 100.
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "link" && $2 == "line" { n = split($3, p, ":"); $3 = p[1] ":" p[2] + 100 } 1' \
	"$work/ops.dict" >"$work/other.dict"
run "$tailor" report -i "$work/ops.rec" -d "$work/other.dict"
if [ $rc = 0 ] && grep -q 'does the dictionary match the binary' "$work/out" &&
   ! grep -Eq '^ +[0-9.]+% +[0-9]+  scan$' "$work/out"; then
	ok "a dictionary that does not match the binary: its misses counted, nothing misattributed"
else
	not_ok "mismatched dictionary (rc=$rc)" "$work/out"
fi

# Kernel samples that carry the user's tag (the software clock records the
# user registers at kernel entry) belong to the component the tag names;
# --kernel-apart and the function level keep them [kernel], and so does a
# perf.data, whose kernel samples carry the kernel's r15.
printf '%s\t%s\t%s\t%s\n' 70 kernel 2 1000 40 kernel 0x63 1000 30 kernel 0 1000 >"$work/kernel.spec"
"$synth" -o "$work/kernel.rec" -p "$work/kernel.data" "$work/kernel.spec" >/dev/null 2>&1
kernel_rows() { "$tailor" report -f csv "$@" 2>/dev/null | tail -n +2 | awk -F, '{print $1 "," $3}' | sort | paste -sd' '; }
got=$(kernel_rows -i "$work/kernel.rec" -d "$work/ops.dict")
if [ "$got" = "[kernel],70 join,70" ] &&
   "$tailor" report -i "$work/kernel.rec" -d "$work/ops.dict" 2>/dev/null |
   grep -q '70 samples .* in the kernel, attributed by the tag'; then
	ok "kernel samples with the user's tag go to its component, noted; untagged and unlinked stay [kernel]"
else
	not_ok "kernel samples by tag: got '$got'"
fi
got="$(kernel_rows -i "$work/kernel.rec" -d "$work/ops.dict" --kernel-apart) / $(kernel_rows -i "$work/kernel.rec" -d "$work/ops.dict" -l function) / $(kernel_rows -i "$work/kernel.data" -d "$work/ops.dict")"
if [ "$got" = "[kernel],140 / [kernel],140 / [kernel],140" ]; then
	ok "--kernel-apart, the function level and perf.data's kernel registers keep them [kernel]"
else
	not_ok "kernel samples apart: got '$got'"
fi

# With rip recorded, a kernel sample goes where a user sample at its entry
# IP would: by the link of generated (linked) code whatever the tag (even
# one naming another operator), by the tag in shared code; shared code
# without a tag stays [kernel].
printf '%s\t%s\t%s\t%s\n' 60 "kernel>$(where_of ops:scan)" 0 1000 \
	20 "kernel>$(where_of ops:scan)" 2 1000 \
	25 "kernel>$(where_of ops:probe)" 2 1000 15 "kernel>$(where_of ops:probe)" 0 1000 \
	>"$work/entry.spec"
"$synth" -o "$work/entry.rec" "$work/entry.spec" >/dev/null 2>&1
got="$(kernel_rows -i "$work/entry.rec" -d "$work/ops.dict") / $(kernel_rows -i "$work/entry.rec" -d "$work/ops.dict" --kernel-apart)"
"$tailor" report -i "$work/entry.rec" -d "$work/ops.dict" >"$work/entry.out" 2>&1
if [ "$got" = "[kernel],15 join,25 scan,80 / [kernel],120" ] &&
   grep -q '#   80 samples .* in the kernel, attributed by the linked code' "$work/entry.out" &&
   grep -q '#   25 samples .* in the kernel, attributed by the tag' "$work/entry.out"; then
	ok "kernel samples go to the linked code they entered from, else by tag, noted; --kernel-apart keeps them"
else
	not_ok "kernel samples by entry IP: got '$got'" "$work/entry.out"
fi
# The scan line linked to the join as well: the tag decides among the two
# (join); a tag naming neither (agg) or none leaves it [kernel], though a
# user sample there would go to the first link.
{ cat "$work/ops.dict"; printf 'link\tline\t%s\toperator\t2\n' "$(line_of ops:scan)"; } >"$work/twice.dict"
printf '%s\t%s\t%s\t%s\n' 30 "kernel>$(where_of ops:scan)" 2 1000 \
	20 "kernel>$(where_of ops:scan)" 3 1000 10 "kernel>$(where_of ops:scan)" 0 1000 \
	>"$work/twice.spec"
"$synth" -o "$work/twice.rec" "$work/twice.spec" >/dev/null 2>&1
got=$(kernel_rows -i "$work/twice.rec" -d "$work/twice.dict")
if [ "$got" = "[kernel],30 join,30" ]; then
	ok "kernel samples entered from a line linked twice: the tag decides among its links, else [kernel]"
else
	not_ok "kernel samples on a line linked twice: got '$got'"
fi

# The tag word (tailor record --tag-word): with the dictionary's fields
# declared for it too, it decides in shared code and outside every
# dictionary's code, before the register; a kernel sample goes by it as
# well (the word is the thread's wherever the tick lands).  The register
# still decides where the word is 0.
{ cat "$work/ops.dict"; grep "^tag	" "$work/ops.dict" | sed 's/^tag	/tag-word	/'; } >"$work/word.dict"
printf '%s\t%s\t%s\t%s\t%s\t%s\n' 40 "$(where_of ops:probe)" 0 1000 0 2 \
	20 "$(where_of ops:probe)" 3 1000 0 2 30 "$(where_of ops:probe)" 2 1000 0 0 \
	10 "$(where_of ops:probe)" 0 1000 0 0 25 "$(where_of jit:jit)" 0 1000 0 3 \
	15 kernel 0 1000 0 2 >"$work/word.spec"
"$synth" -o "$work/word.rec" "$work/word.spec" >/dev/null 2>&1
got="$(kernel_rows -i "$work/word.rec" -d "$work/word.dict") / $(kernel_rows -i "$work/word.rec" -d "$work/ops.dict")"
if [ "$got" = "[tw_ops],10 agg,25 join,105 / [kernel],15 [libtw_jit.so],25 [tw_ops],50 agg,20 join,30" ]; then
	ok "the tag word decides before the register where the dictionary declares its fields, kernel samples too"
else
	not_ok "attribution by the tag word: got '$got'"
fi

tap_totals

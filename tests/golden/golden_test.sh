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

for level in operator:4 pipeline:5 line:7; do
	expected "${level#*:}" >"$work/exp"
	actual -i "$work/ops.rec" -d "$work/ops.dict" -l "${level%:*}" >"$work/act"
	same "level ${level%:*}: every row's samples as the ground truth says" "$work/exp" "$work/act"
done
# Functions are rows of their object, as perf's dso,sym: tw_generated_spin
# in libtw_jit.so and in libtw_nodebug.so are two.
while IFS=$'\t' read -r c _ _ _ _ fn _ where; do
	case $where in
	kernel) obj='[kernel.kallsyms]' ;;
	nomap) obj='[unknown]' ;;
	*) obj=$(object_of "$where") ;;
	esac
	printf '%s\t%s in %s\n' "$c" "$fn" "$obj"
done <"$work/truth" | awk -F'\t' '{ s[$2] += $1 } END { for (k in s) print k "," s[k] }' |
	sort >"$work/exp"
"$tailor" report -f csv -i "$work/ops.rec" -d "$work/ops.dict" -l function 2>"$work/err" |
	tail -n +2 | awk -F, '{ print $1 " in " $5 "," $3 }' | sort >"$work/act"
same "level function: every (function, object) row's samples as the ground truth says" \
	"$work/exp" "$work/act"
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
# The files costliest first, as many as --top asks: the first section is
# the file with most sampled samples (by the truth), and the rest are counted.
best=$(awk -F'\t' '$7 ~ /:[0-9]+$/ { split($7, f, ":"); s[f[1]] += $1 }
	END { for (k in s) if (s[k] > m || (s[k] == m && k < b)) { m = s[k]; b = k }; print b }' "$work/truth")
nfiles=$(awk -F'\t' '$7 ~ /:[0-9]+$/ { split($7, f, ":"); s[f[1]] = 1 } END { print length(s) }' "$work/truth")
run "$tailor" report -v source -i "$work/ops.rec" -d "$work/ops.dict" --top 1
if [ $rc = 0 ] && [ "$(grep -c '^## ' "$work/out")" = 1 ] && grep -q "^## $best: " "$work/out" &&
	{ [ "$nfiles" -le 1 ] || grep -q "^# $((nfiles - 1)) more file" "$work/out"; }; then
	ok "source --top 1: the costliest of $nfiles files ($(basename "$best")), the others counted"
else
	not_ok "source --top 1: the costliest of $nfiles files ($best), the others counted" "$work/out"
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

# ---- Packed samples (formats 3 and 2): every view as from the raw samples ----
# The same samples packed (synth_profile -P), each batch with its summary
# (format 3), and as format 2 wrote them, without (-P -2): the reader
# unpacks them to exactly the raw records, so every output must be byte
# for byte the raw recording's -- the sample lines of tailor dump too.
packed_same=0 packed_views=0
# packed_tally WHAT: count $work/exp against $work/act; keep the diff
packed_tally() {
	packed_views=$((packed_views + 1))
	if [ -s "$work/exp" ] && cmp -s "$work/exp" "$work/act"; then
		packed_same=$((packed_same + 1))
	else
		diff -u "$work/exp" "$work/act" | head -20 >>"$work/packed.diff"
		echo "^ $1" >>"$work/packed.diff"
	fi
}
for c in "ops:spec:ops.dict:-R" "mem:mem.spec:ops.dict:" "entry:entry.spec:ops.dict:" \
	"word:word.spec:word.dict:"; do
	IFS=: read -r name spec dict flag <<<"$c"
	# shellcheck disable=SC2086 # $flag: one option or none
	"$synth" $flag -o "$work/$name-raw.rec" "$work/$spec" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$synth" $flag -P -o "$work/$name-packed.rec" "$work/$spec" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$synth" $flag -P -2 -o "$work/$name-packed2.rec" "$work/$spec" >/dev/null 2>&1
	for packed in packed packed2; do
		for view in "report -f csv --top 0" "report -f csv --top 0 -l function" \
			"report -f folded" "report -v memory -f csv" "timeline -f csv -b 100us"; do
			# Messages name the file: the same name for both.
			# shellcheck disable=SC2086 # $view: the command and its options
			"$tailor" $view -i "$work/$name-raw.rec" -d "$work/$dict" 2>&1 |
				sed "s/$name-raw\.rec/$name.rec/g" >"$work/exp"
			# shellcheck disable=SC2086
			"$tailor" $view -i "$work/$name-$packed.rec" -d "$work/$dict" 2>&1 |
				sed "s/$name-$packed\.rec/$name.rec/g" >"$work/act"
			packed_tally "$name ($packed): tailor $view"
		done
		"$tailor" dump --samples 100000 "$work/$name-raw.rec" | grep '^sample: ' >"$work/exp"
		"$tailor" dump --samples 100000 "$work/$name-$packed.rec" | grep '^sample: ' >"$work/act"
		packed_tally "$name ($packed): tailor dump --samples"
	done
done
if [ "$packed_same" -eq "$packed_views" ] &&
	"$tailor" dump "$work/ops-packed.rec" | grep -qx 'packed_batches: [1-9][0-9]*' &&
	"$tailor" dump "$work/ops-packed.rec" | grep -qx 'version: 4' &&
	"$tailor" dump "$work/ops-packed2.rec" | grep -qx 'version: 2'; then
	ok "packed samples, formats 4 and 2: $packed_same of $packed_views outputs (report, folded, memory, timeline, dump) equal the raw recording's"
else
	not_ok "packed samples: $packed_same of $packed_views outputs equal the raw recording's" "$work/packed.diff"
fi
# A format 3 batch whose summary is plausible but not its samples': the
# first pass believes it, delivery finds it out, and the report stops
# there -- the samples of the batches before it reported, exit 3.
python3 - "$work/ops-packed.rec" "$work/lie.rec" >"$work/lie.out" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
pos, seen, handed = 32, 0, 0
while pos < len(data):
    rtype, size = struct.unpack_from('<II', data, pos)
    if rtype == 11:
        count = struct.unpack_from('<I', data, pos + 12)[0]
        seen += 1
        if seen == 3:
            tsc = struct.unpack_from('<Q', data, pos + 24)[0]
            struct.pack_into('<Q', data, pos + 24, tsc - 1)
            print(handed, pos)
            break
        handed += count
    pos += size
open(sys.argv[2], 'wb').write(data)
PY
read -r lie_before lie_at <"$work/lie.out"
run "$tailor" report -i "$work/lie.rec" -d "$work/ops.dict" -f csv --top 0
lie_sum=$(awk -F, 'NR > 1 { n += $3 } END { print n + 0 }' "$work/out")
if [ $rc = 3 ] && [ -n "$lie_before" ] && [ "$lie_before" -gt 0 ] &&
	grep -q "cut short: offset $lie_at: SAMPLES_PACKED the summary is not the samples'" "$work/err" &&
	grep -q "reporting the $lie_before samples before that" "$work/err" &&
	[ "$lie_sum" = "$lie_before" ]; then
	ok "format 3: a batch whose summary lies cuts the report there ($lie_before samples before it), exit 3"
else
	not_ok "format 3, a lying summary: rc=$rc, $lie_sum samples reported, ${lie_before:-?} before the batch" "$work/err"
fi
raw=$(stat -c %s "$work/ops-raw.rec") packed=$(stat -c %s "$work/ops-packed.rec")
if [ "$packed" -lt $((raw / 2)) ]; then
	ok "packed samples: the recording takes $packed bytes against $raw raw"
else
	not_ok "packed samples: $packed bytes against $raw raw, not under half"
fi

# ---- Queries: two threads, three query executions at once (queries.golden) ----
# The dictionary of the engine's shape (operator < pipeline < query): a
# query component is one execution; the two clients' runs of q1 share
# their operators, which link to both, so only the tag word tells them
# apart.
{
	printf 'tailor-dictionary\t1\nlevel\toperator\nlevel\tpipeline\nlevel\tquery\n'
	printf 'component\toperator\t%s\n' '1	scan' '2	join' '3	agg'
	printf 'parent\toperator\t1\toperator\t2\n'
	printf 'component\tpipeline\t%s\n' '1	pipeline 1' '2	pipeline 2'
	printf 'component\tquery\t%s\n' '1	q1 #1 (client 1)' '2	q1 #2 (client 2)' '3	q2'
	printf 'log\tplan\n'
	printf 'link\t%s\n' 'operator	1	pipeline	1' 'operator	2	pipeline	1' \
		'operator	3	pipeline	2' 'operator	1	query	1' 'operator	1	query	2' \
		'operator	2	query	1' 'operator	2	query	2' 'operator	3	query	3' \
		'pipeline	1	query	1' 'pipeline	1	query	2' 'pipeline	2	query	3'
	printf 'log\tcode\n'
	awk -F'\t' '$1 == "link" && $2 == "line" && $4 == "operator"' "$work/ops.dict"
	grep '^shared	' "$work/ops.dict"
	printf 'tag\toperator\t0\t16\ntag-word\tquery\t0\t16\n'
} >"$work/q.dict"
# truth: count, tag, tid, word, query, pipeline, operator, function, line, where
: >"$work/q.spec"
: >"$work/q.truth"
while IFS='|' read -r count where tag tid word query pipe op fn; do
	trim() { local s=$1; s=${s#"${s%%[! ]*}"}; echo "${s%"${s##*[! ]}"}"; }
	count=$(trim "$count"); where=$(trim "$where"); tag=$(trim "$tag"); tid=$(trim "$tid")
	word=$(trim "$word"); query=$(trim "$query"); pipe=$(trim "$pipe"); op=$(trim "$op")
	fn=$(trim "$fn")
	case $where in
	ops:*|jit:*) line=$(line_of "$where") ;;
	nodebug@*) line="[libtw_nodebug.so]" ;;
	kernel*) line="[kernel]" ;;
	*) line="[unknown]" ;;
	esac
	printf '%s\t%s\t%s\t%s\t0\t%s\n' "$count" "$(where_of "$where")" "$tag" "$tid" "$word" >>"$work/q.spec"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$count" "$tag" "$tid" "$word" "$query" \
		"$pipe" "$op" "$fn" "$line" "$where" >>"$work/q.truth"
done < <(grep -v '^#' "$top/tests/golden/queries.golden" | grep .)
q_total=$(awk -F'\t' '{ s += $1 } END { print s }' "$work/q.truth")
if "$synth" -o "$work/q.rec" "$work/q.spec" >/dev/null 2>"$work/err"; then
	ok "synth_profile wrote the recording of concurrent queries ($q_total samples)"
else
	not_ok "synth_profile (queries)" "$work/err"
fi
# qexpected COLUMN [QUERIES]: name,samples of the truth, by name, only those queries ('|')
qexpected() {
	awk -F'\t' -v col="$1" -v keep="${2:-}" '
		BEGIN { n = split(keep, k, "|"); for (i = 1; i <= n; i++) want[k[i]] = 1 }
		keep == "" || ($5 in want) { sum[$col] += $1 }
		END { for (x in sum) print x "," sum[x] }' "$work/q.truth" | sort
}
qrun() { run "$tailor" report -i "$work/q.rec" -d "$work/q.dict" "$@"; }
q1a="q1 #1 (client 1)" q1b="q1 #2 (client 2)"

for level in query:5 pipeline:6 operator:7 function:8; do
	qexpected "${level#*:}" >"$work/exp"
	actual -i "$work/q.rec" -d "$work/q.dict" -l "${level%:*}" >"$work/act"
	same "queries, level ${level%:*}: the tag word picks the execution, every row exact" \
		"$work/exp" "$work/act"
done

# --query: by name, by id, a comma list, repeated; every view and export.
qexpected 7 "$q1b" >"$work/exp"
actual -i "$work/q.rec" -d "$work/q.dict" --query "$q1b" >"$work/act"
same "--query NAME: only that execution's samples, though its code is the other's too" \
	"$work/exp" "$work/act"
qexpected 7 "$q1a|q2" >"$work/exp"
actual -i "$work/q.rec" -d "$work/q.dict" --query 1,3 >"$work/act"
actual -i "$work/q.rec" -d "$work/q.dict" --query 'q2' --query "$q1a" >"$work/act2"
if diff -u "$work/exp" "$work/act" >"$work/diff" && diff -u "$work/exp" "$work/act2" >>"$work/diff"; then
	ok "--query 1,3 (ids, a list) and --query repeated (names) select the same samples"
else
	not_ok "--query ids and lists" "$work/diff"
fi
kept=$(awk -F, '{ s += $2 } END { print s }' "$work/exp")
qrun --query 1,3
grep -q "^# filters left $kept samples ($((q_total - kept)) filtered out)" "$work/out" &&
	grep -q "^# only the samples of query 1, 3 (--query)" "$work/out" &&
	ok "--query: the header says what was kept and how much was filtered out" ||
	not_ok "--query header" "$work/out"
python3 "$check" --queries folded "$work/q.truth" query,pipeline,operator,function,line "$q1a" >"$work/exp"
"$tailor" report -i "$work/q.rec" -d "$work/q.dict" -f folded --query 1 >"$work/act" 2>"$work/err"
same "--query with folded stacks: only that query's stacks, exact, the query outermost" "$work/exp" "$work/act"
awk -F'\t' -v q="$q1a" '$5 == q { for (i = 0; i < $1; i++) print k++ " " $7; next } { k += $1 }' \
	"$work/q.truth" | awk '{ c[int($1 / 100) "," $2]++ } END { for (x in c) print x "," c[x] }' |
	sort >"$work/exp"
"$tailor" timeline -f csv -b 100us -i "$work/q.rec" -d "$work/q.dict" --query "$q1a" 2>"$work/err" |
	tail -n +2 | awk -F, '{ print $1 "," $3 "," $4 }' | sort >"$work/act"
same "--query with the timeline: its buckets hold exactly that query's samples" "$work/exp" "$work/act"

# --by-query: a section per query, shares within it.
awk -F'\t' '{ q[$5] += $1; r[$5 SUBSEP $7] += $1; t += $1 }
	END { for (k in r) { split(k, p, SUBSEP)
		printf "%s,%s,%d,%.4f,%d,%.4f\n", p[1], p[2], r[k], 100 * r[k] / q[p[1]], q[p[1]], 100 * q[p[1]] / t } }' \
	"$work/q.truth" | sort >"$work/exp"
"$tailor" report -f csv --by-query -i "$work/q.rec" -d "$work/q.dict" 2>"$work/err" | tail -n +2 |
	cut -d, -f1,2,4- | sort >"$work/act"
same "--by-query (CSV): per query and operator, samples, share in the query, the query's share" \
	"$work/exp" "$work/act"
awk -F'\t' '{ q[$5] += $1 } END { for (k in q) print q[k] "\t" k }' "$work/q.truth" |
	sort -k1,1nr -k2 | awk -F'\t' '{ n = $2; if (n !~ /^\[/) n = "query " n; else n = n " (no query reached)"
		printf "## %s: %d samples\n", n, $1 }' >"$work/exp"
qrun --by-query
grep '^## ' "$work/out" | sed 's/ (\([0-9.]*\)% of all)$//' >"$work/act"
same "--by-query (text): a section per query, most samples first" "$work/exp" "$work/act"
qrun --by-query -f json
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sum(q["samples"] for q in d["queries"]) == d["total"] == int(sys.argv[2])
assert all("query" in r for r in d["rows"])
' "$work/out" "$q_total" 2>"$work/err"; then
	ok "--by-query (JSON): a table of the queries summing to all samples, rows with their query"
else
	not_ok "--by-query JSON" "$work/err"
fi
# The plan per query: its own operators (linked to it), inclusive within it.
scan_b=$(awk -F'\t' -v q="$q1b" '$5 == q && $7 == "scan" { s += $1 } END { print s }' "$work/q.truth")
join_b=$(awk -F'\t' -v q="$q1b" '$5 == q && $7 == "join" { s += $1 } END { print s }' "$work/q.truth")
agg_2=$(awk -F'\t' '$5 == "q2" && $7 == "agg" { s += $1 } END { print s }' "$work/q.truth")
printf '%s,join,,0,%s,%s\n%s,scan,join,1,%s,%s\nq2,agg,,0,%s,%s\n' "$q1b" "$join_b" \
	$((join_b + scan_b)) "$q1b" "$scan_b" "$scan_b" "$agg_2" "$agg_2" >"$work/exp"
"$tailor" report -v plan --by-query -f csv -i "$work/q.rec" -d "$work/q.dict" 2>/dev/null |
	tail -n +2 | cut -d, -f1-6 | awk -F, -v q="$q1b" '$1 == q || $1 == "q2"' >"$work/act"
same "--by-query plan: each query's tree of its own operators, self and inclusive samples" \
	"$work/exp" "$work/act"

# Lanes: per thread, runs of one (query, operator), exact.
python3 "$check" --queries lanes "$work/q.truth" operator >"$work/exp"
"$tailor" report -v lanes -f csv -i "$work/q.rec" -d "$work/q.dict" 2>"$work/err" | tail -n +2 >"$work/act"
same "lanes (CSV): every thread's runs of (query, operator), begin, end and samples exact" \
	"$work/exp" "$work/act"
python3 "$check" --queries lanes "$work/q.truth" operator "$q1a" >"$work/exp"
"$tailor" report -v lanes -f csv --query 1 -i "$work/q.rec" -d "$work/q.dict" 2>"$work/err" |
	tail -n +2 >"$work/act"
same "lanes with --query: that query's runs, ended where the thread ran another" "$work/exp" "$work/act"
python3 "$check" --queries lanes "$work/q.truth" pipeline >"$work/exp"
"$tailor" report -v lanes -f csv -l pipeline -i "$work/q.rec" -d "$work/q.dict" 2>"$work/err" |
	tail -n +2 >"$work/act"
same "lanes -l pipeline: runs of (query, pipeline)" "$work/exp" "$work/act"
python3 "$check" --queries lanes-text "$work/q.truth" operator 20000 >"$work/exp"
qrun -v lanes -b 20us
{ awk '$1 ~ /^[0-9]+$/ && NF >= 4 { print $2, $NF }' "$work/out"
  grep '^# legend:' "$work/out" | sed 's/^# legend://; s/ \.=nothing$//; s/ \([A-Za-z0-9]\)=/\n\1=/g' | grep .
} >"$work/act"
same "lanes (text): a line per thread, a character per 20us column, the legend" "$work/exp" "$work/act"
qrun -v lanes --svg "$work/lanes.svg"
if [ $rc = 0 ] && grep -q '<svg' "$work/lanes.svg" && grep -q 'q1 #2 (client 2): join' "$work/lanes.svg" &&
   [ "$(grep -c 'text-anchor="end">1000/100[01]' "$work/lanes.svg")" = 2 ]; then
	ok "--view lanes --svg writes the lanes plot, a lane per thread"
else
	not_ok "lanes --svg" "$work/err"
fi
qrun --html "$work/q.html"
if [ $rc = 0 ] && grep -q 'Threads over time' "$work/q.html" && grep -q 'Cost per query' "$work/q.html" &&
   grep -q '## query q1 #2 (client 2)' "$work/q.html" && ! grep -Eq '(src|href)=' "$work/q.html"; then
	ok "--html: the lanes plot (two threads) and the cost per query"
else
	not_ok "--html with queries" "$work/err"
fi
run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" --html "$work/r2.html"
grep -q 'Threads over time' "$work/r2.html" && ! grep -q 'Cost per query' "$work/r2.html" &&
	ok "--html without a query level: lanes, no section per query" ||
	not_ok "--html without queries"

# Chrome: the query is every thread's outermost slice by default.
"$tailor" report -i "$work/q.rec" -d "$work/q.dict" -f chrome -o "$work/q.json" 2>"$work/err"
if python3 "$check" --queries chrome "$work/q.json" "$work/q.truth" query,pipeline,operator,function \
	>"$work/diff" && python3 -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
for t in {e["tid"] for e in ev}:
    mine = [e for e in ev if e["tid"] == t]
    top = [e for e in mine if e["cat"] == "query"]
    for e in mine:
        assert any(q["ts"] <= e["ts"] and e["ts"] + e["dur"] <= q["ts"] + q["dur"] for q in top), e
' "$work/q.json" >>"$work/diff" 2>&1; then
	ok "chrome: per-thread slices of query > pipeline > operator > function, exact, the query outermost"
else
	not_ok "chrome with queries" "$work/diff"
fi
"$tailor" report -i "$work/q.rec" -d "$work/q.dict" -f chrome -o "$work/q2.json" --query "$q1a" 2>"$work/err"
if python3 "$check" --queries chrome "$work/q2.json" "$work/q.truth" query,pipeline,operator,function \
	"$q1a" >"$work/diff"; then
	ok "chrome with --query: that query's slices only, exact"
else
	not_ok "chrome with --query" "$work/diff"
fi

# pprof: every sample labelled with its query, whatever the stack.
if command -v go >/dev/null; then
	awk -F'\t' '{ c[$5] += $1 } END { for (q in c) print q "," c[q] }' "$work/q.truth" | sort >"$work/exp"
	for stack in default operator,function; do
		if [ $stack = default ]; then set --; else set -- --stack $stack; fi
		"$tailor" report -i "$work/q.rec" -d "$work/q.dict" -f pprof -o "$work/q.pb.gz" "$@" 2>"$work/err"
		go tool pprof -tags -sample_index=samples "$work/q.pb.gz" 2>/dev/null |
			awk '/^ *query: Total/ { on = 1; next } /^ *[a-z]+: Total/ { on = 0 }
			     on && NF >= 3 { n = $0; sub(/^ *[0-9.]+ \( *[0-9.]+%\): /, "", n); print n "," int($1) }' |
			sort >"$work/act"
		same "pprof (--stack $stack): every sample's query label, counts exact" "$work/exp" "$work/act"
	done
	: >"$work/act"
	while IFS=, read -r q count; do
		got=$(go tool pprof -traces -sample_index=samples -tagfocus="query=^$(printf '%s' "$q" |
			sed 's/[][()#.]/\\&/g')\$" "$work/q.pb.gz" 2>/dev/null | python3 "$check" traces |
			awk '{ s += $NF } END { print s + 0 }')
		echo "$q,$got" >>"$work/act"
	done <"$work/exp"
	same "pprof -tagfocus=query=X: each execution's samples, though both run the same code" \
		"$work/exp" "$work/act"
	"$tailor" report -i "$work/q.rec" -d "$work/q.dict" -f pprof -o "$work/q3.pb.gz" --query 2 2>"$work/err"
	go tool pprof -top -sample_index=samples "$work/q3.pb.gz" >"$work/top" 2>&1
	q1b_total=$(awk -F'\t' -v q="$q1b" '$5 == q { s += $1 } END { print s }' "$work/q.truth")
	grep -q "of $q1b_total total" "$work/top" && ok "pprof with --query 2: $q1b_total samples, that query's" ||
		not_ok "pprof with --query" "$work/top"
else
	not_ok "pprof query labels: go tool pprof is missing (scripts/setup.sh installs golang-go)"
fi

# What --query and --by-query cannot do: exit 2, named.
qrun --query nosuch
[ $rc = 2 ] && grep -q "no query is named or numbered 'nosuch'; there are 'q1 #1 (client 1)' (1), 'q1 #2 (client 2)' (2), 'q2' (3)" "$work/err" &&
	ok "--query naming no query: exit 2, the queries there are listed" || not_ok "--query unknown (rc=$rc)" "$work/err"
run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" --query 1
[ $rc = 2 ] && grep -q "no dictionary declares the level 'query'" "$work/err" &&
	ok "--query without a query level: exit 2, said so" || not_ok "--query without level (rc=$rc)" "$work/err"
run "$tailor" report -i "$work/ops.rec" --by-query
[ $rc = 2 ] && grep -q "needs a Tagging Dictionary that declares the level 'query'" "$work/err" &&
	ok "--by-query without a dictionary: exit 2, said so" || not_ok "--by-query without dictionary (rc=$rc)" "$work/err"
qrun --by-query -v timeline
rc1=$rc; grep -q 'groups the table and plan views, not the timeline view' "$work/err"; g1=$?
qrun --by-query -f folded
[ $rc1 = 2 ] && [ $g1 = 0 ] && [ $rc = 2 ] && grep -q 'carries each sample.s query in its stack' "$work/err" &&
	ok "--by-query with another view or a profile format: exit 2, said why" || not_ok "--by-query misuse (rc=$rc1/$rc)" "$work/err"
qrun -v lanes -b 1ns
[ $rc = 2 ] && grep -q 'columns of lanes' "$work/err" &&
	ok "lanes with too fine a --bucket: exit 2, named" || not_ok "lanes --bucket 1ns (rc=$rc)" "$work/err"

# What a newcomer mistypes: exit 2 and the way out, or the file read named.
run "$tailor" report -i "$work/ops.rec" -d "$work/ops.dict" -l bogus
[ $rc = 2 ] && grep -q "no dictionary declares the level 'bogus'; the levels are pipeline, operator, function, line and instruction" "$work/err" &&
	ok "an unknown level: exit 2, the levels there are listed" || not_ok "-l bogus (rc=$rc)" "$work/err"
run "$tailor" report -i "$work/ops.rec" --top 4294967297
[ $rc = 2 ] && grep -q -- "--top 4294967297 is out of range" "$work/err" &&
	ok "--top 4294967297: exit 2, out of range" || not_ok "--top 4294967297 (rc=$rc)" "$work/err"
run "$tailor" report -i "$work/ops.rec" -i "$work/ops.data"
[ $rc = 2 ] && grep -q "one recording at a time (-i .*ops.rec, then -i .*ops.data)" "$work/err" &&
	ok "-i given twice: exit 2, both named" || not_ok "-i twice (rc=$rc)" "$work/err"
run "$tailor" report -i "$work/ops.rec" --source-file ops
[ $rc = 2 ] && grep -q -- "--source-file chooses the files of the source view" "$work/err" &&
	ok "--source-file with the table: exit 2, said which view it is for" || not_ok "--source-file (rc=$rc)" "$work/err"
run "$tailor" help report
[ $rc = 0 ] && grep -q "^usage: tailor report" "$work/out" &&
	ok "tailor help report: report's help" || not_ok "help report (rc=$rc)" "$work/out"
run "$tailor" dump "$work/ops.data"
[ $rc = 1 ] && grep -q "ops.data is a perf.data: tailor dump reads tailor recordings; for this file, perf report -D" "$work/err" &&
	ok "tailor dump on a perf.data: exit 1, what reads it instead" || not_ok "dump perf.data (rc=$rc)" "$work/err"
# --records: every record in file order by kind, a later writer's kind by
# its number; each starts where the one before ends (8-byte header,
# payload padded to 8), the last at the end of the file.
run "$tailor" dump --records "$top/tests/fuzz/corpus/every-type.tlr"
if [ $rc = 0 ] && [ "$(sed -n 's/^record: offset=[0-9]* kind=\([^ ]*\).*/\1/p' "$work/out" | paste -sd' ')" = \
	"META MMAP COMM TASK SWITCH WAKEUP SWITCH SAMPLES FILE unknown SAMPLES END" ] &&
	grep -q "^record: offset=[0-9]* kind=unknown type=77 size=8$" "$work/out" &&
	awk -v size="$(stat -c %s "$top/tests/fuzz/corpus/every-type.tlr")" '
		/^record: / { split($2, o, "="); n = split($NF, z, "=")
			if (next_at && o[2] != next_at) bad = 1
			next_at = o[2] + 8 + int((z[2] + 7) / 8) * 8 }
		END { exit !(next_at == size && !bad) }' "$work/out"; then
	ok "tailor dump --records: every record by kind in file order, an unknown kind by its number, end to end"
else
	not_ok "tailor dump --records (rc=$rc)" "$work/out"
fi
# A recording's kernel symbols (tailor record stores the functions its
# kernel samples fell in): the seed's three kernel samples are named from
# its KALLSYMS record, whatever this host runs; --kallsyms FILE overrides
# them; dump counts them.
ks=$top/tests/fuzz/corpus/kernel-symbols.tlr
printf 'ffffffff81000000 T _text\nffffffff81001000 t other_name\n' >"$work/other.kallsyms"
run "$tailor" report -i "$ks" -l function -f csv
if [ $rc = 0 ] &&
	[ "$(awk -F, 'NR > 1 && $5 == "[kernel.kallsyms]" { print $1 "=" $3 }' "$work/out" | sort | paste -sd' ')" = \
	"clear_page_erms=1 do_syscall_64=2" ] &&
	"$tailor" report -i "$ks" -l function 2>/dev/null | grep -q "^# kernel symbols: stored in the recording (3 symbols)$" &&
	[ "$("$tailor" report -i "$ks" -l function -f csv --kallsyms "$work/other.kallsyms" 2>/dev/null |
		awk -F, '$5 == "[kernel.kallsyms]" { print $1 "=" $3 }')" = "other_name=3" ] &&
	"$tailor" dump "$ks" | grep -qx 'kernel_functions: 2'; then
	ok "a recording's kernel symbols: named from its KALLSYMS record; --kallsyms FILE overrides; dump counts them"
else
	not_ok "a recording's kernel symbols (rc=$rc)" "$work/out"
fi
# Kernel call stacks whose every frame is chosen (kernel_chains.py): a
# return address is named one byte back, in the function whose call it
# follows (ends_in_call, where perf names the next one by the address);
# below an interrupt's entry stub the entry is the interrupted IP, named
# as it is (read_zero, as perf does, not the padding before it); an
# entry whose byte before is a function's padding (__pfx_write_null) is
# that function's first byte, named as it is.  perf script reads the same
# file where perf is here.
if /usr/bin/python3 "$top/tests/golden/kernel_chains.py" "$work/kchains.data" \
	"$work/kchains.kallsyms" "$work/kchains.rec" >"$work/kchains.want" 2>"$work/err"; then
	run "$tailor" report -i "$work/kchains.data" --kallsyms "$work/kchains.kallsyms" \
		-f folded --stack function
	sed 's/ [0-9]*$//' "$work/out" | sort >"$work/kchains.got"
	sort -o "$work/kchains.want" "$work/kchains.want"
	if [ $rc = 0 ] && diff "$work/kchains.want" "$work/kchains.got" >"$work/diff"; then
		ok "kernel call stacks: return addresses named by their call, interrupted IPs as they are"
	else
		cat "$work/err" >>"$work/diff"
		not_ok "kernel call stacks: return addresses named by their call, interrupted IPs as they are (rc=$rc)" \
			"$work/diff"
	fi
	# The same stacks in a recording (tailor record --call-graph fp):
	# stored once each, named by id from the samples; an id out of turn
	# is refused, naming the record.
	run "$tailor" report -i "$work/kchains.rec" -f folded --stack function
	sed 's/ [0-9]*$//' "$work/out" | sort >"$work/kchains.rec-got"
	cp "$work/kchains.rec" "$work/kchains-gap.rec"
	printf '\003' | dd of="$work/kchains-gap.rec" bs=1 seek=$((32 + $(od -An -tu4 -j36 -N4 \
		"$work/kchains.rec") + 8)) conv=notrunc 2>/dev/null
	if [ $rc = 0 ] && diff "$work/kchains.want" "$work/kchains.rec-got" >"$work/diff" &&
		"$tailor" dump "$work/kchains.rec" | grep -qx 'stacks: 3 (19 entries)' &&
		! "$tailor" report -i "$work/kchains-gap.rec" -f folded >/dev/null 2>"$work/err" &&
		grep -q "STACK stack id 3, where the next is 1" "$work/err"; then
		ok "a recording's call stacks: STACK records named by the samples' ids, as the perf.data's; an id out of turn refused"
	else
		cat "$work/err" >>"$work/diff"
		not_ok "a recording's call stacks (rc=$rc)" "$work/diff"
	fi
	if command -v perf >/dev/null; then
		perf script -i "$work/kchains.data" --kallsyms "$work/kchains.kallsyms" -F ip,sym \
			2>/dev/null | awk 'NF == 0 { if (s != "") print s; s = ""; next }
				{ s = s == "" ? $2 : $2 ";" s } END { if (s != "") print s }' |
			sort >"$work/kchains.perf"
		if grep -q ';read_zero;asm_sysvec' "$work/kchains.perf" &&
			sed 's/;next_function;/;ends_in_call;/' "$work/kchains.perf" |
			diff "$work/kchains.got" - >"$work/diff"; then
			ok "kernel call stacks as perf script's, but the call ending ends_in_call (perf: next_function, by its return address)"
		else
			not_ok "kernel call stacks as perf script's on the same file" "$work/diff"
		fi
	else
		skip "perf is needed to compare kernel call stacks with perf script's"
	fi
else
	not_ok "kernel_chains.py writes a perf.data" "$work/err"
fi
# A recording's BUILD_IDS record (tailor record writes one at its end):
# with the build-id tw_ops has, the report is the one without the record;
# with another (tw_ops rebuilt since), no copy of that build is kept, so
# tw_ops's samples stay one row [tw_ops], and the report says why.
# with_build_id REC OUT PATH HEX: REC with a BUILD_IDS record before END.
with_build_id() {
	/usr/bin/python3 - "$@" <<'EOF'
import struct, sys
src, dst, path, hexid = sys.argv[1:5]
data = open(src, "rb").read()
out, at = bytearray(data[:32]), 32
text = ("%s\t%s\n" % (path, hexid)).encode()
text += b"\0" * (-len(text) % 8)
while at < len(data):
    kind, size = struct.unpack_from("<II", data, at)
    if kind == 6:	# END
        out += struct.pack("<II", 14, 8 + len(text)) + text
    out += data[at:at + size]
    at += size
open(dst, "wb").write(bytes(out))
EOF
}
ops_id=$(readelf -n "$wl/tw_ops" | sed -n 's/.*Build ID: //p')
"$tailor" report -i "$work/ops.rec" -l function -f csv >"$work/ids.plain" 2>/dev/null
if [ -n "$ops_id" ] &&
	with_build_id "$work/ops.rec" "$work/ids-same.rec" "$wl/tw_ops" "$ops_id" &&
	with_build_id "$work/ops.rec" "$work/ids-other.rec" "$wl/tw_ops" \
		"00112233445566778899aabbccddeeff00112233" &&
	"$tailor" report -i "$work/ids-same.rec" -l function -f csv >"$work/ids.same" \
		2>"$work/err" && ! grep -q "another build" "$work/err" &&
	cmp -s "$work/ids.plain" "$work/ids.same" &&
	"$tailor" dump "$work/ids-same.rec" | grep -qx 'build_ids: 1' &&
	"$tailor" report -i "$work/ids-other.rec" -l function -f csv >"$work/ids.other" \
		2>"$work/err" &&
	grep -q "tw_ops is another build now (build-id 001122334455... then, ${ops_id:0:12}... now) and no copy of the recorded build was found" \
		"$work/err" &&
	[ "$(awk -F, '$1 == "[tw_ops]" { print $3 }' "$work/ids.other")" = \
	  "$(awk -F, '$5 == "tw_ops" { n += $3 } END { print n }' "$work/ids.plain")" ]; then
	ok "a recording's build-ids: the build that ran read as before; another build on disk left unnamed, and why"
else
	{ cat "$work/err"; head -5 "$work/ids.other"; } >"$work/diff" 2>/dev/null
	not_ok "a recording's build-ids (tw_ops $ops_id)" "$work/diff"
fi
# No -i: tailor.rec first, else perf.data, said so.
mkdir -p "$work/cwd" && cp "$work/ops.data" "$work/cwd/perf.data"
(cd "$work/cwd" && "$tailor" report >"$work/out" 2>"$work/err"); rc=$?
[ $rc = 0 ] && grep -q "no -i and no tailor.rec here: reading perf.data" "$work/err" &&
	grep -q "^# profile: perf.data (perf.data" "$work/out" &&
	ok "no -i in a directory with only perf.data: read, and said so" || not_ok "default perf.data (rc=$rc)" "$work/err"

tap_totals

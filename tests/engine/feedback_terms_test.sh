#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# feedback_terms_test.sh [BUILD_DIR]: tailor-engine --feedback orders a
# filter's terms (seed 003), natively, with a profile from perf record -e
# cpu-clock:u --intr-regs=r15 read by tailor report --level task --by-query
# --format json.
#   - the profile: each term of the query "terms" is a task of its own,
#     named by its SQL whatever the order, with its query, and has the
#     samples perf's srcline gives its lines in the same perf.data;
#   - the loop: a run fed that profile tests the terms in the order the
#     model picks from the costs it measured (the comparison first, on
#     every CPU so), in the generated C's nested ifs, says so in --times
#     (terms=2:1.0), and its result still equals the reference evaluation;
#   - the model, on profiles made to order: the comparison goes first
#     while its cost a row is below the divisions' times (1 - pc) /
#     (1 - pd) (pass shares from the engine's log), and not above; a
#     second profile taken in the new order keeps it (a term's cost is a
#     row that reached it), where read as if in the written order (no
#     --feedback-times) it would not;
#   - names: a row of another query (--by-query) with a term's very name
#     changes nothing; a profile by pipeline names no term and says so;
#     the oracle's --extra work on the filter lies in the filter's own
#     task, not in a term's;
#   - bad input: a --feedback-times terms= that is not a permutation, or
#     names an operator twice with two orders: exit 1, naming the file.
# TAILOR_ENGINE: the engine to test (the ASan/UBSan build, say).
#
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/engine-test.sh
. "$top/tests/lib/engine-test.sh"
require "$engine" "$tailor"
require_perf

divisions='Filter#2 filter: (((l_extendedprice / l_quantity) / (l_tax + 1)) / (l_discount + 1)) > 2000'
comparison='Filter#2 filter: l_discount < 1'
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -1; }

# The loop's first step: a profiled run of the terms as written.  Twenty
# executions: one gives the filter 5-10 of the run's 450 samples (data
# generation and compiling take the rest); twenty give it 120-250.  User
# mode only: tailor gives a sample taken in the kernel to the component of
# the user IP it will return to, where perf's srcline (the oracle below)
# names the kernel's line.
if ! perf record -q -e cpu-clock:u -F 4000 --intr-regs=r15 --user-regs=ip,r15 \
	-o "$work/perf.data" -- "$engine" -s 0.05 -n 20 -d "$work/q.dict" -t "$work/times0" \
	-w "$work/gen0" terms >"$work/run0.out" 2>&1 ||
	! "$tailor" report -i "$work/perf.data" -d "$work/q.dict" --level task --by-query \
	-f json >"$work/profile.json" 2>"$work/report.err"; then
	cat "$work/report.err" >>"$work/run0.out"
	not_ok "a profiled run of the query terms and its report by task" "$work/run0.out"
	tap_totals
	exit 1
fi
# Which term a sample goes to is what the line table says of its IP, and
# where a sample lands is the CPU's: the timer interrupt is taken after the
# instruction in flight, so an idiv's latency lands on the instruction
# after it.  gcc puts the last division's successor (the "> 2000" compare)
# on line 14, the comparison's line, so on an AMD EPYC of family 26 the
# comparison got 62-112 samples against the divisions' 48-78, where the
# machines this test was written on gave it 1-13 against 75-230.  So the
# rows are held to an oracle that reads the same perf.data, perf's own
# srcline, through the dictionary's links of lines to terms: tailor must
# count what perf does, whatever the CPU made of the terms' costs.
perf script -i "$work/perf.data" -F ip,srcline 2>/dev/null |
	sed -n 's/^ *terms\.c:\([0-9][0-9]*\)$/\1/p' | sort | uniq -c >"$work/srclines"
if python3 - "$work/profile.json" "$divisions" "$comparison" "$work/q.dict" "$work/srclines" \
	>"$work/profile.check" 2>&1 <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["level"] == "task", p["level"]
rows = {r["name"]: r for r in p["rows"] if r.get("query") == "terms"}
divisions, comparison = sys.argv[2], sys.argv[3]
# The filter's rows are its terms' (a term no sample hit has none).
terms = [n for n in rows if n.startswith("Filter#2")]
assert set(terms) <= {divisions, comparison}, terms
# The oracle: perf's srcline of each sample, through the dictionary's links.
names, line_task = {}, {}
for f in (l.rstrip("\n").split("\t") for l in open(sys.argv[4])):
    if f[0] == "component" and f[1] == "task":
        names[f[2]] = f[3]
    elif f[0] == "link" and f[1] == "line" and f[2].rsplit(":", 1)[0].endswith("/terms.c"):
        line_task[int(f[2].rsplit(":", 1)[1])] = f[4]
want = {divisions: 0, comparison: 0}
for count, line in (l.split() for l in open(sys.argv[5])):
    name = names.get(line_task.get(int(line)))
    if name in want:
        want[name] += int(count)
got = {n: rows[n]["samples"] if n in rows else 0 for n in want}
print("tailor %s, perf's srcline %s" % (got, want))
assert sum(want.values()) >= 50, "too few samples in the terms for a test: %s" % want
assert got == want, "tailor %s, perf's srcline %s" % (got, want)
EOF
then
	ok "the profile by task has a row per term sampled, with its query, each with its lines' samples by perf's srcline"
else
	not_ok "the profile by task has a row per term sampled, with its query, each with its lines' samples by perf's srcline" \
		"$work/profile.check"
fi

# run NAME ARGS...: the engine; stdout+stderr in NAME.out.
run() {
	local name=$1
	shift
	"$engine" -s 0.05 -w "$work/$name.gen" -t "$work/$name.times" "$@" \
		>"$work/$name.out" 2>&1
}

# order_in_source NAME: the terms' ifs in the generated C, in order ("divisions comparison").
order_in_source() {
	grep -h -o -E 'if \(+(l_discount < 1L|l_extendedprice)' "$work/$1.gen"/*.c |
		sed -e 's/.*l_discount.*/comparison/' -e 's/.*extendedprice.*/divisions/' |
		tr '\n' ' ' | sed 's/ $//'
}

# The loop: fed the profile, the terms go in the order the model (below)
# picks from the costs this run measured.  With the divisions passing most
# rows the comparison goes first unless it cost about ten times the
# divisions a row: on every CPU so far, whatever the skid above.
run fed terms --feedback "$work/profile.json" --feedback-times "$work/times0"
fed_rc=$?
expect_fed=$(python3 - "$work/profile.json" "$divisions" "$comparison" "$work/fed.out" <<'EOF'
import json, re, sys
rows = {r["name"]: r["samples"] for r in json.load(open(sys.argv[1]))["rows"]
        if r.get("query") == "terms"}
d, c = rows.get(sys.argv[2], 0), rows.get(sys.argv[3], 0)
log = open(sys.argv[4]).read()
# The rows each term passes: the engine's log says.
pd = float(re.search(r"> 2000 [0-9.]+ ns a row[^,;]*, ([0-9.]+)% pass", log).group(1)) / 100
pc = float(re.search(r"l_discount < 1 [0-9.]+ ns a row[^,;]*, ([0-9.]+)% pass", log).group(1)) / 100
# Costs a row: the divisions saw every row, the comparison pd of them.
D, C = d, c / pd
print("comparison divisions" if C * (1 - pd) < D * (1 - pc) else "divisions comparison")
EOF
)
case $expect_fed in
"comparison divisions") expect_terms=2:1.0 ;;
*) expect_terms=2:0.1 ;;
esac
if [ -n "$expect_fed" ] && [ $fed_rc -eq 0 ] &&
	grep -q '^check: ok' "$work/fed.out" &&
	grep -q '^feedback: terms Filter#2: .*: tested in this order' "$work/fed.out" &&
	[ "$(order_in_source fed)" = "$expect_fed" ] &&
	[ "$(field "$work/fed.times" terms)" = "$expect_terms" ]; then
	ok "fed its profile, the terms are tested in the order its costs ask for ($expect_fed, terms=$expect_terms), the result unchanged"
else
	{ echo "expected: $expect_fed, source order: $(order_in_source fed)"; echo "terms=$(field "$work/fed.times" terms)"; } \
		>>"$work/fed.out"
	not_ok "fed its profile, the terms are tested in the order its costs ask for ($expect_fed, terms=$expect_terms), the result unchanged" \
		"$work/fed.out"
fi
if run written terms && [ "$(order_in_source written)" = "divisions comparison" ] &&
	[ "$(field "$work/written.times" terms)" = "2:0.1" ]; then
	ok "without feedback the terms are tested as written (terms=2:0.1)"
else
	not_ok "without feedback the terms are tested as written (terms=2:0.1)" "$work/written.out"
fi

# edit_profile IN OUT PYTHON: OUT is IN with the rows changed by PYTHON (on
# rows, the query's own by name; d and c name the two terms).
edit_profile() {
	python3 - "$1" "$2" "$divisions" "$comparison" "$3" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
d, c = sys.argv[3], sys.argv[4]
rows = {r["name"]: r for r in p["rows"] if r.get("query") == "terms"}
# A term with no sample has no row: give it one.
for name in (d, c):
    if name not in rows:
        rows[name] = {"name": name, "query": "terms", "kind": "component", "samples": 0}
        p["rows"].append(rows[name])
exec(sys.argv[5])
json.dump(p, open(sys.argv[2], "w"))
EOF
}

# The model, on profiles made to order.  The divisions pass a share pd of
# the rows (the engine's log says it), the comparison pc = 1/11; cost a
# row D and C.  Comparison first is cheaper while C (1 - pd) < D (1 - pc).
# A profile in the written order has D N samples for the divisions and
# C pd N for the comparison; one in the swapped order C N and D pc N.
pd=$(sed -n 's/.*> 2000 [0-9.]* ns a row[^,;]*, \([0-9.]*\)% pass.*/\1/p' "$work/fed.out" | head -1)
pc=$(sed -n 's/.*l_discount < 1 [0-9.]* ns a row[^,;]*, \([0-9.]*\)% pass.*/\1/p' "$work/fed.out" | head -1)
if [ -z "$pd" ] || [ -z "$pc" ]; then
	not_ok "the engine's log gives each term's share of rows passing" "$work/fed.out"
	tap_totals
	exit 1
fi
# Where the choice flips (C/D), ratios well on each side of it, and one
# between the flip and where a blind reading flips (see below).
read -r flip below above blind < <(awk -v pd="$pd" -v pc="$pc" 'BEGIN {
	pd /= 100; pc /= 100; flip = (1 - pc) / (1 - pd)
	# Read blind (as if in the written order), a swapped profile makes D
	# look pc times as much and C 1/pd: it flips at flip * pc * pd.
	printf "%g %g %g %g\n", flip, flip / 4, flip * 4, sqrt(flip * flip * pc * pd) }')
echo "# divisions pass $pd%, the comparison $pc%: comparison first while C < $flip D"

# profile_at RATIO ORDER OUT: C = RATIO * D, D N = 100000 samples.
profile_at() {
	local py
	if [ "$2" = written ]; then
		py="rows[d]['samples'] = 100000; rows[c]['samples'] = round(100000 * $1 * $pd / 100)"
	else
		py="rows[c]['samples'] = round(100000 * $1); rows[d]['samples'] = round(100000 * $pc / 100)"
	fi
	edit_profile "$work/profile.json" "$3" "$py"
}

profile_at "$below" written "$work/below.json"
profile_at "$above" written "$work/above.json"
if run below terms --feedback "$work/below.json" --feedback-times "$work/times0" &&
	[ "$(order_in_source below)" = "comparison divisions" ] &&
	run above terms --feedback "$work/above.json" --feedback-times "$work/times0" &&
	[ "$(order_in_source above)" = "divisions comparison" ]; then
	ok "the order follows the measured costs: comparison first at C = $below D, written at $above D"
else
	{ echo "below: $(order_in_source below), above: $(order_in_source above)"; \
		cat "$work/above.out"; } >>"$work/below.out"
	not_ok "the order follows the measured costs: comparison first at C = $below D, written at $above D" \
		"$work/below.out"
fi

# Memory: at C = $blind D the comparison goes first; the second run, in
# that order, measured the divisions on pc of the rows.  With its times
# the costs a row are the first run's, and the order stays; read blind,
# as if in the written order, the divisions look cheaper and go first.
profile_at "$blind" written "$work/first.json"
profile_at "$blind" swapped "$work/second.json"
if run first terms --feedback "$work/first.json" --feedback-times "$work/times0" &&
	[ "$(order_in_source first)" = "comparison divisions" ] &&
	run second terms --feedback "$work/second.json" --feedback-times "$work/first.times" &&
	[ "$(order_in_source second)" = "comparison divisions" ] &&
	run second_blind terms --feedback "$work/second.json" &&
	[ "$(order_in_source second_blind)" = "divisions comparison" ] &&
	run history terms --feedback "$work/first.json" --feedback-times "$work/times0" \
	--feedback "$work/second.json" --feedback-times "$work/first.times" &&
	[ "$(order_in_source history)" = "comparison divisions" ]; then
	ok "a second profile in the new order keeps it: a term's cost is a row that reached it"
else
	{ echo "first: $(order_in_source first), second: $(order_in_source second)," \
		"blind: $(order_in_source second_blind), both: $(order_in_source history)"
		cat "$work/second.out" "$work/second_blind.out" "$work/history.out"; } \
		>>"$work/first.out"
	not_ok "a second profile in the new order keeps it: a term's cost is a row that reached it" \
		"$work/first.out"
fi

# Names: another query's row with a term's name is not the query's.
edit_profile "$work/profile.json" "$work/other.json" \
	'rows[c]["query"] = "sfja"; rows[c]["samples"] = 10 ** 7'
if run other terms --feedback "$work/other.json" --feedback-times "$work/times0" &&
	[ "$(order_in_source other)" = "comparison divisions" ]; then
	ok "a row of another query (--by-query) with a term's name changes nothing"
else
	not_ok "a row of another query (--by-query) with a term's name changes nothing" "$work/other.out"
fi
if "$tailor" report -i "$work/perf.data" -d "$work/q.dict" --level pipeline -f json \
	>"$work/by_pipeline.json" 2>"$work/report2.err" &&
	run by_pipeline terms --feedback "$work/by_pipeline.json" &&
	grep -q '^feedback: terms Filter#2: no profile names its terms' "$work/by_pipeline.out" &&
	[ "$(order_in_source by_pipeline)" = "divisions comparison" ]; then
	ok "a profile by pipeline names no term: tested as written, and said so"
else
	not_ok "a profile by pipeline names no term: tested as written, and said so" \
		"$work/by_pipeline.out"
fi

# The oracle's known work (--extra) on the filter runs for every row, in
# whatever order: it lies in the filter's own task, never a term's, whose
# cost a row it would inflate.
d=$work/extra
if "$engine" -s 0.001 -x 2=50 -d "$d.dict" -w "$d" terms >"$d.out" 2>&1 &&
	grep -q '^check: ok' "$d.out"; then
	lines=$(grep -n 'extra_units\[m->worker \* [0-9]*\] +=' "$d/terms.c" | cut -d: -f1)
	owners=$(for l in $lines; do
		awk -F'\t' -v key="$d/terms.c:$l" '
			$1 == "component" && $2 == "task" { name[$3] = $4 }
			$1 == "link" && $2 == "line" && $3 == key { task = $5 }
			END { print name[task] }' "$d.dict"
	done | sort -u)
	filter=$(awk -F'\t' '$1 == "component" && $2 == "operator" && $4 ~ /^Filter#2 / { print $4 }' \
		"$d.dict")
	if [ -n "$lines" ] && [ -n "$filter" ] && [ "$owners" = "$filter filter" ]; then
		ok "--extra on the filter: its work in the filter's own task, not a term's"
	else
		echo "work lines '$(echo $lines)' belong to '$owners', not '$filter filter'" >>"$d.out"
		not_ok "--extra on the filter: its work in the filter's own task, not a term's" "$d.out"
	fi
else
	not_ok "--extra 2=50 on terms: the result is unchanged" "$d.out"
fi

# Bad --feedback-times terms=.
sed 's/ terms=2:0\.1/ terms=2:0.0/' "$work/times0" >"$work/bad1.times"
sed -e '1s/ terms=2:0\.1/ terms=2:1.0/' "$work/times0" >"$work/bad2.times"
cat "$work/times0" >>"$work/bad2.times"
for bad in bad1 bad2; do
	if ! grep -q 'terms=' "$work/$bad.times"; then
		not_ok "--feedback-times $bad: no terms= to spoil" "$work/$bad.times"
		continue
	fi
	run "$bad" terms --feedback "$work/profile.json" --feedback-times "$work/$bad.times"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "$bad.times.*line" "$work/$bad.out"; then
		ok "--feedback-times with a bad terms= ($bad): exit 1 naming the file"
	else
		echo "exit $rc" >>"$work/$bad.out"
		not_ok "--feedback-times with a bad terms= ($bad): exit 1 naming the file" "$work/$bad.out"
	fi
done

tap_totals

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# accuracy-steps.sh TAILOR ENGINE OUT: the accuracy oracle (seed 004's
# method), wherever tailor.ko is (POSIX sh: the test box runs it too).
#
# Query sfja runs as is and in variants that each add known work to one
# operator (tailor-engine --extra OP=N: a multiply chain of N steps per
# tuple, in that operator's generated code).  Each run is recorded.  For
# operator op, with T the query's measured execution CPU time and s/S its
# samples over the query's samples (operators and the query's runtime):
#   measured change  t = T_variant - T_base
#   profiled change  o = T_variant * s_op,variant / S_variant
#                        - T_base * s_op,base / S_base
# (kernel samples count where their tag puts them: page faults in a hash
# table's growth are its operator's, as T counts them).
#   relative error   E = (o - k) / k, k the known work (below)
# The known work k is also measured directly: the engine counts the units
# the variant ran and times the same loop alone.  Under emulation (the
# test box) added work slows other operators too -- QEMU's software TLB is
# refilled after each flush, and fewer tuples pass between flushes -- so
# t exceeds k there; the profile shows that cost where it occurs, and
# E = (o - k) / k is the figure of merit.  The table gives t, k, o, mean
# |E| and worst E over ACCURACY_ROUNDS rounds (default 3), and the other
# operators' profiled change.
# Also the share of all samples attributed to operators or named runtime
# parts, in the baseline runs.  Goals: |E| <= 10% for every operator, >= 95%
# attributed.
#
# Environment: ACCURACY_ROUNDS (3), ACCURACY_SCALE (0.05), ACCURACY_REPEAT
# (10), ACCURACY_FREQ (sampling rate in Hz, default: tailor record's),
# ACCURACY_VARIANTS (default "base 1=6000 2=200 3=200 4=250 5=250": base,
# and OP=N runs; every round needs a base).
set -eu

tailor=$1 engine=$2 out=$3
rounds=${ACCURACY_ROUNDS:-3}
scale=${ACCURACY_SCALE:-0.05}
repeat=${ACCURACY_REPEAT:-10}
freq=${ACCURACY_FREQ:+-F $ACCURACY_FREQ}
mkdir -p "$out"

# Work per tuple, sized so each operator gets about the same total: the
# part scan sees 1/30 of the tuples the lineitem scan sees.
variants=${ACCURACY_VARIANTS:-"base 1=6000 2=200 3=200 4=250 5=250"}
results=$out/runs.txt
: >"$results"

run() {	# run ROUND VARIANT
	extra=
	[ "$2" = base ] || extra="-x $2"
	# shellcheck disable=SC2086
	"$tailor" record -q $freq -o "$out/r.rec" -- "$engine" -s "$scale" -n "$repeat" -r 0 \
		-d "$out/r.dict" -w "$out/gen" -t "$out/r.times" $extra sfja >"$out/r.out" 2>&1 || {
		cat "$out/r.out"
		echo "accuracy: the $2 run failed" >&2
		exit 1
	}
	grep -q '^check: ok' "$out/r.out" || { cat "$out/r.out"; exit 1; }
	t=$(sed -n 's/.*exec_cpu_ns=\([0-9]*\).*/\1/p' "$out/r.times")
	known=$(sed -n 's/.*extra_ns=\([0-9]*\).*/\1/p' "$out/r.times")
	"$tailor" report -i "$out/r.rec" -d "$out/r.dict" --level query -f csv --top 0 \
		>"$out/q.csv" 2>/dev/null
	"$tailor" report -i "$out/r.rec" -d "$out/r.dict" --level operator -f csv --top 0 \
		>"$out/o.csv" 2>/dev/null
	awk -F, -v round="$1" -v variant="$2" -v t="$t" -v known="$known" '
		FILENAME ~ /q.csv$/ && $1 == "sfja" { query = $3 }
		FILENAME ~ /o.csv$/ && FNR > 1 {
			total += $3
			if ($2 == "component") attributed += $3
			if ($2 == "kernel") kernel += $3
			if (match($1, /#[0-9]+ /)) s[substr($1, RSTART + 1, RLENGTH - 2)] = $3
		}
		END {
			printf "%s %s %s %d %d %d %d %d", round, variant, t, query, total, attributed, kernel, known
			for (i = 1; i <= 5; i++) printf " %d", s[i]
			printf "\n"
		}' "$out/q.csv" "$out/o.csv" >>"$results"
	# First run: the operators' names for the table, from the dictionary.
	[ -s "$out/names" ] || awk -F'\t' '$1 == "component" && $2 == "operator" &&
		match($4, /#[0-9]+ /) { print substr($4, RSTART + 1, RLENGTH - 2) "\t" $4 }' \
		"$out/r.dict" | sort -n >"$out/names"
}

# A warm-up run, unrecorded: the first run of a binary pays for page cache
# misses and, under emulation, for translating its code.
"$engine" -s "$scale" -n "$repeat" -r 0 -w "$out/gen" sfja >/dev/null

r=1
while [ "$r" -le "$rounds" ]; do
	for v in $variants; do
		echo "accuracy: round $r/$rounds, variant $v" >&2
		run "$r" "$v"
	done
	r=$((r + 1))
done

awk -v rounds="$rounds" -v scale="$scale" -v repeat="$repeat" '
	function abs(x) { return x < 0 ? -x : x }
	function ratio(a, b) { return b ? a / b : 0 }
	FILENAME ~ /names$/ { split($0, f, "\t"); name[f[1]] = f[2]; next }
	{
		# round variant T S_query total attributed kernel known s1..s5
		if ($2 == "base") {
			bt[$1] = $3; bq[$1] = $4
			for (i = 1; i <= 5; i++) bs[$1, i] = $(8 + i)
			tot += $5; att += $6; ker += $7
			next
		}
		split($2, v, "="); op = v[1]; work[op] = v[2]
		vt[$1, op] = $3; vq[$1, op] = $4; kn[$1, op] = $8
		for (i = 1; i <= 5; i++) vs[$1, op, i] = $(8 + i)
	}
	END {
		printf "accuracy oracle: query sfja, scale %s, executed %s times a run, %d round(s)\n", scale, repeat, rounds
		printf "  measured: change of the query'"'"'s execution CPU time; known: the added work (units x\n"
		printf "  calibrated unit time); profiled: the profile'"'"'s change for the operator; E = (profiled -\n"
		printf "  known) / known; others: the profile'"'"'s change for all other operators together\n"
		printf "%-44s %5s %9s %9s %9s %7s %7s %9s\n", "operator", "N", "measured", "known", "profiled", "mean|E|", "worst E", "others"
		for (op = 1; op <= 5; op++) {
			mt = mk = mo = me = mx = 0; worst = 0
			for (r = 1; r <= rounds; r++) {
				t = vt[r, op] - bt[r]
				k = kn[r, op]
				o = vt[r, op] * ratio(vs[r, op, op], vq[r, op]) - bt[r] * ratio(bs[r, op], bq[r])
				x = 0
				for (i = 1; i <= 5; i++)
					if (i != op)
						x += vt[r, op] * ratio(vs[r, op, i], vq[r, op]) - bt[r] * ratio(bs[r, i], bq[r])
				e = k > 0 ? (o - k) / k : 0
				mt += t; mk += k; mo += o; me += abs(e); mx += x
				if (abs(e) > abs(worst)) worst = e
			}
			if (abs(worst) > worst_all) worst_all = abs(worst)
			printf "%-44.44s %5d %7.0fms %7.0fms %7.0fms %6.1f%% %+6.1f%% %+7.0fms\n", name[op], work[op],
				mt / rounds / 1e6, mk / rounds / 1e6, mo / rounds / 1e6, 100 * me / rounds, 100 * worst,
				mx / rounds / 1e6
		}
		printf "worst relative error: %.1f%% (goal: within 10%%)\n", 100 * worst_all
		printf "attributed to operators or named runtime parts: %.1f%% of %d baseline samples (goal: 95%%);\n", 100 * ratio(att, tot), tot
		printf "  [kernel] %.1f%% (kernel samples without a user tag naming a component)\n", 100 * ratio(ker, tot)
	}' "$out/names" "$results" | tee "$out/accuracy.txt"

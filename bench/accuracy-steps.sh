#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# accuracy-steps.sh TAILOR ENGINE OUT: the accuracy oracle (seed 004's
# method), with tailor record where tailor.ko is or with perf record
# (ACCURACY_PROFILER=perf) -- POSIX sh: the test box runs it too.
#
# Each query runs as is and in variants that each add known work to one
# operator (tailor-engine --extra OP=N: a multiply chain of N steps per
# tuple, in that operator's generated code).  Each run is profiled.  For
# operator op, with T the query's measured execution CPU time and s/S its
# samples over the query's samples (operators and the query's runtime):
#   measured change  t = T_variant - T_base
#   profiled change  o = T_variant * s_op,variant / S_variant
#                        - T_base * s_op,base / S_base
# (kernel samples count where their tag or entry IP puts them: page faults
# in a hash table's growth are its operator's, as T counts them).
#   relative error   E = (o - k) / k, k the known work (below)
#   against measured E_t = (o - t) / t
# The known work k is also measured directly: the engine counts the units
# the variant ran and times the same loop alone.  Under emulation (the
# test box) added work slows other operators too -- QEMU's software TLB is
# refilled after each flush, and fewer tuples pass between flushes -- so
# t exceeds k there; the profile shows that cost where it occurs, and
# E = (o - k) / k is the figure of merit.  On a VM the host's other
# guests slow a run now and then (seen natively: a variant's change
# 30% over its known work in 1 of 4 runs, the profile's change with it),
# so E_t, the profile against what the run's CPU time really did, is
# printed too: it separates the profiler's error from the run's own.  A table per query gives t, k, o,
# mean |E| and worst E over the rounds, and the other operators' profiled
# change; then the share of the engine process's samples attributed to
# operators or named runtime parts, in the baseline runs (the C compiler
# processes it starts are sampled too, but are not the engine: their
# samples are counted apart).  Goals: mean |E| <= 10% for every
# operator, worst round <= 20%, >= 95% attributed.
#
# With tailor record, and perf on PATH, each baseline is run once more
# under perf record at the same rate, and the operators' shares of the two
# are printed side by side (ACCURACY_COMPARE=0: not).
#
# ACCURACY_SINGLESTEP=1: in the test box, each profiled run with QEMU
# translating one instruction per block (box-singlestep): TCG takes a
# timer interrupt only between blocks, so a sample's IP is otherwise the
# start of the next block, wherever the compiler's layout ends one.  The
# guest runs about 40 times slower; the warm-up runs are not stepped.
#
# Environment: ACCURACY_PROFILER (tailor, or perf: perf record -e
# cpu-clock --intr-regs=r15 --user-regs=ip,r15, no module), ACCURACY_QUERIES
# ("sfja fig3 q1"), ACCURACY_ROUNDS (3), ACCURACY_SCALE (0.05),
# ACCURACY_REPEAT (10), ACCURACY_FREQ (sampling rate in Hz, 4000: tailor
# record's default), ACCURACY_VARIANTS_<query> (the OP=N variants of a
# query, e.g. ACCURACY_VARIANTS_q1="1=200 2=200 3=250").
set -eu

tailor=$1 engine=$2 out=$3
profiler=${ACCURACY_PROFILER:-tailor}
queries=${ACCURACY_QUERIES:-"sfja fig3 q1"}
rounds=${ACCURACY_ROUNDS:-3}
scale=${ACCURACY_SCALE:-0.05}
repeat=${ACCURACY_REPEAT:-10}
freq=${ACCURACY_FREQ:-4000}
compare=${ACCURACY_COMPARE:-1}
singlestep=${ACCURACY_SINGLESTEP:-0}
mkdir -p "$out"

[ -z "${ACCURACY_VARIANTS:-}" ] || {
	echo "accuracy: ACCURACY_VARIANTS is gone: set ACCURACY_VARIANTS_<query>, e.g. ACCURACY_VARIANTS_sfja" >&2
	exit 1
}
case $singlestep in
0) ;;
1) command -v box-singlestep >/dev/null 2>&1 || {
	echo "accuracy: ACCURACY_SINGLESTEP=1 needs the test box's box-singlestep (bench/accuracy.sh --box)" >&2
	exit 1
} ;;
*) echo "accuracy: ACCURACY_SINGLESTEP must be 0 or 1, not '$singlestep'" >&2; exit 1 ;;
esac
case $rounds in
'' | *[!0-9]* | 0) echo "accuracy: ACCURACY_ROUNDS must be a count of at least 1, not '$rounds'" >&2; exit 1 ;;
esac
case $profiler in
tailor) [ "$compare" = 0 ] || command -v perf >/dev/null 2>&1 || compare=0 ;;
perf)
	command -v perf >/dev/null 2>&1 || { echo "accuracy: ACCURACY_PROFILER=perf, but no perf on PATH" >&2; exit 1; }
	compare=0 ;;
*) echo "accuracy: ACCURACY_PROFILER must be tailor or perf, not '$profiler'" >&2; exit 1 ;;
esac

# Work per tuple, sized so each operator gets about the same total: the
# part scan sees 1/30 of the tuples the lineitem scan sees; q1's filter
# passes 98% of lineitem to its group-by.
variants_of() {
	eval "v=\${ACCURACY_VARIANTS_$1:-}"
	if [ -n "$v" ]; then
		echo "$v"
		return
	fi
	case $1 in
	sfja) echo "1=6000 2=200 3=200 4=250 5=250" ;;
	fig3) echo "1=6000 2=200 3=250 4=250" ;;
	q1) echo "1=200 2=200 3=250" ;;
	*) echo "accuracy: no default variants for query '$1'; set ACCURACY_VARIANTS_$1" >&2; return 1 ;;
	esac
}
for q in $queries; do
	variants_of "$q" >/dev/null
done

results=$out/runs.txt
shares=$out/shares.txt
: >"$results"
: >"$shares"

# profile WHO FILE ARGS...: the engine run ARGS under WHO (tailor or perf)
# into FILE, its output in $out/r.out.
profile() {
	p_who=$1 p_file=$2
	shift 2
	[ "$singlestep" = 0 ] || box-singlestep on >&2
	if [ "$p_who" = tailor ]; then
		"$tailor" record -q -F "$freq" -o "$p_file" -- "$@" >"$out/r.out" 2>&1
	else
		perf record -q -e cpu-clock -F "$freq" --intr-regs=r15 --user-regs=ip,r15 \
			-o "$p_file" -- "$@" >"$out/r.out" 2>&1
	fi || {
		[ "$singlestep" = 0 ] || box-singlestep off >&2
		cat "$out/r.out"
		echo "accuracy: the run failed: $*" >&2
		exit 1
	}
	[ "$singlestep" = 0 ] || box-singlestep off >&2
	grep -q '^check: ok' "$out/r.out" || { cat "$out/r.out"; exit 1; }
}

# table FILE DICT TIMES LEVEL: the LEVEL table of a profile, as CSV, of
# the engine's process (its pid from the run's times).
table() {
	"$tailor" report -i "$1" -d "$2" --pid "$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' "$3")" \
		--level "$4" -f csv --top 0 2>/dev/null
}

run() {	# run QUERY ROUND VARIANT
	extra=
	[ "$3" = base ] || extra="-x $3"
	file=$out/r.rec
	[ "$profiler" = tailor ] || file=$out/r.data
	# shellcheck disable=SC2086
	profile "$profiler" "$file" "$engine" -s "$scale" -n "$repeat" -r 0 \
		-d "$out/r.dict" -w "$out/gen" -t "$out/r.times" $extra "$1"
	t=$(sed -n 's/.*exec_cpu_ns=\([0-9]*\).*/\1/p' "$out/r.times")
	known=$(sed -n 's/.*extra_ns=\([0-9]*\).*/\1/p' "$out/r.times")
	table "$file" "$out/r.dict" "$out/r.times" query >"$out/q.csv"
	table "$file" "$out/r.dict" "$out/r.times" operator >"$out/o.csv"
	# Every process's samples: the engine's and its compilers'.
	all=$("$tailor" report -i "$file" -d "$out/r.dict" --level operator -f csv --top 0 2>/dev/null |
		awk -F, 'NR > 1 { n += $(NF - 1) } END { print n + 0 }')
	# query round variant T S_query total attributed kernel known all, then
	# op:samples for each operator.  The CSV's fields are name, kind,
	# samples, share; a name with a comma is quoted, so the others are
	# taken from the end.
	awk -F, -v query="$1" -v round="$2" -v variant="$3" -v t="$t" -v known="$known" -v all="$all" '
		FILENAME ~ /q.csv$/ && $1 == query { sq = $(NF - 1) }
		FILENAME ~ /o.csv$/ && FNR > 1 {
			total += $(NF - 1)
			if ($(NF - 2) == "component") attributed += $(NF - 1)
			if ($(NF - 2) == "kernel") kernel += $(NF - 1)
			if (match($1, /#[0-9]+ /)) s[substr($1, RSTART + 1, RLENGTH - 2)] = $(NF - 1)
		}
		END {
			printf "%s %s %s %s %d %d %d %d %s %d", query, round, variant, t, sq, total, attributed, kernel, known, all
			for (op in s) printf " %s:%d", op, s[op]
			printf "\n"
		}' "$out/q.csv" "$out/o.csv" >>"$results"
	# First run of the query: its operators' names, from the dictionary.
	[ -s "$out/names-$1" ] || awk -F'\t' '$1 == "component" && $2 == "operator" &&
		match($4, /#[0-9]+ /) { print substr($4, RSTART + 1, RLENGTH - 2) "\t" $4 }' \
		"$out/r.dict" | sort -n >"$out/names-$1"
	# The same baseline under perf: the operators' shares of the query.
	if [ "$3" = base ] && [ "$compare" = 1 ]; then
		profile perf "$out/c.data" "$engine" -s "$scale" -n "$repeat" -r 0 \
			-d "$out/c.dict" -w "$out/gen" -t "$out/c.times" "$1"
		table "$out/c.data" "$out/c.dict" "$out/c.times" query >"$out/cq.csv"
		table "$out/c.data" "$out/c.dict" "$out/c.times" operator >"$out/co.csv"
		for who in tailor perf; do
			if [ "$who" = tailor ]; then qf=$out/q.csv of=$out/o.csv; else qf=$out/cq.csv of=$out/co.csv; fi
			awk -F, -v query="$1" -v who="$who" '
				FILENAME ~ /q.csv$/ && $1 == query { sq = $(NF - 1) }
				FILENAME ~ /o.csv$/ && FNR > 1 && match($1, /#[0-9]+ /) {
					s[substr($1, RSTART + 1, RLENGTH - 2)] = $(NF - 1)
				}
				END { for (op in s) printf "%s %s %s %d %d\n", query, who, op, s[op], sq }' \
				"$qf" "$of" >>"$shares"
		done
	fi
}

# A warm-up run per query, unrecorded: the first run of a binary pays for
# page cache misses and, under emulation, for translating its code.
for q in $queries; do
	"$engine" -s "$scale" -n "$repeat" -r 0 -w "$out/gen" "$q" >/dev/null
done

r=1
while [ "$r" -le "$rounds" ]; do
	for q in $queries; do
		for v in base $(variants_of "$q"); do
			echo "accuracy: round $r/$rounds, query $q, variant $v ($profiler)" >&2
			run "$q" "$r" "$v"
		done
	done
	r=$((r + 1))
done

case $profiler in
tailor)	# The collector the last run's recording names (tailor.ko, or bpf).
	collector=$("$tailor" dump -i "$out/r.rec" 2>/dev/null | sed -n 's/^meta\.collector: //p')
	how="tailor record (${collector:-tailor.ko}), $freq Hz" ;;
*) how="perf record -e cpu-clock --intr-regs=r15, $freq Hz, read by tailor report" ;;
esac
[ "$singlestep" = 0 ] || how="$how, single-stepped (box-singlestep)"
{
	for q in $queries; do
		awk -v query="$q" -v rounds="$rounds" -v scale="$scale" -v repeat="$repeat" -v how="$how" '
			function abs(x) { return x < 0 ? -x : x }
			function ratio(a, b) { return b ? a / b : 0 }
			FILENAME ~ /names-/ { split($0, f, "\t"); name[f[1]] = f[2]; nops++; next }
			$1 != query { next }
			{
				# query round variant T S_query total attributed kernel known all op:s...
				delete s
				for (i = 11; i <= NF; i++) { split($i, p, ":"); s[p[1]] = p[2] }
				if ($3 == "base") {
					bt[$2] = $4; bq[$2] = $5
					for (op in s) bs[$2, op] = s[op]
					if (!nbase || $4 < tmin) tmin = $4
					if (!nbase || $4 > tmax) tmax = $4
					tsum += $4; nbase++
					next
				}
				split($3, v, "="); op = v[1]; work[op] = v[2]
				vt[$2, op] = $4; vq[$2, op] = $5; kn[$2, op] = $9
				for (i in s) vs[$2, op, i] = s[i]
			}
			END {
				printf "accuracy oracle: query %s, scale %s, executed %s times a run, %d round(s); %s\n", query, scale, repeat, rounds, how
				printf "  baseline execution CPU time: mean %.0f ms, %.0f-%.0f ms over the rounds (spread %.1f%% of the mean)\n",
					tsum / nbase / 1e6, tmin / 1e6, tmax / 1e6, 100 * ratio(tmax - tmin, tsum / nbase)
				printf "%-40s %5s %9s %9s %9s %7s %7s %9s %8s\n", "operator", "N", "measured", "known", "profiled", "mean|E|", "worst E", "others", "mean|Et|"
				for (op = 1; op <= nops; op++) {
					if (!(op in work)) continue
					mt = mk = mo = me = mx = met = 0; worst = 0
					for (r = 1; r <= rounds; r++) {
						t = vt[r, op] - bt[r]
						k = kn[r, op]
						o = vt[r, op] * ratio(vs[r, op, op], vq[r, op]) - bt[r] * ratio(bs[r, op], bq[r])
						x = 0
						for (i = 1; i <= nops; i++)
							if (i != op)
								x += vt[r, op] * ratio(vs[r, op, i], vq[r, op]) - bt[r] * ratio(bs[r, i], bq[r])
						e = k > 0 ? (o - k) / k : 0
						met += t > 0 ? abs((o - t) / t) : 0
						mt += t; mk += k; mo += o; me += abs(e); mx += x
						if (abs(e) > abs(worst)) worst = e
					}
					printf "%-40.40s %5d %7.0fms %7.0fms %7.0fms %6.1f%% %+6.1f%% %+7.0fms %7.1f%%%s\n", name[op], work[op],
						mt / rounds / 1e6, mk / rounds / 1e6, mo / rounds / 1e6, 100 * me / rounds, 100 * worst,
						mx / rounds / 1e6, 100 * met / rounds,
						(me / rounds > 0.10 ? "  mean over 10% by " sprintf("%.1f", 100 * me / rounds - 10) " pts" : "") \
						(abs(worst) > 0.20 ? "  worst over 20% by " sprintf("%.1f", 100 * abs(worst) - 20) " pts" : "")
				}
				printf "\n"
			}' "$out/names-$q" "$results"
	done
	awk '
		function ratio(a, b) { return b ? a / b : 0 }
		$3 == "base" { tot += $6; att += $7; ker += $8; all += $10; n++ }
		END {
			printf "attributed to operators or named runtime parts: %.1f%% of the engine process'"'"'s %d samples in %d baseline runs (goal: 95%%", 100 * ratio(att, tot), tot, n
			if (att < 0.95 * tot) printf "; short by %.1f pts", 95 - 100 * ratio(att, tot)
			printf ")\n"
			printf "  [kernel] %.1f%% (kernel samples neither a tag nor an entry IP names a component of);\n", 100 * ratio(ker, tot)
			printf "  the C compiler processes the engine ran: %d more samples, apart\n", all - tot
		}' "$results"
	if [ -s "$shares" ]; then
		printf '\nthe baselines run again under perf record -e cpu-clock --intr-regs=r15 at %s Hz, read by tailor report:\n' "$freq"
		printf '%-8s %-40s %9s %9s %9s\n' query operator tailor perf difference
		for q in $queries; do
			awk -v query="$q" '
				FILENAME ~ /names-/ { split($0, f, "\t"); name[f[1]] = f[2]; nops++; next }
				$1 == query { s[$2, $3] += $4; sq[$2, $3] += $5 }
				END {
					for (op = 1; op <= nops; op++) {
						a = sq["tailor", op] ? 100 * s["tailor", op] / sq["tailor", op] : 0
						b = sq["perf", op] ? 100 * s["perf", op] / sq["perf", op] : 0
						printf "%-8s %-40.40s %8.1f%% %8.1f%% %+8.1f\n", query, name[op], a, b, a - b
					}
				}' "$out/names-$q" "$shares"
		done
		echo "  (shares of the query's samples, pooled over the rounds' baselines)"
	fi
} | tee "$out/accuracy.txt"

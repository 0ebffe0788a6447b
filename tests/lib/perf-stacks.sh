# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# perf-stacks.sh - what the tests that hold tailor to perf share, sourced
# after tap.sh:
#   needs TAILOR TOOL...       the tailor under test built, else a
#                              failure; each TOOL on PATH, else a skip
#                              (scripts/setup.sh installs them); either
#                              way the suite ends there
#   perf_collapsed DATA [--end FILE] [OPTION...]
#                              perf script's call stacks of DATA, root
#                              first, one "STACK COUNT" a line, sorted
#                              (stackcollapse-perf's way, without the
#                              command); OPTIONs go to perf script
#                              (--no-inline).  With --end, a root frame
#                              at ffffffffffffffff (libunwind's end of a
#                              short stack copy) is taken off, and the
#                              number taken off written to FILE.

needs() {
	local tool

	if [ ! -x "$1" ]; then
		not_ok "$1 missing: make userspace"
		tap_totals
		exit 1
	fi
	shift
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null; then
			skip "$tool is needed (scripts/setup.sh installs it)"
			tap_totals
			exit 0
		fi
	done
}

perf_collapsed() {
	local data=$1 end=
	shift
	if [ "${1:-}" = --end ]; then
		end=$2
		shift 2
	fi
	perf script -i "$data" "$@" -F ip,sym 2>/dev/null | awk -v end="$end" '
		function flush() {
			if (end != "" && n && ip[n] == "ffffffffffffffff") { n--; dropped++ }
			if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]; c[s]++ }
			n = 0
		}
		NF == 0 { flush(); next }
		{ n++; ip[n] = $1; $1 = ""; f[n] = substr($0, 2) }
		END { flush(); for (k in c) print k " " c[k]; if (end != "") print dropped + 0 >end }' |
		sort
}

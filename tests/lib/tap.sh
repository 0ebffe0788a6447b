# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# tap.sh - TAP for the shell test suites (golden, engine, demo), sourced:
#   ok NAME               a passing test
#   not_ok NAME [FILE]    a failing one, with an excerpt of FILE (its first
#                         20 lines, or the last 20 with TAP_EXCERPT=tail)
#   skip NAME             a test that cannot run here, and why
#   tap_from              "ok TEXT" and "not ok TEXT: WHY" lines on stdin
#                         (a checker's) as tests, other lines as comments;
#                         in a pipe, with shopt -s lastpipe to count them
#   tap_totals            the kselftest-style "# Totals:" line that
#                         scripts/check.sh counts; fails if any test did
pass=0 fail=0 skipped=0 n=0

ok() {
	n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"
	if [ -n "${2:-}" ] && [ -f "$2" ]; then
		"${TAP_EXCERPT:-head}" -20 "$2" | sed 's/^/#   /'
	fi
}

skip() {
	n=$((n + 1)); skipped=$((skipped + 1)); echo "ok $n - # SKIP $1"
}

tap_from() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"not ok "*) not_ok "${line#not ok }" ;;
		*) echo "# $line" ;;
		esac
	done
}

tap_totals() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skipped error:0"
	[ "$fail" -eq 0 ]
}

# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034,SC2154
#
# engine-test.sh - the start every native test of the example engine
# shares, sourced with $top (the checkout) set and the test's arguments:
#   build          the first argument, else $top/build
#   engine         the engine under test: $TAILOR_ENGINE (the ASan/UBSan
#                  build, say), else the build's
#   tailor         the build's tailor
#   work           a temporary directory, removed on exit
# with tap.sh's functions, and:
#   require FILE...  unless each FILE is executable, one failed test that
#                    says how to build it, and the test ends (exit 1)
#   require_perf     without perf and python3, one skipped test, and the
#                    test ends (exit 0): scripts/setup.sh installs both
# A test may set any of these again after sourcing: engine_test.sh checks
# the sanitized tailor, llvm_backend_test.sh the engine its plugin goes
# with.

# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"

build=${1:-$top/build}
engine=${TAILOR_ENGINE:-$build/examples/tailor-engine}
tailor=$build/userspace/tailor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

require() {
	local f
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			not_ok "$f missing: make userspace examples (and make -C userspace test-tools)"
			tap_totals
			exit 1
		fi
	done
}

require_perf() {
	if ! command -v perf >/dev/null || ! command -v python3 >/dev/null; then
		skip "perf and python3 are needed (scripts/setup.sh installs them)"
		tap_totals
		exit 0
	fi
}

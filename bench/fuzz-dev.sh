#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fuzz-dev.sh [--calls N] [--seed N] [--box debug|6.1|6.12]: the /dev/tailor
# fuzzer (tests/kselftest/tailor_fuzz_test.c) for a long run, alone in the
# test box; by default 10 million calls on the patched debug kernel
# (KASAN, lockdep, kmemleak, might_sleep).  make check runs it for 100k
# calls on each kernel (500k on the debug kernel until 2026-11-27: 20-28
# of make check's minutes).  Any report, oops, WARN, hang or leak fails the run (the box's
# judge, tests/box/boot.sh); the fuzzer prints calls made, sessions, module
# unloads under fire, and errors by errno.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
calls=10000000 seed=$(date +%s) box=debug
while [ $# -gt 0 ]; do
	case $1 in
	--calls) calls=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--box) box=$2; shift 2 ;;
	*) echo "usage: $0 [--calls N] [--seed N] [--box debug|6.1|6.12]" >&2; exit 2 ;;
	esac
done
log=$top/build/fuzz-dev-$box.log
echo "== $calls calls, seed $seed, box $box; console in $log"
# About 430 calls a second on the debug kernel under TCG, with 98% of them
# reaching the driver (2026-11-24; 1600 a second when 74% found no file):
# give the box twice the time it should need.  A minute's progress line
# says how far a run is.
TAILOR_BOX_TESTS=tailor_fuzz_test TAILOR_FUZZ_CALLS=$calls TAILOR_FUZZ_SEED=$seed \
	TAILOR_FUZZ_SECONDS=$((calls / 200 + 600)) TAILOR_BOX_TIMEOUT=$((calls / 180 + 900)) \
	"$top/tests/box/run.sh" "$box" --log "$log"
grep '^# ' "$log" | grep -v '^# Totals' | tr -d '\r' || true

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bpf_record_test.sh: tailor record's end-to-end tests (tests/kselftest/
# tailor_record_test.c, the box's) against the BPF collector, natively on
# this machine's kernel: launch, attach and all-CPU recordings of the
# workloads, the tag word's ground truth (tw_tagword: every sample in
# query code carries its query), children, side-band switches and
# wakeups, interrupted and killed recordings, and the message a user
# without CAP_BPF and CAP_PERFMON gets; and the call stacks' tests
# (tailor_callchain_test.c: the program's shape, the bound and what it
# cuts).  The test binaries are built with
# TAILOR_TEST_ROOT, a directory here with bin/tailor and workloads/, and
# run with TAILOR_COLLECTOR=bpf.  Needs root, a kernel with BTF, and the
# kselftest harness (linux-source-6.1).
#
# Prints the harness's TAP and "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${TAILOR_BUILD:-$top/build}
ksft=${KSFT_DIR:-/usr/src/linux-source-6.1/tools/testing/selftests}
root=$build/bpf-test-root

fail() {
	echo "not ok 1 - $*"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
}

[ "$(id -u)" = 0 ] || fail "needs root (the BPF collector needs CAP_BPF and CAP_PERFMON)"
[ -r /sys/kernel/btf/vmlinux ] || fail "this kernel has no BTF (/sys/kernel/btf/vmlinux)"
[ -f "$ksft/kselftest_harness.h" ] || fail "no kselftest harness at $ksft (scripts/setup.sh)"
[ -x "$build/userspace/tailor" ] && [ -d "$build/workloads" ] ||
	fail "build tailor and the workloads first (make userspace workloads)"

rm -rf "$root"
mkdir -p "$root/bin"
ln -s "$build/userspace/tailor" "$root/bin/tailor"
# A copy, not a link: the recordings name the files by the paths mapped.
cp -a "$build/workloads" "$root/workloads"
for t in tailor_record_test tailor_callchain_test; do
	gcc -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wno-sign-compare \
		-Wno-unused-parameter -pthread -I"$ksft" -I"$top/kmod/include" \
		-I"$top/userspace/libtailor/include" -DTAILOR_TEST_ROOT="\"$root\"" \
		-o "$root/$t" "$top/tests/kselftest/$t.c" -lm ||
		fail "$t.c does not build natively"
done
cd "$root" || fail "no $root"
rc=0
for t in tailor_record_test tailor_callchain_test; do
	TAILOR_COLLECTOR=bpf "./$t" || rc=1
done
exit $rc

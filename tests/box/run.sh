#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh - build tailor.ko for a kernel, boot that kernel in the test box
# (QEMU), run the kselftests inside, and report.
#
# Usage: tests/box/run.sh BOX [--log FILE]
#
#   6.1, 6.12       Debian's kernel of that version: the module is built
#                   against /usr/src/linux-headers-<release> and the box
#                   boots /boot/vmlinuz-<release>, so the two match;
#                   with tsc=reliable, as below.
#   debug           the patched debug kernel (build-debug-kernel.sh):
#                   KASAN, lockdep, kmemleak, might_sleep; booted with
#                   tsc=reliable, since 6.1 distrusts the TSC of a TCG SMP
#                   guest and CLOCK_PERF_HW_CLOCK needs a trusted one.
#   debug-unstable  the same kernel with tsc=unstable: the clock must be
#                   refused.  Runs only that test.
#
# Build outputs go to build/box-<name>/.  Prints one line per kselftest
# binary and a final "box <name>: N passed, N failed, N skipped"; exits
# non-zero on any failure, a test binary that died without its totals, or
# a kernel splat (boot.sh judges the console).
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
box=${1:-6.1}
shift || true
log=""
while [ $# -gt 0 ]; do
	case $1 in
	--log) log=$2; shift 2 ;;
	*) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

# shellcheck source=tests/box/host-lib.sh
. "$top/tests/box/host-lib.sh"

tests=${TAILOR_BOX_TESTS:-"tailor_session_test tailor_mmap_test tailor_sched_test tailor_sampling_test tailor_pebs_test tailor_perf_clock_test tailor_record_test tailor_report_test tailor_callchain_test tailor_tag_word_test tailor_stress_test tailor_fuzz_test tailor_module_test"}
append=""
# The debug kernel's suite: 90 s of tests, then the fuzzer's 100k calls
# (4-6 minutes), with room for a slower host.
timeout=900
case $box in
debug | debug-unstable)
	"$top/tests/box/build-debug-kernel.sh"
	kdir=$top/build/kernel-debug/obj
	kernel=$kdir/arch/x86/boot/bzImage
	name=$box
	if [ "$box" = debug ]; then
		append="tsc=reliable"
		timeout=2400
	else
		append="tsc=unstable"
		tests="tailor_perf_clock_test"
	fi
	;;
*)
	release=$(find_release "$box") || {
		echo "run.sh: no kernel $box with headers installed; run scripts/setup.sh" >&2
		exit 1
	}
	kdir=/usr/src/linux-headers-$release
	kernel=/boot/vmlinuz-$release
	name=$release
	# The guest TSC is the host's under TCG, but the kernel's sync
	# check between vCPUs fails at random there; the kernel then runs on
	# the HPET and hrtimers jitter.
	append="tsc=reliable"
	;;
esac

out=$top/build/box-$name
log=${log:-$out/console.log}
mkdir -p "$out"

echo "== box $name: building tailor.ko and kselftests"
payload=$out/payload
base_payload "$kdir" "$out" "$payload" kselftests workloads
mkdir -p "$payload/kselftest" "$payload/workloads"
cp -r "$top"/build/workloads/* "$payload/workloads/"
cp "$top/tests/box/run-in-box.sh" "$payload/"
cp "$top"/build/kselftest/tailor_*_test "$payload/kselftest/"
# The module test reloads tailor.ko, so it goes last.
printf '%s\n' $tests >"$payload/kselftest/order"
# The fuzzer's settings (tailor_fuzz_test.c) go into the box as they are.
# Its seed, unless given, comes from the commit (its first 12 hex digits):
# each commit's check covers new ground, and any run repeats with its seed.
if [ -z "${TAILOR_FUZZ_SEED:-}" ] &&
   commit=$(git -C "$top" rev-parse --verify -q HEAD 2>/dev/null); then
	export TAILOR_FUZZ_SEED=$((16#${commit:0:12}))
	echo "box: fuzzing with TAILOR_FUZZ_SEED=$TAILOR_FUZZ_SEED (commit ${commit:0:12})" >&2
fi
env | grep -E '^TAILOR_FUZZ_[A-Z]+=[0-9]+$' | sed 's/^/export /' >"$payload/kselftest/env" || true

TAILOR_BOX_PERF=1 "$top/tests/box/mkinitramfs.sh" "$out/initramfs.cpio.gz" "$payload"
set +e
"$top/tests/box/boot.sh" --kernel "$kernel" --initrd "$out/initramfs.cpio.gz" \
	--log "$log" --append "$append" \
	--timeout "${TAILOR_BOX_TIMEOUT:-$timeout}" >"$out/boot.out" 2>&1
boot_rc=$?
set -e
tail -n 3 "$out/boot.out" | sed 's/^/   /'
# A failed boot's verdict names the console lines behind it: say them here,
# where the digest of scripts/check.sh finds them.
if [ $boot_rc -ne 0 ]; then
	awk '/boot.sh: FAIL/ { f = 1 } f && n++ < 20 { print "   " $0 }' "$out/boot.out"
fi

"$top/tests/box/tap-summary.sh" "box $name" "$log" "$boot_rc"

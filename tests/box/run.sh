#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh - build tailor.ko for a Debian kernel, boot that kernel in the
# test box (QEMU), run the kselftests inside, and report.
#
# Usage: tests/box/run.sh [6.1|6.12|KERNEL_RELEASE] [--log FILE]
#
# The module is built against /usr/src/linux-headers-<release> and the box
# boots /boot/vmlinuz-<release>, so the two always match.  Build outputs
# go to build/box-<release>/.  Prints one line per kselftest binary and a
# final "box <release>: N passed, N failed, N skipped"; exits non-zero on
# any failure, a test binary that died without its totals, or a kernel
# splat (boot.sh judges the console).
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
want=${1:-6.1}
shift || true
log=""
while [ $# -gt 0 ]; do
	case $1 in
	--log) log=$2; shift 2 ;;
	*) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

# Newest installed release with both an image and headers.
find_release() {
	local r
	for r in $(ls /boot/ | sed -n 's/^vmlinuz-//p' | sort -rV); do
		case $r in
		"$1" | "$1".*) ;;
		*) continue ;;
		esac
		[ -d "/usr/src/linux-headers-$r" ] && { echo "$r"; return 0; }
	done
	return 1
}

release=$(find_release "$want") || {
	echo "run.sh: no kernel $want with headers installed; run scripts/setup.sh" >&2
	exit 1
}
out=$top/build/box-$release
log=${log:-$out/console.log}
mkdir -p "$out"

echo "== box $release: building tailor.ko and kselftests"
make -s -C "$top" module KDIR="/usr/src/linux-headers-$release" \
	MODULE_OUT="$out/kmod"
make -s -C "$top" kselftests

payload=$out/payload
rm -rf "$payload"
mkdir -p "$payload/kselftest"
cp "$out/kmod/kmod/tailor.ko" "$payload/"
cp "$top/tests/box/run-in-box.sh" "$payload/"
cp "$top"/build/kselftest/tailor_*_test "$payload/kselftest/"
# The module test reloads tailor.ko, so it goes last.
printf '%s\n' tailor_session_test tailor_sampling_test tailor_pebs_test \
	tailor_module_test >"$payload/kselftest/order"

"$top/tests/box/mkinitramfs.sh" "$out/initramfs.cpio.gz" "$payload"
set +e
"$top/tests/box/boot.sh" --kernel "/boot/vmlinuz-$release" \
	--initrd "$out/initramfs.cpio.gz" --log "$log" \
	--timeout "${TAILOR_BOX_TIMEOUT:-900}" >"$out/boot.out" 2>&1
boot_rc=$?
set -e
tail -n 3 "$out/boot.out" | sed 's/^/   /'

# Count kselftest results from each binary's "# Totals:" line.
"$top/tests/box/tap-summary.sh" "box $release" "$log" "$boot_rc"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# dkms_test.sh: DKMS builds tailor.ko from what 'make install-dkms'
# installs, for Debian's 6.1 and 6.12 kernels, with the dkms.conf of this
# tree: dkms add, build, install (into a tree of the test's own, so the
# machine's modules are not touched), status, then remove.  Checks that
# dkms.conf's version is the command's, that the built module's vermagic is
# the kernel's, that DKMS installs it under updates/dkms, and that remove
# leaves nothing behind.
#
# Needs root (dkms) and the headers scripts/setup.sh installs.  dkms signs
# the modules it builds, with a key it makes in /var/lib/dkms the first
# time: that file is the one trace this test leaves on the machine.
# Usage: tests/packaging/dkms_test.sh     Prints TAP and "# Totals:".
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/dkms-test
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# shellcheck source=tests/box/host-lib.sh
. "$top/tests/box/host-lib.sh"
rm -rf "$out"
mkdir -p "$out"

if [ "$(id -u)" -ne 0 ] || ! command -v dkms >/dev/null; then
	skip "DKMS builds need root and dkms (scripts/setup.sh)"
	tap_totals
	exit
fi

version=$(make -s --no-print-directory -C "$top" print-version)
if grep -qx "PACKAGE_VERSION=\"$version\"" "$top/dkms.conf"; then
	ok "dkms.conf's PACKAGE_VERSION is tailor's, $version"
else
	not_ok "dkms.conf's PACKAGE_VERSION is not tailor's $version" "$top/dkms.conf"
fi

src=$out/src
if make -s -C "$top" install-dkms DESTDIR="$src" >"$out/install-dkms.log" 2>&1 &&
	[ -f "$src/usr/src/tailor-$version/dkms.conf" ] &&
	[ -f "$src/usr/src/tailor-$version/kmod/include/uapi/tailor.h" ] &&
	[ -z "$(find "$src" -name '*.mod.c' -o -name '*.o' -o -name '*.ko')" ]; then
	ok "make install-dkms: /usr/src/tailor-$version, sources only (no kbuild output)"
else
	not_ok "make install-dkms" "$out/install-dkms.log"
fi

# dkms with trees of this test's own.
trees=(--sourcetree "$src/usr/src" --dkmstree "$out/dkms" --installtree "$out/modules")
mkdir -p "$out/dkms" "$out/modules"
if dkms add -m tailor -v "$version" "${trees[@]}" >"$out/add.log" 2>&1; then
	ok "dkms add tailor/$version"
else
	not_ok "dkms add tailor/$version" "$out/add.log"
fi

for kver in 6.1 6.12; do
	release=$(find_release "$kver") || {
		not_ok "DKMS for $kver: no kernel $kver with headers; run scripts/setup.sh"
		continue
	}
	kdir=/usr/src/linux-headers-$release
	if dkms build -m tailor -v "$version" -k "$release" --kernelsourcedir "$kdir" "${trees[@]}" \
		>"$out/build-$kver.log" 2>&1; then
		ok "dkms build for $release"
	else
		TAP_EXCERPT="tail" not_ok "dkms build for $release" "$out/build-$kver.log"
		continue
	fi
	# As /lib/modules/RELEASE is, where the kernel is installed.
	mkdir -p "$out/modules/$release"
	if dkms install -m tailor -v "$version" -k "$release" --kernelsourcedir "$kdir" --no-depmod \
		"${trees[@]}" >"$out/install-$kver.log" 2>&1; then
		ok "dkms install for $release"
	else
		TAP_EXCERPT="tail" not_ok "dkms install for $release" "$out/install-$kver.log"
		continue
	fi
	# Compressed where the kernel compresses its modules.
	ko=$(find "$out/modules/$release/updates/dkms" -name 'tailor.ko*' 2>/dev/null | head -1)
	magic=$([ -n "$ko" ] && modinfo -F vermagic "$ko" 2>/dev/null)
	if [[ $magic == "$release "* ]]; then
		ok "$release: updates/dkms/$(basename "$ko"), vermagic $release"
	else
		not_ok "$release: the installed module '${ko:-none}' has vermagic '$magic'"
	fi
	status=$(dkms status -m tailor -v "$version" -k "$release" "${trees[@]}" 2>&1)
	if [[ $status == *"tailor/$version, $release, x86_64: installed"* ]]; then
		ok "dkms status: installed for $release"
	else
		not_ok "dkms status for $release: $status"
	fi
done

if dkms remove -m tailor -v "$version" --all --no-depmod "${trees[@]}" >"$out/remove.log" 2>&1 &&
	[ -z "$(find "$out/modules" -name 'tailor.ko*')" ] && [ ! -e "$out/dkms/tailor" ]; then
	ok "dkms remove --all leaves no module behind"
else
	not_ok "dkms remove --all" "$out/remove.log"
fi

tap_totals

# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# host-lib.sh - helpers for the host-side box scripts (run.sh, exec.sh).

# find_release VERSION: the newest installed kernel release of VERSION
# (6.1 -> 6.1.0-56-amd64) with both an image in /boot and headers.
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

# base_payload KDIR BUILD PAYLOAD [MAKE_TARGET...]: tailor.ko built for
# KDIR in BUILD/kmod, and the tailor command (plus the make targets
# given), put in PAYLOAD, emptied first: PAYLOAD/tailor.ko and
# PAYLOAD/bin/tailor.
base_payload() {
	local kdir=$1 build=$2 payload=$3 top
	shift 3
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	make -s -C "$top" module KDIR="$kdir" MODULE_OUT="$build/kmod" &&
		make -s -C "$top" userspace "$@" || return
	rm -rf "$payload"
	mkdir -p "$payload/bin"
	cp "$build/kmod/kmod/tailor.ko" "$payload/"
	cp "$top/build/userspace/tailor" "$payload/bin/"
}

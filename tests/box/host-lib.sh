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

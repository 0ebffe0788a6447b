# SPDX-License-Identifier: GPL-2.0-only
# busybox ash has local, as dash does:
# shellcheck shell=dash
#
# box-lib.sh - helpers for scripts that tests/box/exec.sh runs in the test
# box (busybox sh, as root).  exec.sh copies it to /tailor/box-lib.sh.
#
# Usage, in the script:
#   . /tailor/box-lib.sh
#   box_load_module            insmod /tailor/tailor.ko; returns 1, with the
#                              kernel's last words, if that fails
#   box_export FILE [NAME]     send FILE to the host over the console; exec.sh
#                              writes it to OUT/NAME (default: FILE's base
#                              name).  NAME must be a plain file name.
#   box_quiet_kernel           keep printk off the console from now on
#                              (dmesg -n 1)
#   box_loud_kernel            undo box_quiet_kernel and print the kernel
#                              messages it held back
#
# The console carries both the script's output and the kernel's messages,
# and a printk can land in the middle of an export.  box_export therefore
# quiets the console while it sends a file, then prints what the kernel
# logged meanwhile.  Kernel messages kept off the console are also kept
# from boot.sh, which looks for splats there, so a script that calls
# box_quiet_kernel should call box_loud_kernel before it exits.

# The console log level to go back to, and the kernel log length at the
# time, set by box_quiet_kernel.
_box_saved_level=
_box_saved_lines=

_box_level() {
	local level rest

	read -r level rest </proc/sys/kernel/printk
	echo "$level"
}

# Prints the kernel messages past the first $1 lines of the log.  Off by
# some if the ring buffer wrapped in between; a splat is printed then too.
_box_kernel_since() {
	dmesg | tail -n "+$(($1 + 1))"
}

box_load_module() {
	local ko=/tailor/tailor.ko rc=0

	if [ -d /sys/module/tailor ]; then
		echo "box_load_module: tailor is already loaded"
		return 0
	fi
	if [ ! -f "$ko" ]; then
		echo "box_load_module: $ko is missing from the payload" >&2
		return 1
	fi
	insmod "$ko" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "box_load_module: insmod $ko failed (status $rc);" \
			"vermagic '$(modinfo -F vermagic "$ko" 2>/dev/null)'," \
			"kernel $(uname -r); last kernel messages:" >&2
		dmesg | tail -n 20 >&2
		return 1
	fi
}

box_quiet_kernel() {
	if [ -z "$_box_saved_level" ]; then
		_box_saved_level=$(_box_level)
		_box_saved_lines=$(dmesg | wc -l)
	fi
	dmesg -n 1
}

box_loud_kernel() {
	[ -n "$_box_saved_level" ] || return 0
	dmesg -n "$_box_saved_level"
	_box_kernel_since "$_box_saved_lines"
	_box_saved_level=
	_box_saved_lines=
}

box_export() {
	if [ $# -lt 1 ] || [ $# -gt 2 ]; then
		echo "usage: box_export FILE [NAME]" >&2
		return 2
	fi
	local file="$1" name="${2:-${1##*/}}" level lines rc=0

	case $name in
	"" | . | .. | */*)
		echo "box_export: '$name' is not a plain file name" >&2
		return 2 ;;
	esac
	if [ ! -f "$file" ] || [ ! -r "$file" ]; then
		echo "box_export: '$file' is not a readable file" >&2
		return 1
	fi
	level=$(_box_level)
	lines=$(dmesg | wc -l)
	dmesg -n 1
	echo "TAILOR-FILE-BEGIN $name"
	base64 "$file" || rc=$?
	# A failed export must not pass for a complete, shorter file.
	if [ "$rc" -eq 0 ]; then
		echo "TAILOR-FILE-END $name"
	else
		echo "TAILOR-FILE-FAILED $name"
	fi
	dmesg -n "$level"
	# Not when box_quiet_kernel is in force: box_loud_kernel prints them.
	[ "$level" -le 1 ] || _box_kernel_since "$lines"
	if [ "$rc" -ne 0 ]; then
		echo "box_export: base64 of '$file' failed (status $rc)" >&2
		return 1
	fi
}

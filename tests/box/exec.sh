#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# exec.sh - run a script in the tailor test box and fetch its results.
#
# Builds tailor.ko for the box kernel (as run.sh does) and the tailor
# command, boots the box with them and a payload, runs the script there as
# /tailor/run-in-box.sh, and copies out the files it exported.
#
# Usage: tests/box/exec.sh [--box 6.1|6.12] [--cc] [--clang] [--node] [--timeout S]
#                          [--payload DIR] --script FILE --out DIR
#
#   --box 6.1|6.12  Debian kernel to boot (default 6.1)
#   --cc            put a C compiler in the box (mkinitramfs.sh's
#                   TAILOR_BOX_CC=1): 15.5 MiB more initramfs, 0.8 s
#                   more boot
#   --clang         put clang-14 and its libLLVM in the box (TAILOR_BOX_CLANG=1)
#                   for tailor-engine --backend llvm, and lli-14: about
#                   170 MiB more
#   --node          put node (Debian's nodejs) in the box (TAILOR_BOX_NODE=1):
#                   about 100 MiB more
#   --timeout S     give up on the box after S seconds (default 300)
#   --payload DIR   copied under /tailor/ in the box
#   --script FILE   run in the box as /tailor/run-in-box.sh (#!/bin/sh is
#                   busybox ash), as root, in /tailor, stdin /dev/null
#   --out DIR       gets console.log (the whole console), boot.out
#                   (boot.sh's output) and the exported files
#
# The box also holds /tailor/tailor.ko, /tailor/bin/tailor, perf, and
# /tailor/box-lib.sh, which the script can source for box_load_module,
# box_export FILE [NAME], box_quiet_kernel and box_loud_kernel (see
# box-lib.sh).  What the script prints, from the console between
# TAILOR-BOX-START and TAILOR-BOX-RC=, without exported data, goes to
# stdout once the box is done; progress and diagnostics go to stderr.
#
# Exit status: boot.sh's (0 only if the script exited 0 and the kernel
# printed no splat), 1 if an export could not be decoded, 2 usage error.
set -euo pipefail
export LC_ALL=C

prog=${0##*/}
top=$(cd "$(dirname "$0")/../.." && pwd)

die() {
	echo "$prog: $*" >&2
	exit 1
}

# usage [ERROR]: without ERROR, the full help from the header above.
usage() {
	if [ $# -gt 0 ]; then
		echo "$prog: $*" >&2
		sed -n '/^# Usage:/,/^#$/s/^# \{0,1\}//p' "$0" >&2
	else
		sed -n '/^# Usage:/,/^set /{/^#/s/^# \{0,1\}//p}' "$0" >&2
	fi
	exit 2
}

box=6.1
cc=0 clang=0 node=0
timeout_s=300
payload=
script=
out=

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		set -- "${opt%%=*}" "${opt#*=}" "${@:2}"
		continue ;;
	-h | --help)
		usage ;;
	--cc)
		cc=1
		shift
		continue ;;
	--clang)
		clang=1
		shift
		continue ;;
	--node)
		node=1
		shift
		continue ;;
	--box | --timeout | --payload | --script | --out)
		[ $# -ge 2 ] || usage "$opt needs an argument"
		val=$2
		shift 2 ;;
	*)
		usage "unknown argument '$opt'" ;;
	esac
	case $opt in
	--box)		box=$val ;;
	--timeout)	timeout_s=$val ;;
	--payload)	payload=$val ;;
	--script)	script=$val ;;
	--out)		out=$val ;;
	esac
done

case $box in
6.1 | 6.12) ;;
*) usage "--box wants 6.1 or 6.12, not '$box'" ;;
esac
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || usage "--timeout wants a positive integer, not '$timeout_s'"
[ -n "$script" ] || usage "--script is required"
[ -n "$out" ] || usage "--out is required"
if [ ! -f "$script" ] || [ ! -r "$script" ]; then
	usage "script '$script' is not a readable file"
fi
[ -z "$payload" ] || [ -d "$payload" ] || usage "payload '$payload' is not a directory"

# shellcheck source=tests/box/host-lib.sh
. "$top/tests/box/host-lib.sh"

release=$(find_release "$box") ||
	die "no kernel $box with headers installed; run scripts/setup.sh"
kdir=/usr/src/linux-headers-$release
kernel=/boot/vmlinuz-$release

# Not run.sh's build/box-<release>: both may run at once, and MODULE_OUT
# starts by deleting its directory.
build=$top/build/exec-$release
mkdir -p "$build" "$out"
out=$(cd "$out" && pwd)
exec 9>"$build/.lock"
flock -n 9 || die "another exec.sh is using $build; run one box per kernel at a time"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tailor-exec.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "== box $release: building tailor.ko and tailor" >&2
base=$build/payload
base_payload "$kdir" "$build" "$base" >&2
cp "$top/tests/box/box-lib.sh" "$base/"
install -m 0755 "$script" "$base/run-in-box.sh"
payloads=("$base")
if [ -n "$payload" ]; then
	for f in tailor.ko bin/tailor box-lib.sh run-in-box.sh; do
		[ ! -e "$payload/$f" ] ||
			echo "$prog: warning: $payload/$f is replaced by exec.sh's /tailor/$f" >&2
	done
	# mkinitramfs.sh lets later payloads win.
	payloads=("$payload" "$base")
fi

TAILOR_BOX_PERF=1 TAILOR_BOX_CC=$cc TAILOR_BOX_CLANG=$clang TAILOR_BOX_NODE=$node \
	"$top/tests/box/mkinitramfs.sh" "$build/initramfs.cpio.gz" "${payloads[@]}"

log=$out/console.log
set +e
# tsc=reliable: as run.sh, against the random TSC sync failures of TCG.
"$top/tests/box/boot.sh" --kernel "$kernel" --initrd "$build/initramfs.cpio.gz" \
	--log "$log" --append tsc=reliable --timeout "$timeout_s" >"$out/boot.out" 2>&1
boot_rc=$?
set -e
{ grep "^boot.sh: " "$out/boot.out" | grep -v 'qemu-system' || true; } | sed 's/^/   /' >&2

# Splits the payload's part of the console into the script's output and
# the exported files, each to $tmp/exp/<n>.b64 with its name in <n>.name;
# problems go to $tmp/errors.  Names are checked in bash, so a bad one
# never becomes a path here.
mkdir "$tmp/exp"
: >"$tmp/errors"
awk -v dir="$tmp/exp" -v errors="$tmp/errors" '
function fail(msg) { print msg > errors }
function close_block(ok) {
	close(file)
	if (bad != "")
		fail("export " name ": " bad)
	else if (!ok)
		fail("export " name ": did not finish")
	else
		print name > (dir "/" n ".name")
	state = 1
}
{ gsub(/\r/, "") }
state == 0 { if (index($0, "TAILOR-BOX-START")) state = 1; next }
state == 3 { next }
/^TAILOR-BOX-RC=[0-9]+$/ {
	if (state == 2)
		close_block(0)
	state = 3
	next
}
state == 2 && $0 == "TAILOR-FILE-END " name { close_block(1); next }
state == 2 && $0 == "TAILOR-FILE-FAILED " name {
	bad = bad == "" ? "the box could not read it" : bad
	close_block(0)
	next
}
state == 2 {
	# busybox base64 wraps at 76: a short line before the last means
	# a lost character, anything else an intruder such as a printk.
	if (bad == "") {
		if ($0 !~ /^[A-Za-z0-9+\/=]*$/)
			bad = "line " NR " of the console is not base64: " $0
		else if (short)
			bad = "line " NR - 1 " of the console is short: data lost"
		else if (length($0) % 4)
			bad = "line " NR " of the console has " length($0) " characters: data lost"
	}
	short = length($0) != 76
	print > file
	next
}
(i = index($0, "TAILOR-FILE-BEGIN ")) {
	# The script may have left a line unfinished.
	if (i > 1)
		print substr($0, 1, i - 1)
	name = substr($0, i + 18)
	n++
	file = dir "/" n ".b64"
	printf "" > file
	bad = ""
	short = 0
	state = 2
	next
}
{ print }
END {
	if (state == 0)
		fail("no TAILOR-BOX-START on the console: the box did not get to the script")
	else if (state == 2)
		close_block(0)
}' "$log" >"$tmp/stdout"

# The TAILOR-BOX-RC line comes after an empty line of its own.
sed '${/^$/d}' "$tmp/stdout"

export_rc=0
while IFS= read -r err; do
	echo "$prog: $err" >&2
	export_rc=1
done <"$tmp/errors"

declare -A seen=()
nr_exports=$(find "$tmp/exp" -name '*.name' | wc -l)
for ((i = 1; i <= nr_exports; i++)); do
	f=$tmp/exp/$i.name
	[ -e "$f" ] || continue
	name=$(cat "$f")
	case $name in
	"" | . | .. | */* | console.log | boot.out)
		echo "$prog: export '$name' refused: not a plain file name, or one of exec.sh's own" >&2
		export_rc=1
		continue ;;
	esac
	[ -z "${seen[$name]:-}" ] ||
		echo "$prog: warning: '$name' exported more than once, the last one wins" >&2
	seen[$name]=1
	if ! base64 -d <"${f%.name}.b64" >"$tmp/decoded"; then
		echo "$prog: export '$name' is not valid base64" >&2
		export_rc=1
		continue
	fi
	mv -f "$tmp/decoded" "$out/$name"
	echo "$prog: exported $out/$name ($(stat -c %s "$out/$name") bytes)" >&2
done

script_rc=$(grep -a -o '^TAILOR-BOX-RC=[0-9]*' "$log" | tail -n 1 | cut -d= -f2 || true)
if [ -n "$script_rc" ] && [ "$script_rc" != 0 ]; then
	echo "$prog: the script exited with status $script_rc" >&2
fi
# boot.sh's verdict is above, with the times.
[ "$boot_rc" -eq 0 ] || exit "$boot_rc"
exit "$export_rc"

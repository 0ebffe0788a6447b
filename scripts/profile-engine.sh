#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# profile-engine.sh - run a script that profiles the example engine:
# natively where tailor record can sample here (/dev/tailor exists, or,
# as root on a kernel with BTF, through its BPF collector), else in the
# test box (tests/box/exec.sh, with the module, a C compiler and the
# engine).
#
# Usage: scripts/profile-engine.sh [--box|--native] [--llvm] --out DIR
#            [--export NAME]... -- STEPS [ARGS...]
#
# STEPS (a POSIX sh script: busybox runs it in the box) is called as
#   STEPS TAILOR ENGINE WORKDIR ARGS...
# and prints what it finds.  Each --export NAME is a file STEPS writes in
# WORKDIR; it is copied to DIR/NAME.  Environment variables starting with
# DEMO_ or ACCURACY_ are passed on to STEPS.
#   --box      use the test box even where tailor record can sample here
#   --native   fail rather than boot the test box
#   --llvm     STEPS runs tailor-engine --backend llvm: the box gets clang-14
#              and the engine's LLVM plugin (with its libLLVM)
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
prog=${0##*/}
mode=auto out='' exports=() llvm=
while [ $# -gt 0 ]; do
	case $1 in
	--box) mode=box; shift ;;
	--native) mode=native; shift ;;
	--llvm) llvm=--clang; shift ;;
	--out | --export)
		[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; }
		if [ "$1" = --out ]; then out=$2; else exports+=("$2"); fi
		shift 2 ;;
	--) shift; break ;;
	*) echo "$prog: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] && [ $# -ge 1 ] || {
	sed -n '/^# Usage:/,/^#   --native/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}
steps=$1
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)

echo "== building tailor and the example engine" >&2
make -s -C "$top" userspace examples >&2

if [ -c /dev/tailor ]; then
	collector="tailor.ko is loaded"
elif [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	collector="no tailor.ko, but tailor record's BPF collector can sample this kernel"
else
	collector=
fi
if [ "$mode" != box ] && [ -n "$collector" ]; then
	echo "== $collector: running natively" >&2
	rm -rf "$out/work"
	"$steps" "$top/build/userspace/tailor" "$top/build/examples/tailor-engine" \
		"$out/work" "$@"
	for f in "${exports[@]}"; do
		cp "$out/work/$f" "$out/$f"
	done
	exit 0
fi
if [ "$mode" = native ]; then
	echo "$prog: --native, but tailor record cannot sample here: no /dev/tailor (load tailor.ko), and the BPF collector needs root and a kernel with BTF" >&2
	exit 1
fi

echo "== tailor record cannot sample here: running in the test box (QEMU, Debian 6.1)" >&2
payload=$out/payload
rm -rf "$payload" "$out/box"
mkdir -p "$payload/bin"
cp "$top/build/examples/tailor-engine" "$payload/bin/"
if [ -n "$llvm" ]; then
	[ -f "$top/build/examples/tailor-engine-llvm.so" ] || {
		echo "$prog: --llvm: no build/examples/tailor-engine-llvm.so (install llvm-14-dev)" >&2
		exit 1
	}
	cp "$top/build/examples/tailor-engine-llvm.so" "$payload/bin/"
fi
cp "$steps" "$payload/steps.sh"
{
	echo '#!/bin/sh'
	echo '. /tailor/box-lib.sh'
	echo 'box_load_module || exit 1'
	env | grep -E '^(DEMO|ACCURACY)_[A-Za-z0-9_]*=' | sed "s/'/'\\\\''/g; s/=\(.*\)/='\1'/; s/^/export /" || true
	printf '/tailor/steps.sh /tailor/bin/tailor /tailor/bin/tailor-engine /tmp/work'
	[ $# -eq 0 ] || printf " '%s'" "${@//\'/\'\\\'\'}"
	echo ' || exit 1'
	for f in "${exports[@]}"; do
		echo "box_export '/tmp/work/$f'"
	done
} >"$out/in-box.sh"
"$top/tests/box/exec.sh" --box 6.1 --cc $llvm --timeout "${TAILOR_BOX_TIMEOUT:-900}" \
	--payload "$payload" --script "$out/in-box.sh" --out "$out/box"
for f in "${exports[@]}"; do
	cp "$out/box/$f" "$out/$f"
done

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-debug-kernel.sh - the patched debug kernel for the test box.
#
# Unpacks Debian's linux-source-6.1, applies patches/*.patch (failing if
# any does not apply), configures tinyconfig + tests/box/debug-kernel.config,
# checks that every requested option is set, and builds bzImage and the
# module build tree.  Output: build/kernel-debug/obj (a KDIR for tailor.ko)
# and build/kernel-debug/obj/arch/x86/boot/bzImage.  Rebuilds from scratch
# only when the patches or the config change; otherwise make is
# incremental.
#
# Usage: tests/box/build-debug-kernel.sh [--check-apply-only]
set -euo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -1)
[ -n "$tarball" ] || { echo "build-debug-kernel: no /usr/src/linux-source-6.1.tar.*; run scripts/setup.sh" >&2; exit 1; }
fragment=$top/tests/box/debug-kernel.config
out=$top/build/kernel-debug
src=$out/src
obj=$out/obj

stamp=$( (cat "$tarball.sha" 2>/dev/null || stat -c %s:%Y "$tarball"; cat "$top"/patches/*.patch "$fragment") | sha256sum | cut -c1-16)

unpack_and_patch() {
	local dir=$1 p
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -C "$dir" --strip-components=1 -xf "$tarball"
	for p in "$top"/patches/*.patch; do
		if ! patch -d "$dir" -p1 --batch --forward --quiet <"$p"; then
			echo "build-debug-kernel: $(basename "$p") does not apply to $(basename "$tarball")" >&2
			return 1
		fi
	done
}

if [ "${1:-}" = "--check-apply-only" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	unpack_and_patch "$tmp/src"
	echo "build-debug-kernel: all patches apply to $(basename "$tarball")"
	exit 0
fi

if [ "$(cat "$out/stamp" 2>/dev/null)" != "$stamp" ]; then
	echo "build-debug-kernel: unpacking $(basename "$tarball") and applying patches/"
	rm -rf "$obj"
	unpack_and_patch "$src"
	mkdir -p "$obj"
	make -s -C "$src" O="$obj" ARCH=x86_64 tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" >/dev/null
	make -s -C "$src" O="$obj" ARCH=x86_64 olddefconfig >/dev/null
	missing=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$fragment" | while read -r line; do
		grep -qxF "$line" "$obj/.config" || echo "$line"
	done)
	if [ -n "$missing" ]; then
		echo "build-debug-kernel: options that did not stick:" $missing >&2
		exit 1
	fi
	echo "$stamp" >"$out/stamp"
fi

echo "build-debug-kernel: building (from scratch: about 4.5 minutes on 2 cores)"
start=$(date +%s)
make -s -C "$src" O="$obj" ARCH=x86_64 -j"$(nproc)" bzImage modules >"$out/build.log" 2>&1 || {
	tail -30 "$out/build.log" >&2
	echo "build-debug-kernel: kernel build failed, see $out/build.log" >&2
	exit 1
}
echo "build-debug-kernel: $(make -s -C "$src" O="$obj" kernelrelease) built in $(( $(date +%s) - start ))s"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install, as root on Debian 12, every package that tailor's build, test box
# and tests need.  Idempotent: packages already present are left alone.
# Fails loudly, naming the package apt could not install.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: must run as root (apt-get install needs it)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive

base_pkgs=(
	build-essential bc bison flex libssl-dev libelf-dev kmod
	linux-headers-amd64 linux-image-amd64 linux-source-6.1 linux-perf
	libdw-dev libpfm4-dev zlib1g-dev libiberty-dev libbpf-dev bpftool
	golang-go python3
	qemu-system-x86 busybox-static cpio sparse
	python3-ply python3-git
	clang libclang-rt-14-dev llvm-14-dev
	nodejs llvm-runtime
	xz-utils zstd
	scdoc mandoc man-db bsdextrautils pkgconf
	dkms debhelper dh-dkms dpkg-dev fakeroot lintian blhc debootstrap
)

apt_updated=0
apt_update_once() {
	if [ "$apt_updated" -eq 0 ]; then
		apt-get update -q >/dev/null
		apt_updated=1
	fi
}

# Debian 12 ships the 6.12 kernel through bookworm-backports-style point
# releases; take the newest version that has both an image and headers.
newest_612() {
	local img hdr v
	img=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
	      sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12\)-amd64-unsigned .*/\1/p' | sort -V)
	hdr=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
	      sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12\)-amd64 .*/\1/p' | sort -V)
	for v in $(echo "$img" | sort -rV); do
		if echo "$hdr" | grep -qxF "$v"; then
			echo "$v"
			return 0
		fi
	done
	return 1
}

missing=()
for p in "${base_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

# An installed 6.12 image+headers pair is enough; otherwise install the newest.
have612=$(dpkg-query -W -f='${Package}\n' 'linux-headers-6.12.*-amd64' 2>/dev/null |
	  sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12\)-amd64$/\1/p' | while read -r v; do
		dpkg-query -W -f='${Status}' "linux-image-$v-amd64-unsigned" 2>/dev/null |
			grep -q 'install ok installed' && echo "$v"
	  done | head -1 || true)
if [ -z "$have612" ]; then
	apt_update_once
	v=$(newest_612) || { echo "setup.sh: no linux-image-6.12.*-amd64-unsigned with matching linux-headers-6.12.*-amd64 in the archive" >&2; exit 1; }
	missing+=("linux-image-$v-amd64-unsigned" "linux-headers-$v-amd64")
fi

if [ "${#missing[@]}" -gt 0 ]; then
	apt_update_once
	echo "setup.sh: installing ${missing[*]}"
	for p in "${missing[@]}"; do
		if ! apt-get install -y -q --no-install-recommends "$p" >/tmp/tailor-setup-apt.log 2>&1; then
			echo "setup.sh: FAILED to install package '$p' (apt log: /tmp/tailor-setup-apt.log)" >&2
			tail -5 /tmp/tailor-setup-apt.log >&2
			exit 1
		fi
	done
fi

# The kselftest headers and checkpatch come from the linux-source tarball.
src=/usr/src/linux-source-6.1
if [ ! -f "$src/tools/testing/selftests/kselftest_harness.h" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -1)
	[ -n "$tarball" ] || { echo "setup.sh: linux-source-6.1 tarball not found in /usr/src" >&2; exit 1; }
	echo "setup.sh: unpacking $tarball"
	tar -C /usr/src -xf "$tarball"
fi

# The readers tailor's exports are checked with: Chromium, and speedscope
# with its browser driver from npm, pinned (tests/export/browser/).
bash "$(dirname "$0")/../tests/export/browser/install.sh"

echo "setup.sh: all packages present"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-debs.sh - tailor's Debian packages (tailor, tailor-dkms, libtailor0,
# libtailor-dev), built from a clean copy of the tree and checked by lintian.
#
# The copy goes to build/deb/src: by default the working tree as git sees
# it (tracked files as they are now, with uncommitted changes, and untracked
# files that are not ignored, so build/ and kbuild outputs stay out); with
# --head, the last commit (git archive HEAD).  dpkg-buildpackage -b -us -uc
# builds there (its log in build/deb/build.log); the .deb, .buildinfo and
# .changes files land in build/deb/.  Where blhc is installed, it checks
# the log for compiler and linker calls without dpkg-buildflags' hardening
# flags.  lintian then checks the .changes, printing every tag down to info
# and pedantic, and fails the script on an error or warning it does not
# find overridden (debian/*.lintian-overrides).
#
# Needs dpkg-dev, debhelper, dh-dkms, lintian and debian/control's
# Build-Depends (scripts/setup.sh installs them); blhc is optional.
#
# Usage: scripts/build-debs.sh [--worktree|--head] [--no-lintian]
#   --worktree    build the working tree as git sees it (the default)
#   --head        build the last commit
#   --no-lintian  build only
set -euo pipefail
export LC_ALL=C.UTF-8

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
src=$out/src
from=worktree
lintian=1

while [ $# -gt 0 ]; do
	case $1 in
	--worktree) from="worktree" ;;
	--head) from="head" ;;
	--no-lintian) lintian=0 ;;
	-h | --help) sed -n '/^# Usage:/,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "build-debs.sh: unknown argument '$1' (--worktree, --head, --no-lintian)" >&2; exit 2 ;;
	esac
	shift
done

for tool in dpkg-buildpackage dpkg-parsechangelog dh dh_dkms; do
	command -v "$tool" >/dev/null || {
		echo "build-debs.sh: $tool missing: apt-get install dpkg-dev debhelper dh-dkms" >&2
		exit 1
	}
done
if [ "$lintian" -eq 1 ] && ! command -v lintian >/dev/null; then
	echo "build-debs.sh: lintian missing: apt-get install lintian (or --no-lintian)" >&2
	exit 1
fi

# A clean copy of the tree in $src.
rm -rf "$src"
mkdir -p "$src"
case $from in
head)
	git -C "$top" archive --format=tar HEAD | tar -x -C "$src"
	;;
worktree)
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		# Tracked and untracked-but-not-ignored files that exist now
		# (a tracked file deleted in the working tree stays out).
		git -C "$top" ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				if [ -e "$top/$f" ] || [ -L "$top/$f" ]; then
					printf '%s\0' "$f"
				fi
			done |
			tar -C "$top" --null --no-recursion -T - -cf - | tar -x -C "$src"
	else
		tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -x -C "$src"
	fi
	;;
esac
[ -f "$src/debian/control" ] || {
	echo "build-debs.sh: no debian/ in the $from copy (--head needs it committed)" >&2
	exit 1
}
# Only this build's packages in $out, for lintian and whoever installs them.
rm -f "$out"/*.deb "$out"/*.ddeb "$out"/*.buildinfo "$out"/*.changes "$out/build.log"

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
changes=$out/tailor_${version}_${arch}.changes
echo "build-debs.sh: building tailor $version ($from) in $src"

# dpkg-buildpackage writes to the parent directory, build/deb/.
(cd "$src" && dpkg-buildpackage -b -us -uc -Jauto) 2>&1 | tee "$out/build.log"
[ -f "$changes" ] || { echo "build-debs.sh: $changes was not written" >&2; exit 1; }

echo "build-debs.sh: packages in $out:"
(cd "$out" && ls -1 ./*.deb ./*.buildinfo ./*.changes)

# Every compile and link got CPPFLAGS, CFLAGS and LDFLAGS (debian/rules
# asks for hardening=+all: bindnow too; PIE is gcc's default here).
if command -v blhc >/dev/null; then
	echo "build-debs.sh: blhc --bindnow $out/build.log"
	blhc --bindnow "$out/build.log" || {
		echo "build-debs.sh: blhc found build commands without the hardening flags" >&2
		exit 1
	}
else
	echo "build-debs.sh: blhc not installed: the build log's flags are not checked"
fi

[ "$lintian" -eq 1 ] || exit 0
echo "build-debs.sh: lintian $changes"
rc=0
lintian --fail-on error,warning --display-info --pedantic --show-overrides \
	"$changes" || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "build-debs.sh: lintian failed (exit $rc)" >&2
	exit "$rc"
fi
echo "build-debs.sh: lintian passed"

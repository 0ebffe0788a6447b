#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make_install_test.sh: 'make install' with DESTDIR and PREFIX puts every
# file where the man pages, pkg-config and the linker expect it, and what
# it installs works from there:
#   - the file list under PREFIX=/usr/local, exactly;
#   - libtailor.so's soname is libtailor.so.0, it exports only tailor_*
#     and needs nothing but libc;
#   - libtailor.pc, read through a sysroot, builds a program against the
#     staged headers and library, shared and static, and both run and
#     write their dictionary, which tailor reads;
#   - the installed completion script is what 'tailor completion bash'
#     prints; the installed man pages render;
#   - a second make install writes nothing into build/ (so 'make tools &&
#     sudo make install' leaves nothing of root's there);
#   - LIBDIR, MANDIR and a PREFIX elsewhere are honoured, the .pc too.
#
# Usage: tests/packaging/make_install_test.sh    Prints TAP and "# Totals:".
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/make-install-test
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
rm -rf "$out"
mkdir -p "$out"

stage=$out/stage
if make -s -C "$top" install DESTDIR="$stage" PREFIX=/usr/local >"$out/install.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr/local"
else
	not_ok "make install DESTDIR=... PREFIX=/usr/local" "$out/install.log"
fi

version=$(make -s --no-print-directory -C "$top" print-version)
real=$(make -s --no-print-directory -C "$top" print-libtailor)	# libtailor.so.0.VERSION
(cd "$stage" && find . \( -type f -o -type l \) | sort) >"$out/files"
{
	echo ./usr/local/bin/tailor
	for h in "$top"/userspace/libtailor/include/tailor/*.h; do
		echo "./usr/local/include/tailor/$(basename "$h")"
	done
	echo ./usr/local/include/tailor/uapi/tailor.h
	echo ./usr/local/lib/libtailor.a
	echo ./usr/local/lib/libtailor.so
	echo ./usr/local/lib/libtailor.so.0
	echo "./usr/local/lib/$real"
	echo ./usr/local/lib/pkgconfig/libtailor.pc
	echo ./usr/local/share/bash-completion/completions/tailor
	for p in "$top"/docs/man/*.scd; do
		p=$(basename "$p" .scd)
		echo "./usr/local/share/man/man${p##*.}/$p"
	done
} | sort >"$out/files.want"
if diff -u "$out/files.want" "$out/files" >"$out/files.diff"; then
	ok "the installed files, exactly ($(wc -l <"$out/files") of them)"
else
	not_ok "the installed files" "$out/files.diff"
fi

lib=$stage/usr/local/lib
soname=$(readelf -d "$lib/$real" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
needed=$(readelf -d "$lib/$real" 2>/dev/null |
	sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if [ "$soname" = libtailor.so.0 ]; then ok "soname libtailor.so.0"; else not_ok "soname: '$soname'"; fi
if [ "$needed" = "libc.so.6 " ]; then
	ok "libtailor.so needs libc only"
else
	not_ok "libtailor.so needs: $needed"
fi
foreign=$(nm -D --defined-only "$lib/$real" | awk '{print $3}' | grep -v '^tailor_')
if [ -z "$foreign" ]; then
	ok "libtailor.so exports tailor_* only"
else
	not_ok "libtailor.so exports others: $(echo "$foreign" | tr '\n' ' ')"
fi

# pkg-config as a cross build or a package build sees a staged tree.
pc() {
	PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_LIBDIR=$lib/pkgconfig pkg-config "$@" libtailor
}
# pkg-config ends its lists with a space.
cflags=$(pc --cflags) libs=$(pc --libs) tag_cflags=$(pc --variable=tag_cflags)
cflags=${cflags% } libs=${libs% }
if [ "$(pc --modversion)" = "$version" ] && [ "$cflags" = "-I$stage/usr/local/include" ] &&
	[ "$libs" = "-L$lib -ltailor" ] && [ "$tag_cflags" = -ffixed-r15 ]; then
	ok "libtailor.pc: version $version, -I, -L -ltailor, tag_cflags -ffixed-r15"
else
	not_ok "libtailor.pc: '$(pc --modversion)' '$cflags' '$libs' '$tag_cflags'"
fi

user=$top/tests/packaging/libtailor_user.c
# shellcheck disable=SC2086 # pkg-config's words
for how in shared static; do
	if [ $how = shared ]; then
		cc -std=gnu11 -O2 -Wall -Werror $tag_cflags $cflags -o "$out/user-$how" "$user" $libs \
			>"$out/cc-$how.log" 2>&1
	else
		cc -std=gnu11 -O2 -Wall -Werror $tag_cflags $cflags -o "$out/user-$how" "$user" \
			"$lib/libtailor.a" >"$out/cc-$how.log" 2>&1
	fi || { not_ok "a libtailor program builds ($how)" "$out/cc-$how.log"; continue; }
	linked=$(readelf -d "$out/user-$how" | grep -c 'NEEDED.*libtailor')
	want=0
	[ "$how" = shared ] && want=1
	if [ "$linked" -ne "$want" ]; then
		not_ok "a libtailor program links libtailor $how (NEEDED: $linked)"
		continue
	fi
	if LD_LIBRARY_PATH=$lib "$out/user-$how" "$out/$how.dict" >"$out/run-$how.log" 2>&1 &&
		grep -q 'q1' "$out/$how.dict" && grep -q 'spin' "$out/$how.dict"; then
		ok "a libtailor program, $how: runs and writes its dictionary"
	else
		not_ok "a libtailor program, $how: runs and writes its dictionary" "$out/run-$how.log"
	fi
done

if "$stage/usr/local/bin/tailor" completion bash | cmp -s - "$stage/usr/local/share/bash-completion/completions/tailor"; then
	ok "the installed completion is tailor's"
else
	not_ok "the installed completion is tailor's"
fi
MANWIDTH=80 man -l "$stage/usr/local/share/man/man1/tailor-record.1" 2>"$out/man.err" |
	col -b >"$out/man.txt"
if grep -q '^NAME' "$out/man.txt" && grep -q -- '--tag-word' "$out/man.txt"; then
	ok "an installed man page renders (tailor-record.1)"
else
	not_ok "an installed man page renders" "$out/man.err"
fi

# 'make tools && sudo make install': the second step must leave nothing
# of root's in build/.  File times tick with the kernel's coarse clock (a
# jiffy): the pause puts what comes after the marker ticks later, and
# what came before it (the suite before this one) earlier.
touch "$out/marker"
sleep 0.1
if make -s -C "$top" install DESTDIR="$out/stage-again" PREFIX=/usr/local >"$out/install-again.log" 2>&1; then
	written=$(find "$top/build" -mindepth 1 -newer "$out/marker" -not -path "$out/*" -not -path "$out")
	if [ -z "$written" ]; then
		ok "make install after make tools writes nothing into build/"
	else
		not_ok "make install after make tools wrote: $(echo "$written" | head -3 | tr '\n' ' ')"
	fi
else
	not_ok "make install, a second time" "$out/install-again.log"
fi

stage2=$out/stage2
if make -s -C "$top" install DESTDIR="$stage2" PREFIX=/opt/tailor LIBDIR=/opt/tailor/lib64 \
	MANDIR=/opt/tailor/man >"$out/install2.log" 2>&1 &&
	[ -x "$stage2/opt/tailor/bin/tailor" ] && [ -f "$stage2/opt/tailor/lib64/libtailor.a" ] &&
	[ -f "$stage2/opt/tailor/man/man5/tailor-recording.5" ] &&
	grep -qx 'libdir=/opt/tailor/lib64' "$stage2/opt/tailor/lib64/pkgconfig/libtailor.pc" &&
	grep -qx 'includedir=/opt/tailor/include' "$stage2/opt/tailor/lib64/pkgconfig/libtailor.pc"; then
	ok "PREFIX, LIBDIR and MANDIR are honoured, in libtailor.pc too"
else
	not_ok "PREFIX, LIBDIR and MANDIR are honoured" "$out/install2.log"
fi

tap_totals

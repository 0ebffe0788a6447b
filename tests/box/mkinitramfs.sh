#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mkinitramfs.sh - build the initramfs of the tailor test box.
#
# The test box boots a stock Debian kernel under QEMU (see boot.sh) with no
# disk at all: everything a test needs lives in this initramfs.  It holds a
# static busybox with its applet links, a minimal /etc (root, nobody and the
# unprivileged tailoruser/tailor 4242:4242 used by the non-root tests), the
# payload directories merged under /tailor/ (later ones win on clashes)
# together with the shared libraries of every ELF program in them, and an
# /init that mounts proc, sysfs, devtmpfs, a tmpfs /tmp, debugfs and
# tracefs, runs /tailor/run-in-box.sh (as root, in /tailor, stdin from
# /dev/null, output to the console), prints TAILOR-BOX-START and
# TAILOR-BOX-RC=<status> on the console for boot.sh to check, and powers
# the box off.
#
# Usage: mkinitramfs.sh OUT_CPIO PAYLOAD_DIR [PAYLOAD_DIR...]
#
# Environment:
#   TAILOR_BOX_PERF=1        also install perf (the real ELF binary, not
#                            Debian's wrapper script) as /usr/bin/perf
#   TAILOR_BOX_PERF_BIN      perf binary to use instead of the one found
#   TAILOR_BOX_CC=1          also install the host's gcc (as /usr/bin/cc and
#                            /usr/bin/gcc) with cc1, collect2, the LTO
#                            plugin, as and ld: just enough to build
#                            freestanding C into a shared object,
#                              cc -std=gnu11 -O2 -g -fPIC -shared -nostdlib
#                                 -ffixed-r15 -o q.so q.c
#                            with no headers, libc, crt files or libgcc.
#                            Costs 15.5 MiB of gzipped initramfs
#                            (+42 MiB unpacked; cc1 alone is 32 MiB),
#                            about 0.8 s more boot under TCG (4.8 -> 5.6 s
#                            to TAILOR-BOX-START, 6.1 kernel) and 1.6 s
#                            more here.  A compile of a small file in the
#                            box takes about a second.
#   TAILOR_BOX_CLANG=1       also install clang-14 (at its real path, with
#                            /usr/bin/clang-14 a link to it), which makes
#                            bitcode for tailor-engine --backend llvm; its
#                            libclang-cpp and libLLVM come with it, and the
#                            engine's plugin finds the same libLLVM.  Big:
#                            about 170 MiB more unpacked.  lli-14 (LLVM's
#                            interpreter and JIT, for tests/jit/) comes
#                            too, on the same libLLVM.
#   TAILOR_BOX_NODE=1        also install node (Debian's nodejs, a JIT with
#                            jitdump and perf maps): about 100 MiB more
#                            unpacked.
#   TAILOR_BOX_BUSYBOX       busybox binary (default: busybox-static's)
#   TAILOR_BOX_COMPRESS      gzip (default) or zstd; Debian kernels take both
set -euo pipefail
export LC_ALL=C

prog=${0##*/}

die() {
	echo "$prog: $*" >&2
	exit 1
}

usage() {
	echo "usage: $prog OUT_CPIO PAYLOAD_DIR [PAYLOAD_DIR...]" >&2
	exit 2
}

[ $# -ge 2 ] || usage
out=$1
shift
for d in "$@"; do
	[ -d "$d" ] || die "payload '$d' is not a directory"
done

for t in cpio ldd od; do
	command -v "$t" >/dev/null || die "'$t' not found"
done

compress=${TAILOR_BOX_COMPRESS:-gzip}
case $compress in
gzip)	compress_cmd=(gzip -6 -n -c) ;;
zstd)	compress_cmd=(zstd -q -c -9 -T0) ;;
*)	die "TAILOR_BOX_COMPRESS must be gzip or zstd, not '$compress'" ;;
esac
command -v "${compress_cmd[0]}" >/dev/null || die "'${compress_cmd[0]}' not found"

work=$(mktemp -d "${TMPDIR:-/tmp}/tailor-initramfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root

# Succeeds if $1 is an ELF executable or shared object (e_type ET_EXEC or
# ET_DYN); relocatable objects such as kernel modules do not qualify.
is_elf_program() {
	local hdr

	[ -f "$1" ] && [ -r "$1" ] || return 1
	hdr=$(od -A n -t x1 -N 18 -- "$1" 2>/dev/null | tr -d ' \n')
	case $hdr in
	7f454c46????????????????????????0200 | 7f454c46????????????????????????0300)
		return 0 ;;
	esac
	return 1
}

# install_file SRC DST: copy SRC (following symlinks) to DST in the image.
install_file() {
	mkdir -p -- "$root$(dirname -- "$2")"
	cp -L --preserve=mode -- "$1" "$root$2"
}

# Copy the shared libraries (and dynamic loader) that ELF program $1 needs
# to the same paths in the image.  Static programs need nothing.
declare -A have_lib=()
install_libs() {
	local elf=$1 name=${1#"$root"} deps lib

	if ! deps=$(ldd -- "$elf" 2>&1); then
		case $deps in
		*"not a dynamic executable"*)
			return 0 ;;
		esac
		die "ldd failed on '$name': $deps"
	fi
	case $deps in
	*"statically linked"*)	# static-pie
		return 0 ;;
	esac
	if grep -q 'not found' <<<"$deps"; then
		die "'$name' needs libraries missing on this host:
$(grep 'not found' <<<"$deps")"
	fi
	for lib in $(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' \
		     <<<"$deps") /lib64/ld-linux-x86-64.so.2; do
		case $lib in
		"$root"/*)	continue ;;	# $ORIGIN library in the payload
		esac
		[ -z "${have_lib[$lib]:-}" ] || continue
		have_lib[$lib]=1
		[ -e "$lib" ] || die "'$name' needs '$lib', which does not exist"
		install_file "$lib" "$lib"
	done
}

# Debian's linux-perf either installs the real binary as /usr/bin/perf or
# as /usr/bin/perf_<version> behind a wrapper script at /usr/bin/perf.
find_perf() {
	local p

	if [ -n "${TAILOR_BOX_PERF_BIN:-}" ]; then
		is_elf_program "$TAILOR_BOX_PERF_BIN" ||
			die "TAILOR_BOX_PERF_BIN='$TAILOR_BOX_PERF_BIN' is not an ELF program"
		echo "$TAILOR_BOX_PERF_BIN"
		return 0
	fi
	for p in /usr/bin/perf $(compgen -G "/usr/bin/perf_[0-9]*" | sort -rV); do
		if is_elf_program "$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

find_busybox() {
	local p

	if [ -n "${TAILOR_BOX_BUSYBOX:-}" ]; then
		is_elf_program "$TAILOR_BOX_BUSYBOX" ||
			die "TAILOR_BOX_BUSYBOX='$TAILOR_BOX_BUSYBOX' is not an ELF program"
		echo "$TAILOR_BOX_BUSYBOX"
		return 0
	fi
	for p in /bin/busybox /usr/bin/busybox "$(command -v busybox || true)"; do
		if is_elf_program "$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# resolve_tool NAME: the real file behind the host's NAME on PATH.
resolve_tool() {
	local p

	p=$(command -v "$1") || die "TAILOR_BOX_CC=1 but '$1' is not on PATH (install gcc and binutils)"
	p=$(readlink -f -- "$p")
	is_elf_program "$p" || die "TAILOR_BOX_CC=1 but '$1' resolves to '$p', not an ELF program"
	echo "$p"
}

# The C compiler for code generated at run time (TAILOR_BOX_CC=1).  cc1,
# collect2 and the LTO plugin go to the paths the host's driver reports, as
# the driver in the box looks for them there; as and ld it finds on PATH
# (collect2 too, for ld).  With -nostdlib there are no crt files or libgcc
# to link, and without #include cc1 needs no headers: it looks for the
# implicit stdc-predef.h and skips it quietly when absent, but only if
# there is some include directory to look in, or it stops with "no include
# path in which to search for stdc-predef.h", so gcc's own include
# directory is there, empty.  ld has its linker scripts built in.  The
# LTO plugin is not needed for non-LTO objects, but the driver passes it to
# ld whenever it finds it, so with it the box links as the host does;
# lto-wrapper is only run for LTO objects and is left out.
install_cc() {
	local gcc tool path name

	gcc=$(resolve_tool gcc)
	install_file "$gcc" /usr/bin/gcc
	ln -sfn gcc "$root/usr/bin/cc"
	install_libs "$gcc"
	for tool in cc1 collect2; do
		path=$("$gcc" -print-prog-name="$tool")
		case $path in
		/*)	;;
		*)	die "TAILOR_BOX_CC=1 but '$gcc' has no $tool (install gcc)" ;;
		esac
		[ -x "$path" ] || die "TAILOR_BOX_CC=1 but '$path' is not executable"
		install_file "$path" "$path"
		install_libs "$path"
	done
	# -print-prog-name finds only programs; the plugin is a file.
	path=$("$gcc" -print-file-name=liblto_plugin.so)
	case $path in
	/*)	;;
	*)	die "TAILOR_BOX_CC=1 but '$gcc' has no liblto_plugin.so (install gcc)" ;;
	esac
	install_file "$path" "$path"
	install_libs "$path"
	path=$("$gcc" -print-file-name=include)
	case $path in
	/*)	mkdir -p -- "$root$path" ;;
	*)	die "TAILOR_BOX_CC=1 but '$gcc' has no include directory" ;;
	esac

	# On Debian, as -> x86_64-linux-gnu-as and ld -> x86_64-linux-gnu-ld
	# -> x86_64-linux-gnu-ld.bfd: one copy under its own name, and links.
	for tool in as ld; do
		path=$(resolve_tool "$tool")
		install_file "$path" "/usr/bin/${path##*/}"
		install_libs "$path"
		for name in "$tool" "x86_64-linux-gnu-$tool"; do
			[ "$name" = "${path##*/}" ] ||
				ln -sfn "${path##*/}" "$root/usr/bin/$name"
		done
	done
}

# Skeleton, laid out merged-/usr like Debian 12.
mkdir -p "$root"/{dev,proc,sys,tmp,run,root,etc,tailor,var/tmp}
mkdir -p "$root"/usr/{bin,sbin,lib,lib64}
for d in bin sbin lib lib64; do
	ln -s "usr/$d" "$root/$d"
done
chmod 1777 "$root/tmp" "$root/var/tmp"
chmod 0700 "$root/root"
# The kernel's built-in initramfs already has /dev/console; these are only
# a fallback for /init and need root, so failures are fine.
mknod -m 0600 "$root/dev/console" c 5 1 2>/dev/null || true
mknod -m 0666 "$root/dev/null" c 1 3 2>/dev/null || true

busybox=$(find_busybox) || die "busybox not found (install busybox-static)"
install_file "$busybox" /bin/busybox
install_libs "$busybox"
"$busybox" --list-full | while read -r applet; do
	[ -e "$root/$applet" ] || [ -L "$root/$applet" ] ||
		ln -s /bin/busybox "$root/$applet"
done
[ -e "$root/bin/sh" ] || die "'$busybox' has no sh applet"

cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
tailoruser:x:4242:4242:tailor test user:/tmp:/bin/sh
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
tailor:x:4242:tailoruser
nogroup:x:65534:
EOF
cat >"$root/etc/shadow" <<'EOF'
root:*:19000:0:99999:7:::
nobody:*:19000:0:99999:7:::
tailoruser:*:19000:0:99999:7:::
EOF
chmod 0640 "$root/etc/shadow"
echo tailor-box >"$root/etc/hostname"

# Payload, merged under /tailor/, then the libraries of its ELF programs.
for d in "$@"; do
	cp -a -- "$d/." "$root/tailor/"
done
while IFS= read -r -d '' f; do
	if is_elf_program "$f"; then
		install_libs "$f"
	fi
done < <(find "$root/tailor" -type f -print0)
[ -f "$root/tailor/run-in-box.sh" ] ||
	echo "$prog: warning: no run-in-box.sh in the payload" >&2

if [ "${TAILOR_BOX_PERF:-0}" = 1 ]; then
	if perf=$(find_perf); then
		install_file "$perf" /usr/bin/perf
		install_libs "$perf"
	else
		echo "$prog: warning: TAILOR_BOX_PERF=1 but no perf binary found" >&2
	fi
fi

if [ "${TAILOR_BOX_CC:-0}" = 1 ]; then
	install_cc
fi

if [ "${TAILOR_BOX_CLANG:-0}" = 1 ]; then
	clang=$(command -v clang-14) || die "TAILOR_BOX_CLANG=1 but no clang-14 on PATH (install clang-14)"
	clang=$(readlink -f -- "$clang")
	install_file "$clang" "$clang"
	install_libs "$clang"
	ln -sfn "$clang" "$root/usr/bin/clang-14"
	lli=$(command -v lli-14) || die "TAILOR_BOX_CLANG=1 but no lli-14 on PATH (install llvm-14)"
	lli=$(readlink -f -- "$lli")
	install_file "$lli" "$lli"
	install_libs "$lli"
	ln -sfn "$lli" "$root/usr/bin/lli-14"
fi

if [ "${TAILOR_BOX_NODE:-0}" = 1 ]; then
	node=$(command -v node) || die "TAILOR_BOX_NODE=1 but no node on PATH (install nodejs)"
	node=$(readlink -f -- "$node")
	install_file "$node" /usr/bin/node
	install_libs "$node"
fi

# Keeps the kernel from live-patching __schedule() and try_to_wake_up()
# while tests run (see hold-static-keys.c for why).
gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$work/hold-static-keys" \
	"$(dirname "$0")/hold-static-keys.c" || die "cannot build hold-static-keys"
install_file "$work/hold-static-keys" /usr/sbin/hold-static-keys
install_libs "$work/hold-static-keys"

# Turns QEMU's one-instruction blocks on and off from a test, through
# boot.sh (see box-singlestep.c for why).
gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$work/box-singlestep" \
	"$(dirname "$0")/box-singlestep.c" || die "cannot build box-singlestep"
install_file "$work/box-singlestep" /usr/sbin/box-singlestep

# The box's measure of its own progress (see box-pulse.c).
gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$work/box-pulse" \
	"$(dirname "$0")/box-pulse.c" || die "cannot build box-pulse"
install_file "$work/box-pulse" /usr/sbin/box-pulse

cat >"$root/init" <<'EOF'
#!/bin/sh
# /init of the tailor test box, generated by tests/box/mkinitramfs.sh.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb

mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid devtmpfs /dev
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620 devpts /dev/pts 2>/dev/null
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /dev/shm 2>/dev/null
[ -c /dev/console ] && exec </dev/console >/dev/console 2>&1
hostname -F /etc/hostname

# Returns once the keys are held and every CPU is back online.
held=0
hold-static-keys || held=$?
echo TAILOR-BOX-START
if [ -f /tailor/run-in-box.sh ]; then
	cd /tailor
	if [ -x run-in-box.sh ]; then
		./run-in-box.sh </dev/null
	else
		sh ./run-in-box.sh </dev/null
	fi
	rc=$?
	cd /
else
	echo "tailor-box: ERROR: /tailor/run-in-box.sh is missing from the payload"
	rc=127
fi
if [ "$held" -ne 0 ]; then
	echo "tailor-box: ERROR: hold-static-keys failed (status $held), see its messages above"
	[ "$rc" -ne 0 ] || rc=1
fi
# Own line, in case a kernel message left the cursor mid-line.
printf '\nTAILOR-BOX-RC=%d\n' "$rc"

sync
# QEMU runs with -no-reboot, so a reboot ends it; unlike poweroff this
# needs no ACPI, which the tiny debug kernel lacks.
reboot -f
echo b >/proc/sysrq-trigger
while :; do
	sleep 1
done
EOF
chmod 0755 "$root/init"

(cd "$root" && find . -mindepth 1 -print0 | sort -z |
	cpio --null -o -H newc -R 0:0 --reproducible --quiet) |
	"${compress_cmd[@]}" >"$work/initramfs"
mkdir -p -- "$(dirname -- "$out")"
mv -f -- "$work/initramfs" "$out"

echo "$prog: $out: $(du -k -- "$out" | cut -f1) KiB ($compress," \
	"$(du -sk "$root" | cut -f1) KiB unpacked)" >&2

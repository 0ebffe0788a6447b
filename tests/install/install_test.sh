#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# install_test.sh - tailor's Debian packages, installed and used as a new
# user would, on a fresh Debian 12 and in the test box.
#
# The other suites run tailor from the build tree, with tailor.ko built by
# the Makefile and put in place by hand.  A user has none of that: only
# the packages (scripts/build-debs.sh), apt to resolve what they need,
# DKMS to build the module for the kernel, and the installed paths.  So:
#
#   root      debootstrap a minimal Debian 12 (bookworm, with its -updates
#             and -security suites, where Debian's kernel headers come
#             from) into build/install-test/root.
#   install   in a chroot: apt-get install the headers of the box's kernel
#             (the host's newest 6.1, which the box boots), then
#             apt-get install the .debs themselves: DKMS must build and
#             install tailor.ko for that kernel from the package's
#             postinst alone.
#   checks    in the chroot: dkms status and the module's vermagic,
#             tailor --version from /usr/bin, every man page found and
#             rendered, the bash completion, pkg-config, and a first
#             program built against the installed libtailor, shared and
#             static.
#   initramfs the root, minus what only building needs (compilers,
#             headers, apt's lists, docs), as the box's initramfs, with an
#             /init of the root's own bash that runs in-box.sh.
#   box       boot the host's /boot/vmlinuz of that release with it
#             (tests/box/boot.sh): modprobe tailor finds the DKMS module,
#             tailor record, dump and report the first program, rmmod.
#             The box's results come back as this script's "box:" lines.
#
# The root stays in build/install-test/root for inspection; debootstrap's
# and apt's downloads are kept in build/install-test/cache for the next
# run on the same machine.
#
# Usage: tests/install/install_test.sh [DEB_DIR]
#   DEB_DIR   the directory of the .debs (default build/deb): one each of
#             tailor, tailor-dkms, libtailor0 and libtailor-dev
#
# Needs root (debootstrap, chroot, mounts, /boot), debootstrap, cpio,
# QEMU, Debian's 6.1 kernel image and headers on the host
# (scripts/setup.sh) and the network (deb.debian.org).  Every mount it
# makes is undone on exit, whatever happened.
#
# Prints TAP, progress and timings as "# " lines, and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd -P)
here=$top/tests/install
out=$top/build/install-test
root=$out/root
cache=$out/cache
mirror=http://deb.debian.org/debian
security_mirror=http://deb.debian.org/debian-security
# Where the first program is built, in the root and so in the box.
prog_dir=/root/install-test
TAP_EXCERPT="tail"
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# shellcheck source=tests/box/host-lib.sh
. "$top/tests/box/host-lib.sh"

case ${1:-} in
-h | --help)
	sed -n '/^# Usage:/,/^#   DEB_DIR/{s/^# \{0,1\}//p}' "$0"
	exit 0 ;;
esac
debs=$(realpath -m -- "${1:-$top/build/deb}")

# ---- timing -------------------------------------------------------------

timings=()
phase_t0=0

# phase NAME WHAT: a long phase begins; says so, and starts its clock.
phase() {
	phase_name=$1
	phase_t0=${EPOCHREALTIME/./}
	echo "# $(date +%T) $1: $2 ..."
}

# phase_done: the phase's time, printed and kept for the summary.
phase_done() {
	local us=$((${EPOCHREALTIME/./} - phase_t0))
	local s
	s=$(printf '%d.%d' $((us / 1000000)) $((us % 1000000 / 100000)))
	timings+=("$phase_name ${s}s")
	echo "# $(date +%T) $phase_name: ${s}s"
}

# finish: the timings and the totals; the exit status says whether all passed.
finish() {
	[ ${#timings[@]} -eq 0 ] || echo "# timings: $(printf '%s, ' "${timings[@]}" | sed 's/, $//')"
	tap_totals
	exit
}

# ---- mounts -------------------------------------------------------------

# mounts_under DIR: the mount points at or below DIR, deepest first.
# (/proc/self/mounts writes a space as \040; DIR has none, see below.)
mounts_under() {
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts |
		sort -r
}

# unmount_root: nothing left mounted in the root.  A lazy unmount is the
# last resort for a mount still busy (a process of ours still in it).
unmount_root() {
	local m

	for m in $(mounts_under "$root"); do
		umount "$m" 2>/dev/null || umount -l "$m" ||
			echo "# cannot unmount $m" >&4
	done
	[ -z "$(mounts_under "$root")" ]
}
# The script's own stdout and stderr, for the traps: a signal's trap runs
# once the command in the foreground is done, inside its redirections.
exec 3>&1 4>&2
trap unmount_root EXIT
trap 'echo "# interrupted" >&3; exit 130' INT TERM HUP

# mount_root: what apt, DKMS and the compilers need in the chroot; apt's
# downloads go to the cache, out of the root.
mount_root() {
	mkdir -p "$cache/apt/partial" &&
	mount -t proc proc "$root/proc" &&
	mount -t sysfs sysfs "$root/sys" &&
	mount --bind /dev "$root/dev" &&
	mount --bind "$cache/apt" "$root/var/cache/apt/archives"
}

# in_root CMD...: CMD in the chroot, in a clean environment, as root.
in_root() {
	chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

# ---- preconditions ------------------------------------------------------

# need_packages: the four .debs, one each; sets deb_files and version
# (the upstream version: 0.6 of 0.6-1), or why not.
need_packages() {
	local p
	local -a found

	deb_files=()
	for p in tailor tailor-dkms libtailor0 libtailor-dev; do
		mapfile -t found < <(compgen -G "$debs/${p}_*.deb")
		if [ ${#found[@]} -ne 1 ]; then
			why="${#found[@]} files ${p}_*.deb in $debs (scripts/build-debs.sh makes them)"
			return 1
		fi
		deb_files+=("${found[0]}")
	done
	version=$(dpkg-deb -f "${deb_files[0]}" Version) || {
		why="dpkg-deb cannot read ${deb_files[0]}"
		return 1
	}
	version=${version%-*}
	version=${version#*:}
}

preconditions() {
	local t why=

	if [ "$(id -u)" -ne 0 ]; then
		not_ok "install_test.sh must run as root: debootstrap, chroot, mounts, /boot/vmlinuz-*"
		finish
	fi
	# mounts_under and the rm -rf of an old root rely on a plain path.
	if [[ $root =~ [^A-Za-z0-9_./+-] ]]; then
		not_ok "the root's path '$root' has characters this script does not handle"
		finish
	fi
	for t in debootstrap chroot cpio gzip dpkg-deb qemu-system-x86_64; do
		if ! command -v "$t" >/dev/null; then
			not_ok "'$t' is missing here: run scripts/setup.sh"
			finish
		fi
	done
	if ! release=$(find_release 6.1) || [ ! -r "/boot/vmlinuz-$release" ]; then
		not_ok "no Debian 6.1 kernel with headers on this host: run scripts/setup.sh"
		finish
	fi
	if ! need_packages; then
		not_ok "the packages: $why"
		finish
	fi
	echo "# packages (version $version): ${deb_files[*]##*/}"
	echo "# box kernel: $release"
}

# ---- root ---------------------------------------------------------------

# make_root: a fresh minimal Debian 12 in $root, with the suites a Debian
# 12 system has, where the kernel headers of the current point release
# and security updates are.
make_root() {
	if ! unmount_root; then
		echo "mounts left in $root by an earlier run could not be undone"
		return 1
	fi
	# --one-file-system: even so, never into a mount.
	rm -rf --one-file-system "$root" || return 1
	mkdir -p "$out" "$cache/debootstrap" || return 1
	debootstrap --variant=minbase --cache-dir="$cache/debootstrap" \
		bookworm "$root" "$mirror" >"$out/debootstrap.log" 2>&1 || {
		tail -n 5 "$out/debootstrap.log"
		return 1
	}
	cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security_mirror bookworm-security main
EOF
}

# ---- install ------------------------------------------------------------

# apt_install LOG ARGS...: apt-get install -y ARGS in the root.
apt_install() {
	local log=$1
	shift
	in_root apt-get install -y -q "$@" >"$log" 2>&1
}

# newly_installed LOG: how many packages apt-get said it installed.
newly_installed() {
	sed -n 's/.* upgraded, \([0-9]*\) newly installed.*/\1/p' "$1" | tail -n 1
}

install_packages() {
	local names=() f

	if in_root apt-get update -q >"$out/apt-update.log" 2>&1; then
		ok "apt-get update in the fresh root (bookworm, -updates, -security)"
	else
		not_ok "apt-get update in the root" "$out/apt-update.log"
		return 1
	fi
	# The headers, as a user of this kernel installs them, and the tools
	# of the checks below (man-db first, so that its trigger indexes the
	# pages the packages bring).
	if apt_install "$out/apt-headers.log" "linux-headers-$release" man-db pkg-config; then
		ok "apt-get install linux-headers-$release man-db pkg-config ($(newly_installed "$out/apt-headers.log") packages)"
	else
		not_ok "apt-get install linux-headers-$release" "$out/apt-headers.log"
		return 1
	fi
	rm -rf "$root/debs"
	mkdir -p "$root/debs"
	for f in "${deb_files[@]}"; do
		cp "$f" "$root/debs/" && names+=("/debs/${f##*/}")
	done
	# DKMS builds the module here, in tailor-dkms's postinst: in a chroot
	# uname -r is the host's kernel, so DKMS goes by /lib/modules, where
	# the headers package made $release's directory.
	if apt_install "$out/apt-debs.log" "${names[@]}"; then
		ok "apt-get install the 4 packages ($(newly_installed "$out/apt-debs.log") packages with their dependencies)"
	else
		not_ok "apt-get install ${names[*]}" "$out/apt-debs.log"
		show_dkms_log
		return 1
	fi
	# What tailor-dkms's postinst said: DKMS, building tailor.ko.
	awk '/^Setting up tailor-dkms / { on = 1; next }
	     on && /^(Setting up|Processing triggers) / { exit }
	     on && NF' "$out/apt-debs.log" | sed 's/^/#   postinst: /'
}

# show_dkms_log: the end of DKMS's build log, if the build failed.
show_dkms_log() {
	local log=$root/var/lib/dkms/tailor/$version/build/make.log

	[ -f "$log" ] || return 0
	echo "#   $log:"
	tail -n 15 "$log" | sed 's/^/#   /'
}

# ---- checks in the root -------------------------------------------------

check_dkms() {
	local status ko=/lib/modules/$release/updates/dkms/tailor.ko magic

	status=$(in_root dkms status -m tailor -v "$version" -k "$release" 2>&1)
	if grep -q "^tailor/$version, $release, x86_64: installed" <<<"$status"; then
		ok "dkms status: $status"
	else
		echo "# dkms status (all): $(in_root dkms status 2>&1 | tr '\n' ';')"
		not_ok "dkms status -m tailor -v $version -k $release: '$status'"
		show_dkms_log
	fi
	magic=$(in_root modinfo -F vermagic "$ko" 2>&1)
	if [ -f "$root$ko" ] && [[ $magic == "$release "* ]]; then
		ok "$ko: vermagic $magic"
	else
		echo "# under /lib/modules/$release: $(find "$root/lib/modules/$release" -name 'tailor*' 2>&1 | tr '\n' ' ')"
		not_ok "$ko with vermagic $release: '$magic'"
	fi
}

check_command() {
	local path v

	path=$(in_root sh -c 'command -v tailor')
	v=$(in_root tailor --version 2>&1)
	if [ "$path" = /usr/bin/tailor ] && [[ $v == "tailor $version "* ]]; then
		ok "tailor --version from $path: $v"
	else
		not_ok "tailor on PATH '$path', --version: '$v' (package $version)"
	fi
}

# check_man SECTION PAGE: found by man, rendered with its NAME line and
# no message from groff, and its NAME line is one whatis can index.
check_man() {
	local sec=$1 page=$2 path name what

	if ! path=$(in_root man -w "$sec" "$page" 2>&1); then
		not_ok "man -w $sec $page: $path"
		return
	fi
	in_root MANWIDTH=80 man "$sec" "$page" >"$out/man-$page.txt" 2>"$out/man-$page.err"
	name=$(awk '/^NAME/ { getline; sub(/^ +/, ""); print; exit }' "$out/man-$page.txt")
	what=$(in_root lexgrog "$path" 2>&1)
	if [[ $name == "$page"[\ ,]* ]] && [[ $name == *" - "* ]] &&
	   [ ! -s "$out/man-$page.err" ] && [[ $what == *"$page"* ]]; then
		ok "man $sec $page: $path renders; NAME: $name"
	else
		cat "$out/man-$page.err" >>"$out/man-$page.txt"
		echo "lexgrog: $what" >>"$out/man-$page.txt"
		not_ok "man $sec $page ($path): NAME '$name', $(wc -l <"$out/man-$page.err") lines on stderr" \
			"$out/man-$page.txt"
	fi
}

# complete_words WORD...: what the installed completion offers for the
# command line WORD... (the last one being completed), as bash would ask
# for it: through the function that the script registers for tailor.
complete_words() {
	# shellcheck disable=SC2016	# expanded by the root's bash
	in_root bash -c '
		. /usr/share/bash-completion/completions/tailor || exit 1
		spec=$(complete -p tailor) || exit 1
		[[ $spec =~ -F\ ([^ ]+) ]] || { echo "no -F in: $spec"; exit 1; }
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		"${BASH_REMATCH[1]}" tailor "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		echo "${COMPREPLY[*]}"' complete_words "$@" 2>&1
}

check_completion() {
	local got

	got=$(complete_words tailor rec)
	if [ "$got" = record ]; then
		ok "bash completion: tailor rec<TAB> gives record"
	else
		not_ok "bash completion: tailor rec<TAB> gives '$got'"
	fi
	got=$(complete_words tailor record --fi)
	if [ "$got" = --filter ]; then
		ok "bash completion: tailor record --fi<TAB> gives --filter"
	else
		not_ok "bash completion: tailor record --fi<TAB> gives '$got'"
	fi
}

check_pkg_config() {
	local flags mv tag

	flags=$(in_root pkg-config --cflags --libs libtailor 2>&1)
	mv=$(in_root pkg-config --modversion libtailor 2>&1)
	tag=$(in_root pkg-config --variable=tag_cflags libtailor 2>&1)
	if [[ $flags == *-ltailor* ]] && [ "$mv" = "$version" ]; then
		ok "pkg-config libtailor $mv: '$flags' (tag_cflags '$tag')"
	else
		not_ok "pkg-config --cflags --libs libtailor: '$flags', --modversion '$mv'"
	fi
}

# build_program NAME shared|static: first_program built in the root as a
# user would, with the tag register reserved as tag.h asks, from its
# absolute path (the dictionary's lines are __FILE__'s, DWARF's the
# compiler's argument).  shared links libtailor.so.0; static links
# everything, with pkg-config's --static.
build_program() {
	local name=$1 cc_static='' pc_static=''

	if [ "$2" = static ]; then
		cc_static=-static pc_static=--static
	fi
	in_root sh -c "cd $prog_dir && cc $cc_static -g -O2 -Wall -Wextra -Werror -ffixed-r15 \
		$prog_dir/first_program.c \$(pkg-config $pc_static --cflags --libs libtailor) -o $name"
}

check_program() {
	local dyn='' run=''

	mkdir -p "$root$prog_dir"
	cp "$here/first_program.c" "$root$prog_dir/"
	# Shared: libtailor.so.0 from libtailor0, found by the loader.
	if build_program first_program shared >"$out/cc-shared.log" 2>&1 &&
	   dyn=$(in_root ldd "$prog_dir/first_program" 2>&1) &&
	   grep -q -E 'libtailor\.so\.0 => (/usr)?/lib/x86_64-linux-gnu/libtailor\.so\.0' <<<"$dyn" &&
	   run=$(in_root sh -c "cd $prog_dir && ./first_program -d first_program.dict 0.2" 2>&1) &&
	   [[ $run == *"tag 1 held"* ]] &&
	   [ "$(head -n 1 "$root$prog_dir/first_program.dict")" = $'tailor-dictionary\t1' ]; then
		ok "a first program built with \$(pkg-config --cflags --libs libtailor) runs on libtailor.so.0 and writes its dictionary"
	else
		{ echo "ldd: $dyn"; echo "run: $run"; } >>"$out/cc-shared.log"
		not_ok "a first program against the shared libtailor" "$out/cc-shared.log"
	fi
	# Static: nothing to load at all.
	if build_program first_program-static static >"$out/cc-static.log" 2>&1 &&
	   in_root readelf -d "$prog_dir/first_program-static" 2>&1 |
		grep -q 'There is no dynamic section' &&
	   run=$(in_root sh -c "cd $prog_dir && ./first_program-static -d static.dict 0.2" 2>&1) &&
	   [[ $run == *"tag 1 held"* ]] && [ -s "$root$prog_dir/static.dict" ]; then
		ok "the same built -static with \$(pkg-config --static --cflags --libs libtailor) runs"
	else
		echo "run: ${run:-}" >>"$out/cc-static.log"
		not_ok "a first program against the static libtailor" "$out/cc-static.log"
	fi
}

checks_in_root() {
	check_dkms
	check_command
	check_man 1 tailor
	check_man 1 tailor-record
	check_man 1 tailor-report
	check_man 1 tailor-timeline
	check_man 1 tailor-dump
	check_man 5 tailor-recording
	check_man 5 tailor-dictionary
	check_man 3 libtailor
	check_completion
	check_pkg_config
	check_program
}

# ---- initramfs ----------------------------------------------------------

# What the box does not need of the root: what building needs (compilers,
# headers, static and sanitizer libraries, the module's sources), apt's
# state, documentation and translations.  The programs, the libraries
# they load, kmod and /lib/modules with DKMS's tailor.ko stay: 130 MiB
# of the root's 760 (2026-11-24), 53 MiB gzipped.
prune=(
	./usr/src ./usr/include ./usr/lib/gcc ./usr/libexec/gcc
	./var/cache/apt ./var/lib/apt/lists ./debs
	./usr/share/doc ./usr/share/locale ./usr/share/man ./usr/share/info
	./usr/share/perl ./usr/share/perl5 ./usr/lib/x86_64-linux-gnu/perl
	./usr/lib/x86_64-linux-gnu/perl-base ./usr/share/i18n ./usr/share/zoneinfo
	./usr/lib/x86_64-linux-gnu/gconv
)
# By name: static and sanitizer libraries, gcc's LTO dumper, perl, and
# the image codecs libgd3 brings (libc6-dev recommends libc-devtools).
prune_names=(
	'*.a' 'lib*san.so*' '*-lto-dump-*' 'perl*' 'libgprofng*' gprofng
	'libx265*' 'libaom*' 'libSvtAv1Enc*' 'librav1e*' 'libdav1d*' 'libgav1*'
	'libheif*' 'libavif*' 'libde265*' 'libyuv*'
)

# root_files: the root's paths for the initramfs, NUL-separated, sorted.
root_files() {
	local p args=()

	for p in "${prune[@]}"; do args+=(-path "$p" -o); done
	for p in "${prune_names[@]}"; do args+=(-name "$p" -o); done
	unset 'args[-1]'
	(cd "$root" && find . -mindepth 1 \( "${args[@]}" \) -prune -o -print0) | sort -z
}

# write_init DIR: the box's /init and in-box.sh in DIR.
write_init() {
	local dir=$1

	cp "$here/in-box.sh" "$dir/in-box.sh"
	cat >"$dir/init" <<EOF
#!/bin/bash
# /init of the install test's box, written by tests/install/install_test.sh:
# the installed Debian root's own bash, mount and kmod, no busybox.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LC_ALL=C

mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid devtmpfs /dev
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /tmp
# tailor record takes the wakeups from tracefs.
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
[ -c /dev/console ] && exec </dev/console >/dev/console 2>&1

echo TAILOR-BOX-START
/bin/bash /in-box.sh $release $prog_dir </dev/null
rc=\$?
# Own line, in case a kernel message left the cursor mid-line.
printf '\\nTAILOR-BOX-RC=%d\\n' "\$rc"
sync
# QEMU runs with -no-reboot, so a reboot ends it.
echo b >/proc/sysrq-trigger
while :; do sleep 1; done
EOF
	chmod 0755 "$dir/init" "$dir/in-box.sh"
}

# make_initramfs: $out/initramfs.cpio.gz, two cpio archives in one gzip
# stream (the kernel unpacks them in turn): the trimmed root as it is,
# then /init and in-box.sh, which do not belong in the root.
make_initramfs() {
	local extra=$out/box-files kib

	rm -rf "$extra"
	mkdir -p "$extra"
	write_init "$extra"
	{
		root_files | (cd "$root" && cpio --null -o -H newc --reproducible --quiet) &&
		(cd "$extra" && printf '%s\0' ./init ./in-box.sh |
			cpio --null -o -H newc -R 0:0 --reproducible --quiet)
	} | gzip -6 -n >"$out/initramfs.cpio.gz" || return 1
	kib=$(root_files | (cd "$root" && xargs -0 stat -c '%F %s' 2>/dev/null) |
		awk '/regular/ { s += $NF } END { printf "%d", s / 1024 }')
	initramfs_size="$(du -k "$out/initramfs.cpio.gz" | cut -f1) KiB gzip, $kib KiB unpacked"
}

# ---- box ----------------------------------------------------------------

# box_results: the results in-box.sh printed on the console.
box_results() {
	tr -d '\r' <"$out/console.log" |
		sed -n '/^TAILOR-INSTALL-RESULTS-BEGIN$/,/^TAILOR-INSTALL-RESULTS-END$/p' |
		sed '1d;$d'
}

run_box() {
	local boot_rc=0 line plan=0 got=0 times

	# One vCPU: multi-threaded TCG can run a stale translation of code the
	# kernel just live-patched (tests/box/hold-static-keys.c), and this
	# box has no holder: it is the installed system, nothing more.
	# tsc=reliable as tests/box/run.sh boots 6.1: the clock tailor record
	# asks for needs a trusted TSC.
	"$top/tests/box/boot.sh" --kernel "/boot/vmlinuz-$release" \
		--initrd "$out/initramfs.cpio.gz" --log "$out/console.log" \
		--smp 1 --append "tsc=reliable" --timeout 300 \
		>/dev/null 2>"$out/boot.out" || boot_rc=$?
	times=$(sed -n 's/^boot.sh: \(boot .*\)/\1/p' "$out/boot.out" | tail -n 1)
	if [ $boot_rc -eq 0 ]; then
		ok "the box booted $release with the root, ran in-box.sh to its end, no kernel splat ($times)"
	else
		not_ok "the box ($release, boot.sh: $(grep -o 'FAIL: .*' "$out/boot.out" | head -n 1))" \
			"$out/boot.out"
		tr -d '\r' <"$out/console.log" | tail -n 20 | sed 's/^/#   console: /'
	fi
	while IFS= read -r line; do
		case $line in
		"plan "*) plan=${line#plan } ;;
		"ok "*) got=$((got + 1)); ok "box: ${line#ok }" ;;
		"not ok "*) got=$((got + 1)); not_ok "box: ${line#not ok }" ;;
		*) echo "$line" ;;
		esac
	done < <(box_results)
	if [ "$plan" -eq 0 ]; then
		not_ok "box: in-box.sh's results never came back (see $out/console.log)"
	elif [ "$got" -lt "$plan" ]; then
		not_ok "box: $got results of the $plan planned came back (see $out/console.log)"
	fi
}

# ---- main ---------------------------------------------------------------

preconditions
mkdir -p "$out"

phase root "debootstrap --variant=minbase bookworm"
if make_root >"$out/make-root.why" 2>&1; then
	phase_done
	ok "a fresh Debian 12 root (debootstrap minbase, $(du -sm "$root" | cut -f1) MiB)"
else
	phase_done
	not_ok "debootstrap" "$out/make-root.why"
	finish
fi

if ! mount_root; then
	not_ok "mounting proc, sys and dev in the root"
	finish
fi
phase install "the headers, then the packages (DKMS builds tailor.ko)"
install_packages
rc=$?
phase_done
[ $rc -eq 0 ] || finish

phase checks "dkms, tailor, man pages, completion, pkg-config, a first program"
checks_in_root
phase_done

# The initramfs is made of the root as it is on disk, without the mounts.
if ! unmount_root; then
	not_ok "unmounting the root's proc, sys and dev"
	finish
fi
phase initramfs "the trimmed root and /init, gzipped"
if make_initramfs; then
	phase_done
	ok "initramfs from the trimmed root: $initramfs_size"
else
	phase_done
	not_ok "making the initramfs"
	finish
fi

phase box "boot $release, modprobe tailor, record, dump, report, rmmod"
run_box
phase_done

finish

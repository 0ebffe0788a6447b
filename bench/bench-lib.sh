# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# bench-lib.sh - what the box benchmarks share, sourced by bench/*.sh with
# $top set to the checkout:
#   bench_payload NAME BOX  builds tailor.ko for Debian's kernel BOX (6.1,
#                           6.12), tailor and the workloads, and lays out
#                           a box payload: $payload/tailor.ko, bin/tailor,
#                           workloads/, and bench-box.sh for the in-box
#                           script to source (now: the uptime in seconds;
#                           el A B: B - A).  Sets $release, $out
#                           (build/bench-NAME) and $payload.
#   bench_native_payload NAME  the same, to run on this machine.
#   bench_boot TIMEOUT      boots the box (tsc=reliable) on
#                           $payload/run-in-box.sh, perf inside, its
#                           console in $out/console.log.
#   $bench_median_awk       an awk function median(k) over t[k, 1..n[k]],
#                           to put before a program that fills them.

# shellcheck disable=SC2154 # $top: set by the script that sources this
bench_payload() {
	local name=$1 box=$2

	release=$(ls /boot | sed -n "s/^vmlinuz-\($box\.[0-9].*\)/\1/p" | sort -V | tail -1)
	[ -n "$release" ] && [ -d "/usr/src/linux-headers-$release" ] || {
		echo "${0##*/}: no kernel $box with headers; run scripts/setup.sh" >&2
		exit 1
	}
	out=$top/build/bench-$name
	payload=$out/payload
	rm -rf "$payload"
	mkdir -p "$payload/bin" "$payload/workloads"
	make -s -C "$top" module KDIR="/usr/src/linux-headers-$release" MODULE_OUT="$out/kmod"
	make -s -C "$top" userspace workloads
	cp "$out/kmod/kmod/tailor.ko" "$payload/"
	cp "$top/build/userspace/tailor" "$payload/bin/"
	cp -r "$top"/build/workloads/* "$payload/workloads/"
	cat >"$payload/bench-box.sh" <<'LIB'
# Sourced by run-in-box.sh (busybox sh): timing helpers.
now() { awk '{ print $1 }' /proc/uptime; }
el() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
LIB
}

# bench_native_payload NAME: the same layout for a run on this machine
# (tailor, the workloads, bench-box.sh), without a module.
bench_native_payload() {
	out=$top/build/bench-$1
	payload=$out/payload
	rm -rf "$payload"
	mkdir -p "$payload/bin" "$payload/workloads"
	make -s -C "$top" userspace workloads
	cp "$top/build/userspace/tailor" "$payload/bin/"
	cp -r "$top"/build/workloads/* "$payload/workloads/"
	# Real timing here: ns, where the box's busybox has /proc/uptime's 10 ms.
	cat >"$payload/bench-box.sh" <<'LIB'
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b - a }'; }
LIB
}

bench_boot() {
	chmod +x "$payload/run-in-box.sh"
	TAILOR_BOX_PERF=1 "$top/tests/box/mkinitramfs.sh" "$out/initramfs.cpio.gz" "$payload"
	# tsc=reliable, as tests/box/run.sh: TCG fails the kernel's TSC sync
	# check at random, and without a trusted TSC perf offers no time
	# conversion (cap_user_time_zero): tailor record would then write no
	# switches or wakeups, and a bench of their cost would measure none.
	"$top/tests/box/boot.sh" --kernel "/boot/vmlinuz-$release" \
		--initrd "$out/initramfs.cpio.gz" --log "$out/console.log" --timeout "$1" \
		--append tsc=reliable >/dev/null
}

# shellcheck disable=SC2034 # used by the scripts that source this
bench_median_awk='
function median(k,   i, j, c, a, tmp) {
	c = n[k]
	for (i = 1; i <= c; i++) a[i] = t[k, i]
	for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++)
		if (a[j] < a[i]) { tmp = a[i]; a[i] = a[j]; a[j] = tmp }
	return a[int((c + 1) / 2)]
}
'

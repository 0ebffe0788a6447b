#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs inside the test box (busybox sh, as root): loads tailor.ko, runs
# every kselftest in /tailor/kselftest in order, unloads the module, and
# exits non-zero if any step failed.  Each test prints its own TAP; the
# host counts them from the "# Totals:" lines between the markers below.
export TAILOR_KO=/tailor/tailor.ko
# TAILOR_FUZZ_* from the host (run.sh), for tailor_fuzz_test.
[ -f /tailor/kselftest/env ] && . /tailor/kselftest/env
# The fuzzer makes 100k calls on every kernel (its default), 4-6 minutes
# on the debug kernel; bench/fuzz-dev.sh makes millions.
rc=0

# A kernel on jiffies fires the software clock at ticks, not at its period.
echo "== clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

echo "== tailor.ko: $(modinfo -F vermagic $TAILOR_KO 2>/dev/null)"
if ! insmod "$TAILOR_KO"; then
	echo "TAILOR-BOX-FAIL insmod"
	exit 1
fi
dmesg | grep 'tailor:'
for f in tsc_khz tsc_khz_measured tsc_mult_shift pebs; do
	echo "== /sys/class/misc/tailor/$f: $(cat /sys/class/misc/tailor/$f)"
done

# The debug kernel: kmemleak scans every 60 s while the tests run, and
# its own thread not at all.  That thread's scans said only how many
# objects it suspected: on 2026-11-27, 7 at 911 s into the fuzzer's run
# on a loaded host, gone by the next scan of ours and so never shown.
# Each scan of ours prints what it suspects, with the call chains that
# allocated it.  An object that tailor.ko allocated (a [tailor] frame)
# and nothing referenced for 5 s fails the box even if it is freed later.
# Others are printed: under TCG on a busy host, the kernel's own objects
# in flight (fork, exec, page tables under the fuzzer's memory pressure)
# outlive kmemleak's 5 s.  Whatever is still unreferenced after rmmod
# fails the box, whoever allocated it (below).
scanner=
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan=off >/sys/kernel/debug/kmemleak
	rm -f /tmp/kmemleak-tailor
	(
		# Stopped with TERM between scans: no report half printed,
		# and its sleep goes with it.
		trap 'kill $! 2>/dev/null; exit 0' TERM
		: >/tmp/kmemleak-seen
		while :; do
			sleep 60 &
			wait $!
			echo scan >/sys/kernel/debug/kmemleak
			cat /sys/kernel/debug/kmemleak >/tmp/kmemleak-now
			# Printed when it changed (never cleared: what stays
			# unreferenced must still be there after rmmod).
			if grep -q 'unreferenced object' /tmp/kmemleak-now &&
				! cmp -s /tmp/kmemleak-now /tmp/kmemleak-seen; then
				echo "== kmemleak during the tests:"
				cat /tmp/kmemleak-now
				grep -q '\[tailor\]' /tmp/kmemleak-now && touch /tmp/kmemleak-tailor
			fi
			mv /tmp/kmemleak-now /tmp/kmemleak-seen
		done
	) &
	scanner=$!
fi

# The module test reloads tailor.ko; it runs last and leaves it loaded.
for t in $(cat /tailor/kselftest/order); do
	echo "TAILOR-TEST-BEGIN $t"
	/tailor/kselftest/$t
	trc=$?
	echo "TAILOR-TEST-END $t rc=$trc"
	[ $trc -eq 0 ] || rc=1
done

if [ -n "$scanner" ]; then
	kill "$scanner"
	wait "$scanner" 2>/dev/null
	if [ -e /tmp/kmemleak-tailor ]; then
		echo "TAILOR-BOX-FAIL kmemleak: objects tailor.ko allocated went unreferenced (above)"
		rc=1
	fi
fi

if ! rmmod tailor; then
	echo "TAILOR-BOX-FAIL rmmod"
	rc=1
fi
# The debug kernel: anything the module leaked is unreferenced by now.
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	if grep -q 'unreferenced object' /sys/kernel/debug/kmemleak; then
		cat /sys/kernel/debug/kmemleak
		echo "TAILOR-BOX-FAIL kmemleak reports leaks"
		rc=1
	else
		echo "== kmemleak: no leaks"
	fi
fi
exit $rc

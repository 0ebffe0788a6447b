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

# hrtimer_interrupt() counts each time it gave up after three passes
# with timers still expired (a "hang"); it prints "hrtimer: interrupt
# took" only the first time, so the flag is reset after every test.
hrtimer_hangs() {
	awk '/\.nr_hangs/ { n += $3 } END { print n + 0 }' /proc/timer_list
}

# The box's own progress: a box-pulse per CPU (see box-pulse.c), its
# lines before the first test the baseline.
pulses=
for c in $(seq 0 $(($(nproc) - 1))); do
	: >/tmp/pulse."$c"
	box-pulse "$c" /tmp/pulse."$c" &
	pulses="$pulses $!"
done
sleep 3

# pulse_lines CPU: how many pulses that CPU's log holds.
pulse_lines() {
	wc -l </tmp/pulse."$1"
}

# pulse_summary CPU FIRST LAST: for pulses FIRST..LAST (1-based), the
# median and slowest loop (us), the slowest second (the fastest loop of
# the worst ten pulses in a row, us) and the latest wakeup (us).
pulse_summary() {
	sed -n "$2,$3p" /tmp/pulse."$1" | awk '
		{ loop[NR] = $2 / 1000; if ($3 / 1000 > late) late = $3 / 1000 }
		END {
			worst = 0
			for (i = 10; i <= NR; i++) {
				m = loop[i]
				for (j = i - 9; j < i; j++)
					if (loop[j] < m) m = loop[j]
				if (m > worst) worst = m
			}
			for (i = 1; i <= NR; i++) print loop[i] > "/tmp/pulse.sort"
			close("/tmp/pulse.sort")
			while (("sort -n /tmp/pulse.sort" | getline v) > 0) s[++k] = v
			printf "%d %.0f %.0f %.0f %.0f\n", NR, s[int((k + 1) / 2)], s[k], worst, late
		}'
}

# pulse_judge BASELINE SUMMARY: why a test's pulses fail, or nothing.
# Measured 2026-11-28 on the debug kernel under TCG, the fuzzer and the
# stress test running: the latest wakeup 0.58 s, the slowest second 1.15
# times the baseline's median loop (single loops up to 28 times).  A CPU
# that kept a real-time task waiting 5 s, or ran its loop 3 times slower
# for a whole second, is not the host's noise.
pulse_judge() {
	echo "$1 $2" | awk '{
		# $1-$5 the baseline, $6-$10 the test (pulse_summary)
		if ($10 > 5000000) printf "a wakeup %.1f s late\n", $10 / 1e6
		else if ($9 > 3 * $2) printf "a second of loops %.1f times the baseline\n", $9 / $2
	}'
}

cpus=$(seq 0 $(($(nproc) - 1)))
for c in $cpus; do
	pulse_summary "$c" 1 "$(pulse_lines "$c")" >/tmp/pulse.base."$c"
	echo "== box-pulse CPU $c baseline: $(cat /tmp/pulse.base."$c")"
done

# run_test NAME [VAR=VALUE...]: one kselftest binary, with its hrtimer
# hangs and the pulses of its time judged.
run_test() {
	t=$1
	bin=${t%%:*}
	shift
	echo "TAILOR-TEST-BEGIN $t"
	hangs0=$(hrtimer_hangs)
	for c in $cpus; do
		echo $(($(pulse_lines "$c") + 1)) >/tmp/pulse.first."$c"
	done
	env "$@" /tailor/kselftest/"$bin"
	trc=$?
	echo "TAILOR-TEST-END $t rc=$trc hrtimer_hangs=$(($(hrtimer_hangs) - hangs0))"
	for c in $cpus; do
		now=$(pulse_summary "$c" "$(cat /tmp/pulse.first."$c")" "$(pulse_lines "$c")")
		echo "== box-pulse CPU $c $t: $now"
		reason=$(pulse_judge "$(cat /tmp/pulse.base."$c")" "$now")
		if [ -n "$reason" ]; then
			echo "TAILOR-BOX-FAIL box-pulse CPU $c during $t: $reason"
			rc=1
		fi
	done
	echo 1 >/sys/kernel/debug/clear_warn_once 2>/dev/null
	[ $trc -eq 0 ] || rc=1
}

# The module test reloads tailor.ko; it runs last and leaves it loaded.
# tailor record's tests and the call stacks' run again through the BPF
# collector where the kernel has BTF (Debian's 6.1 and 6.12; the debug
# kernel has none): its program must pass each kernel's verifier.
for t in $(cat /tailor/kselftest/order); do
	run_test "$t"
	case $t in
	tailor_record_test | tailor_callchain_test)
		[ -r /sys/kernel/btf/vmlinux ] && run_test "$t:bpf" TAILOR_COLLECTOR=bpf ;;
	esac
done

# A pulse that died measured nothing.
if ! kill $pulses; then
	echo "TAILOR-BOX-FAIL box-pulse: a pulse was gone before the end"
	rc=1
fi

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

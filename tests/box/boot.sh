#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# boot.sh - boot the tailor test box and judge the run.
#
# Boots a kernel with an initramfs from mkinitramfs.sh under QEMU, streams
# the serial console to a log file and to stdout, and succeeds only if the
# payload reported TAILOR-BOX-RC=0 and the kernel printed no splat (panic,
# oops, BUG, WARN, lockdep, sanitizer report, hung task, RCU stall,
# lockup, ...) on the way.
#
# Usage: boot.sh --kernel VMLINUZ --initrd CPIO --log LOGFILE
#                [--timeout SECONDS] [--smp N] [--mem MiB]
#                [--append "extra cmdline"] [--cpu MODEL]
#
# Environment:
#   TAILOR_BOX_ACCEL   QEMU accelerator, default tcg.  KVM hangs on the
#                      machine tailor is developed on, so it is opt-in
#                      (TAILOR_BOX_ACCEL=kvm).
#   TAILOR_BOX_QEMU    QEMU binary, default qemu-system-x86_64.
#
# A line TAILOR-BOX-SINGLESTEP=on (or =off) on the console has QEMU's
# monitor run "singlestep on" (or off): one guest instruction per
# translation block, so that a timer interrupt lands after the
# instruction it interrupted, not at the end of a block (the box's
# box-singlestep prints it and waits for the change, see box-singlestep.c).
#
# Exit status: 0 pass, 1 the run failed (reason on stderr), 2 usage error.
set -euo pipefail
export LC_ALL=C

prog=${0##*/}

# Console lines (extended regexps) that fail the run wherever they appear.
bad_patterns=(
	'Kernel panic'
	'Oops:'
	'BUG:'
	'^(\[[^]]*\] *)*WARNING:'	# WARN() and lockdep, not "RETBleed: WARNING:"
	'KASAN:'
	'UBSAN:'
	'possible circular locking'
	'inconsistent lock state'
	'sleeping function called from invalid context'
	'general protection fault'
	'Call Trace:'
	'INFO: task .* blocked'		# hung task
	'rcu.* detected stall'		# RCU CPU and task stalls
	'hard LOCKUP'
)
# Not among them: "hrtimer: interrupt took" (hrtimer_interrupt() gave up
# with timers still expired).  Under TCG a sample costs the box some 10 us
# (the debug kernel many times that), so lawful sessions at perf's own
# floor, a 10 us period, or 64 sessions on one CPU, overrun it: on
# 2026-11-28 the debug kernel gave up 2016 times in the stress test and
# 298 in the fuzzer's run, and every single-stepped run prints it.  What
# the message once revealed, a timer re-armed faster than its period, is
# checked exactly instead: no session may take more samples than its
# period allows (tailor_fuzz_test).  run-in-box.sh prints each test's
# count of such hangs.

# usage [ERROR]: without ERROR, the full help from the header above.
usage() {
	if [ $# -gt 0 ]; then
		echo "$prog: $*" >&2
		sed -n '/^# Usage:/,/^#$/s/^# \{0,1\}//p' "$0" >&2
	else
		sed -n '/^# Usage:/,/^# Exit status/s/^# \{0,1\}//p' "$0" >&2
	fi
	exit 2
}

kernel=
initrd=
log=
timeout_s=600
smp=2
mem=2048
append=
cpu=max

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		set -- "${opt%%=*}" "${opt#*=}" "${@:2}"
		continue ;;
	-h | --help)
		usage ;;
	--kernel | --initrd | --log | --timeout | --smp | --mem | --append | --cpu)
		[ $# -ge 2 ] || usage "$opt needs an argument"
		val=$2
		shift 2 ;;
	*)
		usage "unknown argument '$opt'" ;;
	esac
	case $opt in
	--kernel)	kernel=$val ;;
	--initrd)	initrd=$val ;;
	--log)		log=$val ;;
	--timeout)	timeout_s=$val ;;
	--smp)		smp=$val ;;
	--mem)		mem=$val ;;
	--append)	append=$val ;;
	--cpu)		cpu=$val ;;
	esac
done

[ -n "$kernel" ] || usage "--kernel is required"
[ -n "$initrd" ] || usage "--initrd is required"
[ -n "$log" ] || usage "--log is required"
for n in timeout_s smp mem; do
	[[ ${!n} =~ ^[1-9][0-9]*$ ]] || usage "--${n%_s} wants a positive integer, not '${!n}'"
done
[ -r "$kernel" ] || usage "kernel '$kernel' is not readable (Debian's /boot/vmlinuz-* need root)"
[ -r "$initrd" ] || usage "initrd '$initrd' is not readable"

accel=${TAILOR_BOX_ACCEL:-tcg}
qemu=${TAILOR_BOX_QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || usage "'$qemu' not found (install qemu-system-x86)"

# No oops=panic or panic_on_warn: the log should go on past the first splat.
# panic=-1 turns a panic into a reboot, which -no-reboot turns into exit.
cmdline="console=ttyS0,115200 panic=-1${append:+ $append}"

mkdir -p -- "$(dirname -- "$log")"
: >"$log"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tailor-boot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# QEMU's human monitor on two FIFOs, $tmp/hmp.in (commands) and
# $tmp/hmp.out (its replies), which QEMU opens read-write.  This script
# holds both open too, so that no open or write ever blocks, and drains
# the replies into $tmp/hmp.log.
mkfifo "$tmp/hmp.in" "$tmp/hmp.out"
exec 4<>"$tmp/hmp.in"
cat <>"$tmp/hmp.out" >"$tmp/hmp.log" &
hmp_drain=$!
trap 'kill "$hmp_drain" 2>/dev/null; rm -rf "$tmp"' EXIT

qemu_cmd=(
	"$qemu" -accel "$accel" -cpu "$cpu" -smp "$smp" -m "$mem"
	-nodefaults -no-user-config -display none -monitor none
	-chardev "pipe,id=hmp,path=$tmp/hmp" -mon "chardev=hmp,mode=readline"
	-serial stdio -no-reboot
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline"
)

# Returns microseconds since the epoch.
now_us() {
	echo "${EPOCHREALTIME//[!0-9]/}"
}

# Formats a microsecond span as seconds with one decimal.
secs() {
	printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000))
}

# Do not leave QEMU running when we are interrupted or killed: stop it
# through timeout, which passes the signal on.
# shellcheck disable=SC2317	# called from the trap below
on_signal() {
	if [ -s "$tmp/pid" ]; then
		kill -TERM "$(cat "$tmp/pid")" 2>/dev/null || true
	fi
	echo "$prog: interrupted, QEMU stopped ($log)" >&2
	exit 130
}
trap on_signal INT TERM HUP

# Runs QEMU under a hard time limit, noting its pid and exit status.
# --foreground keeps QEMU in our process group, for ^C and group kills.
run_qemu() {
	local rc=0

	timeout --foreground --kill-after=10 "$timeout_s" "${qemu_cmd[@]}" \
		</dev/null 4>&- 2>&1 &
	echo $! >"$tmp/pid"
	wait $! || rc=$?
	{ echo "$rc" >"$tmp/rc"; } 2>/dev/null	# $tmp is gone if interrupted
}

# Copies the console to the log and to stdout, minus the serial line's
# carriage returns, notes when the payload starts, and passes its
# single-stepping requests to QEMU's monitor.  A closed stdout must not cut
# the log short.
stream_console() {
	local line started="" mode

	trap '' PIPE
	exec 3>>"$log"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line//$'\r'/}
		printf '%s\n' "$line" >&3
		printf '%s\n' "$line" 2>/dev/null || true
		if [ -z "$started" ] && [[ $line == *TAILOR-BOX-START* ]]; then
			started=1
			now_us >"$tmp/start"
		fi
		if [[ $line =~ TAILOR-BOX-SINGLESTEP=(on|off) ]]; then
			mode=${BASH_REMATCH[1]}
			printf 'singlestep %s\n' "$mode" >&4
			echo "$prog: QEMU told: singlestep $mode" >&2
		fi
	done
}

# This machine's CPU time, busy and stolen by its own hypervisor
# (/proc/stat's cpu line, ticks): a box that ran slow because its host
# was starved is told from one whose kernel or module misbehaved.
host_ticks() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $9; exit }' /proc/stat
}

echo "$prog: $(printf '%q ' "${qemu_cmd[@]}")" >&2
read -r busy0 steal0 < <(host_ticks)
t0=$(now_us)
# In the background so that the wait builtin, and so the traps, can be
# interrupted by a signal.
run_qemu | stream_console &
wait $! || true
t1=$(now_us)
read -r busy1 steal1 < <(host_ticks)
qemu_rc=$(cat "$tmp/rc" 2>/dev/null || echo "unknown")

times="total $(secs $((t1 - t0)))s"
if [ -s "$tmp/start" ]; then
	times="boot $(secs $(($(cat "$tmp/start") - t0)))s (to TAILOR-BOX-START), $times"
else
	times="boot: TAILOR-BOX-START never seen, $times"
fi
if [ $((busy1 - busy0)) -gt 0 ]; then
	times="$times; this machine's host stole $(awk -v s=$((steal1 - steal0)) \
		-v b=$((busy1 - busy0)) 'BEGIN { printf "%.1f", 100 * s / b }')% of its busy CPU time"
fi
echo "$prog: $times" >&2

reasons=()
case $qemu_rc in
0)		;;
124 | 137)	reasons+=("timed out after ${timeout_s}s") ;;
*)		reasons+=("qemu exited with status $qemu_rc") ;;
esac

grep_args=()
for p in "${bad_patterns[@]}"; do
	grep_args+=(-e "$p")
done
bad_lines=$(grep -a -n -E "${grep_args[@]}" -- "$log" || true)
if [ -n "$bad_lines" ]; then
	reasons+=("kernel splat in the log ($(wc -l <<<"$bad_lines") matching lines)")
fi

rc_line=$(grep -o -a 'TAILOR-BOX-RC=[0-9]*' -- "$log" | tail -n 1 || true)
if [ -z "$rc_line" ]; then
	reasons+=("no TAILOR-BOX-RC line: the payload did not finish")
elif [ "$rc_line" != TAILOR-BOX-RC=0 ]; then
	reasons+=("payload failed: $rc_line")
fi

if [ ${#reasons[@]} -eq 0 ]; then
	echo "$prog: PASS ($log)" >&2
	exit 0
fi

reason=$(printf '%s; ' "${reasons[@]}")
echo "$prog: FAIL: ${reason%; } ($log)" >&2
if [ -n "$bad_lines" ]; then
	echo "$prog: matching log lines:" >&2
	head -n 50 <<<"$bad_lines" | sed 's/^/  /' >&2
fi
exit 1

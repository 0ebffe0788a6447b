#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check.sh - every test tailor has, with one summary line at the end.
#
#   native: tailor.ko builds warning-free with W=1 and sparse (C=1)
#           against 6.1 and 6.12; checkpatch --strict is clean; the uapi
#           unit test passes under ASan and UBSan; the kselftests build.
#           The kernel patches apply to linux-source-6.1 and pass
#           checkpatch --strict.  The tailor command builds with -Werror;
#           its unit tests pass under ASan and UBSan; tailor report
#           (built with ASan and UBSan) gives the exact ground truth of the
#           golden profiles, its exports (pprof, folded, Chrome trace)
#           read back exactly by go tool pprof and by speedscope and the
#           HTML report in headless Chromium; the example engine's tests pass, once more
#           with the engine built with ASan and UBSan; its LLVM backend gives the C
#           backend's results and operator shares; its row counts and EXPLAIN
#           ANALYZE (perf) hold, ASan and UBSan too; the recording, dictionary and profile
#           (recording, perf.data) readers and the exporters survive a
#           bounded libFuzzer run each.  The man pages pass mandoc -Tlint and
#           hold every option of the tables, as the bash completion does;
#           make install stages a usable tree; DKMS builds tailor.ko for
#           6.1 and 6.12; the Debian packages build, lintian-clean.
#   box:    the kselftests in the test box on Debian's 6.1 and 6.12, and
#           on the patched debug kernel (KASAN, lockdep, kmemleak), once
#           with a trusted TSC and once with tsc=unstable; make demo's path
#           and the engine's planted bottleneck under tailor record (6.1);
#           the packages installed by apt in a fresh Debian 12 root, DKMS
#           building the module there, and used from the installed paths
#           in the box (6.1).
#
# Usage: scripts/check.sh [--native-only]
# The first line names the machine (CPU, cores, memory, kernel); before the
# last, each stage's wall time.  The last line reads "N passed, N failed,
# N skipped"; the exit status is non-zero if anything failed.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=$top/build/check
mkdir -p "$out"
pass=0 fail=0 skip=0
native_only=0
[ "${1:-}" = "--native-only" ] && native_only=1

# Each stage's wall time, printed at the end: CI's limit is on the whole
# run, on whatever machine of this kind it gets, and a slower one must
# show where its minutes went.
stage_times=()
stage_done() {	# stage_done NAME START: NAME took from START ($EPOCHREALTIME) to now
	stage_times+=("$(awk -v a="$2" -v b="$EPOCHREALTIME" 'BEGIN { printf "%7.1f", b - a }') s  $1")
}

result() {	# result NAME STATUS(0 pass, 1 fail, 77 skip) [DETAIL]
	case $2 in
	0) pass=$((pass + 1)); echo "ok - $1" ;;
	77) skip=$((skip + 1)); echo "skip - $1${3:+: $3}" ;;
	*) fail=$((fail + 1)); echo "not ok - $1${3:+: $3}" ;;
	esac
}

headers_for() {
	ls -d /usr/src/linux-headers-"$1".*-amd64 2>/dev/null | sort -V | tail -1
}

# check NAME LOG CMD...: one check, its output kept in LOG, the tail shown on failure.
check() {
	local name=$1 log=$2 t0=$EPOCHREALTIME
	shift 2
	if "$@" >"$log" 2>&1; then
		result "$name" 0
	else
		tail -5 "$log"
		result "$name" 1 "see $log"
	fi
	stage_done "$name" "$t0"
}

checkpatch() {	# checkpatch ARGS...: from the kernel tree, with Debian's python
	(cd "$ksrc" && PATH=/usr/bin:$PATH "$cp" --strict --quiet "$@")
}

# The uapi test: built and run with the sanitizers.
uapi_test() {
	gcc -std=c11 -Wall -Wextra -Werror -g -fsanitize=address,undefined \
		-fno-sanitize-recover=all -Ikmod/include tests/unit/uapi_test.c \
		-o "$out/uapi_test" && "$out/uapi_test"
}

# The uapi header as the kernel checks its own (usr/include/Makefile):
# C90, whose lack of inline is why the helpers are __inline__, and
# headers_check.pl's rules on includes; and as C++ for C++ clients.
uapi_header_check() {
	local ksrc_uapi=/usr/src/linux-source-6.1/usr/include/headers_check.pl std
	for std in c90 gnu11; do
		echo '#include "uapi/tailor.h"' | gcc -std=$std -Wall -Werror \
			-Werror=implicit-function-declaration -Ikmod/include -x c -fsyntax-only - ||
			{ echo "uapi/tailor.h does not build as $std"; return 1; }
	done
	for std in c++98 c++17; do
		echo '#include "uapi/tailor.h"' | g++ -std=$std -Wall -Wextra -Werror \
			-Ikmod/include -x c++ -fsyntax-only - ||
			{ echo "uapi/tailor.h does not build as $std"; return 1; }
	done
	[ -f "$ksrc_uapi" ] || { echo "$ksrc_uapi missing: run scripts/setup.sh"; return 1; }
	perl "$ksrc_uapi" /usr/include x86 kmod/include/uapi/tailor.h
}

# bench/NAME.c built with the sanitizers into $out/NAME.
sanitized_bench() {
	gcc -std=gnu11 -Wall -Wextra -Werror -g -fsanitize=address,undefined \
		-fno-sanitize-recover=all "bench/$1.c" -o "$out/$1"
}

# The bench's side-band sink (bench/sideband-sink.c), built with the
# sanitizers: a switching workload's every switch must reach its rings,
# an out and an in record each, or the bench's "kernel alone" row would
# time less than the kernel's work.
bench_sink_test() {
	local w rc
	sanitized_bench sideband-sink &&
	make -s -C "$top" workloads &&
	# Its output goes to the log whether it failed or not.
	w=$("$out/sideband-sink" --switches --wakeups -- "$top/build/workloads/tw_pingpong" \
		-n 500 2>&1) || { rc=$?; echo "$w"; echo "sideband-sink: exit $rc"; return 1; }
	echo "$w"
	awk -F= '{ v[$1] = $2 } END {
		if (v["sink_full"] != "no" || v["switches"] < 900 || v["sink_wakeups"] < 500 ||
		    v["sink_switches"] < 2 * v["switches"] - 4) exit 1 }' <<<"$w"
}

# The bench's clock floor (bench/clock-floor.c), built with the
# sanitizers: its paused counter must take the samples its CPU time asks
# for (at least half: a stalled vCPU skips timer periods; never more
# than one a thread over), or the bench's floor row would time less than
# the clock's work; and the command's exit status is its own.
bench_floor_test() {
	local w rc
	sanitized_bench clock-floor && make -s -C "$top" workloads || return 1
	w=$("$out/clock-floor" -F 1000 -- "$top/build/workloads/tw_work" 1000000000 2 2>&1) ||
		{ rc=$?; echo "$w"; echo "clock-floor: exit $rc"; return 1; }
	echo "$w"
	awk -F= '{ v[$1] = $2 } END {
		want = v["floor_cpu_ns"] / 1e6
		print "samples " v["floor_samples"] ", CPU time asks for " want
		if (want < 100 || v["floor_samples"] < want / 2 || v["floor_samples"] > want + 2) exit 1
	}' <<<"$w" || return 1
	rc=0
	"$out/clock-floor" -F 100 -- sh -c 'exit 3' 2>/dev/null || rc=$?
	[ "$rc" -eq 3 ] || { echo "clock-floor: exit $rc for a command that exited 3"; return 1; }
}

# A module build whose output has any compiler or sparse diagnostic fails.
module_lint() {
	local t0=$EPOCHREALTIME
	module_lint_one "$@"
	stage_done "tailor.ko W=1 C=1 build, $1" "$t0"
}
module_lint_one() {
	local ver=$1 kdir log
	kdir=$(headers_for "$ver")
	if [ -z "$kdir" ]; then
		result "tailor.ko W=1 C=1 build, $ver" 1 "no linux-headers-$ver.*-amd64; run scripts/setup.sh"
		return
	fi
	log=$out/lint-$ver.log
	if ! make -C "$top" module KDIR="$kdir" MODULE_OUT="$out/kmod-$ver" \
		C=1 >"$log" 2>&1; then
		result "tailor.ko W=1 C=1 build, $ver" 1 "build failed, see $log"
		return
	fi
	if ! grep -q 'CHECK ' "$log"; then
		result "tailor.ko W=1 C=1 build, $ver" 1 "sparse did not run (is it installed?)"
		return
	fi
	if grep -E 'warning:|error:|: (sparse|note):' "$log" >/dev/null; then
		grep -E 'warning:|error:' "$log" | head -5
		result "tailor.ko W=1 C=1 build, $ver" 1 "diagnostics in $log"
		return
	fi
	result "tailor.ko W=1 C=1 build against $(basename "$kdir")" 0
}

# tap_totals NAME LOG CMD...: a suite printing TAP and kselftest-style
# "# Totals:" lines; each line's counts are added to the summary.
tap_totals() {
	local name=$1 log=$2 t p f s rc=0 failed_before=$fail t0=$EPOCHREALTIME
	shift 2
	"$@" >"$log" 2>&1 || rc=$?
	stage_done "$name" "$t0"
	if ! grep -q '^# Totals:' "$log"; then
		tail -5 "$log"
		result "$name" 1 "no results, see $log"
		return
	fi
	# Each failure with the excerpt its suite printed (not_ok's "#   "
	# lines): CI's digest then says why, not only what.
	awk '/^not ok/ { why = 12; print "   " $0; next }
	     /^#   / && why > 0 { why--; print "   " $0; next }
	     { why = 0 }' "$log"
	while read -r t; do
		[[ $t =~ \ pass:([0-9]+)\ fail:([0-9]+)\ .*\ skip:([0-9]+) ]] || continue
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		echo "$name: $p passed, $f failed, $s skipped"
	done < <(grep '^# Totals:' "$log")
	# A test binary that died (say, an ASan report) printed no failure.
	if [ "$rc" -ne 0 ] && [ "$fail" -eq "$failed_before" ]; then
		tail -5 "$log"
		result "$name exit status" 1 "see $log"
	fi
}

native() {
	local ksrc=/usr/src/linux-source-6.1
	local cp=$ksrc/scripts/checkpatch.pl

	module_lint 6.1
	module_lint 6.12

	if [ -x "$cp" ]; then
		# Sources only: kbuild leaves a generated tailor.mod.c beside them.
		check "checkpatch --strict on kmod/" "$out/checkpatch.log" \
			checkpatch --terse -f $(ls "$top"/kmod/*.c "$top"/kmod/*.h \
			"$top"/kmod/include/uapi/*.h | grep -v '\.mod\.c$')
		# From the kernel tree: inside a git work tree checkpatch
		# misreads patch files as files to check.
		check "checkpatch --strict on patches/" "$out/checkpatch-patches.log" \
			checkpatch "$top"/patches/*.patch
	else
		result "checkpatch --strict" 1 "$cp missing; run scripts/setup.sh"
	fi
	check "patches/ apply to linux-source-6.1" "$out/patches.log" \
		tests/box/build-debug-kernel.sh --check-apply-only
	check "uapi unit test (ASan, UBSan)" "$out/uapi_test.log" uapi_test
	check "uapi header builds as C90, C11, C++98 and C++17 and passes headers_check.pl" \
		"$out/uapi_header.log" uapi_header_check
	check "tailor command, example engine and workloads build with -Werror" \
		"$out/userspace.log" make -s -C "$top" userspace examples workloads
	tap_totals "unit tests" "$out/unit.log" make -s -C userspace check-unit
	tap_totals "tailor record's end-to-end tests with the BPF collector (native, kernel $(uname -r))" \
		"$out/bpf-record.log" tests/bpf/bpf_record_test.sh
	tap_totals "make demo natively through the BPF collector: operators, query runs, lanes, EXPLAIN ANALYZE (native)" \
		"$out/demo-native.log" tests/bpf/demo_native_test.sh
	tap_totals "OpenTelemetry's thread context through the BPF collector into pprof's trace_id and span_id labels (go tool pprof, native)" \
		"$out/otel-pprof.log" tests/bpf/otel_pprof_test.sh
	check "bench/sideband-sink.c (ASan, UBSan) sees every switch of tw_pingpong" \
		"$out/sideband-sink.log" bench_sink_test
	check "bench/clock-floor.c (ASan, UBSan) takes the samples its counted CPU time asks for" \
		"$out/clock-floor.log" bench_floor_test
	if make -s -C userspace test-tools >"$out/test-tools.log" 2>&1; then
		tap_totals "golden report tests" "$out/golden.log" tests/golden/golden_test.sh
		tap_totals "exports through their readers, random profiles" "$out/export-fuzz.log" \
			tests/export/export_fuzz.sh
		tap_totals "the browser harness itself" "$out/browser-selftest.log" \
			tests/export/browser/selftest.sh
		tap_totals "exports in real readers: speedscope and the HTML report in Chromium, go tool pprof" \
			"$out/readers.log" tests/export/readers_test.sh
		tap_totals "pprof as go tool pprof expects it: mappings, build-ids, source lines, inline frames against perf and addr2line (perf, native)" \
			"$out/pprof.log" tests/export/pprof_test.sh
		tap_totals "Chrome trace's sampled call stacks (perf record -g) as the folded stacks (perf, native)" \
			"$out/chrome-stacks.log" tests/export/chrome_stacks_test.sh
		tap_totals "parallelism: tw_lock's CMetric by known times, an independent oracle and tailor (perf, native)" \
			"$out/parallel.log" tests/parallel/parallel_test.sh
		tap_totals "parallelism: the engine's planted group-by merge lock found, and its fix (perf, native)" \
			"$out/bottleneck.log" tests/parallel/bottleneck_test.sh
		tap_totals "JIT code named through jitdumps and perf maps: tw_jitcode, node and lli against perf inject (perf, native)" \
			"$out/jit.log" tests/jit/jit_test.sh
		tap_totals "tables against perf's on the same perf.data: lines and functions of gcc, clang and C++ builds, names, stacks, kernel, objects and processes, stripped files, periods, node, PLT (perf, native)" \
			"$out/perf-compare.log" tests/symbols/perf_compare_test.sh
		tap_totals "call stacks without frame pointers (--call-graph dwarf, gcc and clang) and kernel callers against perf's (perf, native)" \
			"$out/dwarf-unwind.log" tests/symbols/dwarf_unwind_test.sh
		tap_totals "example engine tests" "$out/engine.log" tests/engine/engine_test.sh
		tap_totals "the engine's LLVM backend: results, dictionary, jitdump, operator shares against the C backend's (perf, native)" \
			"$out/engine-llvm.log" tests/engine/llvm_backend_test.sh
		tap_totals "the engine's row counts and EXPLAIN ANALYZE from samples (perf, native)" \
			"$out/explain.log" tests/engine/explain_analyze_test.sh
		tap_totals "profiles fed back into compilation: tailor-engine --feedback (perf, native)" \
			"$out/feedback.log" tests/engine/feedback_test.sh
		tap_totals "a filter's terms ordered by their measured cost: tailor-engine --feedback (perf, native)" \
			"$out/feedback-terms.log" tests/engine/feedback_terms_test.sh
		if make -s -C userspace/examples/engine O="$top/build/examples-san" \
			CC="gcc -fsanitize=address,undefined -fno-sanitize-recover=all" \
			>"$out/engine-san-build.log" 2>&1; then
			tap_totals "example engine tests, engine built with ASan and UBSan" \
				"$out/engine-san.log" \
				env TAILOR_ENGINE="$top/build/examples-san/tailor-engine" \
				tests/engine/engine_test.sh
			tap_totals "row counts and EXPLAIN ANALYZE, engine built with ASan and UBSan" \
				"$out/explain-san.log" \
				env TAILOR_ENGINE="$top/build/examples-san/tailor-engine" \
				tests/engine/explain_analyze_test.sh
			tap_totals "--feedback, engine built with ASan and UBSan" \
				"$out/feedback-san.log" \
				env TAILOR_ENGINE="$top/build/examples-san/tailor-engine" \
				tests/engine/feedback_test.sh
			tap_totals "--feedback's order of a filter's terms, engine built with ASan and UBSan" \
				"$out/feedback-terms-san.log" \
				env TAILOR_ENGINE="$top/build/examples-san/tailor-engine" \
				tests/engine/feedback_terms_test.sh
		else
			tail -5 "$out/engine-san-build.log"
			result "example engine with ASan and UBSan" 1 "see $out/engine-san-build.log"
		fi
	else
		tail -5 "$out/test-tools.log"
		result "golden report tests" 1 "test tools did not build, see $out/test-tools.log"
		result "example engine tests" 1 "test tools did not build, see $out/test-tools.log"
	fi
	# 40 s a reader: eight readers' fuzzing is wall time that a slower
	# machine does not shorten (make check must stay under an hour on
	# one; longer runs: make -C userspace fuzz FUZZ_SECONDS=N).
	local t0=$EPOCHREALTIME
	if make -s -C userspace fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-40}" >"$out/fuzz.log" 2>&1; then
		result "recording, dictionary, profile, kallsyms and ELF TLS readers and exporters fuzzed for ${FUZZ_SECONDS:-40} s each (libFuzzer, ASan, UBSan): $(grep -o 'stat::number_of_executed_units: [0-9]*' "$out/fuzz.log" | grep -o '[0-9]*$' | paste -sd+ | bc) inputs" 0
	else
		grep -E 'ERROR|SUMMARY|Test unit written' "$out/fuzz.log" | head -5
		result "reader fuzzing" 1 "see $out/fuzz.log"
	fi
	stage_done "readers and exporters fuzzed" "$t0"

	check "kselftests build with -Werror" "$out/kselftests.log" \
		make -s -C "$top" kselftests
	tap_totals "man pages (mandoc -Tlint) and bash completion, from the option tables" \
		"$out/usage.log" tests/usage/usage_test.sh
	tap_totals "make install: files, libtailor.so and .a, libtailor.pc, a program built on them" \
		"$out/make-install.log" tests/packaging/make_install_test.sh
	tap_totals "DKMS builds and installs tailor.ko for Debian's 6.1 and 6.12" \
		"$out/dkms.log" tests/packaging/dkms_test.sh
	check "Debian packages (tailor, tailor-dkms, libtailor0, libtailor-dev) build; lintian and blhc clean" \
		"$out/debs.log" scripts/build-debs.sh
}

# digest_box VER CONSOLE: what a failed box run said, in short, for the
# digest printed before the summary line.  CI keeps only the tail of the
# output, and a box's console log stays behind on the machine that ran it.
digest_box() {
	local ver=$1 console=$2
	{
		echo "-- box $ver: $console"
		# boot.sh's verdict, and the console lines that failed it (its
		# patterns, not only the ones below).
		grep -a -A 12 'boot.sh: FAIL' "$out/box-$ver.log" 2>/dev/null | head -n 14
		tr -d '\r' <"$console" 2>/dev/null | grep -a -E \
			'BUG:|Oops|WARNING:|Kernel panic|RIP:|KASAN|TAILOR-BOX-FAIL' |
			head -n 12
		# The harness's message for each failed case: the lines before it.
		tr -d '\r' <"$console" 2>/dev/null | grep -a -B 4 '^not ok' |
			grep -a -v '^--$' | head -n 16
		# The box stopped inside a test: where it was.
		if ! tr -d '\r' <"$console" 2>/dev/null | tail -n 5 | grep -q 'TAILOR-BOX-RC='; then
			echo "   (the console ends without TAILOR-BOX-RC; its last lines:)"
			tr -d '\r' <"$console" 2>/dev/null | tail -n 15
		fi
	} | cut -c 1-200 >>"$out/digest"
}

box() {
	local ver=$1 line p f s console=$out/console-$1.log t0=$EPOCHREALTIME
	echo "== test box: $ver"
	rm -f "$console"
	tests/box/run.sh "$ver" --log "$console" | tee "$out/box-$ver.log"
	stage_done "test box $ver (build, boot, kselftests)" "$t0"
	line=$(tail -n 1 "$out/box-$ver.log")
	if [[ $line =~ :\ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
		[ "$f" -eq 0 ] || digest_box "$ver" "$console"
	else
		result "test box $ver" 1 "no summary line"
		digest_box "$ver" "$console"
	fi
}

# The machine first: a failure that rests on one CPU's costs is then tied
# to its hardware, and the stage times below to its speed.
cpu_line() {
	awk -F': ' '/^vendor_id/ && !v { v = $2 } /^cpu family/ && !f { f = $2 }
		/^model\t/ && !m { m = $2 } /^model name/ && !n { n = $2 }
		/^cpu MHz/ && !h { h = $2 }
		END { printf "%s family %s model %s (%s), %s MHz", v, f, m, n, h }' /proc/cpuinfo
	echo ", $(nproc) CPUs, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
		"kernel $(uname -r)"
}
echo "# machine: $(cpu_line)"
run_t0=$EPOCHREALTIME
echo "== native checks"
rm -f "$out/digest"
# tracefs gives the tracepoints' ids (sched:sched_waking) to tailor
# record's wakeups and to the bench's side-band sink; a machine that booted
# without it mounted gets it here, as perf would mount it for itself.
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" -eq 0 ]; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null &&
		echo "# tracefs mounted at /sys/kernel/tracing"
fi
native
stage_done "all native checks" "$run_t0"
box_t0=$EPOCHREALTIME
if [ $native_only -eq 0 ]; then
	box 6.1
	echo "== test box: make demo (6.1, with a C compiler)"
	tap_totals "make demo in the test box" "$out/demo.log" tests/engine/demo_test.sh
	echo "== test box: the engine's LLVM backend under tailor record (6.1, with clang)"
	tap_totals "the engine's LLVM backend in the test box: operator shares against the C backend's" \
		"$out/llvm-box.log" tests/engine/llvm_box_test.sh
	echo "== test box: node and lli-14 under tailor record (6.1, with node and clang)"
	tap_totals "JIT code of node and lli named from the recording's jitdumps and perf maps, in the test box" \
		"$out/jit-box.log" tests/jit/jit_box_test.sh
	echo "== test box: the engine's planted bottleneck under tailor record (6.1)"
	tap_totals "parallelism: the engine's group-by merge lock found and its fix, by tailor in the test box" \
		"$out/box-bottleneck.log" tests/parallel/box_bottleneck_test.sh
	echo "== the packages installed in a fresh Debian 12 root, used there and in the test box (6.1)"
	tap_totals "the packages as a new user gets them: apt in a fresh Debian 12, DKMS, the installed tailor in the test box" \
		"$out/install.log" tests/install/install_test.sh
	box 6.12
	box debug
	box debug-unstable
	stage_done "all box checks" "$box_t0"
fi
stage_done "make check" "$run_t0"
echo "== time by stage (wall), on $(cpu_line)"
printf '%s\n' "${stage_times[@]}"
if [ -s "$out/digest" ]; then
	echo "== what the failed box runs said (all of it in $out)"
	head -n 60 "$out/digest"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]

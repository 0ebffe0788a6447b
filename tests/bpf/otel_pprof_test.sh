#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# otel_pprof_test.sh: OpenTelemetry's thread context (OTEP 4947) from
# tailor record into pprof's labels, natively through the BPF collector,
# read back by go tool pprof.  tw_otel publishes a span per phase; the
# recording's samples (tailor dump) say which span each ran in, and the
# pprof profile tailor report writes from the same recording must carry,
# for every (trace_id, span_id), exactly that many samples as labels in
# go tool pprof -raw, and no labels on samples without a context.  The
# per-sample truth (r15 against the ids) is tailor_record_test.c's
# otel_thread_context_goes_with_each_sample.  Needs root, a kernel with
# BTF, and go (golang-go).  Prints TAP and a "# Totals:" line.
set -uo pipefail
shopt -s lastpipe
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
tailor=$top/build/userspace/tailor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip "needs root and a kernel with BTF"
	tap_totals
	exit 0
fi
for tool in go python3; do
	if ! command -v "$tool" >/dev/null; then
		not_ok "$tool is missing (scripts/setup.sh installs it)"
		tap_totals
		exit 1
	fi
done

rec=$work/otel.rec
if TAILOR_COLLECTOR=bpf "$tailor" record -q -o "$rec" -- \
	"$top/build/workloads/tw_otel" 400 2 >"$work/record.out" 2>&1; then
	ok "tailor record through the BPF collector of tw_otel"
else
	not_ok "tailor record through the BPF collector of tw_otel" "$work/record.out"
	tap_totals
	exit 1
fi
"$tailor" dump --samples 1000000 -i "$rec" >"$work/dump" 2>&1
if "$tailor" report -i "$rec" -f pprof -o "$work/otel.pb.gz" >"$work/report.out" 2>&1 &&
	HOME=$work GOCACHE=$work/go-cache go tool pprof -raw "$work/otel.pb.gz" \
		>"$work/raw" 2>"$work/raw.err"; then
	ok "tailor report -f pprof, read by go tool pprof -raw"
else
	cat "$work/report.out" "$work/raw.err" >>"$work/raw"
	not_ok "tailor report -f pprof, read by go tool pprof -raw" "$work/raw"
	tap_totals
	exit 1
fi

# The samples per (trace, span): the recording's, and pprof's labels'.
python3 - "$work/dump" "$work/raw" <<'EOF' | tap_from
import re, sys
from collections import Counter

dump, raw = open(sys.argv[1]).read(), open(sys.argv[2]).read()
want, without = Counter(), 0
for m in re.finditer(r'^sample: .*$', dump, re.M):
    line = m.group(0)
    t = re.search(r' otel_trace=([0-9a-f]{32}) otel_span=([0-9a-f]{16})', line)
    if t:
        want[(t.group(1), t.group(2))] += 1
    elif ' otel=none' in line:
        without += 1
got, unlabelled = Counter(), 0
body = raw.split('Samples:', 1)[1].split('Locations', 1)[0]
for block in re.split(r'\n(?=\s+\d+\s+\d+:)', body):
    head = re.match(r'\s+(\d+)\s+\d+:', block)
    if not head:
        continue
    n = int(head.group(1))
    trace = re.search(r'trace_id:\[([0-9a-f]+)\]', block)
    span = re.search(r'span_id:\[([0-9a-f]+)\]', block)
    if trace and span:
        got[(trace.group(1), span.group(1))] += n
    else:
        unlabelled += n
print('%d spans, %d samples in them, %d without a context; pprof: %d spans, %d labelled, %d not'
      % (len(want), sum(want.values()), without, len(got), sum(got.values()), unlabelled))
ok = len(want) >= 50 and without >= 100
print(('ok' if ok else 'not ok') + ' tw_otel\'s spans and its phases without a context are in the recording'
      + ('' if ok else ': too few (%d spans, %d samples without)' % (len(want), without)))
diff = [(k, want[k], got[k]) for k in set(want) | set(got) if want[k] != got[k]]
print(('ok' if not diff else 'not ok') + ' every span\'s samples are its trace_id and span_id labels in pprof'
      + ('' if not diff else ': %d differ, e.g. %s' % (len(diff), diff[:3])))
total = sum(int(m.group(1)) for m in re.finditer(r'^samples: (\d+)$', dump, re.M))
ok = unlabelled == total - sum(want.values())
print(('ok' if ok else 'not ok') + ' samples without a context carry no OpenTelemetry labels'
      + ('' if ok else ': %d unlabelled, %d expected' % (unlabelled, total - sum(want.values()))))
EOF
tap_totals

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# demo_native_test.sh: make demo's path natively through the BPF collector
# (scripts/demo.sh --native with TAILOR_COLLECTOR=bpf), on this machine's
# kernel with real timing: the recording is the BPF collector's; fig3's
# join and group-by carry the engine's samples by its dictionary, the
# tag word tells the two clients' query runs apart, the workers' lanes
# have their states from the side-band's switches, and EXPLAIN ANALYZE
# gives its four operators with shares adding up to 100.  The box's
# demo_test.sh checks the same path through tailor.ko in more detail.
# Needs root and a kernel with BTF.  Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip "needs root and a kernel with BTF"
	tap_totals
	exit 0
fi
out=$work/demo.out
if ! TAILOR_COLLECTOR=bpf "$top/scripts/demo.sh" --native >"$out" 2>"$work/demo.err"; then
	cat "$work/demo.err" >>"$out"
	TAP_EXCERPT=tail not_ok "make demo natively (scripts/demo.sh --native)" "$out"
	tap_totals
	exit 1
fi
ok "make demo natively (scripts/demo.sh --native) through the BPF collector"

rec=$top/build/demo/work/fig3.rec
if "$top/build/userspace/tailor" dump -i "$rec" | grep -q '^meta.collector: bpf$'; then
	ok "its recording says collector=bpf"
else
	not_ok "its recording says collector=bpf"
fi

# The engine's operator report: join and group-by hold most of its samples.
awk '/^== operator report of the engine/ { on = 1; next } /^== / { on = 0 }
     on && /%/ && /HashJoin#3|GroupBy#4/ { s += $1 } END { print s + 0 }' "$out" >"$work/share"
share=$(cat "$work/share")
if awk -v s="$share" 'BEGIN { exit !(s >= 50) }'; then
	ok "fig3's join and group-by hold $share% of the engine's samples"
else
	not_ok "fig3's join and group-by hold $share% of the engine's samples (want 50% or more)" "$out"
fi

# Two clients: each query run has samples of its own, told apart by the tag word.
runs=$(awk '/^== samples per query run/ { on = 1; next } /^== / { on = 0 }
	    on && /%/ && /client/ && $2 >= 50 { n++ } END { print n + 0 }' "$out")
if [ "$runs" -ge 4 ]; then
	ok "the two clients' 4 query runs each have 50 samples or more ($runs rows)"
else
	not_ok "the two clients' 4 query runs each have 50 samples or more ($runs rows)" "$out"
fi

if awk '/^== the workers. lanes/ { on = 1; next } /^== / { on = 0 } on' "$out" |
	grep -q '^# lanes: [0-9]* threads'; then
	ok "the workers' lanes are drawn"
else
	not_ok "the workers' lanes are drawn" "$out"
fi

ea=$(awk '/^EXPLAIN ANALYZE/ { on = 1 }
	  on && /^ *(GroupBy|HashJoin|TableScan)#/ { ops++; sub("%", "", $(NF-2)); share += $(NF-2) }
	  on && /^\(the query/ { sub("%", "", $(NF-1)); share += $(NF-1) }
	  END { printf "%d %.1f", ops, share }' "$out")
read -r ea_ops ea_share <<<"$ea"
if [ "$ea_ops" -eq 4 ] && awk -v s="$ea_share" 'BEGIN { exit !(s >= 99.5 && s <= 100.5) }'; then
	ok "EXPLAIN ANALYZE: 4 operators, shares adding up to $ea_share%"
else
	not_ok "EXPLAIN ANALYZE: 4 operators ($ea_ops), shares adding up to 100 ($ea_share)" "$out"
fi
tap_totals

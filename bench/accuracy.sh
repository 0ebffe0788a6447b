#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# accuracy.sh [--box|--native]: the accuracy oracle's table (see
# accuracy-steps.sh) -- natively where tailor.ko is loaded, else in the
# test box.  The table is also left in build/bench/accuracy/accuracy.txt.
# A benchmark: it prints figures and judges nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
exec "$top/scripts/profile-engine.sh" "$@" --out "$top/build/bench/accuracy" \
	--export accuracy.txt --export runs.txt -- "$top/bench/accuracy-steps.sh"

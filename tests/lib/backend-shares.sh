# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The fig3 run whose operator shares tests/engine/llvm_backend_test.sh
# compares between the engine's C and LLVM backends, and whose spread
# bench/backend-shares.sh measures: one place, so the two stay the same run.
#
# Each of the three hot operators carries the same known work per tuple (a
# chain of dependent multiplies, which both compilers emit alike and which
# a neighbour on the host's core hardly slows), and that work is most of
# each operator's time.  What remains, each compiler's own code for the
# scan, the probe and the aggregate, is a small part, so the shares say
# whether LLVM's code is attributed to the right operator and not how fast
# two compilers' code ran on a shared machine.  Without it (work on the
# scan and the group-by only), CI machines gave the hash join 12 to 27%
# under LLVM and 14 to 22% under C in runs minutes apart.
# shellcheck disable=SC2034 # used by the scripts that source this file
backend_shares_args=(-s 0.01 -n 60 -j 1 -r 0 -x "2=100" -x "3=100" -x "4=100")

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tap-summary.sh LABEL CONSOLE_LOG BOOT_RC
#
# Sums the kselftest results in a test-box console log.  A test binary
# that began but printed no "# Totals:" line (it crashed, or the box died)
# counts as one failure; so does a box that failed for any other reason
# (boot.sh's verdict, BOOT_RC).  Prints a line per binary, the failed
# cases with the last lines the case logged (its TH_LOG figures and the
# failed expectation: often all a CI summary shows of a box run), and
# "LABEL: N passed, N failed, N skipped"; exits 1 on failure.
set -euo pipefail
export LC_ALL=C

label=$1 log=$2 boot_rc=$3

tr -d '\r' <"$log" | awk -v label="$label" -v boot_rc="$boot_rc" '
/^TAILOR-TEST-BEGIN / { cur = $2; seen[cur] = 1; order[++n] = cur; next }
/^TAILOR-TEST-END / { cur = ""; next }
cur != "" && /^# Totals: / {
	for (i = 3; i <= NF; i++) {
		split($i, kv, ":")
		t[cur, kv[1]] = kv[2]
	}
	totals[cur] = 1
}
cur != "" && /^#  RUN / { nlog = 0; next }
cur != "" && /^not ok / {
	for (i = (nlog > 6 ? nlog - 5 : 1); i <= nlog; i++)
		fails[cur] = fails[cur] "\n       " substr(logged[i], 1, 300)
	fails[cur] = fails[cur] "\n     " $0
	nlog = 0
	next
}
cur != "" && /^# / && !/^# +(OK|FAIL|SKIP|Totals|PASSED|FAILED)/ { logged[++nlog] = $0 }
END {
	pass = fail = skip = 0
	for (i = 1; i <= n; i++) {
		b = order[i]
		if (!totals[b]) {
			printf "   %-24s no totals: the test binary died\n", b
			fail++
			continue
		}
		p = t[b, "pass"]; f = t[b, "fail"] + t[b, "error"] + t[b, "xpass"]
		s = t[b, "skip"]
		printf "   %-24s pass %d fail %d skip %d%s\n", b, p, f, s, fails[b]
		pass += p; fail += f; skip += s
	}
	if (n == 0) {
		print "   no kselftest ran"
		fail++
	}
	if (boot_rc != 0) {
		print "   the box run failed (see boot.sh output above)"
		fail++
	}
	printf "%s: %d passed, %d failed, %d skipped\n", label, pass, fail, skip
	exit fail ? 1 : 0
}'

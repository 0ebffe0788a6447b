#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# in-box.sh - the test box half of tests/install/install_test.sh: run by
# the box's /init from the installed Debian root, as root, with the root's
# own bash, kmod and tailor.  Loads tailor.ko the way an installed system
# does (modprobe, through the modules.dep that DKMS's depmod wrote),
# records the program built in the root against the installed libtailor,
# reports and dumps the recording, and unloads the module.
#
# Usage: in-box.sh RELEASE DIR
#   RELEASE  the kernel release the box runs (DKMS built tailor.ko for it)
#   DIR      where install_test.sh built first_program and its dictionary
#
# Prints its results as "ok TEXT" and "not ok TEXT" lines, notes as "# "
# lines, between TAILOR-INSTALL-RESULTS-BEGIN and -END, all at the end and
# with the kernel's console messages held back meanwhile, so that no
# printk splits a result line; what the kernel logged in between follows.
# The first line is "plan N": install_test.sh counts a result missing from
# the N as a failure.  Exits 0 once it ran every check, whatever the
# results.
set -uo pipefail
export LC_ALL=C

release=$1
dir=$2
out=/tmp/install-test
results=$out/results
mkdir -p "$out"
: >"$results"

# ok TEXT / not_ok TEXT [FILE]: a result, with FILE's last lines as notes.
ok() { echo "ok $1" >>"$results"; }
not_ok() {
	echo "not ok $1" >>"$results"
	if [ -n "${2:-}" ] && [ -f "$2" ]; then
		tail -n 15 "$2" | sed 's/^/#   /' >>"$results"
	fi
}
note() { echo "# $*" >>"$results"; }

echo "plan 8" >>"$results"
ko=/lib/modules/$release/updates/dkms/tailor.ko
rec=$out/first_program.rec
dict=$dir/first_program.dict

# modprobe, as a user would load it: found through modules.dep.
if modprobe tailor >"$out/modprobe.log" 2>&1 && [ -d /sys/module/tailor ]; then
	ok "modprobe tailor loads the module ($(uname -r))"
else
	dmesg | tail -n 10 >>"$out/modprobe.log"
	not_ok "modprobe tailor" "$out/modprobe.log"
fi

# The module loaded must be the file DKMS installed: modprobe resolves the
# name to it, and the running module's build ID (its GNU note in sysfs,
# the 20 bytes of SHA-1 at its end) is that file's.
path=$(modinfo -n tailor 2>&1)
file_id=$(readelf -n "$ko" 2>&1 | sed -n 's/^ *Build ID: //p')
mod_id=$(tail -c 20 /sys/module/tailor/notes/.note.gnu.build-id 2>/dev/null |
	od -A n -v -t x1 | tr -d ' \n')
if [ "$path" = "$ko" ] && [ -n "$file_id" ] && [ "$file_id" = "$mod_id" ]; then
	ok "the loaded module is DKMS's $ko (modinfo -n; build ID $mod_id)"
else
	not_ok "the loaded module is DKMS's: modinfo -n '$path', build ID of $ko '$file_id', loaded '$mod_id'"
fi

if [ -c /dev/tailor ]; then
	ok "/dev/tailor is there ($(stat -c '%A %U' /dev/tailor))"
else
	not_ok "/dev/tailor is not a character device: $(ls -l /dev/tailor 2>&1)"
fi

# The program the root built against libtailor.so.0, under the installed
# tailor, as the manual's first example runs it.
cd "$dir" || note "cannot cd to $dir"
rm -f "$rec"
/usr/bin/tailor record -o "$rec" -- ./first_program -d "$dict" 1 >"$out/record.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'tag 1 held' "$out/record.log" && [ -s "$rec" ]; then
	ok "tailor record -o $rec -- ./first_program: exit 0, $(stat -c %s "$rec") bytes"
else
	not_ok "tailor record -- ./first_program (exit $rc)" "$out/record.log"
fi
sed 's/^/#   record: /' "$out/record.log" >>"$results"

/usr/bin/tailor dump "$rec" >"$out/dump.log" 2>&1
rc=$?
samples=$(sed -n 's/^samples: //p' "$out/dump.log")
if [ $rc -eq 0 ] && grep -q '^status: complete' "$out/dump.log" &&
   [ "${samples:-0}" -gt 100 ]; then
	ok "tailor dump: the recording is complete, $samples samples"
else
	not_ok "tailor dump (exit $rc, samples '$samples')" "$out/dump.log"
fi
grep -E '^(meta\.(tool|kernel|source_used|event)|end\.(reason|lost)|samples|thread|status):' \
	"$out/dump.log" | sed 's/^/#   dump: /' >>"$results"

# Symbols: the shared function is named through the program's DWARF.
# The function is the table's last column (object and, where several
# processes ran, process come before it).
/usr/bin/tailor report -i "$rec" --level function >"$out/functions.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && awk '$NF == "spin" { found = 1 } END { exit !found }' "$out/functions.log"; then
	ok "tailor report: the function spin has samples ($(awk '$NF == "spin" { print $2 }' "$out/functions.log"))"
else
	not_ok "tailor report --level function (exit $rc): no spin" "$out/functions.log"
fi

# The dictionary: the samples in shared code go to the operator whose tag
# they captured.  The program spins with its tag held for nearly all of
# its second; loading and exiting take the rest.
/usr/bin/tailor report -i "$rec" -d "$dict" -f csv >"$out/operators.csv" 2>"$out/operators.err"
rc=$?
share=$(awk -F, '$1 == "spin" { print $4 }' "$out/operators.csv")
if [ $rc -eq 0 ] && [ -n "$share" ] && awk -v s="$share" 'BEGIN { exit !(s >= 50) }'; then
	ok "tailor report -d first_program.dict: operator spin has $share% of the samples, by its tag"
else
	cat "$out/operators.err" >>"$out/operators.csv"
	not_ok "tailor report -d (exit $rc): operator spin's share '$share'" "$out/operators.csv"
fi
/usr/bin/tailor report -i "$rec" -d "$dict" 2>&1 | head -n 12 | sed 's/^/#   report: /' >>"$results"

if rmmod tailor >"$out/rmmod.log" 2>&1 && [ ! -d /sys/module/tailor ]; then
	ok "rmmod tailor"
else
	not_ok "rmmod tailor" "$out/rmmod.log"
fi

# The results, with printk off the console meanwhile (a kernel message can
# land in the middle of a line), then what the kernel said in between, so
# that boot.sh still sees any splat.
read -r level _ </proc/sys/kernel/printk
lines=$(dmesg | wc -l)
dmesg -n 1
echo TAILOR-INSTALL-RESULTS-BEGIN
cat "$results"
echo TAILOR-INSTALL-RESULTS-END
dmesg -n "$level"
dmesg | tail -n "+$((lines + 1))"
exit 0

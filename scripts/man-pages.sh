#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# man-pages.sh - the man pages, from docs/man/*.scd and tailor's own
# tables, so that they say what --help says.
#
# Usage: scripts/man-pages.sh TAILOR SRC_DIR OUT_DIR
#
# Each SRC_DIR/PAGE.SECTION.scd becomes OUT_DIR/PAGE.SECTION through
# scdoc.  On the way, a line that is exactly
#   @OPTIONS@    becomes 'TAILOR CMD --scdoc-options' for the page
#                tailor-CMD.1: its command's option table;
#   @COMMANDS@   becomes 'TAILOR --scdoc-commands': every command with
#                its summary line.
# A placeholder in a page that has no such command is an error, and so is
# a command page without @OPTIONS@: its options would not be the table's.
set -euo pipefail
export LC_ALL=C

prog=${0##*/}
[ $# -eq 3 ] || { echo "usage: $prog TAILOR SRC_DIR OUT_DIR" >&2; exit 2; }
tailor=$1 src=$2 out=$3
command -v scdoc >/dev/null || { echo "$prog: scdoc missing; run scripts/setup.sh" >&2; exit 1; }
[ -x "$tailor" ] || { echo "$prog: $tailor: not an executable" >&2; exit 1; }

commands=" $("$tailor" --list-cmds) "
mkdir -p "$out"
n=0
for page in "$src"/*.scd; do
	name=$(basename "$page" .scd)	# tailor-record.1
	cmd=""
	if [[ $name =~ ^tailor-([a-z]+)\.1$ ]] && [[ $commands == *" ${BASH_REMATCH[1]} "* ]]; then
		cmd=${BASH_REMATCH[1]}
		grep -qx '@OPTIONS@' "$page" ||
			{ echo "$prog: $page: a command's page without @OPTIONS@" >&2; exit 1; }
	fi
	# Up to date: newer than its source, tailor and this script.  So
	# 'sudo make install' after 'make tools' writes nothing here.
	if [ "$out/$name" -nt "$page" ] && [ "$out/$name" -nt "$tailor" ] &&
		[ "$out/$name" -nt "$0" ]; then
		n=$((n + 1))
		continue
	fi
	tmp=$out/$name.scd
	: >"$tmp"
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		@OPTIONS@)
			[ -n "$cmd" ] ||
				{ echo "$prog: $page: @OPTIONS@, but tailor has no command for this page" >&2; exit 1; }
			"$tailor" "$cmd" --scdoc-options >>"$tmp" ;;
		@COMMANDS@)
			"$tailor" --scdoc-commands >>"$tmp" ;;
		*)
			printf '%s\n' "$line" >>"$tmp" ;;
		esac
	done <"$page"
	scdoc <"$tmp" >"$out/$name.tmp" || { echo "$prog: scdoc failed on $page" >&2; exit 1; }
	mv "$out/$name.tmp" "$out/$name"
	rm -f "$tmp"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "$prog: no pages in $src" >&2; exit 1; }
echo "man pages: $n in $out"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# usage_test.sh: the man pages and the bash completion say what the
# option tables say, as --help does.
#
# Man pages: scripts/man-pages.sh makes every page of docs/man; each passes
# mandoc -Tlint and man --warnings (groff's, as lintian runs) with no
# message; the issue's eight pages are there; every
# command but 'completion' has a page, tailor(1) lists every command, and
# every option of every command (tailor CMD --list-opts), with its value's
# name, is in that command's rendered page.  A page whose OPTIONS were
# written by hand instead of generated, or a table changed without its
# page, fails here.
#
# Completion: the script 'tailor completion bash' prints is sourced into
# bash and asked as bash asks it (COMP_WORDS, COMP_CWORD): commands,
# options, each kind of value (words, a table's choices, files, commands,
# none), '--opt=value', and a tailor that is not on PATH.
#
# Usage: tests/usage/usage_test.sh [TAILOR]   (default build/userspace/tailor)
# Prints TAP and a "# Totals:" line.
set -uo pipefail
export LC_ALL=C

top=$(cd "$(dirname "$0")/../.." && pwd)
tailor=$(realpath "${1:-$top/build/userspace/tailor}")
out=$top/build/usage-test
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
rm -rf "$out"
mkdir -p "$out/man"

# ---- man pages ----

if bash "$top/scripts/man-pages.sh" "$tailor" "$top/docs/man" "$out/man" >"$out/man-pages.log" 2>&1; then
	ok "scripts/man-pages.sh renders docs/man"
else
	not_ok "scripts/man-pages.sh renders docs/man" "$out/man-pages.log"
fi

for page in tailor.1 tailor-record.1 tailor-report.1 tailor-timeline.1 tailor-dump.1 \
	tailor-recording.5 tailor-dictionary.5 libtailor.3; do
	[ -f "$out/man/$page" ] || not_ok "man page $page is missing"
done

for page in "$out"/man/*.[0-9]; do
	[ -f "$page" ] || continue
	name=$(basename "$page")
	mandoc -Tlint -W warning "$page" >"$out/$name.lint" 2>&1
	MANWIDTH=80 man --warnings -l "$page" 2>>"$out/$name.lint" >/dev/null
	if [ ! -s "$out/$name.lint" ]; then
		ok "mandoc -Tlint and man --warnings: $name"
	else
		not_ok "mandoc -Tlint and man --warnings: $name" "$out/$name.lint"
	fi
	# Wide enough that no option wraps; scdoc turns hyphenation off.
	mandoc -Tascii -O width=250 "$page" | col -b >"$page.txt"
	grep -q '@OPTIONS@\|@COMMANDS@' "$page.txt" &&
		not_ok "$name: a placeholder is left" "$page.txt"
done

for cmd in $("$tailor" --list-cmds); do
	[ "$cmd" = completion ] && continue
	page=tailor-$cmd.1
	if [ ! -f "$out/man/$page.txt" ]; then
		not_ok "tailor $cmd has a man page ($page)"
		continue
	fi
	grep -qE "^ *$cmd\$" "$out/man/tailor.1.txt" || not_ok "tailor(1) lists '$cmd'"
	missing=""
	for word in $("$tailor" "$cmd" --list-opts); do
		case $word in
		--*)
			value=$("$tailor" "$cmd" --list-values "$word" >/dev/null && echo arg)
			# The rendered heading: "--name ARG" or "--name" alone.
			if [ -n "$value" ]; then
				grep -qE -- "(^|[ ,])$word [^ ]" "$out/man/$page.txt" || missing+=" $word"
			else
				grep -qE -- "(^|[ ,])$word( |,|$)" "$out/man/$page.txt" || missing+=" $word"
			fi ;;
		-?)
			grep -qE -- "(^|[ ,])$word, --" "$out/man/$page.txt" || missing+=" $word" ;;
		esac
	done
	if [ -z "$missing" ]; then
		ok "$page: every option of 'tailor $cmd --help'"
	else
		not_ok "$page: options missing:$missing"
	fi
done

# The generator itself: a help text's lines make one paragraph, and its
# markup characters stay literal (tailor_tag_word keeps its underscores).
if grep -q 'the thread.s tag word' "$out/man/tailor-record.1.txt" &&
	grep -q 'tailor_tag_word' "$out/man/tailor-record.1.txt"; then
	ok "tailor-record(1): --tag-word's help, underscores and all"
else
	not_ok "tailor-record(1): --tag-word's help, underscores and all" "$out/man/tailor-record.1.txt"
fi

# ---- bash completion ----

"$tailor" completion bash >"$out/tailor.bash"
if bash -n "$out/tailor.bash" 2>"$out/bash-n.log"; then
	ok "the completion script parses (bash -n)"
else
	not_ok "the completion script parses (bash -n)" "$out/bash-n.log"
fi

# complete WORDS...: what the script offers for the last word, sorted, on
# one line; as bash splits it: '=' is a word of its own.
complete_words() {
	bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_tailor
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
	' complete "$out/tailor.bash" "$@"
}

# expect NAME WANT WORDS...: the offer is exactly WANT (sorted words).
expect() {
	local name=$1 want=$2 got
	shift 2
	got=$(cd "$out" && PATH=${EXPECT_PATH:-$(dirname "$tailor"):$PATH} complete_words "$@")
	if [ "$got" = "$want" ]; then
		ok "completion: $name"
	else
		echo "# want '$want'"
		echo "# got  '$got'"
		not_ok "completion: $name"
	fi
}

mkdir -p "$out/files" && touch "$out/files/run.rec" "$out/files/run.dict"
expect "a command" "record report " tailor re
# shellcheck disable=SC2046 # the words, one a line
expect "the commands, --help and --version" \
	"$(printf '%s\n' $("$tailor" --list-cmds) --help --version | sort | tr '\n' ' ')" tailor ""
expect "an option" "--filter " tailor record --fil
expect "a short and long option list" "--help --html " tailor report --h
expect "a value from words" "kernel " tailor record --filter ke
expect "a value from a table (report's formats)" "pprof " tailor report --format pp
expect "a value after '='" "lanes " tailor report --view = la
# shellcheck disable=SC2046 # the words, one a line
expect "a value right after '='" "$(printf '%s\n' $("$tailor" report --list-values --view) | sort | tr '\n' ' ')" \
	tailor report --view =
expect "a short option's value" "cpu-clock " tailor record -e cpu
expect "a file" "files/run.dict files/run.rec " tailor report -i files/run
expect "a value with no completion offers nothing" "" tailor report --top ""
expect "an operand is a file" "files/run.rec " tailor dump files/run.r
expect "an option of one command is not another's" "" tailor dump --fil
EXPECT_PATH=/usr/bin:/bin expect "tailor as typed, not on PATH" "--filter " "$tailor" record --fil

tap_totals

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# usage_test.sh: the man pages and the bash completion say what the
# option tables say, as --help does.
#
# Man pages: scripts/man-pages.sh makes every page of docs/man; each passes
# mandoc -Tlint and man --warnings (groff's, as lintian runs) with no
# message; the issue's eight pages are there; the commands are the five
# known; every command but 'completion' has a page and tailor(1) lists it;
# --list-opts gives exactly the options --help shows; each option's line
# of --help ("-e, --event EVENT") heads an entry of the rendered page.  A
# page whose OPTIONS were written by hand instead of generated, or a table
# changed without its page, fails here.
#
# Completion: the script 'tailor completion bash' prints is shellcheck-clean,
# and sourced into bash and asked as bash asks it (COMP_WORDS, COMP_CWORD):
# commands, options, each kind of value (words, a table's choices, files,
# none), '--opt=value', a file name with a space, record's launched command
# (a command, then its own words), and the tailor typed rather than the one
# on PATH.
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

# The commands, as the README and the pages know them: a command lost from
# the table (or --list-cmds printing nothing) is caught here.
commands=$("$tailor" --list-cmds)
if [ "$commands" = "record dump report timeline completion" ]; then
	ok "tailor --list-cmds: record dump report timeline completion"
else
	not_ok "tailor --list-cmds: '$commands'"
fi

# help_options CMD: "-e, --event EVENT" or "--quiet" per option, as
# 'tailor CMD --help' prints them.
help_options() {
	"$tailor" "$1" --help | sed -n -e 's/^  \(-[^ ], --[^ ]*\)\( [^ ]*\)\{0,1\}.*/&/p' \
		-e 's/^      \(--[^ ]*\)\( [^ ]*\)\{0,1\}.*/&/p' |
		sed -e 's/^ *//' -e 's/^\(-[^ ], --[^ ]*\|--[^ ]*\)\( [A-Z][^ ]*\)\{0,1\}.*/\1\2/'
}

for cmd in $commands; do
	[ "$cmd" = completion ] && continue
	page=tailor-$cmd.1
	help_options "$cmd" >"$out/$cmd.help-options"
	# --list-opts (the completion's words) against --help, word for word.
	tr ' ' '\n' <<<"$("$tailor" "$cmd" --list-opts)" | sort >"$out/$cmd.list-opts"
	sed -e 's/ [A-Z].*//' -e 's/, /\n/' "$out/$cmd.help-options" | sort >"$out/$cmd.help-words"
	if [ -s "$out/$cmd.list-opts" ] && cmp -s "$out/$cmd.list-opts" "$out/$cmd.help-words"; then
		ok "tailor $cmd --list-opts: the options --help shows ($(wc -l <"$out/$cmd.list-opts") words)"
	else
		diff "$out/$cmd.help-words" "$out/$cmd.list-opts" >"$out/$cmd.opts.diff"
		not_ok "tailor $cmd --list-opts against --help" "$out/$cmd.opts.diff"
	fi
	if [ ! -f "$out/man/$page.txt" ]; then
		not_ok "tailor $cmd has a man page ($page)"
		continue
	fi
	grep -qE "^ *$cmd\$" "$out/man/tailor.1.txt" || not_ok "tailor(1) lists '$cmd'"
	# Each option's heading as --help writes it, value name and all.
	missing=""
	sed 's/^ *//' "$out/man/$page.txt" >"$out/$page.lines"
	while IFS= read -r heading; do
		grep -qxF -- "$heading" "$out/$page.lines" || missing+=" '$heading'"
	done <"$out/$cmd.help-options"
	if [ -s "$out/$cmd.help-options" ] && [ -z "$missing" ]; then
		ok "$page: every option of 'tailor $cmd --help' ($(wc -l <"$out/$cmd.help-options")), as --help names it and its value"
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
if ! command -v shellcheck >/dev/null; then
	skip "shellcheck on the completion script: no shellcheck"
elif shellcheck -s bash "$out/tailor.bash" >"$out/shellcheck.log" 2>&1; then
	ok "the completion script is shellcheck-clean"
else
	not_ok "the completion script is shellcheck-clean" "$out/shellcheck.log"
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

# expect_has NAME WORD WORDS...: the offer includes WORD (commands: the
# machine's list is not ours to fix).
expect_has() {
	local name=$1 want=$2 got
	shift 2
	got=$(cd "$out" && PATH=$(dirname "$tailor"):$PATH complete_words "$@")
	if [[ " $got " == *" $want "* ]]; then
		ok "completion: $name"
	else
		echo "# want '$want' among '$got'"
		not_ok "completion: $name"
	fi
}

mkdir -p "$out/files" && touch "$out/files/run.rec" "$out/files/run.dict" "$out/files/my run.rec"
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
# A file name with a space is one reply, not two.
got=$(cd "$out" && PATH=$(dirname "$tailor"):$PATH bash -c '
	. "$1"; COMP_WORDS=(tailor dump "files/my"); COMP_CWORD=2; _tailor
	printf "%s|" "${COMPREPLY[@]}"' complete "$out/tailor.bash")
if [ "$got" = "files/my run.rec|" ]; then
	ok "completion: a file name with a space is one word"
else
	not_ok "completion: a file name with a space is one word: '$got'"
fi

# record runs a command: its first operand is a command, and the words
# after it are that command's, not record's options.
expect_has "record's operand is a command" "echo" tailor record ech
expect_has "record's operand is a command after options and values" "echo" \
	tailor record -F 99 --event = cycles -o files/x.rec ech
expect_has "record's operand after --" "echo" tailor record -q -- ech
expect "the launched command's options are not record's" "" tailor record echo --fil
expect "the launched command's arguments are files" "files/run.dict files/run.rec " \
	tailor record echo files/run.
expect "record's own options before the command" "--filter " tailor record -q --fil
expect "completion's operand is a shell" "bash " tailor completion b
expect "not a command: nothing" "" tailor help --fil

# The tailor typed is the one asked, even with another 'tailor' on PATH.
# shellcheck disable=SC2016 # the decoy's own $1
mkdir -p "$out/decoy" &&
	printf '#!/bin/sh\n[ "$1" = --list-cmds ] && echo record || echo --decoy\n' >"$out/decoy/tailor" &&
	chmod +x "$out/decoy/tailor"
EXPECT_PATH=$out/decoy:/usr/bin:/bin expect "tailor as typed, not the one on PATH" "--filter " \
	"$tailor" record --fil
EXPECT_PATH=$out/decoy:/usr/bin:/bin expect "else the one on PATH" "--decoy " tailor record --de

tap_totals

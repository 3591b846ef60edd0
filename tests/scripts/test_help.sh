#!/usr/bin/env bash
# test_help.sh LONGPOLE SRCDIR: the help of every command as users reach it, and the
# option tables of docs/ against it (the parser and the help are one table per command,
# checked both ways by tests/cli/test_options.c; this checks what is around them):
#  - every command of the overview has `longpole help CMD`, equal to `longpole CMD --help`
#    and `-h`, starting with its usage line; an unknown topic is a usage error (exit 2);
#  - every option in a command's help is accepted: each one is given once to the real
#    command (in each of its forms), and one form at least must not refuse it as unknown;
#  - every option named in the option tables of docs/serve.md, docs/report.md and
#    docs/formats/sqlite.md is in `longpole help serve|report|export`.
set -uo pipefail
lp=$1 src=$2
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cmds=$("$lp" help | sed -n '/^commands:/,/^$/p' | awk 'NF && $1 != "commands:" {print $1}')
[ "$(echo "$cmds" | wc -w)" -ge 16 ] || bad "the overview lists $(echo "$cmds" | wc -w) commands"
for c in $cmds; do
  "$lp" help "$c" > "$tmp/help" || bad "help $c: exit $?"
  "$lp" "$c" --help > "$tmp/dash" || bad "$c --help: exit $?"
  "$lp" "$c" -h > "$tmp/h" || bad "$c -h: exit $?"
  cmp -s "$tmp/help" "$tmp/dash" || bad "help $c differs from $c --help"
  cmp -s "$tmp/help" "$tmp/h" || bad "help $c differs from $c -h"
  head -1 "$tmp/help" | grep -q "^usage: longpole $c" || bad "help $c does not start with its usage"
done
"$lp" help no-such-topic > /dev/null 2>&1; [ $? = 2 ] || bad "an unknown help topic is not a usage error"

# Each documented option, given to its command, is never "unknown" (a bad value: any
# other complaint is fine).
for c in $cmds; do
  [ "$c" = help ] && continue
  "$lp" help "$c" | grep -E '^  -' | sed -E 's/^  //' | tr ',' ' ' | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^-/) print $i; else if ($i !~ /^[A-Z0-9|:_.]+$/ && $i !~ /\|/) break}' |
    sed 's/\[.*//' | sort -u > "$tmp/opts"
  [ -s "$tmp/opts" ] || bad "help $c lists no option"
  while read -r o; do
    case "$c" in # the forms of the command: the option must be accepted by one
      generate) forms=("dataflow" "requests");;
      stream) forms=("--window 1s" "--emit");;
      export) forms=("--chrome -" "--sqlite $tmp/x.db");;
      cp) forms=("" "--thread 1");;
      dist) forms=("kcp" "summary --window 1s" "infer -o -" "requests" "spans");; # add a `dist` subcommand here when it has options of its own
      *) forms=("");;
    esac
    refused=0
    for f in "${forms[@]}"; do
      read -r -a pre <<< "$f"
      # two unknown options after it: one may be taken as its value, the other stops
      # the parse, so nothing ever runs (and it runs in $tmp)
      (cd "$tmp" && timeout 10 "$lp" "$c" "${pre[@]}" "$o" --no-such-option-1 --no-such-option-2 < /dev/null \
        > /dev/null 2> "$tmp/err")
      grep -q "unknown option '$o" "$tmp/err" && refused=$((refused + 1))
    done
    [ $refused -lt ${#forms[@]} ] || bad "$c: '$o' is in the help but refused: $(head -1 "$tmp/err")"
  done < "$tmp/opts"
done

# docs/: the option tables (rows starting with | `-) name options the command has
check_doc() { # doc command
  "$lp" help "$2" > "$tmp/h"
  # first cells made of options only (other rows, e.g. of benchmarks, have prose beside them)
  grep -E '^\| `-' "$src/$1" | cut -d'|' -f2 | awk '{ t = $0; gsub(/`[^`]*`/, "", t); if (t !~ /:/) print }' |
    grep -oE -- '`-[-a-z]+' | tr -d '`' | sort -u > "$tmp/doc"
  [ -s "$tmp/doc" ] || bad "$1: no option table found"
  while read -r o; do
    grep -qE -- "(^|[ ,])$o([ ,=[]|$)" "$tmp/h" || bad "$1 documents $o, which \`longpole help $2\` does not"
  done < "$tmp/doc"
}
check_doc docs/serve.md serve
check_doc docs/report.md report
check_doc docs/formats/sqlite.md export

[ $fail = 0 ] && echo "ok help of $(echo "$cmds" | wc -w) commands, their options, and docs/ option tables"
exit $fail

#!/usr/bin/env bash
# test_roundtrip.sh LONGPOLE SRCDIR: for generated traces, text -> binary -> text is
# byte-identical (issue 2), compressed forms read back equal, and S/R halves read back
# as the same messages as M records.
set -euo pipefail
lp=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export LONGPOLE_NO_PROGRESS=1
n=0
for spec in "--seed 1" "--seed 7 --skew 0.5 --slow flatmap.0:2" "--ops src:3,map:2:500,red:5:800:keyed --seed 3" \
            "--ops a:1,b:1 --checkpoint 0 --seed 9" "--seed 11 --batch 7 --credits 1 --jitter 0.5"; do
  n=$((n+1))
  # shellcheck disable=SC2086
  "$lp" generate dataflow $spec --duration 50ms -o "$tmp/g$n.lpt"
  "$lp" convert "$tmp/g$n.lpt" -o "$tmp/g$n.lptb"
  "$lp" convert "$tmp/g$n.lptb" -o "$tmp/g$n.back.lpt"
  cmp "$tmp/g$n.lpt" "$tmp/g$n.back.lpt" || { echo "text -> binary -> text differs for: $spec"; exit 1; }
  # the generator writes binary directly too: it reads back as the same text
  # shellcheck disable=SC2086
  "$lp" generate dataflow $spec --duration 50ms -o "$tmp/d$n.lptb"
  "$lp" convert "$tmp/d$n.lptb" -o "$tmp/d$n.lpt"
  cmp "$tmp/g$n.lpt" "$tmp/d$n.lpt" || { echo "generated binary reads back differently: $spec"; exit 1; }
  for c in gz zst; do
    "$lp" convert "$tmp/g$n.lpt" -o "$tmp/g$n.lpt.$c"
    "$lp" convert "$tmp/g$n.lpt.$c" -o "$tmp/g$n.$c.lpt"
    cmp "$tmp/g$n.lpt" "$tmp/g$n.$c.lpt" || { echo "$c round trip differs: $spec"; exit 1; }
    "$lp" convert "$tmp/g$n.lpt" -o "$tmp/g$n.lptb.$c"
    "$lp" convert "$tmp/g$n.lptb.$c" -o "$tmp/g$n.b$c.lpt"
    cmp "$tmp/g$n.lpt" "$tmp/g$n.b$c.lpt" || { echo "binary $c round trip differs: $spec"; exit 1; }
  done
  # same analysis from every form
  a=$("$lp" cp --json "$tmp/g$n.lpt"); b=$("$lp" cp --json "$tmp/g$n.lptb.zst")
  [ "$a" = "$b" ] || { echo "cp differs between text and compressed binary: $spec"; exit 1; }
done
# halves: the same messages as whole records
"$lp" generate dataflow --seed 5 --duration 50ms --halves -o "$tmp/h.lpt"
"$lp" generate dataflow --seed 5 --duration 50ms -o "$tmp/m.lpt"
grep -q '^S ' "$tmp/h.lpt" || { echo "--halves wrote no S records"; exit 1; }
"$lp" convert "$tmp/h.lpt" -o "$tmp/h2.lpt"
# (message order differs, so ties may pick other equal-length paths: compare lengths and counts)
a=$("$lp" cp --json "$tmp/h2.lpt" | grep -o '"total_ns":[0-9]*\|"messages":[0-9]*' | tr '\n' ' ')
b=$("$lp" cp --json "$tmp/m.lpt" | grep -o '"total_ns":[0-9]*\|"messages":[0-9]*' | tr '\n' ' ')
[ "$a" = "$b" ] || { echo "halves give a different trace or path length than whole messages: $a vs $b"; exit 1; }
# times at the number formatter's boundaries (8-digit groups, the int64 extremes) survive
printf '%s\n' 'longpole-trace 1' 'A a -9223372036854775807 -100000000 processing' 'A a -99999999 0 processing' \
  'A a 9 10 processing' 'A a 99999999 100000000 processing' 'A a 9999999999999999 10000000000000000 processing' \
  'A a 10000000000000001 999999999999999999 processing' 'A a 1000000000000000000 9223372036854775806 processing' > "$tmp/big.lpt"
"$lp" convert "$tmp/big.lpt" -o "$tmp/big.lptb"
"$lp" convert "$tmp/big.lptb" -o "$tmp/big2.lpt"
grep -v -e unknown -e waiting -e "^W " "$tmp/big2.lpt" | cmp -s - "$tmp/big.lpt" || { echo "extreme times do not round trip:"; diff "$tmp/big.lpt" "$tmp/big2.lpt"; exit 1; }
echo "round trips: $n generated traces OK"

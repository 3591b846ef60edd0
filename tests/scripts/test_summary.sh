#!/usr/bin/env bash
# test_summary.sh LONGPOLE SRCDIR: `longpole summary` end to end (issue 3):
#  - the SnailTrail §7.5 scenarios through the CLI: the straggler summary names count.0
#    at 30, 50 and 80% skew; the operator summary ranks flatmap first for 4-2-4 and
#    1-2-4 and not for 4-4-4, in every window;
#  - the same output from text, binary and compressed input, and from 1 or 2 threads;
#  - JSON lines: one object per window and one total, valid JSON, CP sums to 1;
#  - tumbling windows: their events add up to the trace's.
set -euo pipefail
lp=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export LONGPOLE_NO_PROGRESS=1
fail() { echo "FAIL: $*"; exit 1; }

# the first key of one summary, per window, from --compact output
first_keys() { # file by
  "$lp" summary --window 250ms --to 1s --by "$2" --compact --top 1 "$1" | grep '^\[' |
    sed -e "s/.*| $2: //" -e 's/ [0-9.<]*%.*//'
}
for s in skew30 skew50 skew80; do
  "$lp" generate dataflow --scenario "$s" --duration 1s -o "$tmp/$s.lptb"
  keys=$(first_keys "$tmp/$s.lptb" worker | sort -u)
  [ "$keys" = "count.0" ] || fail "$s: the straggler summary names '$keys', expected count.0 in every window"
done
for s in flatmap-424 flatmap-124; do
  "$lp" generate dataflow --scenario "$s" --duration 1s -o "$tmp/$s.lptb"
  keys=$(first_keys "$tmp/$s.lptb" operator | sort -u)
  [ "$keys" = "flatmap" ] || fail "$s: the operator summary ranks '$keys' first, expected flatmap in every window"
done
"$lp" generate dataflow --scenario flatmap-444 --duration 1s -o "$tmp/f444.lptb"
if first_keys "$tmp/f444.lptb" operator | grep -cx flatmap >/dev/null; then
  fail "flatmap-444: the operator summary still ranks flatmap first in some window"
fi

# every input form and thread count gives the same output
"$lp" generate dataflow --seed 3 --skew 0.4 --duration 300ms -o "$tmp/g.lpt"
"$lp" convert "$tmp/g.lpt" -o "$tmp/g.lptb.zst"
"$lp" convert "$tmp/g.lpt" -o "$tmp/g.lpt.gz"
a=$("$lp" summary --window 50ms --slide 20ms --threads 1 "$tmp/g.lpt")
b=$("$lp" summary --window 50ms --slide 20ms --threads 2 "$tmp/g.lptb.zst")
c=$("$lp" summary --window 50ms --slide 20ms --threads 3 "$tmp/g.lpt.gz")
[ "$a" = "$b" ] || fail "text/1 thread and compressed binary/2 threads differ"
[ "$a" = "$c" ] || fail "text/1 thread and gzip text/3 threads differ"
echo "$a" | grep -c 'window 13 ' >/dev/null || fail "expected 14 sliding windows"

# JSON lines
"$lp" summary --window 100ms --json "$tmp/g.lptb.zst" > "$tmp/j.jsonl"
[ "$(wc -l < "$tmp/j.jsonl")" -eq 5 ] || fail "expected 4 window objects and 1 total, got $(wc -l < "$tmp/j.jsonl") lines"
[ "$(grep -c '"kind":"window"' "$tmp/j.jsonl")" -eq 4 ] || fail "expected 4 window objects"
tail -1 "$tmp/j.jsonl" | grep -c '"kind":"overall"' >/dev/null || fail "the last line is not the totals"
grep -q '"cp_sum_ok":false' "$tmp/j.jsonl" && fail "a window's CP does not sum to 1"
if command -v python3 > /dev/null; then
  python3 - "$tmp/j.jsonl" <<'PY' || fail "JSON lines do not parse or do not add up"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for w in lines[:-1]:
    assert abs(w["cp_sum"] - 1) <= 1e-9, w["cp_sum"]
    for kind, s in w["summaries"].items():
        tot = sum(r["cp"] for r in s["rows"])
        assert abs(tot - s["cp_total"]) < 1e-9, (kind, tot, s["cp_total"])
        if kind != "comm":
            assert abs(tot - 1) < 1e-9, (kind, tot)
assert lines[-1]["windows"] == len(lines) - 1
PY
fi

# tumbling windows split the trace's events exactly
ev=0
for e in $(grep '"kind":"window"' "$tmp/j.jsonl" | grep -o '"events":[0-9]*' | cut -d: -f2); do ev=$((ev + e)); done
want=$(( 2 * $(grep -c '^A ' "$tmp/g.lpt") + 2 * $(grep -c '^M ' "$tmp/g.lpt") ))
[ "$ev" = "$want" ] || fail "window events add up to $ev, the trace has $want (2 per activity and message)"

# usage errors
set +e
"$lp" summary --window "$tmp/g.lpt" > /dev/null 2>&1; [ $? -eq 2 ] || fail "--window without a duration should be a usage error"
"$lp" summary --by nothing "$tmp/g.lpt" > /dev/null 2>&1; [ $? -eq 2 ] || fail "--by nothing should be a usage error"
"$lp" summary --slide 1s "$tmp/g.lpt" > /dev/null 2>&1; [ $? -eq 2 ] || fail "--slide without --window should be a usage error"
"$lp" generate dataflow --scenario nope -o "$tmp/x.lpt" > /dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown scenario should be a usage error"
set -e
echo "test_summary: ok"

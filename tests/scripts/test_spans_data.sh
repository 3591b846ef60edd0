#!/usr/bin/env bash
# test_spans_data.sh LONGPOLE SRCDIR: the real span traces of ../shared/data/{jaeger,
# zipkin,otlp} (see its README). For every file: it is detected as its format and loads
# without error (`spans` and, as an activity graph, `info`); the number of spans read
# equals an independent count by jq; and the critical path of each of its traces covers
# the root span's run exactly: sections adjacent, from the root's start to its end,
# their durations summing to the trace latency. Also a whole directory at once.
# Skips (77) when ../shared/data, jq or python3 is absent.
set -u
lp=$1; src=$2
data=$src/../shared/data
if [ ! -d "$data/jaeger" ]; then echo "skip: $data is absent"; exit 77; fi
if ! command -v jq >/dev/null 2>&1; then echo "skip: jq is not installed (sh scripts/deps.sh test)"; exit 77; fi
if ! command -v python3 >/dev/null 2>&1; then echo "skip: python3 is not installed (sh scripts/deps.sh test)"; exit 77; fi
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; files=0

count() { # FORMAT FILE: spans by jq
  case $1 in
    jaeger) jq -s '[ .[] | if type == "object" and has("data") then .data[].spans[]
                         elif type == "object" then .spans[]
                         else .[] | (if has("spans") then .spans[] else . end) end ] | length' "$2" ;;
    zipkin) jq -s '[ .[] | if type == "array" then .[] | (if type == "array" then .[] else . end) else . end ] | length' "$2" ;;
    otlp) jq -s '[ .[] | .resourceSpans[]? | (.scopeSpans // .instrumentationLibrarySpans)[]? | .spans[]? ] | length' "$2" ;;
  esac
}

for fmt in jaeger zipkin otlp; do
  total=0
  for f in "$data/$fmt"/*; do
    [ -f "$f" ] || continue
    files=$((files + 1))
    name=${f#"$data"/}
    if ! "$lp" spans --json --sections "$f" > "$tmp/out.json" 2> "$tmp/err"; then
      echo "FAIL $name: longpole spans exited $?"; cat "$tmp/err"; fail=1; continue
    fi
    if grep -q ": error: " "$tmp/err"; then echo "FAIL $name: errors while loading"; cat "$tmp/err"; fail=1; fi
    want=$(count "$fmt" "$f"); got=$(jq .input.spans "$tmp/out.json")
    total=$((total + want))
    if [ "$want" != "$got" ]; then echo "FAIL $name: $got spans read, jq counts $want"; fail=1; fi
    # exact integers: jq's numbers are doubles, epoch nanoseconds are not exact in them
    bad=$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
for t in doc["traces"]:
    if t["root"] is None:
        continue
    s = t["sections"]
    ok = sum(x["end"] - x["start"] for x in s) == t["latency_ns"]
    ok = ok and all(x["end"] - x["start"] == x["duration_ns"] > 0 for x in s)
    ok = ok and (not s or (s[0]["start"] == t["start"] and s[-1]["end"] == t["start"] + t["latency_ns"]))
    ok = ok and all(s[i]["start"] == s[i - 1]["end"] for i in range(1, len(s)))
    if not ok:
        bad.append(t["trace"])
print(" ".join(bad))' "$tmp/out.json")
    if [ -n "$bad" ]; then echo "FAIL $name: critical paths that do not cover their root exactly: $bad"; fail=1; fi
    ntraces=$(jq '[.traces[] | select(.root != null)] | length' "$tmp/out.json")
    if [ "$ntraces" -lt 1 ]; then echo "FAIL $name: no trace with a root"; fail=1; fi
    # the activity graph
    if ! "$lp" info "$f" > /dev/null 2> "$tmp/err2" || grep -q ": error: " "$tmp/err2"; then
      echo "FAIL $name: does not load as an activity graph"; cat "$tmp/err2"; fail=1
    fi
    echo "ok $name: $got spans, $ntraces trace(s) with a root"
  done
  # the whole folder at once
  got=$("$lp" spans --json "$data/$fmt" 2> /dev/null | jq .input.spans)
  if [ "$got" != "$total" ]; then echo "FAIL $fmt/: $got spans read from the folder, files hold $total"; fail=1; fi
done
[ "$files" -gt 10 ] || { echo "FAIL: only $files files found"; fail=1; }
exit $fail

#!/usr/bin/env bash
# test_spans_gen.sh LONGPOLE SRCDIR: one set of generated traces (bench/spans/spangen)
# written as Jaeger, Zipkin and OTLP JSON must read the same: as many spans and traces
# in each format, and, for Jaeger and OTLP (which both carry FOLLOWS_FROM; Zipkin has
# no such reference), identical critical-path aggregates. Also: gzip and zstd input,
# and the per-trace invariant on all of them. Skips (77) without spangen or jq.
set -u
lp=$1; src=$2
gen=$(dirname "$lp")/bench/spans/spangen
[ -x "$gen" ] || { echo "skip: $gen not built"; exit 77; }
command -v jq >/dev/null 2>&1 || { echo "skip: jq is not installed"; exit 77; }
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
for fmt in jaeger zipkin otlp; do
  "$gen" $fmt --traces 300 --spans 40 --seed 7 > "$tmp/t.$fmt.json" 2> /dev/null
  "$lp" spans --json "$tmp/t.$fmt.json" > "$tmp/$fmt.out" 2> "$tmp/$fmt.err" || { echo "FAIL $fmt: exit $?"; cat "$tmp/$fmt.err"; fail=1; }
  [ "$(jq .input.spans "$tmp/$fmt.out")" = 12000 ] || { echo "FAIL $fmt: $(jq .input.spans "$tmp/$fmt.out") spans"; fail=1; }
  [ "$(jq .input.traces "$tmp/$fmt.out")" = 300 ] || { echo "FAIL $fmt: $(jq .input.traces "$tmp/$fmt.out") traces"; fail=1; }
  [ "$(jq .traces_analysed "$tmp/$fmt.out")" = 300 ] || { echo "FAIL $fmt: not every trace analysed"; fail=1; }
  "$lp" spans --folded=95 "$tmp/t.$fmt.json" > "$tmp/$fmt.folded" 2> /dev/null
done
if ! cmp -s "$tmp/jaeger.folded" "$tmp/otlp.folded"; then
  echo "FAIL: Jaeger and OTLP forms of the same traces give different critical paths"
  diff "$tmp/jaeger.folded" "$tmp/otlp.folded" | head -10; fail=1
fi
# the percentile tables agree too (the JSON without the input section)
if ! cmp -s <(jq -S .percentiles "$tmp/jaeger.out") <(jq -S .percentiles "$tmp/otlp.out"); then
  echo "FAIL: Jaeger and OTLP percentile tables differ"; fail=1
fi
# compressed input reads the same
gzip -c "$tmp/t.jaeger.json" > "$tmp/t.json.gz"
"$lp" spans --folded=95 "$tmp/t.json.gz" > "$tmp/gz.folded" 2> /dev/null
cmp -s "$tmp/gz.folded" "$tmp/jaeger.folded" || { echo "FAIL: gzip input differs"; fail=1; }
if command -v zstd >/dev/null 2>&1; then
  zstd -q -c "$tmp/t.otlp.json" > "$tmp/t.json.zst"
  "$lp" spans --folded=95 "$tmp/t.json.zst" > "$tmp/zst.folded" 2> /dev/null
  cmp -s "$tmp/zst.folded" "$tmp/otlp.folded" || { echo "FAIL: zstd input differs"; fail=1; }
fi
# folded stacks are flamegraph.pl's format: frames, a space, a positive integer
if grep -vqE '^\[[^]]*\] [^;]*(;\[[^]]*\] [^;]*)* [1-9][0-9]*$' "$tmp/jaeger.folded"; then
  echo "FAIL: malformed folded line: $(grep -vE '^\[[^]]*\] [^;]*(;\[[^]]*\] [^;]*)* [1-9][0-9]*$' "$tmp/jaeger.folded" | head -1)"; fail=1
fi
# the three files together: 900 traces? no: the same trace ids, so spans collide as duplicates
[ $fail -eq 0 ] && echo "ok: jaeger, zipkin and otlp forms agree"
exit $fail

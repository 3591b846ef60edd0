#!/usr/bin/env bash
# bench/spans/run.sh: the span importers and the span-tree critical path (issue 5).
# Called by bench/run.sh with LP (longpole), BUILD (build dir), OUT (markdown section
# to write) and WORK (scratch dir). Measures, on generated traces (bench/spans/spangen,
# 50 spans per trace, realistic tags and processes, minified like the APIs write it):
#   1. import speed per format (Jaeger, Zipkin, OTLP; SPANS_BENCH_BYTES each, default
#      1G): into the span table (spanbench file), through `longpole spans` (import,
#      critical path of every trace, aggregation, tables) and into the activity graph
#      (`longpole info`), in MB/s and spans/s; target >= 200 MB/s per core;
#   2. the critical path of SPANS_BENCH_TRACES (default 1,000,000) generated traces of
#      50 spans and their aggregation at P50/P95/P99/all (spanbench cp; traces built in
#      memory); target < 30 s;
#   3. the baseline: bench/spans/crisp_baseline.py (Python 3, stdlib, CRISP-style) and
#      `longpole spans` on the same Jaeger file of SPANS_BENCH_BASE_TRACES (default
#      20,000) traces; both print P95 folded stacks, which must be identical;
#   4. if built (Debian's libjansson-dev, libjson-c-dev, libyajl-dev installed), the
#      JSON parsers against src/codec/json.c on a 200 MB Jaeger file (bench/spans/jsonlibs);
#   5. if node is installed (SPANS_BENCH_JAEGERUI=0 skips it), `longpole spans` against
#      Jaeger UI's criticalPathForTrace in node on the four inputs of issue 17
#      (bench/spans/vs_jaegerui.sh, jaegerui_cp.js).
# Every timing is CPU time (user + sys) of one single-threaded process, best of 3 runs
# (the 1M-trace run: 1): the machine is shared, and CPU time is what one core spent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LP:?}" "${BUILD:?}" "${OUT:?}" "${WORK:?}"
GEN=$BUILD/bench/spans/spangen
SB=$BUILD/bench/spans/spanbench
JL=$BUILD/bench/spans/jsonlibs
BYTES=${SPANS_BENCH_BYTES:-1G}
NTRACES=${SPANS_BENCH_TRACES:-1000000}
BASE_TRACES=${SPANS_BENCH_BASE_TRACES:-20000}
PY=/usr/bin/python3
mkdir -p "$WORK"
export LONGPOLE_NO_PROGRESS=1
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)

# best of N runs of a command (output discarded): "CPU-seconds wall-seconds" of the run
# with the least CPU time (user + sys, from /usr/bin/time: what one core spent, which
# other processes on the machine barely change; wall time is given for reference)
best() {
  local n=$1; shift
  local b="" bw=""
  for ((i = 0; i < n; i++)); do
    local r c w
    /usr/bin/time -o "$WORK/time.txt" -f "%e %U %S" "$@" > /dev/null 2>&1 || true
    r=$(tail -1 "$WORK/time.txt")
    w=$(echo "$r" | cut -d' ' -f1)
    c=$(echo "$r" | awk '{ printf "%.3f", $2 + $3 }')
    if [ -z "$b" ] || awk -v s="$c" -v b="$b" 'BEGIN { exit !(s < b) }'; then b=$c; bw=$w; fi
  done
  echo "$b $bw"
}
# field=value from a spanbench line
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# best of 3 spanbench lines by a field
best_sb() {
  local key=$1; shift
  local bl="" bv=""
  for i in 1 2 3; do
    local l v
    l=$("$@")
    v=$(field "$l" "$key")
    if [ -z "$bv" ] || awk -v s="$v" -v b="$bv" 'BEGIN { exit !(s < b) }'; then bv=$v; bl=$l; fi
  done
  echo "$bl"
}
rate() { awk -v n="$1" -v s="$2" -v d="$3" 'BEGIN { printf "%.0f", n / d / s }'; }

echo "spans bench: generating inputs in $WORK" >&2
declare -A size spans
for f in jaeger zipkin otlp; do
  "$GEN" $f --bytes "$BYTES" --spans 50 --seed 1 > "$WORK/$f.json" 2> "$WORK/$f.gen"
  size[$f]=$(stat -c %s "$WORK/$f.json")
  spans[$f]=$(cut -d' ' -f2 "$WORK/$f.gen")
done
sync # let the writeback of the generated files finish before timing

rows=""
for f in jaeger zipkin otlp; do
  echo "spans bench: import $f" >&2
  file="$WORK/$f.json"
  l=$(best_sb load_s "$SB" file "$file")
  load=$(field "$l" load_s)
  [ "$(field "$l" errors)" = 0 ] || { echo "spans bench: $f had input errors" >&2; exit 1; }
  read -r spansw spansww <<< "$(best 3 "$LP" spans -q --percentile 50,95,99,all --top 0 "$file")"
  read -r info infow <<< "$(best 3 "$LP" info -q "$file")"
  mb=$(awk -v b="${size[$f]}" 'BEGIN { printf "%.0f", b / 1e6 }')
  rows+="| $f | $mb MB, ${spans[$f]} spans | $load s: **$(rate "${size[$f]}" "$load" 1e6) MB/s**, $(rate "${spans[$f]}" "$load" 1) spans/s"
  rows+=" | $spansw s: **$(rate "${size[$f]}" "$spansw" 1e6) MB/s** (wall $spansww s) | $info s: **$(rate "${size[$f]}" "$info" 1e6) MB/s** (wall $infow s) |"$'\n'
done

echo "spans bench: $NTRACES traces in memory" >&2
cp_line=$("$SB" cp "$NTRACES" 50 1)

echo "spans bench: Python baseline on $BASE_TRACES traces" >&2
base="$WORK/base.json"
"$GEN" jaeger --traces "$BASE_TRACES" --spans 50 --seed 2 > "$base" 2> "$WORK/base.gen"
base_mb=$(awk -v b="$(stat -c %s "$base")" 'BEGIN { printf "%.0f", b / 1e6 }')
/usr/bin/time -o "$WORK/time.txt" -f "%e %U %S" "$PY" "$here/crisp_baseline.py" "$base" --folded --percentile 95 \
  > "$WORK/py.folded" 2> "$WORK/py.err"
r=$(tail -1 "$WORK/time.txt")
py_wall=$(awk -v r="$r" 'BEGIN { split(r, a, " "); printf "%.3f", a[2] + a[3] }')
py_wallclock=$(echo "$r" | cut -d' ' -f1)
py_load=$(field "$(head -1 "$WORK/py.err")" python_load_s)
py_cp=$(field "$(head -1 "$WORK/py.err")" python_cp_agg_s)
read -r lp_wall lp_wallclock <<< "$(best 3 "$LP" spans --folded=95 "$base")"
"$LP" spans --folded=95 "$base" > "$WORK/lp.folded" 2> /dev/null
same=no
cmp -s "$WORK/py.folded" "$WORK/lp.folded" && same=yes
bl=$(best_sb cp_agg_s "$SB" file "$base")
lp_cp=$(awk -v a="$(field "$bl" cp_agg_s)" -v b="$(field "$bl" percentiles_s)" 'BEGIN { printf "%.3f", a + b }')

jsonlibs=""
if [ -x "$JL" ]; then
  echo "spans bench: JSON parsers" >&2
  "$GEN" jaeger --bytes 200M --spans 50 --seed 3 > "$WORK/j200.json" 2> /dev/null
  jsonlibs=$("$JL" "$WORK/j200.json" 3)
fi

{
  echo "## Span importers and span-tree critical path (issue 5)"
  echo
  echo "\`bash bench/run.sh BUILD/longpole spans\` (bench/spans/run.sh), $(date -u '+%Y-%m-%d %H:%M UTC'); load average at start: $load_at_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg). Everything is single-threaded; times are **CPU seconds** (user + sys) of one core, best of 3 runs, so that other work on the shared machine does not distort them (wall times for reference)."
  echo
  echo "### Import speed (target >= 200 MB/s per core)"
  echo
  echo "Generated files (\`spangen FORMAT --bytes $BYTES --spans 50 --seed 1\`): 50-span traces with the usual tags, logs and processes, minified."
  echo
  echo "| format | input | into the span table (\`spanbench file\`) | \`longpole spans\` (import, every trace's critical path, aggregation, tables) | into the activity graph (\`longpole info\`) |"
  echo "|---|---|---|---|---|"
  printf '%s' "$rows"
  echo
  echo "### Critical path of $NTRACES traces of 50 spans, and aggregation (target < 30 s)"
  echo
  echo "\`spanbench cp $NTRACES 50 1\` (traces generated into memory, not timed: $(field "$cp_line" generate_s) s); CPU seconds:"
  echo
  echo "| spans | trees (lp_spans_finish) | per-trace critical path + aggregation | percentile tables (P50, P95, P99, all) | total | peak RSS |"
  echo "|---|---|---|---|---|---|"
  echo "| $(field "$cp_line" spans) | $(field "$cp_line" finish_s) s | $(field "$cp_line" cp_agg_s) s | $(field "$cp_line" percentiles_s) s | **$(field "$cp_line" total_s) s** | $(field "$cp_line" rss_mb) MB |"
  echo
  echo "### Baseline: Python 3 (CRISP-style, stdlib) on the same input"
  echo
  echo "Input: \`spangen jaeger --traces $BASE_TRACES --spans 50 --seed 2\` ($base_mb MB, $(cut -d' ' -f2 "$WORK/base.gen") spans). Both print the P95 folded stacks; identical output: **$same**."
  echo
  echo "| | Python (\`crisp_baseline.py --folded --percentile 95\`) | longpole | ratio |"
  echo "|---|---|---|---|"
  echo "| end to end (read JSON, critical paths, aggregation, output) | $py_wall s (wall $py_wallclock s) | $lp_wall s (\`longpole spans --folded=95\`; wall $lp_wallclock s) | **$(awk -v a="$py_wall" -v b="$lp_wall" 'BEGIN { printf "%.0f", a / b }')x** |"
  echo "| critical paths + aggregation only | $py_cp s | $lp_cp s (\`spanbench file\`) | **$(awk -v a="$py_cp" -v b="$lp_cp" 'BEGIN { printf "%.0f", a / (b > 0 ? b : 0.001) }')x** |"
  echo "| reading the JSON | $py_load s (json.load) | $(field "$bl" load_s) s (import + trees) | $(awk -v a="$py_load" -v b="$(field "$bl" load_s)" 'BEGIN { printf "%.0f", a / b }')x |"
  if [ -n "$jsonlibs" ]; then
    echo
    echo "### JSON parsers in the importers' shape (elements of {\"data\":[...]} one at a time, each walked as a tree; 200 MB Jaeger file in memory)"
    echo
    echo "\`jsonlibs FILE 3\` (bench/spans/jsonlibs.c), MB per CPU second; yajl counts events only (a lower bound), yajl+tree builds each element's tree from its events:"
    echo
    echo '```'
    echo "$jsonlibs"
    echo '```'
  fi
} > "$OUT"
# 5. the span critical path against Jaeger UI's own in node (issue 17), when node is there
if command -v "${NODE:-node}" > /dev/null 2>&1 && [ "${SPANS_BENCH_JAEGERUI:-1}" = 1 ]; then
  echo "spans bench: against Jaeger UI in node" >&2
  OUT="$WORK/vs.md" NODE="$(command -v "${NODE:-node}")" bash "$here/vs_jaegerui.sh"
  { echo; cat "$WORK/vs.md"; } >> "$OUT"
fi
echo "spans bench: wrote $OUT" >&2
rm -f "$WORK"/*.json

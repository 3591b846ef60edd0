#!/usr/bin/env bash
# bench/spans/vs_jaegerui.sh: span critical path against Jaeger UI's own
# criticalPathForTrace in node (bench/spans/jaegerui_cp.js, a port naming its source
# files and commit), parse included, on the four inputs of issue 17:
#   1 trace of 10 k spans, 1 trace of 100 k spans, 1 trace of 1 M spans (Jaeger JSON,
#   {"data":[trace]}, spangen --traces 1 --spans N), 100 k traces of 50 spans.
# Per row: CPU seconds (user + sys, /usr/bin/time) of `longpole spans -q FILE` (import,
# every trace's critical path, aggregation, tables) and of `node jaegerui_cp.js FILE`,
# in the same run, their ratio, and the peak RSS of each. Beside them: the load average
# and the machine's fresh-memory rate (`lpbench --touch 1024`, first touch of fresh
# pages in GB/s), which decides how fast anything that allocates runs on this VM.
# Env: LP (longpole), BUILD (build dir), OUT (markdown to write), WORK (scratch dir);
# ROWS (default "10k 100k 1m 100kx50"), RUNS (longpole runs per row, best CPU kept:
# default 3), NODE_TIMEOUT (seconds, default 300).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LP:?}" "${BUILD:?}" "${OUT:?}" "${WORK:?}"
GEN=$BUILD/bench/spans/spangen
NODE=${NODE:-/usr/bin/node}
ROWS=${ROWS:-"10k 100k 1m 100kx50"}
RUNS=${RUNS:-3}
NODE_TIMEOUT=${NODE_TIMEOUT:-300}
mkdir -p "$WORK"
export LONGPOLE_NO_PROGRESS=1
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
touch_rate=$("$BUILD/bench/foundation/lpbench" --touch 1024 2>&1 | tail -1)

# "cpu_s rss_kb status" of one run
run1() {
  local rc=0
  /usr/bin/time -o "$WORK/t.txt" -f "%U %S %M" "$@" > "$WORK/out.txt" 2> "$WORK/err.txt" || rc=$?
  tail -1 "$WORK/t.txt" | awk -v rc="$rc" '{ printf "%.3f %d %d\n", $1 + $2, $3, rc }'
}
best() {
  local n=$1; shift
  local b=""
  for ((i = 0; i < n; i++)); do
    local r
    r=$(run1 "$@")
    if [ -z "$b" ] || awk -v s="${r%% *}" -v b="${b%% *}" 'BEGIN { exit !(s < b) }'; then b=$r; fi
  done
  echo "$b"
}

rows=""
for row in $ROWS; do
  f="$WORK/$row.json"
  case $row in
    10k) "$GEN" jaeger --traces 1 --spans 10000 --seed 1 > "$f" 2> /dev/null; what="1 trace of 10 k spans" ;;
    100k) "$GEN" jaeger --traces 1 --spans 100000 --seed 1 > "$f" 2> /dev/null; what="1 trace of 100 k spans" ;;
    1m) "$GEN" jaeger --traces 1 --spans 1000000 --seed 1 > "$f" 2> /dev/null; what="1 trace of 1 M spans" ;;
    100kx50) "$GEN" jaeger --traces 100000 --spans 50 --seed 1 > "$f" 2> /dev/null; what="100 k traces of 50 spans" ;;
    *) echo "vs_jaegerui: unknown row $row" >&2; exit 2 ;;
  esac
  sync
  mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')
  echo "vs_jaegerui: $row ($mb MB)" >&2
  runs=$RUNS
  [ "$row" = 100kx50 ] && runs=1
  read -r lcpu lrss lrc <<< "$(best "$runs" "$LP" spans -q "$f")"
  read -r ncpu nrss nrc <<< "$(run1 timeout "$NODE_TIMEOUT" "$NODE" --stack-size=65500 "$here/jaegerui_cp.js" "$f")"
  nout=$(head -1 "$WORK/out.txt")
  if [ "$nrc" = 0 ]; then
    ratio=$(awk -v a="$ncpu" -v b="$lcpu" 'BEGIN { printf "%.1f", a / b }')
    nodecell="$ncpu s ($nout)"
  else
    ratio="—"
    nodecell="did not finish (exit $nrc after $ncpu CPU s; $(head -c 120 "$WORK/err.txt" | tr '\n|' '  '))"
  fi
  lrss_mb=$(awk -v k="$lrss" 'BEGIN { printf "%.0f", k / 1024 }')
  nrss_mb=$(awk -v k="$nrss" 'BEGIN { printf "%.0f", k / 1024 }')
  per=$(awk -v k="$lrss" -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.2f", k * 1024 / b }')
  rows+="| $what | $mb MB | **$lcpu s** (exit $lrc) | $lrss_mb MB ($per x the file) | $nodecell | $nrss_mb MB | **${ratio}x** |"$'\n'
  rm -f "$f"
done

{
  echo "### Span critical path against Jaeger UI's criticalPathForTrace (issue 17)"
  echo
  echo "\`LP=BUILD/longpole BUILD=BUILD OUT=... WORK=... bash bench/spans/vs_jaegerui.sh\`, $(date -u '+%Y-%m-%d %H:%M UTC'); load average at start: $load_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg); fresh memory (\`lpbench --touch 1024\`): $touch_rate. CPU seconds (user + sys) of one process, longpole best of $RUNS (1 for the 100 k-trace row), node once; both parse the JSON. Peer: bench/spans/jaegerui_cp.js, a port of jaeger-ui's CriticalPath (commit c321fb3) run in node $($NODE --version)."
  echo
  echo "| input (spangen jaeger, seed 1) | size | \`longpole spans -q\` CPU | its peak RSS | Jaeger UI in node CPU | node peak RSS | ratio |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
} > "$OUT"
echo "vs_jaegerui: wrote $OUT" >&2

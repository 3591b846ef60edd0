#!/usr/bin/env bash
# bench/importers/run.sh: import speed of the Chrome Trace Event Format and Spark
# event-log importers (issue 5). Called by bench/run.sh with LP (longpole), BUILD
# (build dir), OUT (markdown section to write) and WORK (scratch dir).
#   1. generates a PyTorch-profiler-like (Kineto) Chrome trace of CHROME_BYTES
#      (default 1000000000) with bench/importers/genchrome and a Spark 3 event log of
#      SPARK_BYTES (default 1000000000) with genspark;
#   2. times the import of each (impbench: lp_trace_load with --format, as `longpole
#      convert` loads; best wall time of 3 runs, with its CPU time): MB/s and records/s
#      (the events the generator wrote); target >= 200 MB/s per core (CPU time);
#   3. the baseline in the same run: bench/importers/chrome_baseline.py (the system's
#      /usr/bin/python3, stdlib json) loading the same Chrome file into the same
#      activities (it must find the same number and total duration), and the ratio.
# Single-threaded throughout. The machine may be shared: the load averages before and
# after are written with the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LP:?}" "${BUILD:?}" "${OUT:?}" "${WORK:?}"
GC=$BUILD/bench/importers/genchrome
GS=$BUILD/bench/importers/genspark
IB=$BUILD/bench/importers/impbench
CB=${CHROME_BYTES:-1000000000}
SB=${SPARK_BYTES:-1000000000}
PY=/usr/bin/python3
mkdir -p "$WORK"
export LONGPOLE_NO_PROGRESS=1
load0=$(cut -d' ' -f1-3 /proc/loadavg)
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
best_of() { # N FORMAT FILE: the impbench line with the smallest wall time
  local best="" line
  for ((r = 0; r < $1; r++)); do
    line=$("$IB" "$2" "$3")
    if [ -z "$best" ] || awk -v a="$(field "$line" wall)" -v b="$(field "$best" wall)" 'BEGIN { exit !(a < b) }'; then best=$line; fi
  done
  echo "$best"
}
mb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1e6 }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s / 1e6 }'; }   # per second, in millions (bytes -> MB)
krate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f", n / s / 1e6 }'; } # records/s in millions

echo "importers: generating $CB bytes of Chrome JSON and $SB bytes of Spark log" >&2
"$GC" "$CB" 1 > "$WORK/chrome.json" 2> "$WORK/chrome.gen"
"$GS" "$SB" 1 > "$WORK/spark.log" 2> "$WORK/spark.gen"
cev=$(awk '{print $2}' "$WORK/chrome.gen")
sev=$(awk '{print $2}' "$WORK/spark.gen"); stasks=$(awk '{print $4}' "$WORK/spark.gen")
sync

echo "importers: timing" >&2
c=$(best_of 3 chrome "$WORK/chrome.json")
s=$(best_of 3 spark "$WORK/spark.log")
cbytes=$(field "$c" bytes); sbytes=$(field "$s" bytes)
cw=$(field "$c" wall); cc=$(field "$c" cpu); sw=$(field "$s" wall); sc=$(field "$s" cpu)

echo "importers: Python baseline" >&2
/usr/bin/time -f "%e %U %S %M" -o "$WORK/py.time" "$PY" "$here/chrome_baseline.py" "$WORK/chrome.json" > "$WORK/py.out"
read -r pw pu ps pkb < "$WORK/py.time"
pc=$(awk -v u="$pu" -v s="$ps" 'BEGIN { printf "%.2f", u + s }')
py_acts=$(awk '{print $2}' "$WORK/py.out"); py_sum=$(awk '{print $4}' "$WORK/py.out")
same="yes"
if [ "$py_acts" != "$(field "$c" activities)" ] || [ "$py_sum" != "$(field "$c" duration_sum)" ]; then same="NO"; fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "## Importers: Chrome Trace Event Format and Spark event logs (issue 5)"
  echo
  echo "Run: \`bash bench/run.sh build/longpole importers\` on $(date -u '+%Y-%m-%d %H:%M UTC'); load average $load0 before, $load1 after (2-core machine shared with other work: wall times include waiting for a core, CPU times do not)."
  echo "Inputs: \`genchrome $CB 1\` (a PyTorch profiler trace in Kineto's layout: nested CPU ops, CUDA launches and kernels on 2 streams, ac2g flows, syncs, B/E, instants, counters) and \`genspark $SB 1\` (Spark 3.4 JSON lines, 16 executors x 8 cores, full TaskEnd records). Timing: \`impbench FORMAT FILE\` (lp_trace_load, as \`longpole convert --format FORMAT\` loads: import, builder, gap filling), best wall time of 3 runs, one thread."
  echo
  echo "| format | input MB | records | wall s | CPU s | MB/s (wall) | MB/s per core (CPU) | M records/s (CPU) | activities | messages | peak RSS MB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  echo "| chrome (Kineto) | $(mb "$cbytes") | $cev events | $cw | $cc | $(rate "$cbytes" "$cw") | $(rate "$cbytes" "$cc") | $(krate "$cev" "$cc") | $(field "$c" activities) | $(field "$c" messages) | $(field "$c" peak_mb) |"
  echo "| spark | $(mb "$sbytes") | $sev events ($stasks tasks) | $sw | $sc | $(rate "$sbytes" "$sw") | $(rate "$sbytes" "$sc") | $(krate "$sev" "$sc") | $(field "$s" activities) | $(field "$s" messages) | $(field "$s" peak_mb) |"
  echo
  echo "Target: >= 200 MB/s per core for the JSON formats."
  echo
  echo "### Baseline: Python 3 on the same Chrome file"
  echo
  echo "\`/usr/bin/python3 bench/importers/chrome_baseline.py chrome.json\` ($($PY --version 2>&1), stdlib json streamed with raw_decode, exact ns, the same nesting rule): $py_acts activities, total duration $py_sum ns; the same as longpole's: **$same**."
  echo
  echo "| | wall s | CPU s | MB/s (CPU) | peak RSS MB |"
  echo "|---|---|---|---|---|"
  echo "| longpole (impbench chrome) | $cw | $cc | $(rate "$cbytes" "$cc") | $(field "$c" peak_mb) |"
  echo "| Python 3 baseline | $pw | $pc | $(rate "$cbytes" "$pc") | $(awk -v k="$pkb" 'BEGIN { printf "%.0f", k / 1024 }') |"
  echo
  echo "longpole is $(awk -v a="$pc" -v b="$cc" 'BEGIN { printf "%.1f", a / b }')x faster than the baseline in CPU time ($(awk -v a="$pw" -v b="$cw" 'BEGIN { printf "%.1f", a / b }')x in wall time)."
} > "$OUT"
echo "importers: wrote $OUT" >&2

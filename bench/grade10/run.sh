#!/usr/bin/env bash
# bench/grade10/run.sh: the speed of a Grade10 analysis (issue 15). Called by bench/run.sh
# with LP (longpole), BUILD (build dir), OUT (markdown section to write) and WORK
# (scratch dir).
#   1. g10bench SECONDS (bench/grade10/g10bench.c) at SIZES (default 450 900 1800 3600
#      seconds of a synthetic run: 273 phase instances per second, so 3600 is 982,800
#      instances and 360,000 slices of 10 ms, 10 metrics sampled every second, GC pauses):
#      phase instances built from OperationLog events, every metric attributed (slice
#      mode), bottlenecks found and issues replayed; best CPU time of 3 runs on one
#      thread (CPU time: the work, whatever else the shared machine runs), and wall time
#      with both threads at the largest size; event mode at the largest size too;
#   2. the baseline in the same run: bench/grade10/baseline.py (the system's
#      /usr/bin/python3, standard library only) attributing the same run's metrics; its
#      totals must equal g10bench's (checked), and the ratio of CPU times is reported.
# The load averages before and after are written with the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${BUILD:?}" "${OUT:?}" "${WORK:?}"
GB=$BUILD/bench/grade10/g10bench
PY=/usr/bin/python3
SIZES=${SIZES:-450 900 1800 3600}
mkdir -p "$WORK"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
sums() { echo "$1" | tr ' ' '\n' | grep '^sum_' | tr '\n' ' '; }
rows=""
pyrows=""
largest=""
for s in $SIZES; do
  echo "grade10: $s s" >&2
  line=$("$GB" "$s" --reps 3 --threads 1 --python "$WORK/py$s.txt")
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/py$s.time" "$PY" "$here/baseline.py" "$WORK/py$s.txt" > "$WORK/py$s.out"
  read -r pw pu ps pkb < "$WORK/py$s.time"
  pc=$(awk -v u="$pu" -v s="$ps" 'BEGIN { printf "%.2f", u + s }')
  same=yes
  # every metric's attributed total equal to 1e-9 relative
  for kv in $(sums "$line"); do
    k=${kv%%=*}; v=${kv#*=}
    pv=$(tr ' ' '\n' < "$WORK/py$s.out" | sed -n "s/^$k=//p")
    awk -v a="$v" -v b="$pv" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(d <= 1e-9 * (m > 1 ? m : 1)) }' || same=NO
  done
  tc=$(field "$line" target_cpu)
  rows="$rows| $s | $(field "$line" instances) | $(field "$line" leaves) | $(field "$line" segments) | $(field "$line" issues) | $(field "$line" phases_cpu) | $(field "$line" attrib_cpu) | $(field "$line" issues_cpu) | **$tc** | $(field "$line" target_wall) | $(field "$line" rss_mb) |
"
  pyrows="$pyrows| $s | $(field "$line" attrib_cpu) | $pc | $(awk -v p="$pc" -v c="$(field "$line" attrib_cpu)" 'BEGIN { printf "%.0f", p / c }') | $same |
"
  largest=$s
  rm -f "$WORK/py$s.txt"
done
echo "grade10: both threads, and event mode, at $largest s" >&2
t2=$("$GB" "$largest" --reps 3 --threads 2)
ev=$("$GB" "$largest" --reps 3 --threads 1 --mode events)
load1=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "## Grade10: attribution, bottlenecks and issues (issue 15)"
  echo
  echo "Run: \`bash bench/run.sh build/longpole grade10\` on $(date -u '+%Y-%m-%d %H:%M UTC'); load average $load0 before, $load1 after (a 2-core machine shared with other work: CPU times are the figures; wall times include waiting for a core, and CPU times themselves grow under contention)."
  echo "Input: \`g10bench SECONDS\` (bench/grade10/g10bench.c): a synthetic run of one-second steps of 16 concurrent tasks of 16 parts (Compute, Read, Write, Send) on one host, 273 phase instances per second; 10 consumable metrics sampled every second (windows of 100 slices, up to 5 % above capacity so some are clipped), GC pauses as a blocking resource; slice mode, 10 ms slices. Stages: phase instances from the OperationLog events (in memory), attribution of every metric, bottleneck and imbalance issues replayed (one replay per resource and per concurrent type). Best of 3, one thread."
  echo
  echo "| seconds | instances | leaves | slices | issues | phases CPU s | attribution CPU s | issues CPU s | attribution + issues CPU s | wall s | peak RSS MB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf "%s" "$rows"
  echo
  echo "Target: 1 M phase instances, 10 metrics, one hour of 10 ms slices attributed, bottlenecks found and issues replayed in <= 1 s; growth linear in the size. At $largest s: $(field "$line" target_cpu) s of CPU ($(awk -v c="$(field "$line" target_cpu)" 'BEGIN { print (c <= 1 ? "met" : "not met") }') at this load; CPU time itself grows under contention on this VM, see the load averages)."
  echo "At $largest s on both threads (timelines attributed in parallel): attribution $(field "$t2" attrib_wall) s wall ($(field "$t2" attrib_cpu) s CPU), attribution + issues $(field "$t2" target_wall) s wall."
  echo "Event mode at $largest s (segments between demand changes: $(field "$ev" segments) in the largest timeline): attribution $(field "$ev" attrib_cpu) s CPU, attribution + issues $(field "$ev" target_cpu) s CPU. Here the phases last 1 to 5 slices, so event mode has barely fewer segments than slices and pays a binary search per lookup: it is the faster mode when phases span many slices, not on this input."
  echo
  echo "Baseline in the same run: bench/grade10/baseline.py, a straightforward Python implementation of the same attribution (demand per slice, each window upsampled with its caps iterated, usage attributed), /usr/bin/python3 $($PY -c 'import platform; print(platform.python_version())'); its per-metric totals must equal g10bench's to 1e-9."
  echo
  echo "| seconds | longpole attribution CPU s | Python CPU s | ratio | same totals |"
  echo "|---|---|---|---|---|"
  printf "%s" "$pyrows"
} > "$OUT"
echo "grade10: wrote $OUT" >&2

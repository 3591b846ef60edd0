#!/usr/bin/env bash
# Report benchmark (issue 6): time, file size and peak memory of `longpole report` for
# traces of 1 M and 10 M activities (targets for 10 M: under 5 s and under 20 MB), next to
# `longpole cp` on the same binary trace in the same run (loading + PAG + whole-trace
# critical path: the part of the report's work every other command also does), so the
# report's own cost (summaries per window, binning, HTML) reads as the difference.
# Traces: `longpole generate dataflow --records N --seed 1` (default job, 13 workers),
# N chosen so the trace has about 1 M, 2 M (just under --exact-max: the largest file) and 10 M activities before gap filling.
# Best of RUNS (default 3) by wall time. Env: LP, BUILD, OUT, WORK (bench/run.sh);
# RECORDS overrides the record counts.
set -euo pipefail
mkdir -p "$WORK"
runs=${RUNS:-3}
records=${RECORDS:-"1500000 2350000 14000000"}
export LONGPOLE_NO_PROGRESS=1
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
best() { # best "wall rss" of $runs runs of the command, written to $WORK/best.txt
  local b="" w k
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$@" > "$WORK/stdout.txt" 2> "$WORK/stderr.txt"
    read -r w k < "$WORK/time.txt"
    if [ -z "$b" ] || awk -v a="$w" -v c="${b% *}" 'BEGIN {exit !(a < c)}'; then b="$w $k"; fi
  done
  echo "$b" > "$WORK/best.txt"
}
rows=""
for n in $records; do
  t="$WORK/df-$n.lptb"
  [ -s "$t" ] || "$LP" generate dataflow --records "$n" --seed 1 -o "$t"
  acts=$("$LP" info "$t" | awk '/^activities/ {print $2}')
  gaps=$("$LP" info "$t" | awk '/^activities/ {gsub(/[(+]/, "", $3); print $3}')
  msgs=$("$LP" info "$t" | awk '/^messages/ {print $2}')
  best "$LP" report "$t" -o "$WORK/r-$n.html"
  read -r rw rk < "$WORK/best.txt"
  bytes=$(stat -c %s "$WORK/r-$n.html")
  sections=$(sed -n 's/.*): //p' "$WORK/stderr.txt" | tail -1)
  best "$LP" cp "$t"
  read -r cw ck < "$WORK/best.txt"
  rows+="| $acts (+$gaps gaps) | $msgs | $rw | $(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}') | $(awk -v k="$rk" 'BEGIN {printf "%.0f", k / 1024}') | $cw | $(awk -v k="$ck" 'BEGIN {printf "%.0f", k / 1024}') | $(awk -v r="$rw" -v c="$cw" 'BEGIN {printf "%.2f", r - c}') | $sections |"$'\n'
  eval "wall_$n=$rw; size_$n=$bytes"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
last=${records##* }
eval "lw=\$wall_$last; lb=\$size_$last"
{
  echo "## report: \`longpole report\` time and size (issue 6)"
  echo
  echo "Run: \`bash bench/run.sh BUILD/longpole report\` on $(date -u '+%Y-%m-%d %H:%M UTC'); best of $runs runs by wall time; $(nproc) cores; load average before/after: $load_before / $load_after."
  echo "Traces: \`longpole generate dataflow --records N --seed 1\` (.lptb, 13 workers) for N = ${records// /, }. Reference in the same run: \`longpole cp\` on the same file."
  echo
  echo "| activities | messages | report s | HTML MiB | report peak RSS MiB | \`cp\` s | \`cp\` peak RSS MiB | report - cp s | sections |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf "%s" "$rows"
  echo
  echo "- largest trace: $lw s (target < 5 s: $(awk -v w="$lw" 'BEGIN {print (w < 5) ? "met" : "NOT met"}')), $(awk -v b="$lb" 'BEGIN {printf "%.1f", b / 1048576}') MiB (target < 20 MB: $(awk -v b="$lb" 'BEGIN {print (b < 20e6) ? "met" : "NOT met"}'))."
  echo "- The HTML's size is bounded by the timeline's budget (\`--max-mb\`, 12 MB of raw data: exact blocks while they fit, then bin levels per pixel column and worker; docs/report.md), not by the trace: 10x the activities gives about the same file."
} > "$OUT"
cat "$OUT"

#!/usr/bin/env bash
# bench/dist_shard/run.sh: the sharded analyses (docs/distributed.md) on 1 and 2 ranks:
# Mystery Machine inference over a generated request log (REQUESTS, default 100000) and
# SnailTrail's summary over 256 windows of a generated dataflow job. Per run: wall
# time, CPU seconds per rank (getrusage: fair when the ranks share cores), messages
# and bytes moved (--stats), the load average. Env: LP, OUT, WORK (bench/run.sh).
set -euo pipefail
: "${LP:?}" "${OUT:?}" "${WORK:?}"
export LONGPOLE_NO_PROGRESS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
req=${REQUESTS:-100000}
mkdir -p "$WORK" && cd "$WORK"
[ -f r.csv ] && [ -s gen.txt ] || "$LP" generate requests -o r --requests "$req" > gen.txt 2>&1
[ -f g.lpt ] || "$LP" generate dataflow -o g.lpt --duration 10240ms > /dev/null 2>&1
now() { date +%s.%N; }
row() { # label cmd...: one table row (wall s, CPU s per rank, messages, bytes)
  local label=$1; shift
  local t0 t1; t0=$(now)
  "$@" > out.txt 2> err.txt
  t1=$(now)
  local cpu msgs bytes
  cpu=$(awk '/^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+$/ {printf "%s%s", s, $6; s=" / "}' err.txt)
  msgs=$(awk '/total:/ {print $2}' err.txt); bytes=$(awk '/total:/ {print $4}' err.txt)
  printf '| %s | %.2f | %s | %s | %s | %s |\n' "$label" "$(echo "$t1 - $t0" | bc)" "${cpu:--}" "${msgs:--}" \
    "${bytes:--}" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
{
  echo "## Sharded analyses (dist summary, dist infer)"
  echo
  echo "Command: \`bench/run.sh build/longpole dist_shard\` ($(date -u '+%Y-%m-%d %H:%M UTC')); $(head -1 gen.txt)."
  echo "Every rank loads (parses) every log and the whole trace; what is split is the refinement"
  echo "(requests) and the windows. CPU s per rank is getrusage of each rank (the fair figure"
  echo "when ranks share cores); wall time is for what it is worth on a shared 2-core machine."
  echo
  echo "| run | wall s | CPU s per rank | messages | bytes | load average |"
  echo "|---|---|---|---|---|---|"
  row "infer, 1 process" "$LP" infer -o m1.json r.csv
  row "dist infer, 1 rank" timeout 600 mpirun --oversubscribe -n 1 "$LP" dist infer --stats -o md1.json r.csv
  row "dist infer, 2 ranks" timeout 600 mpirun --oversubscribe -n 2 "$LP" dist infer --stats -o md2.json r.csv
  cmp -s m1.json md2.json && echo "" && echo "The 2-rank model file is byte-identical to the single-process one."
  echo
  echo "Where the single process spends its time (\`infer --timing\`): $("$LP" infer --timing -o /dev/null r.csv 2>&1 >/dev/null | sed -n 's/.*timing: //p')."
  echo "Only the \"infer\" (refinement) and \"pipelines\" phases are split between ranks; loading and"
  echo "the skew estimate are repeated on every rank, which bounds the speed-up (see docs/distributed.md, "Sharded analyses")."
  echo
  echo "| run | wall s | CPU s per rank | messages | bytes | load average |"
  echo "|---|---|---|---|---|---|"
  row "summary, 256 windows, 1 process" "$LP" summary --window 40ms g.lpt
  row "dist summary, 256 windows, 1 rank" timeout 600 mpirun --oversubscribe -n 1 "$LP" dist summary --stats --window 40ms g.lpt
  row "dist summary, 256 windows, 2 ranks" timeout 600 mpirun --oversubscribe -n 2 "$LP" dist summary --stats --window 40ms g.lpt
} > "$OUT"
cat "$OUT"

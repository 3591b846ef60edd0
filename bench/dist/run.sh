#!/usr/bin/env bash
# bench/dist/run.sh: `longpole dist kcp` over Open MPI (issue 14; docs/distributed.md):
# the shape of the distributed critical path paper's Tables II and IV (bytes, messages,
# per-rank CPU seconds, wall time of AL1, AL2, AL3) on synthetic multi-host LTTng
# traces. Called by bench/run.sh with LP, BUILD, OUT (markdown section to write) and
# WORK (scratch dir); DIST_NS (default "2 4 8 20") the host counts N, one rank per host
# (oversubscribed: per-rank CPU seconds, messages and bytes do not depend on the cores;
# wall time does, and is given for what it is worth).
#
# Topology: bench/kernel/kgen ctf --pairs N/2 over scp_dest + scp_src: N/2 scp
# client/server pairs (VM1-p talks to VM3-p only), so the query (scp, tid 7421, on
# VM1-0) depends on one peer out of N - 1. kgen makes pairs only: the paper's scp 1->N
# fan-out and all-to-all need a generator of such exchanges (not written yet).
# Figures are from one run each (--stats --json); set-up = reading the hosts, the ECIs,
# the merge at rank 0, the per-host graphs; query = the requests and replies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LP:?}" "${BUILD:?}" "${OUT:?}" "${WORK:?}"
KG=$BUILD/bench/kernel/kgen
DATA=${DIST_DATA:-$here/../../../shared/data/ctf}
NS=${DIST_NS:-"2 4 8 20"}
command -v mpirun > /dev/null || { echo "dist: mpirun is not installed (sh scripts/deps.sh bench)" >&2; exit 1; }
[ -d "$DATA/scp_src" ] || { echo "dist: $DATA is absent" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LONGPOLE_NO_PROGRESS=1
mkdir -p "$WORK"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
rows=""
for n in $NS; do
  p=$((n / 2))
  dir=$WORK/pairs-$p
  [ -d "$dir/VM1-0" ] || "$KG" ctf --pairs "$p" "$dir" "$DATA/scp_dest" "$DATA/scp_src" 2> /dev/null
  hosts=()
  for ((i = 0; i < p; i++)); do hosts+=("$dir/VM3-$i"); done
  for ((i = 0; i < p; i++)); do hosts+=("$dir/VM1-$i"); done
  "$LP" cp --thread 7421 --host VM1-0 "${hosts[@]}" > "$WORK/ref.txt" 2> /dev/null
  for al in al1 al2 al3; do
    /usr/bin/time -f "%e" -o "$WORK/time" timeout 600 mpirun --oversubscribe -n "$n" "$LP" dist kcp --algo $al \
      --thread 7421 --host VM1-0 --json --stats "${hosts[@]}" > "$WORK/out.json" 2> "$WORK/err" ||
      { echo "dist: N=$n $al failed:" >&2; cat "$WORK/err" >&2; exit 1; }
    "$LP" dist kcp --algo $al --thread 7421 --host VM1-0 "${hosts[@]}" > /dev/null 2>&1 || true
    row=$(python3 - "$WORK/out.json" "$n" "$al" "$(cat "$WORK/time")" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
_, end = json.JSONDecoder().raw_decode(text)
d = json.loads(text[end:].strip())["distribution"]
pr = d["per_rank"]
sb = sum(r["setup"]["bytes_sent"] for r in pr); sm = sum(r["setup"]["msgs_sent"] for r in pr)
qb = sum(r["query"]["bytes_sent"] for r in pr); qm = sum(r["query"]["msgs_sent"] for r in pr)
req = sum(r["requests"] for r in pr); asked = sum(1 for r in pr if r["requests"])
cs = [r["cpu_setup_s"] for r in pr]; cq = [r["cpu_query_s"] for r in pr]; ce = [r["cpu_eci_s"] for r in pr]
first = max(a + b for a, b in zip(cs, cq))
eci = max(ce) / first * 100 if first and sys.argv[3] != "al1" else 0
print("| %s | %s | %d | %d | %d | %d | %d (%d ranks) | %.3f / %.3f | %.3f / %.3f | %.1f %% | %.2f | %.3f / %.3f |" % (
    sys.argv[2], sys.argv[3], sm, sb, qm, qb, req, asked, max(cs), sum(cs), max(cq), sum(cq), eci,
    float(sys.argv[4]), d["wall_setup_s"], d["wall_query_s"]))
PY
)
    rows+="$row"$'\n'
  done
  # every answer equals cp --thread's (checked on the last run of each N)
  timeout 600 mpirun --oversubscribe -n "$n" "$LP" dist kcp --algo al3 --thread 7421 --host VM1-0 "${hosts[@]}" \
    > "$WORK/o.txt" 2> /dev/null
  cmp -s "$WORK/ref.txt" "$WORK/o.txt" || { echo "dist: N=$n: al3's answer differs from cp --thread" >&2; exit 1; }
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "## Distributed thread critical path (longpole dist kcp, issue 14)"
  echo
  echo "Command: \`bench/run.sh build/longpole dist\` (bench/dist/run.sh), $(date -u '+%Y-%m-%d %H:%M UTC'); Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{print $NF}'), one rank per host, oversubscribed on $(nproc) cores; load average $load0 before, $load1 after."
  echo
  echo "Synthetic LTTng traces: bench/kernel/kgen ctf --pairs N/2 over scp_dest + scp_src (N/2 independent scp client/server pairs, about 1.7 MB of CTF per host); query: the scp client (tid 7421) on VM1-0, which exchanges with one peer (VM3-0) out of N - 1. Every answer equals \`cp --thread\`'s byte for byte (checked)."
  echo "Set-up: each rank reads its host, makes its ECI (the skeleton of its TCP events), rank 0 merges them (packets matched, clocks synchronised), each rank builds its host's graph. Query: requests and replies (the hosts the path needs, as events). Messages and bytes are sent ones, summed over the ranks; CPU s = user + sys (getrusage) of the slowest rank / of all ranks; ECI = the CPU of making and merging the ECIs over the first query's (set-up + query) CPU, slowest rank; wall = mpirun's elapsed time (start-up included) and the set-up / query parts at rank 0."
  echo
  echo "| N | algo | set-up msgs | set-up bytes | query msgs | query bytes | requests (ranks asked) | CPU s set-up max / sum | CPU s query max / sum | ECI | wall s | set-up / query wall s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf "%s" "$rows"
  echo
  echo "AL1 moves nothing between ranks: rank 0 reads every trace (they must be readable there: the traces' bytes are what moves, by whatever copies them). AL2 and AL3 fetch the same hosts (the thread's and its one peer's), so the bulk of the query bytes (the peer's events, about 7 MB) is the same; AL3 saves the broadcast: N - 1 requests and N - 2 empty replies per dependency round."
} > "$OUT"
echo "dist: wrote $OUT" >&2

#!/usr/bin/env bash
# bench/dist/run.sh: `longpole dist kcp` over Open MPI (issue 14; docs/distributed.md):
# the shape of the distributed critical path paper's Tables II and IV (bytes, messages,
# per-rank CPU seconds, wall time of AL1, AL2, AL3) on synthetic multi-host LTTng
# traces. Called by bench/run.sh with LP, BUILD, OUT (markdown section to write) and
# WORK (scratch dir); DIST_NS (default "2 4 8 12 16 20") the host counts N, one rank per
# host (oversubscribed: per-rank CPU seconds, messages and bytes do not depend on the
# cores; wall time does, and is given for what it is worth); DIST_TOPOS (default
# "pairs fanout alltoall") the topologies. Ranks run under `nice -n ${DIST_NICE:-10}`.
#
# Topologies, all made by bench/kernel/kgen from ../shared/data/ctf scp_dest + scp_src:
#  - pairs (kgen ctf --pairs N/2): N/2 independent scp client/server pairs; the query
#    (scp, tid 7421, on VM1-0) depends on one peer (VM3-0) out of N - 1.
#  - fanout (kgen ctf --fanout N): the paper's scp 1 -> N, sequential: on VM1-0 the
#    driver (test_scp, tid 7417) runs N - 1 scp sessions one after the other, session r
#    with server VM3-(r+1); the query (tid 7417 on VM1-0) depends on all N - 1 servers.
#  - alltoall (kgen ctf --alltoall N): the MPI-like all-to-all: in slot r every node-c
#    runs a session with node-(c+1+r mod N) and serves node-(c-1-r mod N); the query
#    (tid 7417 on node-0) depends on the N - 1 others, and every host's ECI names every
#    other host.
# Figures are from one run each (--stats --json); set-up = reading the hosts, the ECIs,
# the merge at rank 0, the per-host graphs; query = the requests and replies. AL1 runs
# once per N and topology. Every AL2/AL3 answer is compared with cp --thread's.
# Then bench/dist/index.sh: the subsequent queries of `dist kcp --index` at N =
# DIST_INDEX_NS (default "2 4 8"; empty: skipped).
# (bench/run.sh puts the machine line under the title.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LP:?}" "${BUILD:?}" "${OUT:?}" "${WORK:?}"
KG=$BUILD/bench/kernel/kgen
DATA=${DIST_DATA:-$here/../../../shared/data/ctf}
NS=${DIST_NS:-"2 4 8 12 16 20"}
TOPOS=${DIST_TOPOS:-"pairs fanout alltoall"}
NICE=${DIST_NICE:-10}
command -v mpirun > /dev/null || { echo "dist: mpirun is not installed (sh scripts/deps.sh bench)" >&2; exit 1; }
[ -d "$DATA/scp_src" ] || { echo "dist: $DATA is absent" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LONGPOLE_NO_PROGRESS=1
mkdir -p "$WORK/res"
rm -f "$WORK/res/"*.json "$WORK/res/"*.time
load0=$(cut -d' ' -f1-3 /proc/loadavg)

here_topo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here_topo/topo.sh"

for topo in $TOPOS; do
  for n in $NS; do
    make_topo "$topo" "$n"
    "$LP" cp --thread $thread --host $host "${hosts[@]}" > "$WORK/ref.txt" 2> /dev/null
    for al in al1 al2 al3; do
      res=$WORK/res/$topo-$n-$al
      /usr/bin/time -f "%e" -o "$res.time" timeout 900 nice -n "$NICE" mpirun --oversubscribe -n "$n" "$LP" dist kcp \
        --algo $al --thread $thread --host $host --json --stats "${hosts[@]}" > "$res.json" 2> "$WORK/err" ||
        { echo "dist: $topo N=$n $al failed:" >&2; cat "$WORK/err" >&2; exit 1; }
      [ $al = al1 ] && continue
      # the answer equals cp --thread's
      timeout 900 nice -n "$NICE" mpirun --oversubscribe -n "$n" "$LP" dist kcp --algo $al --thread $thread --host $host \
        "${hosts[@]}" > "$WORK/o.txt" 2> /dev/null
      cmp -s "$WORK/ref.txt" "$WORK/o.txt" || { echo "dist: $topo N=$n: $al's answer differs from cp --thread" >&2; exit 1; }
    done
    echo "dist: $topo N=$n done" >&2
  done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 "$here/tables.py" "$WORK/res" "$TOPOS" "$NS" > "$WORK/tables.md"
{
  echo "## Distributed thread critical path (longpole dist kcp, issue 14)"
  echo
  echo "Command: \`DIST_NS=\"$NS\" bench/run.sh build/longpole dist\` (bench/dist/run.sh, tables by bench/dist/tables.py), $(date -u '+%Y-%m-%d %H:%M UTC'); Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{print $NF}'), one rank per host, oversubscribed on $(nproc) cores, ranks under \`nice -n $NICE\` (another benchmark held the CPU); load average $load0 before, $load1 after."
  echo
  echo "Synthetic LTTng traces made by bench/kernel/kgen from the real scp_dest + scp_src (every event a real one, re-hosted: threads, keys, TCP sequence numbers and socket addresses moved per session so that a session's packets match on its two hosts only). Every AL2 and AL3 answer equals \`cp --thread\`'s byte for byte (checked on every row)."
  echo
  echo "- **pairs** (kgen ctf --pairs N/2): N/2 independent scp client/server pairs, about 1.7 MB of CTF per host; query: the scp client (tid 7421) on VM1-0, which exchanges with one peer (VM3-0) out of N - 1."
  echo "- **fanout** (kgen ctf --fanout N): the paper's scp 1 -> N, made sequential so that the path needs every server: the driver test_scp (tid 7417) on VM1-0 runs N - 1 scp sessions (122 ms each) one after the other, session r with VM3-(r+1); query: tid 7417 on VM1-0, whose path crosses all N - 1 servers (tests/scripts/test_kgen_topo.sh checks it at N = 4)."
  echo "- **alltoall** (kgen ctf --alltoall N): MPI-like: in slot r every node-c is the client of node-(c+1+r mod N) and the server of node-(c-1-r mod N) (each node has the client's CPU and the server's); query: tid 7417 on node-0, whose path crosses the N - 1 others; every host's ECI names every other host."
  echo
  echo "Set-up: each rank reads its host, makes its ECI (the skeleton of its TCP events), rank 0 merges them (packets matched, clocks synchronised), each rank builds its host's graph. Query: requests and replies (the graph parts of the hosts the path needs). Messages and bytes are sent ones, summed over the ranks; CPU s = user + sys (getrusage) of the slowest rank / of all ranks; ECI = the CPU of making and merging the ECIs over the first query's (set-up + query) CPU, slowest rank; wall = mpirun's elapsed time (start-up included) and the set-up / query parts at rank 0; deps = dependencies found (packets whose link the path could follow), rounds = path computations at rank 0, fetched = hosts whose graph part rank 0 received."
  echo
  cat "$WORK/tables.md"
} > "$OUT"
# subsequent queries with --index (bench/dist/index.sh), N = DIST_INDEX_NS ("" to skip)
INDEX_NS=${DIST_INDEX_NS-"2 4 8"}
if [ -n "$INDEX_NS" ]; then
  { echo; DIST_NS="$INDEX_NS" bash "$here/index.sh"; } >> "$OUT"
fi
echo "dist: wrote $OUT" >&2

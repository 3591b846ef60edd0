#!/usr/bin/env bash
# test_dist_kcp.sh LONGPOLE SRCDIR: `longpole dist kcp` (docs/distributed.md) against
# `longpole cp --thread`, over Open MPI:
#  - scp (../shared/data/ctf scp_dest + scp_src, tid 7421): for K = 1 (no mpirun: the
#    self transport), 1, 2, 3, 4 ranks (oversubscribed) and AL1, AL2, AL3, the text and
#    the JSON are byte-identical to cp --thread's;
#  - 4 synthetic hosts (bench/kernel/kgen: two scp pairs, host VM1-0 talks only with
#    VM3-0): equal again, and AL3 sends requests only to the ranks owning the thread's
#    host and its one peer (per-rank counts from --stats --json), AL2 to every rank;
#  - a host trace missing or corrupt: a clear error naming the rank and the file, never
#    a hang (every mpirun under `timeout`);
#  - --index DIR: written then mapped, the same answers; stale (8), corrupt (5), another
#    host's trace changed (rebuilt);
#  - traces without a thread: exit 9 "nothing to analyse" under every algorithm, as cp --thread.
# Skips (77) when mpirun, the data or MPI in the build is absent.
set -u
lp=$1; src=$2
data=$src/../shared/data/ctf
bench=$(dirname "$lp")/bench/kernel
if ! command -v mpirun > /dev/null; then echo "skip: mpirun is not installed (apt-get install openmpi-bin)"; exit 77; fi
if [ ! -d "$data/scp_src" ]; then echo "skip: $data is absent"; exit 77; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LONGPOLE_NO_PROGRESS=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# keep Open MPI's components loaded to the end, so that LSan sees whose leaks they are
export OMPI_MCA_mca_base_component_disable_dlclose=1
# under ASan: Open MPI's own leaks only (never longpole's); the slow unwinder walks
# through Open MPI's frames, so that its leaks are named by its libraries
export LSAN_OPTIONS="suppressions=$src/tests/scripts/lsan_openmpi.supp:print_suppressions=0:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpi() { local k=$1; shift; timeout 600 mpirun --oversubscribe -n "$k" "$lp" dist kcp "$@"; }
if ! mpi 1 --thread 7421 "$data/scp_dest" "$data/scp_src" > /dev/null 2> "$tmp/err"; then
  if grep -q "built without MPI" "$tmp/err"; then echo "skip: built without MPI"; exit 77; fi
  echo "FAIL: dist kcp under mpirun -n 1"; cat "$tmp/err"; exit 1
fi
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# ---- scp: equal to cp --thread for every K and algorithm --------------------------------
scp=("$data/scp_dest" "$data/scp_src")
"$lp" cp --thread 7421 "${scp[@]}" > "$tmp/ref.txt" 2> /dev/null || bad "cp --thread on scp"
"$lp" cp --thread 7421 --json "${scp[@]}" > "$tmp/ref.json" 2> /dev/null || bad "cp --thread --json on scp"
for al in al1 al2 al3; do
  "$lp" dist kcp --algo $al --thread 7421 "${scp[@]}" > "$tmp/o.txt" 2> "$tmp/err" || bad "self $al: exit $?: $(head -2 "$tmp/err")"
  cmp -s "$tmp/ref.txt" "$tmp/o.txt" || bad "self $al: text differs from cp --thread"
  for k in 1 2 3 4; do
    mpi $k --algo $al --thread 7421 "${scp[@]}" > "$tmp/o.txt" 2> "$tmp/err" || bad "K=$k $al: exit $?: $(head -2 "$tmp/err")"
    cmp -s "$tmp/ref.txt" "$tmp/o.txt" || bad "K=$k $al: text differs from cp --thread"
    mpi $k --algo $al --json --thread 7421 "${scp[@]}" > "$tmp/o.json" 2> "$tmp/err" || bad "K=$k $al --json: exit $?"
    cmp -s "$tmp/ref.json" "$tmp/o.json" || bad "K=$k $al: JSON differs from cp --thread --json"
  done
done
"$lp" cp --thread 7421 --unbounded "${scp[@]}" > "$tmp/ref_u.txt" 2> /dev/null
mpi 3 --algo al3 --unbounded --thread 7421 "${scp[@]}" > "$tmp/o.txt" 2> /dev/null || bad "K=3 al3 --unbounded"
cmp -s "$tmp/ref_u.txt" "$tmp/o.txt" || bad "K=3 al3 --unbounded: differs from cp --thread --unbounded"
# --stats adds its block after the answer, apart
mpi 2 --algo al3 --stats --thread 7421 "${scp[@]}" > "$tmp/o.txt" 2> /dev/null || bad "K=2 --stats"
n=$(wc -l < "$tmp/ref.txt")
head -n "$n" "$tmp/o.txt" | cmp -s - "$tmp/ref.txt" || bad "--stats changed the answer"
grep -q "^---- distribution" "$tmp/o.txt" || bad "--stats printed no distribution block"
[ $fail = 0 ] && echo "ok scp: dist kcp = cp --thread for K = self, 1..4 and al1, al2, al3 (text, JSON)"

# ---- --index DIR: each rank's graph persisted, then mapped; the answer unchanged ---------
# (docs/distributed.md "Index reuse"): K = self, 1..4 and al2, al3: the run that writes the
# index and the one that maps it print cp --thread's text and JSON, and the second says
# (--stats --json) that every rank with hosts used its index; al1 is cp --thread --index.
used() { python3 -c '
import json, sys
t = open(sys.argv[1]).read(); _, e = json.JSONDecoder().raw_decode(t)
d = json.loads(t[e:].strip())["distribution"]
sys.exit(0 if all(r["index"] == "used" for r in d["per_rank"] if r["hosts"]) else 1)' "$1"; }
for k in 0 1 2 3 4; do
  for al in al2 al3; do
    run() { if [ $k = 0 ]; then "$lp" dist kcp "$@"; else mpi $k "$@"; fi; }
    run --algo $al --index "$tmp/idx$k$al" --thread 7421 "${scp[@]}" > "$tmp/o.txt" 2> "$tmp/err" ||
      bad "K=$k $al --index (writing): exit $?: $(head -2 "$tmp/err")"
    cmp -s "$tmp/ref.txt" "$tmp/o.txt" || bad "K=$k $al --index (writing): text differs from cp --thread"
    grep -q "wrote the index" "$tmp/err" || bad "K=$k $al --index: no index written"
    run --algo $al --index "$tmp/idx$k$al" --thread 7421 "${scp[@]}" > "$tmp/o.txt" 2> "$tmp/err" ||
      bad "K=$k $al --index (mapping): exit $?: $(head -2 "$tmp/err")"
    cmp -s "$tmp/ref.txt" "$tmp/o.txt" || bad "K=$k $al --index (mapping): text differs from cp --thread"
    run --algo $al --index "$tmp/idx$k$al" --json --stats --thread 7421 "${scp[@]}" > "$tmp/o.json" 2> "$tmp/err" ||
      bad "K=$k $al --index --json: exit $?"
    head -n "$(wc -l < "$tmp/ref.json")" "$tmp/o.json" | cmp -s - "$tmp/ref.json" ||
      bad "K=$k $al --index: JSON differs from cp --thread --json"
    used "$tmp/o.json" || bad "K=$k $al --index: a rank did not use its index: $(tail -1 "$tmp/o.json")"
  done
done
for pass in 1 2; do # al1: rank 0 is cp --thread --index DIR/al1.lpkx, writing then mapping
  "$lp" cp --thread 7421 --index "$tmp/cp.lpkx" "${scp[@]}" > "$tmp/ref_i.txt" 2> /dev/null
  mpi 2 --algo al1 --index "$tmp/idx_al1" --thread 7421 "${scp[@]}" > "$tmp/o.txt" 2> /dev/null || bad "al1 --index pass $pass"
  cmp -s "$tmp/ref_i.txt" "$tmp/o.txt" || bad "al1 --index pass $pass: differs from cp --thread --index"
done
# stale (a trace file of rank 1 changed): refused with exit 8 naming the rank and the file,
# as cp --thread --index; corrupt (a byte changed): exit 5; removed: built again, and the
# other rank, whose index was built with another match, rebuilds it.
cp -r "$data/scp_dest" "$tmp/dest2"; cp -r "$data/scp_src" "$tmp/src2"
two=("$tmp/dest2" "$tmp/src2")
"$lp" cp --thread 7421 "${two[@]}" > "$tmp/ref2.txt" 2> /dev/null
mpi 2 --index "$tmp/ix" --thread 7421 "${two[@]}" > /dev/null 2>&1 || bad "--index on copied scp"
touch "$tmp/src2/metadata"
mpi 2 --index "$tmp/ix" --thread 7421 "${two[@]}" > "$tmp/o.txt" 2> "$tmp/err"; rc=$?
[ $rc = 8 ] || bad "a stale rank index: exit $rc, not 8"
grep -q "rank 1: the index '$tmp/ix/rank1-of-2.lpkx' is stale" "$tmp/err" || bad "a stale rank index: no message naming rank 1 and its index: $(grep longpole "$tmp/err" | head -2)"
[ -s "$tmp/o.txt" ] && bad "a stale rank index: a path was printed"
printf 'xx' | dd of="$tmp/ix/rank0-of-2.lpkx" bs=1 seek=300 conv=notrunc 2> /dev/null
rm -f "$tmp/ix"/rank1-of-2.lpkx*
mpi 2 --index "$tmp/ix" --thread 7421 "${two[@]}" > "$tmp/o.txt" 2> "$tmp/err"; rc=$?
[ $rc = 5 ] || bad "a corrupt rank index: exit $rc, not 5"
grep -q "rank 0: the index '$tmp/ix/rank0-of-2.lpkx' is corrupt" "$tmp/err" || bad "a corrupt rank index: no message naming rank 0: $(grep longpole "$tmp/err" | head -2)"
rm -f "$tmp/ix"/*
mpi 2 --index "$tmp/ix" --thread 7421 "${two[@]}" > /dev/null 2>&1 || bad "--index rebuilt after removal"
printf '# tracer: nop\n#\n' > "$tmp/nothing.ftrace"
"$lp" cp --thread 4047 "$tmp/dest2" "$tmp/nothing.ftrace" > "$tmp/ref3.txt" 2> /dev/null || bad "cp --thread 4047"
rm -f "$tmp/ix"/rank1-of-2.lpkx*  # rank 1's host is now another trace: the match changes
mpi 2 --index "$tmp/ix" --thread 4047 "$tmp/dest2" "$tmp/nothing.ftrace" > "$tmp/o.txt" 2> "$tmp/err" || bad "--index, another match: exit $?"
grep -q "rank 0: the index .* was built with another match" "$tmp/err" || bad "--index, another match: rank 0 did not rebuild: $(grep longpole "$tmp/err" | head -2)"
cmp -s "$tmp/ref3.txt" "$tmp/o.txt" || bad "--index, another match: differs from cp --thread"
mpi 2 --index "$tmp/ix" --json --stats --thread 4047 "$tmp/dest2" "$tmp/nothing.ftrace" > "$tmp/o.json" 2> /dev/null || bad "--index rebuilt, mapped"
used "$tmp/o.json" || bad "--index rebuilt: not used by the next query"
[ $fail = 0 ] && echo "ok --index: equal to cp --thread for K = self, 1..4, al1-3, written then mapped; stale 8, corrupt 5, another match rebuilt"

# ---- 4 synthetic hosts: one exchanges with one peer out of four --------------------------
if "$bench/kgen" ctf --pairs 2 "$tmp/four" "$data/scp_dest" "$data/scp_src" 2> "$tmp/gen"; then
  four=("$tmp/four/VM3-0" "$tmp/four/VM3-1" "$tmp/four/VM1-0" "$tmp/four/VM1-1") # ranks 0 1 2 3 of 4
  "$lp" cp --thread 7421 --host VM1-0 "${four[@]}" > "$tmp/ref4.txt" 2> /dev/null || bad "cp --thread on 4 hosts"
  for al in al2 al3; do
    mpi 4 --algo $al --thread 7421 --host VM1-0 "${four[@]}" > "$tmp/o4.txt" 2> "$tmp/err" || bad "4 hosts $al: exit $?"
    cmp -s "$tmp/ref4.txt" "$tmp/o4.txt" || bad "4 hosts $al: differs from cp --thread"
    mpi 4 --algo $al --json --stats --thread 7421 --host VM1-0 "${four[@]}" > "$tmp/$al.json" 2> /dev/null ||
      bad "4 hosts $al --stats --json"
  done
  python3 - "$tmp/al2.json" "$tmp/al3.json" <<'PY' || fail=1
import json, sys
def stats(f):
    text = open(f).read()
    doc, end = json.JSONDecoder().raw_decode(text)   # the answer, then the distribution
    return json.loads(text[end:].strip())["distribution"]
a2, a3 = stats(sys.argv[1]), stats(sys.argv[2])
r2 = [r["requests"] for r in a2["per_rank"]]
r3 = [r["requests"] for r in a3["per_rank"]]
errs = []
# VM1-0 (the thread) is rank 2's, its one peer VM3-0 rank 0's: AL3 asks those two only
if r3 != [1, 0, 1, 0]: errs.append("AL3 requests per rank %r, want [1, 0, 1, 0]" % r3)
if min(r2) < 1: errs.append("AL2 requests per rank %r: the dependency was not broadcast to every rank" % r2)
q2 = sum(r["query"]["msgs_sent"] for r in a2["per_rank"])
q3 = sum(r["query"]["msgs_sent"] for r in a3["per_rank"])
if not q3 < q2: errs.append("AL3 sent %d query messages, AL2 %d" % (q3, q2))
if errs: print("FAIL 4 hosts: " + "; ".join(errs)); sys.exit(1)
print("ok 4 hosts: AL3 requests per rank %r (AL2 %r), query messages %d vs %d" % (r3, r2, q3, q2))
PY
else
  bad "kgen ctf --pairs 2: $(cat "$tmp/gen")"
fi

# ---- a host trace missing or corrupt: an error naming the rank and the file ------------
mpi 4 --algo al3 --thread 7421 "${scp[@]}" "$tmp/no-such-trace" > "$tmp/o.txt" 2> "$tmp/err"
rc=$?
[ $rc = 3 ] || bad "a missing host trace: exit $rc, not 3 (cp --thread's for a missing trace)"
grep -q "rank 2: host trace 2 '$tmp/no-such-trace'" "$tmp/err" || bad "a missing host trace: no message naming rank 2 and the file: $(head -3 "$tmp/err")"
[ -s "$tmp/o.txt" ] && bad "a missing host trace: a path was printed"
mkdir -p "$tmp/corrupt"; printf 'not CTF metadata\x01\x02' > "$tmp/corrupt/metadata"; printf 'garbage' > "$tmp/corrupt/channel0_0"
mpi 2 --algo al2 --thread 7421 "${scp[@]}" "$tmp/corrupt" > "$tmp/o.txt" 2> "$tmp/err"
rc=$?
[ $rc = 5 ] || bad "a corrupt host trace: exit $rc, not 5 (cp --thread's for a corrupt trace)"
grep -q "rank 0: host trace 2 '$tmp/corrupt'" "$tmp/err" || bad "a corrupt host trace: no message naming rank 0 and the file: $(head -3 "$tmp/err")"
[ $fail = 0 ] && echo "ok: a missing or corrupt host trace is an error naming its rank and file"

# ---- a peer host whose trace is absent (scp_src alone: its server VM3 not given): the
# waits its packets ended stay on the path flagged unexplained and counted, never dropped,
# exactly as cp --thread shows them, for every algorithm and K = 1, 2
"$lp" cp --thread 7421 "$data/scp_src" > "$tmp/ref1.txt" 2> /dev/null || bad "cp --thread on scp_src alone"
"$lp" cp --thread 7421 --json "$data/scp_src" > "$tmp/ref1.json" 2> /dev/null || bad "cp --thread --json on scp_src alone"
grep -q "^unexplained: 13 elements, .* (of which 13 network waits" "$tmp/ref1.txt" || bad "scp_src alone: cp --thread does not count 13 unexplained network waits: $(grep unexplained "$tmp/ref1.txt" | head -1)"
for k in 1 2; do
  for al in al1 al2 al3; do
    mpi $k --algo $al --thread 7421 "$data/scp_src" > "$tmp/o.txt" 2> "$tmp/err" || bad "scp_src alone K=$k $al: exit $?"
    cmp -s "$tmp/ref1.txt" "$tmp/o.txt" || bad "scp_src alone K=$k $al: differs from cp --thread"
    mpi $k --algo $al --json --thread 7421 "$data/scp_src" > "$tmp/o.json" 2> /dev/null || bad "scp_src alone K=$k $al --json"
    cmp -s "$tmp/ref1.json" "$tmp/o.json" || bad "scp_src alone K=$k $al: JSON differs from cp --thread"
  done
done
[ $fail = 0 ] && echo "ok: a peer whose trace is absent: its waits flagged unexplained and counted, as cp --thread"

# ---- traces without a thread: nothing to analyse (exit 9, as cp --thread), every algorithm ----
printf '# tracer: nop\n#\n' > "$tmp/empty.ftrace"
"$lp" cp --thread 1 "$tmp/empty.ftrace" "$tmp/empty.ftrace" > /dev/null 2>&1; want=$?
[ $want = 9 ] || bad "cp --thread on traces without a thread: exit $want, not 9"
for al in al1 al2 al3; do
  mpi 2 --algo $al --thread 1 "$tmp/empty.ftrace" "$tmp/empty.ftrace" > "$tmp/o.txt" 2> "$tmp/err"; rc=$?
  [ $rc = $want ] && grep -q "nothing to analyse" "$tmp/err" && ! [ -s "$tmp/o.txt" ] && echo "ok: $al on traces without a thread: exit $rc, nothing to analyse" ||
    bad "$al on traces without a thread: exit $rc (cp --thread: $want): $(grep longpole "$tmp/err" | head -2)"
done
exit $fail

#!/usr/bin/env bash
# test_kgen_topo.sh LONGPOLE SRCDIR: the multi-host topologies of bench/kernel/kgen
# (`kgen ctf --fanout N` and `--alltoall N`, issue 14's benchmark), checked through
# `longpole cp --thread` on what they generate from ../shared/data/ctf scp_dest + scp_src:
#  - fan-out N = 4: hosts VM1-0 (the client) and VM3-1..3; the path of the driver thread
#    (test_scp, tid 7417) on VM1-0 crosses every server, in slot order, by network links
#    both ways (VM1-0 -> VM3-k and VM3-k -> VM1-0), and every packet is matched (the
#    sequence numbers and socket addresses of each session agree on both ends only);
#  - all-to-all N = 3: hosts node-0..2; from every host's driver, the path crosses both
#    other hosts; every packet matched, every clock synchronised;
#  - when mpirun and MPI are there: `dist kcp` on the fan-out under AL2 and AL3 (4
#    ranks) prints cp --thread's answer byte for byte; AL3 asks every rank (each owns a
#    host the path needs) once; AL2 sends every rank one request per round (the list of
#    the round's dependencies), not one per dependency.
# Skips (77) when the data or kgen is absent.
set -u
lp=$1; src=$2
data=$src/../shared/data/ctf
kgen=$(dirname "$lp")/bench/kernel/kgen
if [ ! -d "$data/scp_src" ]; then echo "skip: $data is absent"; exit 77; fi
if [ ! -x "$kgen" ]; then echo "skip: $kgen is not built"; exit 77; fi
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the hosts a path crosses, checked from cp --thread --json (argv: json, expected
# hosts in crossing order, the thread's host; every packet matched)
check() {
  python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want, home = sys.argv[2].split(","), sys.argv[3]
host = lambda t: t.split("/")[0]
errs = []
path = d["path"]
hosts = sorted({host(e["thread"]) for e in path})
if hosts != sorted(want + [home]):
    errs.append("path hosts %r, want %r" % (hosts, sorted(want + [home])))
inbound = [host(e["from"]) for e in path if e["kind"] == "link" and e.get("link") == "network"
           and host(e["thread"]) == home and host(e.get("from", "")) != home]
outbound = {host(e["thread"]) for e in path if e["kind"] == "link" and e.get("link") == "network"
            and host(e.get("from", "")) == home}
order = []
for h in inbound:
    if h not in order:
        order.append(h)
if order != want:
    errs.append("network links into %s come from %r in that order, want %r" % (home, order, want))
if sorted(outbound) != sorted(want):
    errs.append("network links out of %s go to %r, want %r" % (home, sorted(outbound), sorted(want)))
a = d["adjustments"]
if a["packets_matched"] == 0 or a["packets_unmatched_send"] or a["packets_unmatched_recv"]:
    errs.append("packets matched %d, unmatched %d sent / %d received" % (
        a["packets_matched"], a["packets_unmatched_send"], a["packets_unmatched_recv"]))
if not d["synchronised"] or any(h["clock"]["quality"] not in ("reference", "accurate") for h in d["hosts"]):
    errs.append("clocks: %r" % [(h["name"], h["clock"]["quality"]) for h in d["hosts"]])
if errs:
    print("FAIL %s: %s" % (home, "; ".join(errs)))
    sys.exit(1)
print("ok %s: the path crosses %s (%d links in, %d packets matched)" % (home, ",".join(order), len(inbound), a["packets_matched"]))
PY
}

# ---- fan-out 4 -----------------------------------------------------------------------------
"$kgen" ctf --fanout 4 "$tmp/f" "$data/scp_dest" "$data/scp_src" 2> "$tmp/gen" || bad "kgen --fanout 4: $(cat "$tmp/gen")"
ls "$tmp/f" | tr '\n' ' ' | grep -qx "VM1-0 VM3-1 VM3-2 VM3-3 " || bad "fan-out 4 made $(ls "$tmp/f" | tr '\n' ' ')"
fan=("$tmp/f/VM1-0" "$tmp/f/VM3-1" "$tmp/f/VM3-2" "$tmp/f/VM3-3")
"$lp" cp --thread 7417 --host VM1-0 --json "${fan[@]}" > "$tmp/f.json" 2> "$tmp/err" || bad "cp --thread on the fan-out: $(head -3 "$tmp/err")"
check "$tmp/f.json" VM3-1,VM3-2,VM3-3 VM1-0 || fail=1
# one server fewer: the path loses exactly that host (its packets stay unexplained)
"$lp" cp --thread 7417 --host VM1-0 --json "${fan[@]:0:3}" > "$tmp/f3.json" 2> /dev/null || bad "cp --thread on 3 of the 4 hosts"
check "$tmp/f3.json" VM3-1,VM3-2 VM1-0 > "$tmp/out" && bad "without VM3-3, the check still passed: $(cat "$tmp/out")"

# ---- all-to-all 3 --------------------------------------------------------------------------
"$kgen" ctf --alltoall 3 "$tmp/a" "$data/scp_dest" "$data/scp_src" 2> "$tmp/gen" || bad "kgen --alltoall 3: $(cat "$tmp/gen")"
all=("$tmp/a/node-0" "$tmp/a/node-1" "$tmp/a/node-2")
for g in 0 1 2; do
  want=node-$(((g + 1) % 3)),node-$(((g + 2) % 3))
  "$lp" cp --thread 7417 --host node-$g --json "${all[@]}" > "$tmp/a$g.json" 2> "$tmp/err" ||
    bad "cp --thread on node-$g: $(head -3 "$tmp/err")"
  check "$tmp/a$g.json" "$want" node-$g || fail=1
done

# ---- dist kcp on the fan-out (when MPI is there) -------------------------------------------
if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_mca_base_component_disable_dlclose=1
  export LSAN_OPTIONS="suppressions=$src/tests/scripts/lsan_openmpi.supp:print_suppressions=0:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
  mpi() { timeout 600 mpirun --oversubscribe -n 4 "$lp" dist kcp "$@"; }
  if mpi --thread 7417 --host VM1-0 "${fan[@]}" > /dev/null 2> "$tmp/err" || ! grep -q "built without MPI" "$tmp/err"; then
    "$lp" cp --thread 7417 --host VM1-0 "${fan[@]}" > "$tmp/ref.txt" 2> /dev/null
    for al in al2 al3; do
      mpi --algo $al --thread 7417 --host VM1-0 "${fan[@]}" > "$tmp/o.txt" 2> "$tmp/err" || bad "dist kcp $al: exit $?: $(head -2 "$tmp/err")"
      cmp -s "$tmp/ref.txt" "$tmp/o.txt" || bad "dist kcp $al on the fan-out differs from cp --thread"
      mpi --algo $al --json --stats --thread 7417 --host VM1-0 "${fan[@]}" > "$tmp/$al.json" 2> /dev/null || bad "dist kcp $al --stats"
    done
    python3 - "$tmp/al2.json" "$tmp/al3.json" <<'PY' || fail=1
import json, sys
def dist(f):
    text = open(f).read()
    _, end = json.JSONDecoder().raw_decode(text)
    return json.loads(text[end:].strip())["distribution"]
a2, a3 = dist(sys.argv[1]), dist(sys.argv[2])
r2 = [r["requests"] for r in a2["per_rank"]]
r3 = [r["requests"] for r in a3["per_rank"]]
errs = []
if r3 != [1, 1, 1, 1]:
    errs.append("AL3 requests per rank %r, want [1, 1, 1, 1] (each rank owns one host the path needs)" % r3)
# AL2: the thread's host from its owner (rank 0), then one message per rank per round
# listing the round's dependencies (the one round needs the 3 servers): [2, 1, 1, 1]
if r2 != [2, 1, 1, 1] or a2["rounds"] != 2:
    errs.append("AL2 requests per rank %r in %d rounds, want [2, 1, 1, 1] in 2 (one broadcast per round)" % (r2, a2["rounds"]))
m2 = sum(r["query"]["msgs_sent"] for r in a2["per_rank"])
m3 = sum(r["query"]["msgs_sent"] for r in a3["per_rank"])
if m2 != 9 or m3 != 9:
    errs.append("query messages AL2 %d, AL3 %d, want 9 and 9 (3 requests, 3 replies, 3 ends)" % (m2, m3))
if errs:
    print("FAIL fan-out: " + "; ".join(errs))
    sys.exit(1)
print("ok fan-out: dist kcp al2, al3 = cp --thread; requests per rank AL2 %r, AL3 %r" % (r2, r3))
PY
  else
    echo "note: built without MPI; dist kcp part skipped"
  fi
else
  echo "note: mpirun is not installed; dist kcp part skipped"
fi
exit $fail

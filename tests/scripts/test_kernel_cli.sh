#!/usr/bin/env bash
# test_kernel_cli.sh LONGPOLE SRCDIR: `longpole cp --thread` and `longpole index` on the
# real LTTng traces of ../shared/data/ctf (issue 13's tests):
#  - scp_dest + scp_src: 46 matched packets; scp_src's clock slope within 1e-6 of Trace
#    Compass's 0.9999413783703139 and the offset inside the bounds the packets allow;
#    the bounded path of `scp` (tid 7421) covers exactly the query interval (lifetime and
#    a given --from/--to), contains network links to the receiving host's sshd threads,
#    replaces every blocked-on-thread interval, and leaves unexplained only waits woken
#    by the network (flagged: packets not matched) or by a softirq vector that names no
#    cause (docs/analyses/kernel-critical-path.md "On the real traces");
#  - many-threads: 8,070 graph workers (Trace Compass: 8,060, its per-CPU workers counted
#    once each), tid 2673's bounded path 22,738 elements over 5,469 threads (TC: 5,473
#    path workers), unbounded 6,779 over 1,539;
#  - the same cp --json through libbabeltrace2 (LONGPOLE_CTF=babeltrace) as through the
#    direct decoder, the default (scp tid 7421, many-threads tid 2673);
#  - golden-style text and JSON (the answer's lines, the clock line); many-threads as
#    ftrace text (kgen) gives the same path as through CTF;
#  - index: written, reused (same answer, from_index), stale (a trace file touched, in a
#    copy), foreign (other traces, other clock option, not an index), corrupt (a byte
#    flipped): refused with exit 8 / 8 / 8 / 5 and a message; `index --check`; the
#    verification stamp used, --verify, a copied stamp vouching for nothing;
#  - the activity-trace commands given a CTF directory or ftrace text: exit 5 naming
#    `cp --thread`.
# Skips (77) when ../shared/data is absent or CTF support was not built.
set -u
lp=$1; src=$2
data=$src/../shared/data/ctf
if [ ! -d "$data/scp_src" ] || [ ! -d "$data/many-threads" ]; then echo "skip: $data is absent"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! "$lp" cp --thread 7421 "$data/scp_dest" "$data/scp_src" > "$tmp/scp.txt" 2> "$tmp/err"; then
  if grep -q "built without CTF support" "$tmp/err"; then echo "skip: built without CTF support"; exit 77; fi
  echo "FAIL: cp --thread 7421 on scp"; cat "$tmp/err"; exit 1
fi
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }
expect_rc() { # want name cmd...
  local want=$1 name=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
  if [ "$rc" != "$want" ]; then bad "$name: exit $rc, want $want"; cat "$tmp/err"; return 1; fi
  ok "$name: exit $rc"; return 0
}

# ---- scp: JSON ------------------------------------------------------------------------
"$lp" cp --thread 7421 --json "$data/scp_dest" "$data/scp_src" > "$tmp/scp.json" || bad "scp --json"
python3 - "$tmp/scp.json" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
errs = []
def check(c, msg):
    if not c: errs.append(msg)
a = d["adjustments"]
check(a["packets_matched"] == 46, "matched packets %s, want 46" % a["packets_matched"])
check(a["network_links"] == 46, "network links %s, want 46" % a["network_links"])
hosts = {h["name"]: h for h in d["hosts"]}
check(d["synchronised"], "clocks not synchronised")
ref, src = hosts["VM3"], hosts["VM1"]
check(ref["clock"]["quality"] == "reference", "VM3 (scp_dest, first) is not the reference")
c = src["clock"]
check(c["quality"] == "accurate", "scp_src clock quality %s" % c["quality"])
check(abs(c["slope"] - 0.9999413783703139) <= 1e-6, "slope %r not within 1e-6 of Trace Compass's" % c["slope"])
check(c["slope_lo"] <= c["slope"] <= c["slope_hi"], "slope outside its bounds")
check(c["offset_lo"] <= c["offset"] <= c["offset_hi"], "offset %r outside [%r, %r]" % (c["offset"], c["offset_lo"], c["offset_hi"]))
check(c["packets"] == 46, "clock supported by %s packets, want 46" % c["packets"])
check(src["applied_slope"] == c["slope"] and src["applied_offset"] == c["offset"], "applied map differs from the clock")
check(d["thread"]["name"] == "VM1/scp-7421" and d["thread"]["tid"] == 7421, "thread %r" % d["thread"])
p = d["path"]
check(d["lifetime"], "not the lifetime")
check(p[0]["start"] == d["start"] and p[-1]["end"] == d["end"], "path does not span [start, end]")
check(all(p[i]["start"] == p[i - 1]["end"] for i in range(1, len(p))), "path elements not contiguous")
check(all(e["start"] <= e["end"] for e in p), "an element ends before it starts")
check(d["length_ns"] == d["end"] - d["start"] and len(p) == d["elements"], "length or element count")
net_to_sshd = [e for e in p if e["kind"] == "link" and e["link"] == "network" and e["thread"].startswith("VM3/sshd-")]
check(len(net_to_sshd) >= 3, "%d network links to VM3's sshd threads" % len(net_to_sshd))
check(len({e["thread"] for e in net_to_sshd}) >= 2, "network links reach fewer than 2 sshd threads")
# every blocked-on-thread wait was replaced; what stays blocked is the thread's own
# time (timer, disk, ...) or unexplained and flagged
for e in p:
    if e["kind"] == "state" and e["state"] == "blocked":
        check(e["reason"] != "thread", "a blocked-on-thread wait left on the path: %r" % e)
        if e["reason"] in ("network", "unknown", "irq", "softirq"):
            check(e.get("unexplained", False), "an unflagged resolvable wait: %r" % e)
unexp = [e for e in p if e.get("unexplained")]
check(all(e["kind"] == "state" and e["state"] == "blocked" for e in unexp), "an unexplained element is not a wait")
net = [e for e in unexp if e["reason"] == "network"]
other = [e for e in unexp if e["reason"] != "network"]
check(len(net) == 2 and sum(e["end"] - e["start"] for e in net) == d["unexplained"]["network_ns"], "network unexplained %d" % len(net))
check(all(e["reason"] == "softirq" for e in other) and len(other) == 2, "non-network unexplained: %r" % other)
check(d["unexplained"]["elements"] == len(unexp) and d["unexplained"]["network_elements"] == len(net), "unexplained counts")
check(d["gap_ns"] == 0, "gaps on the scp path")
check(d["elements"] == 294, "scp path: %d elements, want 294" % d["elements"])
if errs:
    print("FAIL scp json: " + "; ".join(errs)); sys.exit(1)
print("ok scp json: 46 packets, slope %.16g, offset %.2f in [%.2f, %.2f], %d elements, %d network links to sshd, %d network + %d softirq unexplained"
      % (c["slope"], c["offset"], c["offset_lo"], c["offset_hi"], len(p), len(net_to_sshd), len(net), len(other)))
EOF

# a query interval inside the lifetime: covered exactly
s=$(python3 -c "import json; d=json.load(open('$tmp/scp.json')); print(d['start'] + 10000000, d['start'] + 50000000)")
from=${s% *}; to=${s#* }
"$lp" cp --thread 7421 --from "$from" --to "$to" --json "$data/scp_dest" "$data/scp_src" > "$tmp/win.json" || bad "scp window"
python3 - "$tmp/win.json" "$from" "$to" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); f, t = int(sys.argv[2]), int(sys.argv[3]); p = d["path"]
ok = (not d["lifetime"] and d["start"] == f and d["end"] == t and p[0]["start"] == f and p[-1]["end"] == t
      and all(p[i]["start"] == p[i - 1]["end"] for i in range(1, len(p))))
print(("ok" if ok else "FAIL") + " scp window [%d, %d]: %d elements" % (f, t, len(p)))
sys.exit(0 if ok else 1)
EOF
"$lp" cp --thread 7421 --from +10ms --to +50ms --json "$data/scp_dest" "$data/scp_src" > "$tmp/win2.json" || bad "scp +window"
cmp -s "$tmp/win.json" "$tmp/win2.json" && ok "scp window: +10ms/+50ms is the same query" || bad "scp window: +T differs from absolute"

# ---- scp: text (golden-style: the answer's lines) ------------------------------------
sed -n 1,5p "$tmp/scp.txt" > "$tmp/head.txt"
cat > "$tmp/want.txt" <<'EOF'
thread VM1/scp-7421 (tid 7421 on VM1), bounded critical path
interval: [1361214092768632625, 1361214092890587053] ns on the reference clock (VM3), the thread's lifetime
critical path: 122 ms in 294 elements over 10 threads
unexplained: 4 elements, 39.5 ms (of which 2 network waits, 39.5 ms: packets from or to a host not traced,
  or not matched); gaps: 0 ns
EOF
diff -u "$tmp/want.txt" "$tmp/head.txt" > "$tmp/diff" && ok "scp text: the answer's lines" || { bad "scp text"; cat "$tmp/diff"; }
for want in "VM3              reference" "VM1              accurate: slope 0.99994137837031394" \
            "46 packets (11 on the hull), against VM3; applied" "packets: 46 matched across hosts; unmatched: 3 sends, 5 receives" \
            "by state/reason" "threads on the path" "link/network" "blocked/network"; do
  grep -qF -- "$want" "$tmp/scp.txt" && ok "scp text has '$want'" || bad "scp text lacks '$want'"
done
n=$("$lp" cp --thread 7421 --path all "$data/scp_dest" "$data/scp_src" | grep -c '\[unexplained\]')
[ "$n" = 4 ] && ok "scp text --path all: 4 rows flagged [unexplained]" || bad "scp text --path all: $n rows flagged [unexplained], want 4"
"$lp" cp --thread 7421 --no-sync --json "$data/scp_dest" "$data/scp_src" > "$tmp/nosync.json" || bad "--no-sync"
python3 -c "
import json,sys; d=json.load(open('$tmp/nosync.json')); h={x['name']: x for x in d['hosts']}
ok = not d['synchronised'] and h['VM1']['applied_slope'] == 1 and h['VM1']['clock']['packets'] == 46
print(('ok' if ok else 'FAIL') + ' --no-sync: clocks computed, not applied'); sys.exit(0 if ok else 1)" || fail=1
"$lp" cp --thread 7421 --no-sync "$data/scp_dest" "$data/scp_src" | grep -q "not applied (--no-sync)" && ok "--no-sync text" || bad "--no-sync text"

# ---- many-threads --------------------------------------------------------------------
"$lp" cp --thread 2673 --json "$data/many-threads" > "$tmp/mt.json" || bad "many-threads"
"$lp" cp --thread 2673 --unbounded --json "$data/many-threads" > "$tmp/mtu.json" || bad "many-threads unbounded"
# the same answers through libbabeltrace2 as through the direct decoder (the default)
if LONGPOLE_CTF=babeltrace "$lp" cp --thread 2673 --json "$data/many-threads" > "$tmp/mt-bt.json" 2> "$tmp/err"; then
  LONGPOLE_CTF=babeltrace "$lp" cp --thread 7421 --json "$data/scp_dest" "$data/scp_src" > "$tmp/scp-bt.json" || bad "scp through libbabeltrace2"
  if cmp -s "$tmp/mt.json" "$tmp/mt-bt.json" && cmp -s "$tmp/scp.json" "$tmp/scp-bt.json"; then
    ok "direct decoder and libbabeltrace2: the same cp --json for scp tid 7421 and many-threads tid 2673"
  else bad "direct decoder and libbabeltrace2 give different cp --json"; fi
elif grep -q "built without libbabeltrace2" "$tmp/err"; then echo "skip: decoder comparison (built without libbabeltrace2)"
else bad "cp through libbabeltrace2"; cat "$tmp/err"; fi
python3 - "$tmp/mt.json" "$tmp/mtu.json" <<'EOF' || fail=1
import json, sys
b, u = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
threads = lambda d: len([r for r in d["by_thread"] if r["thread"]])
got = (b["graph"]["workers"], b["elements"], threads(b), u["elements"], threads(u), b["algorithm"], u["algorithm"])
want = (8070, 22738, 5469, 6779, 1539, "bounded", "unbounded")
ok = got == want and all(d["path"][0]["start"] == d["start"] and d["path"][-1]["end"] == d["end"] for d in (b, u))
print(("ok" if ok else "FAIL") + " many-threads: workers, bounded elements/threads, unbounded elements/threads %r (want %r)" % (got, want))
sys.exit(0 if ok else 1)
EOF

# ftrace text of the same events (bench/kernel/kgen): the same path
kgen=$(dirname "$lp")/bench/kernel/kgen
if [ -x "$kgen" ]; then
  "$kgen" ftrace "$data/many-threads" > "$tmp/mt.ftrace" 2> /dev/null
  "$lp" cp --thread 2673 --json "$tmp/mt.ftrace" > "$tmp/mtf.json" || bad "many-threads as ftrace"
  python3 -c "
import json,sys; a=json.load(open('$tmp/mt.json')); b=json.load(open('$tmp/mtf.json'))
ok = a['path'] == b['path'] and a['by_state'] == b['by_state']
print(('ok' if ok else 'FAIL') + ' many-threads as ftrace text: the same path as through CTF'); sys.exit(0 if ok else 1)" || fail=1
  rm -f "$tmp/mt.ftrace"
else
  echo "note: $kgen not built; ftrace comparison skipped"
fi

# ---- index ---------------------------------------------------------------------------
cp -r "$data/scp_dest" "$data/scp_src" "$tmp/"
chmod -R u+w "$tmp/scp_dest" "$tmp/scp_src"
idx=$tmp/scp.lpkx
expect_rc 0 "index write" "$lp" index "$tmp/scp_dest" "$tmp/scp_src" -o "$idx" && grep -q "written: 2 hosts, 79 workers" "$tmp/out" && ok "index summary" || bad "index summary"
expect_rc 0 "index --check" "$lp" index --check "$tmp/scp_dest" "$tmp/scp_src" -o "$idx"
"$lp" cp --thread 7421 --json "$tmp/scp_dest" "$tmp/scp_src" > "$tmp/a.json"
"$lp" cp --thread 7421 --json --index "$idx" "$tmp/scp_dest" "$tmp/scp_src" > "$tmp/b.json" || bad "cp --index"
python3 - "$tmp/a.json" "$tmp/b.json" <<'EOF' || fail=1
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = (not a["graph"]["from_index"] and b["graph"]["from_index"] and a["path"] == b["path"] and a["by_state"] == b["by_state"]
      and a["start"] == b["start"] and a["end"] == b["end"] and "clock" not in b["hosts"][1])
print(("ok" if ok else "FAIL") + " index reused: the same path (%d elements) from the mapped graph" % len(b["path"]))
sys.exit(0 if ok else 1)
EOF
"$lp" cp --thread 7421 --index "$idx" "$tmp/scp_dest" "$tmp/scp_src" | grep -q "mapped from the index" && ok "index text" || bad "index text"
# the verification stamp: written with the index, used, --verify checks every byte anyway
[ -s "$idx.verified" ] && ok "index stamp written" || bad "index stamp written"
"$lp" cp --thread 7421 --index "$idx" "$tmp/scp_dest" "$tmp/scp_src" | grep -q "vouched for by its verification stamp" && ok "stamp used" || bad "stamp used"
"$lp" cp --thread 7421 --verify --index "$idx" "$tmp/scp_dest" "$tmp/scp_src" | grep -q "every byte checked" && ok "--verify" || bad "--verify"
"$lp" cp --thread 7421 --json --verify --index "$idx" "$tmp/scp_dest" "$tmp/scp_src" | grep -q '"index_checks":"full"' && ok "--verify json" || bad "--verify json"
grep -q '"index_checks":"stamp"' "$tmp/b.json" && ok "stamp json" || bad "stamp json"
cp "$idx" "$tmp/flip2.lpkx"; cp "$idx.verified" "$tmp/flip2.lpkx.verified" # a copy with a copied stamp
printf '\x5a' | dd of="$tmp/flip2.lpkx" bs=1 seek=300 conv=notrunc 2> /dev/null
expect_rc 5 "corrupt index with another file's stamp" "$lp" cp --thread 7421 --index "$tmp/flip2.lpkx" "$tmp/scp_dest" "$tmp/scp_src" && grep -q "corrupt" "$tmp/err" || bad "copied stamp vouched"
[ ! -e "$tmp/flip2.lpkx.verified" ] && ok "a corrupt index loses its stamp" || bad "stamp kept on a corrupt index"
expect_rc 8 "index with the other clock option" "$lp" cp --thread 7421 --no-sync --index "$idx" "$tmp/scp_dest" "$tmp/scp_src" && grep -q "foreign" "$tmp/err" || bad "no-sync message"
expect_rc 8 "index of other traces" "$lp" cp --thread 7421 --index "$idx" "$tmp/scp_src" && grep -q "foreign" "$tmp/err" || bad "other traces message"
head -c 4096 /dev/urandom > "$tmp/junk.lpkx"
expect_rc 8 "not an index" "$lp" cp --thread 7421 --index "$tmp/junk.lpkx" "$tmp/scp_dest" "$tmp/scp_src" && grep -q "not a longpole kernel index" "$tmp/err" || bad "junk message"
cp "$idx" "$tmp/flip.lpkx"
printf '\x5a' | dd of="$tmp/flip.lpkx" bs=1 seek=300 conv=notrunc 2> /dev/null
expect_rc 5 "corrupt index" "$lp" cp --thread 7421 --index "$tmp/flip.lpkx" "$tmp/scp_dest" "$tmp/scp_src" && grep -q "corrupt" "$tmp/err" || bad "corrupt message"
touch -d '+1 hour' "$tmp/scp_src/metadata"
expect_rc 8 "stale index" "$lp" cp --thread 7421 --index "$idx" "$tmp/scp_dest" "$tmp/scp_src" && grep -q "stale" "$tmp/err" && grep -q "scp_src/metadata" "$tmp/err" || bad "stale message"
expect_rc 8 "index --check stale" "$lp" index --check "$tmp/scp_dest" "$tmp/scp_src" -o "$idx"
rm -f "$tmp/new.lpkx"
expect_rc 0 "cp --index writes a missing index" "$lp" cp --thread 7421 --index "$tmp/new.lpkx" "$tmp/scp_dest" "$tmp/scp_src" && [ -s "$tmp/new.lpkx" ] && grep -q "wrote the index" "$tmp/err" || bad "index not written"
expect_rc 0 "the written index is used" "$lp" cp --thread 7421 --index "$tmp/new.lpkx" "$tmp/scp_dest" "$tmp/scp_src" && grep -q "mapped from the index" "$tmp/out" || bad "written index not mapped"

# ---- views ---------------------------------------------------------------------------
expect_rc 0 "html and chrome" "$lp" cp --thread 7421 --html "$tmp/r.html" --chrome "$tmp/c.json" "$data/scp_dest" "$data/scp_src"
python3 - "$tmp/c.json" "$tmp/r.html" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); ev = d["traceEvents"] if isinstance(d, dict) else d
cp = [e for e in ev if e.get("cat") == "critical_path"]
names = {e.get("args", {}).get("name") for e in ev if e.get("ph") == "M"}
html = open(sys.argv[2]).read()
ok = len(cp) > 200 and "VM1/scp-7421" in names and "critical path of thread VM1/scp-7421" in html
print(("ok" if ok else "FAIL") + " views: %d critical-path events in the Chrome trace, report titled" % len(cp))
sys.exit(0 if ok else 1)
EOF

# ---- errors --------------------------------------------------------------------------
expect_rc 2 "unknown thread" "$lp" cp --thread 999999 "$data/scp_src" && grep -q "no thread '999999'" "$tmp/err" || bad "unknown thread message"
expect_rc 2 "ambiguous thread" "$lp" cp --thread scp "$data/scp_dest" "$data/scp_src" && grep -q "ambiguous" "$tmp/err" || bad "ambiguous message"
expect_rc 0 "thread by name and host" "$lp" cp --thread scp --host VM1 "$data/scp_dest" "$data/scp_src"
for c in cp info summary; do
  expect_rc 5 "$c on a CTF directory" "$lp" $c "$data/scp_src" && grep -q "cp --thread" "$tmp/err" || bad "$c: message does not name cp --thread"
done
mkdir -p "$tmp/notctf" "$tmp/trunc"
cp "$data/scp_src/channel0_0" "$tmp/notctf/"
expect_rc 5 "cp --thread on a directory that is not CTF" "$lp" cp --thread 1 "$tmp/notctf" && grep -q "is not a CTF trace: no 'metadata'" "$tmp/err" || bad "not-CTF message"
cp "$data/scp_src/metadata" "$tmp/trunc/"
head -c 100000 "$data/scp_src/channel0_0" > "$tmp/trunc/channel0_0"
"$lp" cp --thread 7421 "$tmp/trunc" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "trunc" "$tmp/err" && ok "truncated stream: exit $rc, named" || bad "truncated stream: exit $rc"
printf '# tracer: nop\n#\n' > "$tmp/t.ftrace"
expect_rc 5 "cp on ftrace text" "$lp" cp "$tmp/t.ftrace" && grep -q "cp --thread" "$tmp/err" || bad "ftrace message"
exit $fail

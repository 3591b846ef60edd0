#!/usr/bin/env bash
# test_serve_stream.sh LONGPOLE SRCDIR: `longpole stream --json --serve 0`: a client
# subscribed to /api/stream/events before the records arrive receives, as server-sent
# events, exactly the stream's JSON lines: one "window" event per window object and one
# "stream-window" per stream-window object, in the same order with the same bytes,
# then the "overall" object and "end"; the event stream ends when the stream does.
# A second client that connects late gets the same events from the hub's memory, one
# that sends Last-Event-ID: 2 (a reconnecting EventSource) gets exactly those after, and
# /api/stream/windows lists the window objects. The live page is HTML with a nonce
# CSP. Bounded waits; skips (77) without python3 or curl.
set -u
lp=$1; src=$2
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is not installed"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "skip: curl is not installed"; exit 77; }
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
"$lp" generate dataflow --records 20000 --seed 3 -o "$tmp/df.lpt" || { echo "FAIL: generate"; exit 1; }
"$lp" stream --emit "$tmp/df.lpt" > "$tmp/replay.lpt" || { echo "FAIL: --emit"; exit 1; }
mkfifo "$tmp/fifo"
timeout -s KILL 300 "$lp" stream --json --window 10ms --max-delay 1ms --serve 0 < "$tmp/fifo" > "$tmp/stream.out" 2> "$tmp/stream.err" &
SP=$!; pids="$pids $SP"
exec 3> "$tmp/fifo"   # the stream's stdin stays open until we close it
url=""
for _ in $(seq 300); do
  url=$(grep -o 'http://[^ ]*' "$tmp/stream.err" 2>/dev/null | head -1)
  [ -n "$url" ] && break
  kill -0 "$SP" 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { echo "FAIL: no server URL"; cat "$tmp/stream.err"; exit 1; }
curl -s -N --max-time 120 "${url}api/stream/events" > "$tmp/sse1.out" 3>&- &
C1=$!; pids="$pids $C1"
# the page and the index
code=$(curl -s --max-time 30 -D "$tmp/page.hdr" -o "$tmp/page.html" -w "%{http_code}" "$url" 3>&-)
[ "$code" = 200 ] || { echo "FAIL: live page status $code"; fail=1; }
grep -qi "content-security-policy: default-src 'none'; script-src 'nonce-" "$tmp/page.hdr" \
  || { echo "FAIL: live page without a nonce CSP"; fail=1; }
grep -q "EventSource('/api/stream/events')" "$tmp/page.html" || { echo "FAIL: live page does not listen"; fail=1; }
n1=$(grep -o "nonce-[A-Za-z0-9+/=]*" "$tmp/page.hdr" | head -1)
grep -q "nonce=\"${n1#nonce-}\"" "$tmp/page.html" || { echo "FAIL: the page's nonce is not the header's"; fail=1; }
sleep 0.5
cat "$tmp/replay.lpt" >&3
# before the end: some windows closed; a late client and the list see them too
for _ in $(seq 300); do
  [ "$(grep -c '"kind":"window"' "$tmp/stream.out")" -ge 3 ] && break
  sleep 0.1
done
curl -s --max-time 30 "${url}api/stream/windows" > "$tmp/windows.out" 3>&-
curl -s -N --max-time 120 "${url}api/stream/events" > "$tmp/sse2.out" 3>&- &
C2=$!; pids="$pids $C2"
# a reconnecting client (EventSource sends the last id it saw): only what came after
curl -s -N --max-time 120 -H 'Last-Event-ID: 2' "${url}api/stream/events" > "$tmp/sse3.out" 3>&- &
C3=$!; pids="$pids $C3"
sleep 0.5
exec 3>&-
for _ in $(seq 600); do kill -0 "$SP" 2>/dev/null || break; sleep 0.1; done
wait "$SP"; rc=$?
[ "$rc" = 0 ] || { echo "FAIL: stream exited $rc"; tail -20 "$tmp/stream.err"; fail=1; }
for _ in $(seq 300); do kill -0 "$C1" 2>/dev/null || break; sleep 0.1; done
wait "$C1"; rc=$?
[ "$rc" = 0 ] || { echo "FAIL: the event stream did not end cleanly (curl exit $rc)"; fail=1; }
for _ in $(seq 300); do kill -0 "$C2" 2>/dev/null || break; sleep 0.1; done
wait "$C2"
for _ in $(seq 300); do kill -0 "$C3" 2>/dev/null || break; sleep 0.1; done
wait "$C3"
cmp -s "$tmp/sse1.out" "$tmp/sse2.out" || { echo "FAIL: a late client got other events"; fail=1; }
nw=$(wc -l < "$tmp/windows.out")
[ "$nw" -ge 3 ] || { echo "FAIL: /api/stream/windows listed $nw windows"; fail=1; }
grep '"kind":"window"' "$tmp/stream.out" | head -n "$nw" | cmp -s - "$tmp/windows.out" \
  || { echo "FAIL: /api/stream/windows is not the stream's window lines"; fail=1; }
python3 - "$tmp/sse1.out" "$tmp/stream.out" "$tmp/sse3.out" <<'EOF' || fail=1
import json, sys
def parse(path):
    events, cur = [], {}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line == "":
            if cur:
                events.append(cur)
            cur = {}
            continue
        if line.startswith(":"):
            continue
        k, _, v = line.partition(": ")
        if k == "data":
            cur["data"] = cur["data"] + "\n" + v if "data" in cur else v
        else:
            cur[k] = v
    return events
events = parse(sys.argv[1])
resumed = parse(sys.argv[3])
lines = [l.rstrip("\n") for l in open(sys.argv[2], encoding="utf-8")]
kinds = [json.loads(l)["kind"] for l in lines]
want = [l for l, k in zip(lines, kinds) if k in ("window", "stream-window", "overall")]
got = [e["data"] for e in events if e.get("event") in ("window", "stream-window", "overall")]
errs = []
nwin = kinds.count("window")
if nwin < 5:
    errs.append(f"only {nwin} windows in the stream's output")
if got != want:
    errs.append(f"{len(got)} event payloads differ from the stream's {len(want)} JSON lines")
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            errs.append(f"first difference at {i}: {a[:120]} != {b[:120]}")
            break
names = [e.get("event") for e in events]
exp = [{"window": "window", "stream-window": "stream-window", "overall": "overall"}[k] for k in kinds if k in ("window", "stream-window", "overall")]
if names[:len(exp)] != exp or names[-1:] != ["end"]:
    errs.append(f"event names out of order: {names[:6]} ... {names[-3:]}")
ids = [int(e["id"]) for e in events]
if ids != list(range(ids[0], ids[0] + len(ids))):
    errs.append("event ids are not consecutive")
after = [e for e in events if int(e["id"]) > 2]
if resumed != after:
    errs.append(f"Last-Event-ID: 2 gave {len(resumed)} events (first id {resumed[0].get('id') if resumed else None}), not the {len(after)} after id 2")
for e in errs:
    print("FAIL:", e)
print(f"{len(events)} events for {nwin} windows")
sys.exit(1 if errs else 0)
EOF
[ $fail = 0 ] && echo "serve (stream): ok"
exit $fail

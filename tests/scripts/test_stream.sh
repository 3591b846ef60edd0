#!/usr/bin/env bash
# test_stream.sh LONGPOLE SRCDIR: `longpole stream` end to end (issue 3, online mode):
#  - a generated job replayed in stream order (`stream --emit`) on standard input gives
#    `summary`'s JSON window objects, byte for byte (tumbling and sliding windows, whole
#    messages and S/R halves, several threads, --by/--top/--seed);
#  - the same over TCP: several connections at once, workers split between them, plus a
#    connection of malformed lines: same windows; malformed lines counted, not fatal;
#  - SIGTERM flushes the open windows and prints the totals;
#  - --max-delay closes windows that a silent worker holds back; late records are reported;
#  - SnailTrail's binary log: detected by every command, `summary` on it equals `stream
#    --format snailtrail`, corrupt input is reported with its byte offset.
# Every background process runs under `timeout`, so a hang fails instead of blocking.
set -euo pipefail
lp=$1
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2> /dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
export LONGPOLE_NO_PROGRESS=1
fail() { echo "FAIL: $*"; exit 1; }
windows() { grep '"kind":"window"' "$1" || true; }

"$lp" generate dataflow --seed 5 --skew 0.3 --duration 400ms --checkpoint 40ms -o "$tmp/g.lptb"
"$lp" stream --emit "$tmp/g.lptb" > "$tmp/s.lpt"
"$lp" stream --emit --halves "$tmp/g.lptb" > "$tmp/h.lpt"
head -1 "$tmp/s.lpt" | grep -cx 'longpole-trace 1' >/dev/null || fail "--emit does not write .lpt"

# 1. standard input: the same window objects as `summary`
check_stdin() { # file, options...
  local f=$1; shift
  "$lp" summary --json "$@" "$f" > "$tmp/off.jsonl"
  timeout 120 "$lp" stream --json "$@" < "$f" > "$tmp/on.jsonl"
  windows "$tmp/off.jsonl" > "$tmp/a"; windows "$tmp/on.jsonl" > "$tmp/b"
  [ -s "$tmp/a" ] || fail "summary gave no window for $*"
  cmp -s "$tmp/a" "$tmp/b" || fail "stream on stdin differs from summary ($f $*)"
  grep -q '"kind":"stream"' "$tmp/on.jsonl" || fail "no stream totals"
  grep -q '"kind":"overall"' "$tmp/on.jsonl" || fail "no overall totals"
}
check_stdin "$tmp/s.lpt" --window 50ms
check_stdin "$tmp/h.lpt" --window 60ms --slide 25ms --by worker,comm --top 3 --seed 7 --threads 2
check_stdin "$tmp/s.lpt" --window 130ms --by operator --threads 3 --no-path
# text output: window blocks and the stream line
timeout 60 "$lp" stream --window 100ms < "$tmp/s.lpt" > "$tmp/text.out"
grep -q '^window 3 ' "$tmp/text.out" || fail "text output lacks window 3"
grep -q 'stream: closed by' "$tmp/text.out" || fail "text output lacks the per-window stream line"
grep -q '^stream: ' "$tmp/text.out" || fail "text output lacks the totals"

# 2. TCP: three connections with a share of the workers each, one of malformed lines
if bash -c 'true > /dev/tcp/127.0.0.1/1' 2>&1 | grep -ci 'no such file' >/dev/null; then
  echo "test_stream: bash without /dev/tcp: TCP part skipped"
else
  grep '^W ' "$tmp/h.lpt" > "$tmp/workers.lpt"
  timeout 120 "$lp" stream --listen 127.0.0.1:0 --port-file "$tmp/port" --connections 4 --workers "$tmp/workers.lpt" \
    --window 50ms --json > "$tmp/tcp.jsonl" 2> "$tmp/tcp.err" &
  pids+=($!)
  spid=$!
  for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  [ -s "$tmp/port" ] || fail "stream --listen did not report its port: $(cat "$tmp/tcp.err")"
  port=$(cat "$tmp/port")
  for k in 0 1 2; do
    awk -v k=$k '$1 != "W" && $1 != "longpole-trace" { h = 0; for (i = 1; i <= length($2); i++) h = (h * 31 + index("abcdefghijklmnopqrstuvwxyz0123456789.", substr($2, i, 1))) % 1000; if (h % 3 == k) print }' \
      "$tmp/h.lpt" > "$tmp/part$k"
  done
  [ "$(cat "$tmp/part0" "$tmp/part1" "$tmp/part2" | wc -l)" -eq "$(grep -vc -e '^W ' -e '^longpole-trace' "$tmp/h.lpt")" ] ||
    fail "the split lost lines"
  for k in 0 1 2; do
    (exec 3<> "/dev/tcp/127.0.0.1/$port" && cat "$tmp/part$k" >&3) &
    pids+=($!)
  done
  (exec 3<> "/dev/tcp/127.0.0.1/$port" && printf 'Q not a record\nA count.0 1x 2 io\n\377\376 junk\n' >&3) &
  pids+=($!)
  set +e; wait "$spid"; rc=$?; set -e
  [ "$rc" -eq 4 ] || fail "stream --listen should exit 4 (input errors), got $rc: $(tail -3 "$tmp/tcp.err")"
  "$lp" summary --window 50ms --json "$tmp/h.lpt" | grep '"kind":"window"' > "$tmp/a"
  windows "$tmp/tcp.jsonl" > "$tmp/b"
  cmp -s "$tmp/a" "$tmp/b" || fail "stream over 4 TCP connections differs from summary"
  grep -q '"malformed":3,' "$tmp/tcp.jsonl" || fail "the 3 malformed lines were not counted: $(tail -1 "$tmp/tcp.jsonl")"
  grep -q '"disconnects":4,' "$tmp/tcp.jsonl" || fail "the 4 connections were not counted as closed"
  grep -q 'listening on 127.0.0.1:' "$tmp/tcp.err" || fail "the port was not printed"

  # 3. SIGTERM: the open windows are flushed, then the totals
  rm -f "$tmp/port"
  timeout 60 "$lp" stream --listen 127.0.0.1:0 --port-file "$tmp/port" --window 50ms --json > "$tmp/term.jsonl" 2> /dev/null &
  spid=$!
  pids+=($spid)
  for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  port=$(cat "$tmp/port")
  mkfifo "$tmp/fifo"
  (exec 3<> "/dev/tcp/127.0.0.1/$port"; head -3000 "$tmp/s.lpt" >&3; cat "$tmp/fifo" > /dev/null) &
  cpid=$!
  pids+=($cpid)
  sleep 0.5
  kill -TERM "$spid"
  set +e; wait "$spid"; rc=$?; set -e
  echo > "$tmp/fifo" || true
  [ "$rc" -eq 0 ] || fail "stream exited with $rc after SIGTERM"
  grep -q '"kind":"window"' "$tmp/term.jsonl" || fail "no window flushed at SIGTERM"
  tail -1 "$tmp/term.jsonl" | grep -c '"kind":"stream"' >/dev/null || fail "no totals after SIGTERM"
fi

# 4. --max-delay: a declared worker that never logs holds every window back without it
{ head -1 "$tmp/s.lpt"; echo "W silent"; tail -n +2 "$tmp/s.lpt"; } > "$tmp/silent.lpt"
timeout 60 "$lp" stream --window 50ms --json < "$tmp/silent.lpt" > "$tmp/nd.jsonl"
nw=$(grep -c '"kind":"window"' "$tmp/nd.jsonl")
[ "$nw" -ge 8 ] && [ "$(grep -c '"closed_by":"end"' "$tmp/nd.jsonl")" -eq "$nw" ] ||
  fail "without --max-delay the silent worker should hold every window until the end: $(tail -1 "$tmp/nd.jsonl")"
timeout 60 "$lp" stream --window 50ms --max-delay 20ms --json < "$tmp/silent.lpt" > "$tmp/md.jsonl"
grep -q '"max-delay":[1-9]' "$tmp/md.jsonl" || fail "--max-delay closed no window: $(tail -1 "$tmp/md.jsonl")"
grep -q '"closed_by":"max-delay"' "$tmp/md.jsonl" || fail "no stream-window object says max-delay"
# a record for an emitted window is late: reported and counted
# (issue 12: the results are incomplete, said plainly, and a finite input exits 4)
set +e
{ cat "$tmp/silent.lpt"; echo "A silent 1000 2000 io"; } |
  timeout 60 "$lp" stream --window 50ms --max-delay 20ms --json > "$tmp/late.jsonl"
rc=$?
set -e
[ "$rc" -eq 4 ] || fail "a finite input with a late record should exit 4 (incomplete), got $rc"
grep -q '"kind":"late","index":0,' "$tmp/late.jsonl" || fail "the late record was not reported"
grep -q '"late":1,' "$tmp/late.jsonl" || fail "the late record was not counted"
grep -q '"kind":"stream","complete":false,"missing_records":1,' "$tmp/late.jsonl" ||
  fail "the end of the stream does not say the results are incomplete: $(tail -1 "$tmp/late.jsonl")"
set +e
{ cat "$tmp/silent.lpt"; echo "A silent 1000 2000 io"; } |
  timeout 60 "$lp" stream --window 50ms --max-delay 20ms > "$tmp/late.txt"
set -e
grep -q 'its summary above is partial' "$tmp/late.txt" || fail "the late line does not mark its window partial"
grep -q '^RESULTS ARE INCOMPLETE: 1 of ' "$tmp/late.txt" || fail "the text does not say the results are incomplete"
grep -q '"kind":"stream","complete":true' "$tmp/md.jsonl" || fail "a complete stream is not said complete"

# 5. SnailTrail's binary log
"$lp" stream --emit --emit-format snailtrail "$tmp/g.lptb" > "$tmp/g.msgpack"
"$lp" info "$tmp/g.msgpack" | grep -c 'workers *13' >/dev/null || fail "info does not read the SnailTrail log"
"$lp" summary --window 40ms --json "$tmp/g.msgpack" | grep '"kind":"window"' > "$tmp/a"
timeout 60 "$lp" stream --format snailtrail --window 40ms --json < "$tmp/g.msgpack" > "$tmp/st.jsonl"
windows "$tmp/st.jsonl" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "stream --format snailtrail differs from summary on the same log"
cp "$tmp/g.msgpack" "$tmp/bad.msgpack"
printf '\005\300' >> "$tmp/bad.msgpack" # a timestamp, then nil where the worker belongs
at=$(( $(wc -c < "$tmp/g.msgpack") + 1 ))
set +e
"$lp" info --format snailtrail "$tmp/bad.msgpack" > /dev/null 2> "$tmp/bad.err"; rc=$?
set -e
[ "$rc" -eq 4 ] || fail "a corrupt SnailTrail log should exit 4 (data errors), got $rc"
grep -q "byte $at: error: not a SnailTrail record: field 2 (local_worker): expected a MessagePack integer, found nil" \
  "$tmp/bad.err" || fail "the corrupt record's byte offset is not reported: $(head -3 "$tmp/bad.err")"

# 6. usage
"$lp" help stream | grep -c -- '--max-delay' >/dev/null || fail "help stream lacks --max-delay"
set +e
"$lp" stream < /dev/null > /dev/null 2>&1; [ $? -eq 2 ] || fail "stream without --window should be a usage error"
"$lp" stream --window 1s --connections 2 < /dev/null > /dev/null 2>&1; [ $? -eq 2 ] || fail "--connections without --listen"
set -e
echo "test_stream: ok"

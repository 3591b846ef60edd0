#!/usr/bin/env bash
# test_serve.sh LONGPOLE SRCDIR: `longpole serve` end to end, on an ephemeral port.
#  - the JSON API answers byte for byte what the CLI prints with --json for the same
#    options (trace: info, cp, cp with a window, check, summary with options; request
#    logs: requests, requests with options, skew, the inferred model; spans: spans,
#    spans with percentiles, and cp of their activity graph);
#  - parameters are checked (unknown, repeated, bad values: 400), HEAD has no body;
#  - the views: / and /view/NAME are HTML, views that do not apply are 404;
#  - path traversal (../, %2e%2e, encoded slashes, absolute paths, absolute-form targets,
#    NUL and control bytes), oversized URLs, headers and bodies, other methods and a
#    foreign Host are refused with the right status, and nothing of /etc/passwd leaks
#    (serve_client.py, raw sockets);
#  - 500 concurrent connections (plus 100 idle ones) all get their answer, and the
#    server still answers afterwards;
#  - an analysis over --job-timeout answers 504 with its error object; with the only
#    slot held, 64 analyses wait and the next 6 get 503 with Retry-After (analyses that
#    read a FIFO nobody writes: deterministic under any load);
#  - the rate limit answers 429 with Retry-After;
#  - SIGTERM stops the server with exit 0 (under the sanitizer build: no leak, no error).
# Every wait is bounded (timeout), so a hang fails the test. Skips (77) without python3
# or curl.
set -u
lp=$1; src=$2
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is not installed"; exit 77; }
command -v curl >/dev/null 2>&1 || { echo "skip: curl is not installed"; exit 77; }
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do pkill -KILL -P "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
client="python3 $src/tests/scripts/serve_client.py"

# start_server NAME ARGS...: start `serve` on an ephemeral port; sets PORT and SPID.
# Under ASan the server (and the analyses it runs) skip LeakSanitizer's check at exit:
# in one CI run, LSan's StopTheWorld hung after the server's clean SIGTERM shutdown (the
# server spinning under LSan's tracer, which waited for it to stop), an LSan problem, not
# the server's. ASan still checks every access; the same analyses are leak-checked by the
# tests that run them from the command line.
start_server() {
  local name=$1; shift
  rm -f "$tmp/$name.port"
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    timeout -s KILL 600 "$lp" serve --listen 127.0.0.1:0 --port-file "$tmp/$name.port" "$@" \
    2> "$tmp/$name.err" &
  SPID=$!
  pids="$pids $SPID"
  for _ in $(seq 600); do
    [ -s "$tmp/$name.port" ] && break
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.1
  done
  if [ ! -s "$tmp/$name.port" ]; then
    echo "FAIL: server $name did not start"; cat "$tmp/$name.err"; exit 1
  fi
  PORT=$(cat "$tmp/$name.port")
}

# stop_server NAME PID: SIGTERM, then it must exit 0 within 60 s
stop_server() {
  local name=$1 pid=$2 rc
  kill -TERM "$pid"
  for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "FAIL: server $name did not stop on SIGTERM"; fail=1; pkill -KILL -P "$pid"; kill -KILL "$pid"
  fi
  wait "$pid"; rc=$?
  if [ "$rc" != 0 ]; then
    echo "FAIL: server $name exited $rc"; tail -30 "$tmp/$name.err"; fail=1
  fi
}

# same NAME URL-PATH CLI-ARGS...: the API's answer equals the CLI's output
same() {
  local name=$1 path=$2; shift 2
  local code
  code=$(curl -s --max-time 300 -o "$tmp/api.out" -w "%{http_code}" "http://127.0.0.1:$PORT$path")
  timeout 300 "$lp" "$@" > "$tmp/cli.out" 2> /dev/null
  if [ "$code" != 200 ]; then
    echo "FAIL: $name: GET $path: status $code: $(head -c 300 "$tmp/api.out")"; fail=1
  elif ! cmp -s "$tmp/api.out" "$tmp/cli.out"; then
    echo "FAIL: $name: GET $path differs from \`longpole $*\`"; fail=1
    diff <(head -c 2000 "$tmp/api.out") <(head -c 2000 "$tmp/cli.out") | head -10
  elif [ ! -s "$tmp/cli.out" ]; then
    echo "FAIL: $name: \`longpole $*\` printed nothing"; fail=1
  fi
}

# status URL-PATH CODE [CURL-ARGS]: the HTTP status of a request
status() {
  local path=$1 want=$2; shift 2
  local code
  code=$(curl -s --max-time 60 -o "$tmp/st.out" -w "%{http_code}" "$@" "http://127.0.0.1:$PORT$path")
  if [ "$code" != "$want" ]; then
    echo "FAIL: GET $path: status $code, expected $want: $(head -c 300 "$tmp/st.out")"; fail=1
  fi
}

"$lp" generate dataflow --records 20000 --seed 9 -o "$tmp/df.lpt" || { echo "FAIL: generate"; exit 1; }
"$lp" generate requests --requests 300 --segments 16 --seed 4 -o "$tmp/req" 2> /dev/null \
  || { echo "FAIL: generate requests"; exit 1; }

# ---- an activity trace -----------------------------------------------------------------
start_server trace "$tmp/df.lpt" --rate 100000 --burst 100000
T=$PORT; TPID=$SPID
same trace /api/trace info --json "$tmp/df.lpt"
same trace /api/cp cp --json "$tmp/df.lpt"
same trace "/api/cp?from=%2B10ms&to=%2B60ms" cp --json --from +10ms --to +60ms "$tmp/df.lpt"
same trace "/api/cp?from=+10ms&to=+60ms" cp --json --from +10ms --to +60ms "$tmp/df.lpt"  # '+' unencoded
for v in breakdown summaries overview; do status "/view/$v" 200; done
same trace /api/check check --json "$tmp/df.lpt"
same trace "/api/summary?window=20ms&by=worker,operator&top=3&seed=7" \
  summary --json --window 20ms --by worker,operator --top 3 --seed 7 "$tmp/df.lpt"
same trace "/api/summary?no_path=1&window=50ms" summary --json --window 50ms --no-path "$tmp/df.lpt"
# the same question in another order is the same answer
same trace "/api/summary?by=worker,operator&seed=7&window=20ms&top=3" \
  summary --json --window 20ms --by worker,operator --top 3 --seed 7 "$tmp/df.lpt"
status "/api/cp?bogus=1" 400
status "/api/cp?from=1s&from=2s" 400
status "/api/summary?window=abc" 400
status "/api/summary?window=-5ms" 400
status "/api/summary?by=nothing" 400
status "/api/summary?no_path=maybe" 400
status "/api/requests" 404
status "/api/nothing" 404
status "/" 200
status "/view/timeline" 200
status "/view/requests" 404
status "/view/nothing" 404
status "/?x=1" 400
ctype=$(curl -s --max-time 60 -o /dev/null -w "%{content_type}" "http://127.0.0.1:$PORT/view/overview")
case "$ctype" in text/html*) ;; *) echo "FAIL: /view/overview is $ctype"; fail=1 ;; esac
grep -q "<section" "$tmp/st.out" 2>/dev/null || true
curl -s --max-time 60 "http://127.0.0.1:$PORT/" | grep -q 'id="lp-s-timeline"' \
  || { echo "FAIL: / has no timeline section"; fail=1; }
hl=$(curl -s --max-time 60 -I "http://127.0.0.1:$PORT/api/cp" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-length"{print $2}')
gl=$(curl -s --max-time 60 "http://127.0.0.1:$PORT/api/cp" | wc -c)
[ "$hl" = "$gl" ] || { echo "FAIL: HEAD /api/cp Content-Length $hl, GET body $gl bytes"; fail=1; }
$client "$PORT" attacks || fail=1
$client "$PORT" concurrent 500 /api/cp || fail=1
$client "$PORT" concurrent 500 /api || fail=1
status /api/trace 200
stop_server trace "$TPID"

# ---- request logs and span traces ----------------------------------------------------------
spangen=$(dirname "$lp")/bench/spans/spangen
inputs=("$tmp/req.csv")
if [ -x "$spangen" ]; then
  "$spangen" jaeger --traces 60 --spans 12 --seed 3 > "$tmp/spans.json" 2> /dev/null
  inputs+=("$tmp/spans.json")
else
  echo "note: $spangen not built: span endpoints not tested"
fi
start_server mixed --no-views "${inputs[@]}"
MPID=$SPID
same mixed /api/requests requests --json "$tmp/req.csv"
same mixed "/api/requests?outliers=0.1&buckets=5&per_request=1" \
  requests --json --outliers 0.1 --buckets 5 --per-request "$tmp/req.csv"
same mixed "/api/requests?stratify=latency:3&stratify=latency:2" \
  requests --json --stratify latency:3 --stratify latency:2 "$tmp/req.csv"
same mixed /api/skew skew --json "$tmp/req.csv"
same mixed /api/model infer -o - "$tmp/req.csv"
status "/api/requests?request=nosuchrequest" 400
if [ -x "$spangen" ]; then
  same mixed /api/spans spans --json "$tmp/spans.json"
  same mixed "/api/spans?percentile=50,all&sections=1" spans --json --percentile 50,all --sections "$tmp/spans.json"
  same mixed /api/cp cp --json "$tmp/spans.json"
fi
status /view/requests 404 # --no-views
status / 200
stop_server mixed "$MPID"
# the views of request logs
start_server reqviews "$tmp/req.csv"
RPID=$SPID
status /view/requests 200
status /view/timeline 404
same reqviews /api/skew skew --json "$tmp/req.csv"
stop_server reqviews "$RPID"

# ---- job limits: an analysis over --job-timeout is a 504; beyond --jobs running and 64
# waiting, a 503 with Retry-After (the cache itself: tests/unit/serve/test_cmdcache.c).
# Deterministic: every analysis reads a FIFO that nobody writes after the server's own
# look at it, so it runs until the server gives up on it or is stopped, whatever the
# machine's load (no race against a clock). ------------------------------------------------
mkfifo "$tmp/hold.lpt"
# the server looks at each input once when it starts (to tell traces from request logs)
( printf 'longpole-trace 1\n' > "$tmp/hold.lpt" ) 2>/dev/null &
WPID=$!
start_server jobs "$tmp/hold.lpt" --no-views --jobs 1 --job-timeout 0.2 --rate 100000 --burst 100000
JPID=$SPID
wait $WPID # the server has read and closed the FIFO: from now on nobody writes it
status "/api/summary?window=100us" 504
grep -q '"status":504' "$tmp/st.out" || { echo "FAIL: 504 without its error object: $(head -c 200 "$tmp/st.out")"; fail=1; }
stop_server jobs "$JPID"

( printf 'longpole-trace 1\n' > "$tmp/hold.lpt" ) 2>/dev/null &
WPID=$!
start_server busy "$tmp/hold.lpt" --no-views --jobs 1 --job-timeout 3600 --rate 100000 --burst 100000
BPID=$SPID
wait $WPID
# one analysis takes the only slot and holds it (blocked on the FIFO) ...
curl -s --max-time 600 -o /dev/null -w "%{http_code}\n" "http://127.0.0.1:$PORT/api/summary?window=99us" \
  > "$tmp/busy.held" 2>/dev/null &
held=0
for _ in $(seq 6000); do
  if pgrep -f -- "--window 99us" >/dev/null 2>&1; then held=1; break; fi
  sleep 0.1
done
[ $held = 1 ] || { echo "FAIL: the first analysis never started"; fail=1; }
# ... then 70 more: 64 wait for the slot, exactly 6 are refused at once with 503
for i in $(seq 100 169); do
  curl -s --max-time 600 -o /dev/null -D "$tmp/busy.$i.hdr" -w "%{http_code}\n" \
    "http://127.0.0.1:$PORT/api/summary?window=${i}us" > "$tmp/busy.$i" 2>/dev/null &
done
n503=0
for _ in $(seq 6000); do
  n503=$(cat "$tmp"/busy.1?? 2>/dev/null | grep -c '^503$')
  [ "$n503" -ge 6 ] && break
  sleep 0.1
done
sleep 0.5 # a seventh 503 (a wrong count of waiters) would show up by now
n503=$(cat "$tmp"/busy.1?? 2>/dev/null | grep -c '^503$')
if [ "$n503" != 6 ]; then
  echo "FAIL: 1 analysis holding the only slot, 70 more: $n503 answered 503, expected 6 (64 wait)"; fail=1
else
  echo "1 analysis holding the only slot, 70 more: 64 wait, 6 answered 503"
fi
grep -l '^HTTP/1.1 503' "$tmp"/busy.*.hdr 2>/dev/null | head -1 | xargs -r grep -qi '^retry-after: 5' \
  || { echo "FAIL: 503 without Retry-After: 5"; fail=1; }
stop_server busy "$BPID" # the held and waiting analyses are stopped with it
wait 2>/dev/null

# ---- the rate limit --------------------------------------------------------------------------
start_server limited "$tmp/df.lpt" --no-views --rate 2 --burst 5
LPID=$SPID
$client "$PORT" ratelimit 20 || fail=1
stop_server limited "$LPID"

[ $fail = 0 ] && echo "serve: ok"
exit $fail

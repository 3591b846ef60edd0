#!/usr/bin/env bash
# test_chrome_data.sh LONGPOLE SRCDIR: the real Chrome Trace Event Format traces of
# ../shared/data/{chrome,pytorch} (catapult's test data, PyTorch profiler / Kineto
# traces; see its README). For every file: it loads without error, and what the
# importer says it read matches an independent count by jq: the events, the X slices,
# the B/E slices, the slices never ended (B without E per thread), the flow messages
# (s..t..f chains) and, for PyTorch traces, the kernel-launch messages (GPU operations
# whose correlation id has a CUDA runtime call). The ResNet-50 trace's critical path
# must run on both the CPU thread and a GPU stream, linked by messages both ways.
# Skips (77) when ../shared/data, jq or python3 is absent.
set -u
lp=$1; src=$2
data=$src/../shared/data
if [ ! -d "$data/chrome" ] || [ ! -d "$data/pytorch" ]; then echo "skip: $data/{chrome,pytorch} is absent"; exit 77; fi
for tool in jq python3; do
  if ! command -v $tool >/dev/null 2>&1; then echo "skip: $tool is not installed (sh scripts/deps.sh test)"; exit 77; fi
done
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; files=0

events() { # the event array of a document, gzip or not
  case $1 in *.gz) zcat "$1" ;; *) cat "$1" ;; esac |
    jq -c 'if type == "array" then . else .traceEvents end'
}

for f in "$data"/chrome/* "$data"/pytorch/*; do
  [ -f "$f" ] || continue
  files=$((files + 1))
  name=${f#"$data"/}
  if ! "$lp" convert "$f" -o "$tmp/out.lpt" 2> "$tmp/err"; then
    echo "FAIL $name: longpole convert exited $?"; cat "$tmp/err"; fail=1; continue
  fi
  if grep -q ": error: " "$tmp/err"; then echo "FAIL $name: errors while loading"; cat "$tmp/err"; fail=1; fi
  note=$(grep -o 'chrome[^:]*: [0-9]* events read: [0-9]* slices (X [0-9]*, B/E [0-9]*, async [0-9]*) on [0-9]* workers, [0-9]* messages' "$tmp/err")
  if [ -z "$note" ]; then echo "FAIL $name: no chrome import note (not detected as chrome?)"; cat "$tmp/err"; fail=1; continue; fi
  got_events=$(echo "$note" | sed 's/.*: \([0-9]*\) events read.*/\1/')
  got_x=$(echo "$note" | sed 's/.*(X \([0-9]*\),.*/\1/')
  got_b=$(echo "$note" | sed 's/.*B\/E \([0-9]*\),.*/\1/')
  kineto=0; case "$note" in *Kineto*) kineto=1 ;; esac
  events "$f" > "$tmp/ev.json"
  want_events=$(jq length "$tmp/ev.json")
  # X slices: a Kineto trace's profiler span and its cuda_sync records are not slices
  want_x=$(jq --argjson k $kineto '[.[] | select(.ph == "X") | select($k == 0 or (.cat != "Trace" and .cat != "cuda_sync"))] | length' "$tmp/ev.json")
  want_b=$(jq '[.[] | select(.ph == "B")] | length' "$tmp/ev.json")
  # B never closed: per thread (pid, tid as text), B minus E when positive
  want_open=$(jq '[.[] | select(.ph == "B" or .ph == "E") | {k: "\(.pid)/\(.tid // .pid)", d: (if .ph == "B" then 1 else -1 end)}]
                  | group_by(.k) | map(reduce .[] as $e (0; if $e.d < 0 and . == 0 then 0 else . + $e.d end)) | add // 0' "$tmp/ev.json")
  got_open=$(grep -c "is never ended (no E)" "$tmp/err")
  for v in events x b open; do
    w=want_$v; g=got_$v
    if [ "${!w}" != "${!g}" ]; then echo "FAIL $name: $v: longpole ${!g}, jq ${!w}"; fail=1; fi
  done
  if [ $kineto = 0 ]; then
    # flow messages: in each (cat, name, id) chain ordered by time, every t or f after an s or t
    want_flows=$(jq '[.[] | select(.ph == "s" or .ph == "t" or .ph == "f") | {k: "\(.cat)\u001f\(.name)\u001f\(.id)", ph, ts}]
                     | group_by(.k) | map(sort_by(.ts) | reduce .[] as $e ({open: false, n: 0};
                         if ($e.ph == "t" or $e.ph == "f") and .open then .n += 1 else . end
                         | .open = ($e.ph == "s" or ($e.ph == "t" and .open)))) | map(.n) | add // 0' "$tmp/ev.json")
    got_flows=$(grep -c '^M .* flow=' "$tmp/out.lpt")
    if [ "$want_flows" != "$got_flows" ]; then echo "FAIL $name: flow messages: longpole $got_flows, jq $want_flows"; fail=1; fi
  else
    # kernel launches: GPU operations whose correlation id a runtime call has
    want_launch=$(jq '([.[] | select(.ph == "X" and (.cat == "cuda_runtime" or .cat == "Runtime" or .cat == "cuda_driver"))
                       | .args.correlation | select(. != null)] | unique) as $rt
                      | [.[] | select(.ph == "X" and (.cat == "kernel" or .cat == "Kernel" or .cat == "gpu_memcpy" or .cat == "Memcpy"
                                                     or .cat == "gpu_memset" or .cat == "Memset"))
                         | select(.args.correlation as $c | $rt | bsearch($c) >= 0)] | length' "$tmp/ev.json")
    got_launch=$(grep -c '^M .* edge=launch' "$tmp/out.lpt")
    if [ "$want_launch" != "$got_launch" ]; then echo "FAIL $name: launch messages: longpole $got_launch, jq $want_launch"; fail=1; fi
  fi
  echo "ok $name: $got_events events, X $got_x, B/E $got_b, never ended $got_open"
done
[ "$files" -ge 10 ] || { echo "FAIL: only $files files found"; fail=1; }

# the ResNet-50 trace: the critical path crosses between the CPU and a GPU stream
f=$data/pytorch/resnet50_workers0.pt.trace.json.gz
if [ -f "$f" ]; then
  "$lp" convert "$f" -o "$tmp/r.lpt" 2> /dev/null
  "$lp" cp --json "$f" > "$tmp/cp.json" 2> /dev/null
  python3 - "$tmp/r.lpt" "$tmp/cp.json" <<'EOF' || fail=1
import json, sys, urllib.parse
kind = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "W":
        name = urllib.parse.unquote(f[1])
        attrs = dict(urllib.parse.unquote(x).split("=", 1) for x in f[2:] if "=" in x)
        kind[name] = attrs.get("kind")
path = json.load(open(sys.argv[2]))["critical_path"]["path"]
acts = {kind.get(e["worker"]) for e in path if e["kind"] == "activity" and not e["gap"]}
to_gpu = sum(1 for e in path if e["kind"] == "message" and kind.get(e["from"]) == "cpu" and kind.get(e["to"]) == "gpu")
to_cpu = sum(1 for e in path if e["kind"] == "message" and kind.get(e["from"]) == "gpu" and kind.get(e["to"]) == "cpu")
ok = "cpu" in acts and "gpu" in acts and to_gpu > 0 and to_cpu > 0
print(("ok" if ok else "FAIL") + f" resnet50 critical path: activities on {sorted(a for a in acts if a)}, "
      f"{to_gpu} CPU->GPU and {to_cpu} GPU->CPU messages")
sys.exit(0 if ok else 1)
EOF
fi
exit $fail

#!/usr/bin/env bash
# test_crystalperf.sh LONGPOLE SRCDIR: the CrystalPerf commands end to end.
#  - resources on the golden perf recordings (tests/data/crystalperf): the bottleneck of the
#    CPU-bound, fsync-bound and TCP-bound runs is cpu, disk and net; --json, --sqlite;
#  - whatif: the model's error at the recorded configuration is printed and small; one core
#    for two roughly doubles the CPU-bound run; a Spark log with task metrics works without
#    samples;
#  - "never a confident wrong answer": an empty file, a file of another format, a folder of
#    unrelated inputs, samples of another run, a window outside the data, and missing
#    configuration each get a clear message and a non-zero status, never exit 0 with a
#    number; classify on an empty or foreign file likewise.
set -u
lp=$1; src=$2
d=$src/tests/data/crystalperf
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

for m in cpu disk net; do
  want=$m
  out=$("$lp" resources "$d/$m.lpt" --samples "$d/$m.perf.txt.gz" --json -q 2>"$tmp/err"); rc=$?
  b=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["bottleneck"])' 2>/dev/null)
  [ $rc = 0 ] && [ "$b" = "$want" ] && ok "resources $m: bottleneck $b" || { bad "resources $m: rc $rc bottleneck '$b'"; cat "$tmp/err"; }
done
"$lp" resources "$d/disk.lpt" --samples "$d/disk.perf.txt.gz" -q --sqlite "$tmp/r.db" >/dev/null 2>&1 \
  && [ "$(sqlite3 "$tmp/r.db" 'select bottleneck from cpf_info' 2>/dev/null)" = disk ] && ok "resources --sqlite" \
  || { command -v sqlite3 >/dev/null && bad "resources --sqlite"; }

out=$("$lp" whatif "$d/cpu.lpt" --samples "$d/cpu.perf.txt.gz" --cores 1 --json -q 2>"$tmp/err"); rc=$?
python3 - "$out" <<'PY' && ok "whatif cores 2 -> 1: self error < 3 %, about twice the time" || { bad "whatif cpu"; cat "$tmp/err"; }
import json, sys
j = json.loads(sys.argv[1])
r = j['predicted_ns'] / j['recorded_ns']
sys.exit(0 if j['self_error'] < 0.03 and 1.6 < r < 2.2 else 1)
PY
"$lp" whatif "$d/cpu.lpt" --samples "$d/cpu.perf.txt.gz" --cpu-speed 2 -q | grep -q "model error at the recorded configuration" \
  && ok "whatif prints its own error" || bad "whatif does not print its own error"
if [ -f "$src/../shared/data/spark/application_1553914137147_0018" ]; then
  "$lp" whatif "$src/../shared/data/spark/application_1553914137147_0018" --cpu-speed 2 -q > "$tmp/o" 2>&1 \
    && grep -q PREDICTED "$tmp/o" && ok "whatif on a Spark log (task metrics)" || { bad "whatif spark"; cat "$tmp/o"; }
  "$lp" resources "$src/../shared/data/spark/application_1553914137147_0018" -q --json 2>/dev/null \
    | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["path"]["net"] > 16e9 else 1)' \
    && ok "resources: the Spark 3.0 stage-2 task's off-CPU time is network, not processing" || bad "spark resources"
fi

# never a confident wrong answer: each must fail (non-zero) with a message on stderr
: > "$tmp/empty"
echo '{"traceEvents": "not really"}' > "$tmp/other.json"
mkdir "$tmp/folder"; echo "hello" > "$tmp/folder/a.txt"; printf '\x00\x01\x02' > "$tmp/folder/b.bin"
expect_fail() { # description, command...
  local what=$1; shift
  "$@" > "$tmp/o" 2> "$tmp/e"; local rc=$?
  if [ $rc = 0 ]; then bad "$what: exit 0"; cat "$tmp/o"; return; fi
  if [ ! -s "$tmp/e" ]; then bad "$what: exit $rc without a message"; return; fi
  ok "$what: exit $rc ($(head -c 100 "$tmp/e" | tr '\n' ' '))"
}
for cmd in resources "whatif --cores 1"; do
  expect_fail "$cmd on an empty file" "$lp" $cmd "$tmp/empty"
  expect_fail "$cmd on another format" "$lp" $cmd "$tmp/other.json"
  expect_fail "$cmd on a folder of unrelated inputs" "$lp" $cmd "$tmp/folder"
  expect_fail "$cmd with samples of another run" "$lp" $cmd "$d/cpu.lpt" --samples "$d/net.perf.txt.gz"
  expect_fail "$cmd with samples that are not samples" "$lp" $cmd "$d/cpu.lpt" --samples "$tmp/other.json"
  expect_fail "$cmd with empty samples" "$lp" $cmd "$d/cpu.lpt" --samples "$tmp/empty"
done
expect_fail "resources on a window outside the data" "$lp" resources "$d/cpu.lpt" --from +1000s --to +2000s
expect_fail "whatif without a change" "$lp" whatif "$d/cpu.lpt"
expect_fail "whatif --disk-bw without the recorded bandwidth" "$lp" whatif "$d/disk.lpt" --disk-bw 20MB
expect_fail "whatif --memory without the data size" "$lp" whatif "$d/cpu.lpt" --memory 4G
expect_fail "whatif --cpu-speed without evidence (partial)" "$lp" whatif "$d/cpu.lpt" --cpu-speed 2
expect_fail "resources without evidence (partial)" "$lp" resources "$d/cpu.lpt"
expect_fail "classify --cv on an empty file" "$lp" classify --cv "$tmp/empty"
expect_fail "classify --cv on another format" "$lp" classify --cv "$tmp/other.json"
expect_fail "classify --explain with a foreign model" "$lp" classify --explain f --model "$tmp/other.json"
expect_fail "classify --measure on a folder" "$lp" classify --measure "$tmp/folder"
exit $fail

#!/usr/bin/env bash
# test_record.sh LONGPOLE SRCDIR: `longpole record` and `longpole monitor` end to end
# with short commands (no timing: every check is on what was written or on statuses):
#  - monitor -- CMD: the command's exit status comes back (0 and 3), its stdout stays
#    its own, the answer on stderr names the monitor source with its file and bytes,
#    monitor.csv has the header and proc.cpu rows, manifest.json the exit code;
#  - the command sees LONGPOLE_RECORDING (the recording's directory);
#  - a command killed by a signal: 128 + N; SIGTERM sent to longpole is forwarded and
#    the recording completed (the command waits on a fifo the test holds open, so
#    nothing races a clock);
#  - recorder failures: an unknown command is 127, a non-empty directory 125, an unknown
#    source and a missing command are usage errors (2), before anything runs;
#  - record with the default sources: sources that cannot run here (no tracefs, no perf)
#    are reported as skipped with a reason and the command still runs; --sources kernel
#    or stacks where they cannot run is refused with 125 (checked only then: where they
#    can run, their own tests cover them);
#  - `longpole grade10 DIR` analyses a recording holding an OperationLog and a model
#    (text, --json, --html with the grade10 section, --sqlite).
set -uo pipefail
lp=$1 src=$2
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d)
cleanup() { exec 9>&- 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# 1. monitor -- CMD: the command's status and output, the answer, the files
out=$("$lp" monitor -o "$tmp/r1" --period 5ms -- sh -c 'echo hello; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done' \
  2> "$tmp/err1"); st=$?
[ $st = 0 ] || bad "monitor: exit $st, expected 0: $(cat "$tmp/err1")"
[ "$out" = hello ] || bad "monitor: the command's stdout is '$out'"
grep -q "exited with status 0" "$tmp/err1" || bad "monitor: the answer does not give the exit status: $(cat "$tmp/err1")"
grep -qE "^  monitor +ok +monitor.csv \([0-9]+ bytes\)" "$tmp/err1" || bad "monitor: no source line: $(cat "$tmp/err1")"
head -1 "$tmp/r1/monitor.csv" | grep -q '^time_ns,host,metric,value' || bad "monitor.csv has no header"
grep -q ',proc.cpu,' "$tmp/r1/monitor.csv" || bad "monitor.csv has no proc.cpu"
grep -q '"code": 0' "$tmp/r1/manifest.json" || bad "manifest: no exit code 0"
bytes=$(sed -nE 's/.*monitor.csv \(([0-9]+) bytes\).*/\1/p' "$tmp/err1")
[ "$bytes" = "$(stat -c %s "$tmp/r1/monitor.csv")" ] || bad "monitor: bytes printed $bytes, file has $(stat -c %s "$tmp/r1/monitor.csv")"

"$lp" monitor -q -o "$tmp/r2" -- sh -c 'exit 3' 2> "$tmp/err2"; st=$?
[ $st = 3 ] || bad "monitor: exit $st, expected the command's 3"
[ ! -s "$tmp/err2" ] || bad "monitor -q printed: $(cat "$tmp/err2")"

# 2. the recording's directory in the environment
"$lp" record -q --sources monitor -o "$tmp/r3" -- sh -c 'echo "$LONGPOLE_RECORDING" > "$LONGPOLE_RECORDING/where"'
[ "$(cat "$tmp/r3/where" 2>/dev/null)" = "$tmp/r3" ] || bad "LONGPOLE_RECORDING is not the recording's directory"

# 3. signals: a command killed by one, and SIGTERM forwarded
"$lp" monitor -q -o "$tmp/r4" -- sh -c 'kill -KILL $$'; st=$?
[ $st = 137 ] || bad "a command killed by SIGKILL: exit $st, expected 137"
mkfifo "$tmp/fifo"
"$lp" monitor -q -o "$tmp/r5" -- sh -c "exec cat '$tmp/fifo'" > /dev/null 2> "$tmp/err5" &
rec=$!
exec 9> "$tmp/fifo" # the command is now running, blocked reading the fifo (the test holds it open)
kill -TERM $rec
wait $rec; st=$?
exec 9>&-
[ $st = 143 ] || bad "SIGTERM to longpole: exit $st, expected 143 (forwarded to the command): $(cat "$tmp/err5")"
grep -q '"signal": 15' "$tmp/r5/manifest.json" 2>/dev/null || bad "SIGTERM: the manifest does not say signal 15"

# following a process: SIGTERM to longpole ends the recording, not the process
mkfifo "$tmp/fifo2"
sh -c "exec cat '$tmp/fifo2'" > /dev/null &
target=$!
"$lp" monitor -q --period 5ms -o "$tmp/r5b" --pid $target 2> "$tmp/err5b" &
rec=$!
for _ in $(seq 600); do [ -s "$tmp/r5b/monitor.csv" ] && break; sleep 0.05; done # the sampler has started
kill -TERM $rec
wait $rec; st=$?
[ $st = 0 ] || bad "--pid ended by SIGTERM: exit $st: $(cat "$tmp/err5b")"
kill -0 $target 2>/dev/null || bad "--pid: SIGTERM to longpole reached the followed process"
grep -q '"attached": true' "$tmp/r5b/manifest.json" 2>/dev/null || bad "--pid: the manifest does not say attached"
exec 8> "$tmp/fifo2"; exec 8>&- # ends the target
wait $target

# 4. recorder failures
"$lp" monitor -q -o "$tmp/r6" -- /no/such/command 2> "$tmp/err6"; st=$?
[ $st = 127 ] || bad "an unknown command: exit $st, expected 127: $(cat "$tmp/err6")"
"$lp" monitor -q -o "$tmp/r1" -- true 2> "$tmp/err7"; st=$?
[ $st = 125 ] || bad "a non-empty directory: exit $st, expected 125"
grep -q "not empty" "$tmp/err7" || bad "a non-empty directory: $(cat "$tmp/err7")"
"$lp" record --sources nosuch -o "$tmp/r8" -- true 2> "$tmp/err8"; st=$?
[ $st = 2 ] || bad "an unknown source: exit $st, expected 2"
[ ! -e "$tmp/r8" ] || bad "an unknown source: the directory was made"
"$lp" record -o "$tmp/r9" 2> /dev/null; st=$?
[ $st = 2 ] || bad "no command: exit $st, expected 2"
"$lp" record -o "$tmp/r9" -- 2> /dev/null; st=$?
[ $st = 2 ] || bad "nothing after --: exit $st, expected 2"
"$lp" record -o "$tmp/r9" --pid 1 -- true 2> /dev/null; st=$?
[ $st = 2 ] || bad "--pid and a command: exit $st, expected 2"
# --help after -- belongs to the command
out=$("$lp" monitor -q -o "$tmp/r10" -- sh -c 'echo "$1"' sh --help); st=$?
[ $st = 0 ] && [ "$out" = "--help" ] || bad "--help after -- was not the command's: exit $st, '$out'"

# 5. the default sources: those that cannot run here are skipped, with a reason
"$lp" record -o "$tmp/r11" -- true 2> "$tmp/err11"; st=$?
[ $st = 0 ] || bad "record with the default sources: exit $st: $(cat "$tmp/err11")"
grep -qE "^  monitor +ok" "$tmp/err11" || bad "record: the monitor source did not run: $(cat "$tmp/err11")"
for s in kernel stacks; do
  if grep -qE "^  $s +(skipped|failed)" "$tmp/err11"; then
    echo "note: source $s cannot run here: $(grep -E "^  $s " "$tmp/err11" | sed -E 's/^ +//')"
    "$lp" record -q --sources "$s" -o "$tmp/r12$s" -- true 2> "$tmp/err12"; st=$?
    [ $st = 125 ] || bad "--sources $s, which cannot run here: exit $st, expected 125"
    grep -q "cannot run here" "$tmp/err12" || bad "--sources $s: $(cat "$tmp/err12")"
  elif ! grep -qE "^  $s +ok" "$tmp/err11"; then
    echo "note: source $s is not run by default here"
  fi
done

# 6. a recording with an OperationLog and a model is analysed directly
cat > "$tmp/job.g10" <<'EOF'
grade10-model 1
phase /Work concurrent thread
resource cpu consumable metric=proc.cpu sample=counter capacity=64 unit=cores
rule /Work cpu exact 1
EOF
"$lp" monitor -q -o "$tmp/r13" -- sh -c '
  cp "'"$tmp"'/job.g10" "$LONGPOLE_RECORDING/job.g10"
  t0=$(date +%s%N); i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; t1=$(date +%s%N)
  printf "time=%s, event=start, phase=Work, thread=1\ntime=%s, event=end, phase=Work, thread=1\n" $t0 $t1 \
    > "$LONGPOLE_RECORDING/phases.oplog"'
"$lp" grade10 "$tmp/r13" > "$tmp/g10.out" 2> "$tmp/g10.err"; st=$?
[ $st = 0 ] || bad "grade10 on a recording: exit $st: $(cat "$tmp/g10.err")"
head -1 "$tmp/g10.out" | grep -q "^grade10: makespan" || bad "grade10 on a recording: $(head -3 "$tmp/g10.out")"
grep -qE "^  /Work +cpu +exact 1 +1 " "$tmp/g10.out" || bad "grade10 on a recording: no /Work cpu row: $(cat "$tmp/g10.out")"
grep -qE "^  cpu " "$tmp/g10.out" || bad "grade10 on a recording: no cpu timeline"
"$lp" grade10 "$tmp/r13" --json --html "$tmp/g10.html" --sqlite "$tmp/g10.db" > "$tmp/g10.json" 2>&1; st=$?
[ $st = 0 ] || bad "grade10 --json --html --sqlite: exit $st"
grep -q '"format": "longpole-grade10"' "$tmp/g10.json" || bad "grade10 --json: $(head -3 "$tmp/g10.json")"
grep -q 'id="lp-s-grade10"' "$tmp/g10.html" || bad "grade10 --html: no grade10 section"
grep -q '<svg' "$tmp/g10.html" || bad "grade10 --html: no usage chart"
[ -s "$tmp/g10.db" ] || bad "grade10 --sqlite: no database"

[ $fail = 0 ] && echo "ok record and monitor: statuses, signals, sources, files, grade10 of a recording"
exit $fail

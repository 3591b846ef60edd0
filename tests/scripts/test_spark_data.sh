#!/usr/bin/env bash
# test_spark_data.sh LONGPOLE SRCDIR: the real Spark event logs of ../shared/data/spark
# (SnailTrail's Spark 2.1 log and Spark's own test logs, 1.2 to 3.0; see its README).
# For every file: it loads without error and an independent count by jq agrees with
# the import: tasks (TaskEnd records), tasks that did not succeed, stage attempts, jobs;
# every task has its activities (attribute task=ID) starting at its launch and filling
# [launch, finish] except the tasks the import says end at their slot's next launch,
# one launch and one result message; the critical path is computed. Each log split into
# a rolling v2 directory (events_1, events_2, events_10 zstd-compressed, appstatus)
# converts to exactly the same trace as the single file.
# Skips (77) when ../shared/data, jq or python3 is absent.
set -u
lp=$1; src=$2
data=$src/../shared/data
if [ ! -d "$data/spark" ]; then echo "skip: $data/spark is absent"; exit 77; fi
for tool in jq python3; do
  if ! command -v $tool >/dev/null 2>&1; then echo "skip: $tool is not installed (sh scripts/deps.sh test)"; exit 77; fi
done
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; files=0
for f in "$data"/spark/*; do
  [ -f "$f" ] || continue
  files=$((files + 1))
  name=${f#"$data"/}
  if ! "$lp" convert "$f" -o "$tmp/out.lpt" 2> "$tmp/err"; then
    echo "FAIL $name: longpole convert exited $?"; cat "$tmp/err"; fail=1; continue
  fi
  if grep -q ": error: " "$tmp/err"; then echo "FAIL $name: errors while loading"; cat "$tmp/err"; fail=1; fi
  note=$(grep -o 'spark: [0-9]* events read[^:]*: [0-9]* tasks ([0-9]* not successful) on [0-9]* slots of [0-9]* executors, [0-9]* stage attempts ([0-9]* failed), [0-9]* jobs; [0-9]* task ends' "$tmp/err")
  if [ -z "$note" ]; then echo "FAIL $name: no spark import note (not detected as spark?)"; cat "$tmp/err"; fail=1; continue; fi
  # the numbers of the note: events, tasks, failed, slots, executors, stages, failed stages, jobs, trimmed
  set -- $(echo "$note" | sed 's/[^0-9 ]//g')
  got_events=$1 got_tasks=$2 got_failed=$3 got_stages=$6 got_jobs=$8 got_trimmed=$9
  want_events=$(jq -s length "$f")
  want_tasks=$(jq -s '[.[] | select(.Event == "SparkListenerTaskEnd")] | length' "$f")
  want_failed=$(jq -s '[.[] | select(.Event == "SparkListenerTaskEnd" and .["Task End Reason"].Reason != "Success")] | length' "$f")
  want_stages=$(jq -s '[.[] | if .Event == "SparkListenerStageSubmitted" or .Event == "SparkListenerStageCompleted" then .["Stage Info"]
                        elif .Event == "SparkListenerJobStart" then .["Stage Infos"][]?
                        elif .Event == "SparkListenerTaskEnd" then {"Stage ID": .["Stage ID"], "Stage Attempt ID": .["Stage Attempt ID"]}
                        else empty end | [.["Stage ID"], (.["Stage Attempt ID"] // 0)]] | unique | length' "$f")
  want_jobs=$(jq -s '[.[] | select(.Event == "SparkListenerJobStart")] | length' "$f")
  for v in events tasks failed stages jobs; do
    w=want_$v; g=got_$v
    if [ "${!w}" != "${!g}" ]; then echo "FAIL $name: $v: longpole ${!g}, jq ${!w}"; fail=1; fi
  done
  # every task: activities from its launch, filling [launch, finish] unless trimmed; its two messages
  jq -c 'select(.Event == "SparkListenerTaskEnd") | [.["Task Info"]["Task ID"], .["Task Info"]["Launch Time"], .["Task Info"]["Finish Time"]]' "$f" > "$tmp/tasks.json"
  python3 - "$tmp/tasks.json" "$tmp/out.lpt" "$got_trimmed" <<'EOF' || fail=1
import json, sys, urllib.parse
tasks = {t[0]: (t[1] * 10**6, t[2] * 10**6) for t in map(json.loads, open(sys.argv[1]))}
acts, launch, result = {}, {}, {}
for line in open(sys.argv[2]):
    f = line.split()
    if not f or f[0] not in "AM":
        continue
    attrs = dict(urllib.parse.unquote(x).split("=", 1) for x in f if "=" in x)
    if f[0] == "A" and "task" in attrs:
        acts.setdefault(int(attrs["task"]), []).append((int(f[2]), int(f[3])))
    elif f[0] == "M" and "id=" in line:
        d = launch if attrs.get("edge") == "launch" else result
        d[int(attrs["id"])] = d.get(int(attrs["id"]), 0) + 1
bad, trimmed = [], 0
for tid, (l, fin) in tasks.items():
    a = sorted(acts.get(tid, []))
    if not a or a[0][0] != l or any(a[i][1] != a[i + 1][0] for i in range(len(a) - 1)) or a[-1][1] > fin:
        bad.append(tid)
    elif a[-1][1] < fin:
        trimmed += 1
    if launch.get(tid) != 1 or result.get(tid) != 1:
        bad.append(tid)
ok = not bad and len(acts) == len(tasks) and trimmed == int(sys.argv[3])
if not ok:
    print(f"FAIL {sys.argv[1]}: tasks badly laid out {bad[:10]}, {len(acts)} tasks with activities of {len(tasks)}, "
          f"{trimmed} trimmed (note: {sys.argv[3]})")
sys.exit(0 if ok else 1)
EOF
  if ! "$lp" cp "$f" > "$tmp/cp.txt" 2> /dev/null || ! grep -q '^critical path: ' "$tmp/cp.txt"; then
    echo "FAIL $name: no critical path"; fail=1
  fi
  # the same application as a rolling (v2) event-log directory
  d=$tmp/eventlog_v2_test; rm -rf "$d"; mkdir "$d"
  n=$(wc -l < "$f"); a=$((n / 3)); b=$((2 * n / 3))
  sed -n "1,${a}p" "$f" > "$d/events_1_test"
  sed -n "$((a + 1)),${b}p" "$f" > "$d/events_2_test"
  sed -n "$((b + 1)),\$p" "$f" > "$d/events_10_test"
  if command -v zstd >/dev/null 2>&1; then zstd -q --rm "$d/events_10_test" -o "$d/events_10_test.zstd"; fi
  : > "$d/appstatus_test"
  if ! "$lp" convert "$d" -o "$tmp/dir.lpt" 2> "$tmp/err2" || grep -q ": error: " "$tmp/err2"; then
    echo "FAIL $name: the rolling directory does not load"; cat "$tmp/err2"; fail=1
  elif ! cmp -s <(grep -v '^#' "$tmp/out.lpt") <(grep -v '^#' "$tmp/dir.lpt"); then
    echo "FAIL $name: the rolling directory gives another trace than the file"; fail=1
  fi
  echo "ok $name: $got_tasks tasks ($got_failed not successful), $got_stages stage attempts, $got_jobs jobs"
done
[ "$files" -ge 4 ] || { echo "FAIL: only $files files found"; fail=1; }
exit $fail

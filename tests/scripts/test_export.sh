#!/usr/bin/env bash
# test_export.sh LONGPOLE SRCDIR: `longpole export --chrome` end to end. On a generated
# dataflow trace: the output is valid JSON (python3's json), it holds one X event per
# activity (gaps included), one flow pair per message, a critical-path track whose
# events match `longpole cp --json` element by element, and the critical path's length
# in otherData; re-importing it with the chrome importer gives the same activities and
# messages as the original (text form compared record by record) and the same
# critical path; a window (--from/--to) gives the window's critical path; --no-gaps,
# --no-cp, stdout output and the usage errors behave as `longpole help export` says.
# Skips (77) without python3.
set -u
lp=$1; src=$2
if ! command -v python3 >/dev/null 2>&1; then echo "skip: python3 is not installed"; exit 77; fi
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
"$lp" generate dataflow --records 30000 --seed 5 -o "$tmp/df.lpt" || { echo "FAIL: generate"; exit 1; }
"$lp" export --chrome "$tmp/df.json" "$tmp/df.lpt" || { echo "FAIL: export exited $?"; fail=1; }
"$lp" info --json "$tmp/df.lpt" > "$tmp/info.json"
"$lp" cp --json --path all "$tmp/df.lpt" > "$tmp/cp.json"
python3 - "$tmp/df.json" "$tmp/info.json" "$tmp/cp.json" <<'EOF' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
info = json.load(open(sys.argv[2]))
cp = json.load(open(sys.argv[3]))["critical_path"]
ev = doc["traceEvents"]
track = [e for e in ev if e["ph"] == "X" and e.get("cat") == "critical_path"]
acts = [e for e in ev if e["ph"] == "X" and e.get("cat") != "critical_path"]
flows = [e for e in ev if e["ph"] in "sf" and e.get("cat") == "message"]
cpflows = [e for e in ev if e["ph"] in "sf" and e.get("cat") == "longpole.critical_path"]
errs = []
if len(acts) != info["activities"] + info["gaps"]:
    errs.append(f"{len(acts)} X events for {info['activities']} activities + {info['gaps']} gaps")
if len(flows) != 2 * info["messages"]:
    errs.append(f"{len(flows)} flow events for {info['messages']} messages")
if doc["otherData"]["critical_path_ns"] != cp["total_ns"]:
    errs.append("critical path length differs")
path = cp["path"]
if len(track) != len(path):
    errs.append(f"{len(track)} critical-path events for {len(path)} elements")
for e, p in zip(track, path):
    if round(e["ts"] * 1000) != p["start"] or round((e["ts"] + e["dur"]) * 1000) != p["end"]:
        errs.append(f"critical-path step {e['args']['step']} at {e['ts']} differs from {p}")
        break
if len(cpflows) != 2 * sum(1 for p in path if p["kind"] == "message"):
    errs.append("critical-path flows do not match its messages")
marked = sum(1 for e in acts if "longpole.critical_ns" in e.get("args", {}))
if marked == 0:
    errs.append("no activity marked with its critical time")
print("FAIL export: " + "; ".join(errs) if errs else f"ok export: {len(acts)} slices, {len(flows) // 2} flows, {len(track)} critical-path steps")
sys.exit(1 if errs else 0)
EOF
# the round trip: the same activities and messages, the same critical path
"$lp" convert -q "$tmp/df.json" -o "$tmp/back.lpt" > /dev/null 2>&1
"$lp" convert -q "$tmp/df.lpt" -o "$tmp/orig.lpt" > /dev/null 2>&1
if ! cmp -s <(grep -E '^[AM] ' "$tmp/orig.lpt" | sort) <(grep -E '^[AM] ' "$tmp/back.lpt" | sort); then
  echo "FAIL round trip: the re-imported activities or messages differ"; diff <(grep -E '^[AM] ' "$tmp/orig.lpt" | sort) <(grep -E '^[AM] ' "$tmp/back.lpt" | sort) | head -5; fail=1
else
  echo "ok round trip: $(grep -c '^A ' "$tmp/orig.lpt") activities and $(grep -c '^M ' "$tmp/orig.lpt") messages read back"
fi
a=$("$lp" cp "$tmp/df.lpt" 2> /dev/null | grep '^critical path')
b=$("$lp" cp "$tmp/df.json" 2> /dev/null | grep '^critical path')
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL round trip: critical path '$a' vs '$b'"; fail=1; }
# a window
"$lp" export --chrome "$tmp/w.json" --from +20ms --to +40ms "$tmp/df.lpt" || fail=1
want=$("$lp" cp --json --from +20ms --to +40ms "$tmp/df.lpt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["critical_path"]["total_ns"])')
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["critical_path_ns"])' "$tmp/w.json")
[ "$want" = "$got" ] && echo "ok window: critical path $got ns" || { echo "FAIL window: $got ns, cp says $want"; fail=1; }
# options
"$lp" export --chrome - --no-gaps --no-cp "$tmp/df.lpt" > "$tmp/s.json" || fail=1
python3 - "$tmp/s.json" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
bad = [e for e in d["traceEvents"] if "longpole.derived" in e.get("args", {}) or e.get("cat") == "critical_path"]
print("FAIL --no-gaps --no-cp: derived events left" if bad or "critical_path_ns" in d["otherData"] else "ok --no-gaps --no-cp to stdout")
sys.exit(1 if bad else 0)
EOF
expect_usage() { # args...: must exit 2 with a message
  "$lp" export "$@" > /dev/null 2> "$tmp/err"; rc=$?
  if [ $rc != 2 ] || ! grep -q "longpole export: " "$tmp/err"; then echo "FAIL usage '$*': exit $rc"; cat "$tmp/err"; fail=1; fi
}
expect_usage "$tmp/df.lpt"
expect_usage --chrome "$tmp/a.json"
expect_usage --chrome "$tmp/a.json" --bogus "$tmp/df.lpt"
expect_usage --chrome - --chrome - "$tmp/df.lpt"
expect_usage --chrome "$tmp/a.json" --from soon "$tmp/df.lpt"
expect_usage --chrome "$tmp/a.json" --from +2ms --to +1ms "$tmp/df.lpt"
"$lp" export --chrome /nonexistent/dir/x.json "$tmp/df.lpt" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 3 ] && grep -q "cannot create '/nonexistent/dir/x.json'" "$tmp/err" || { echo "FAIL unwritable output: exit $rc"; fail=1; }
"$lp" help export | grep -q -- "--chrome FILE" || { echo "FAIL: help export"; fail=1; }
[ $fail = 0 ] && echo "ok options and usage errors"
exit $fail

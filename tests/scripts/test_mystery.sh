#!/usr/bin/env bash
# test_mystery.sh LONGPOLE SRCDIR: the Mystery Machine commands end to end on generated
# request logs: the inferred model equals the generator's ground truth (mixed log,
# gzip-compressed log, one file per host with a seq column), convergence levels off,
# skew estimates are within the injected jitter and without correction the model is
# wrong, refining in two runs equals one run, the JSON report is valid, malformed lines
# are reported with their line while the other requests are still analysed, and
# requests --save-model gives infer's model and the analysis in one reading.
set -u
lp=$1
work=$(mktemp -d /tmp/lp-mystery-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
check() { # description, command...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}
export LONGPOLE_NO_PROGRESS=1

# a corpus with 50 ms of clock skew and 100 us of network jitter
"$lp" generate requests --requests 15000 --segments 40 --clients 300 --skew 50ms --jitter 100us --seed 4 \
  -o "$work/g" 2>/dev/null || { echo "FAIL generate"; exit 1; }
for f in g.csv g.truth.json g.skew.csv g.attrs.csv g.categories; do
  check "generator wrote $f" test -s "$work/$f"
done

# 1. the model equals the ground truth; convergence levels off
"$lp" infer --convergence=1000 -o "$work/m.json" --diff "$work/g.truth.json" "$work/g.csv" > "$work/infer.out"
check "inferred model equals the ground truth" test $? -eq 0
check "nothing missed or spurious" grep -q ": 0 relationships missed, 0 spurious, 0/0 pipelines" "$work/infer.out"
last=$(awk '$1 ~ /^[0-9]+$/ && NF == 7 {r = $6} END {print r}' "$work/infer.out")
first=$(awk '$1 ~ /^[0-9]+$/ && NF == 7 {print $6; exit}' "$work/infer.out")
check "convergence: the first block rejects most ($first), the last none ($last)" test "$first" -gt 100 -a "$last" -eq 0

# 2. without skew correction the model is visibly wrong
"$lp" infer --no-skew -o /dev/null --diff "$work/g.truth.json" "$work/g.csv" > "$work/noskew.out"
check "without correction the model differs (exit 1)" test $? -eq 1
missed=$(sed -n 's/.*: \([0-9]*\) relationships missed.*/\1/p' "$work/noskew.out")
check "without correction $missed relationships are missed" test "${missed:-0}" -gt 50

# 3. skew estimates within the jitter of the true offsets (relative to the reference)
"$lp" skew --json "$work/g.csv" > "$work/skew.json"
check "skew --json" test $? -eq 0
tr '{' '\n' < "$work/skew.json" | sed -n 's/.*"host":"\([^"]*\)","offset_ns":\(-\{0,1\}[0-9]*\).*"reference":"\([^"]*\)".*/\1 \2 \3/p' \
  > "$work/est.txt"
awk -F, 'NR > 1 {print $1, $2}' "$work/g.skew.csv" > "$work/true.txt"
worst=$(awk 'NR == FNR {t[$1] = $2; next} {e = $2 - (t[$1] - t[$3]); if (e < 0) e = -e; if (e > w) w = e} END {print w + 0}' \
  "$work/true.txt" "$work/est.txt")
hosts=$(wc -l < "$work/est.txt")
check "skew of $hosts hosts within the jitter: worst error $worst ns <= 102000" test "$hosts" -gt 300 -a "$worst" -le 102000

# 4. refining in two runs equals one run over everything
head -1 "$work/g.csv" > "$work/a.csv"; cp "$work/a.csv" "$work/b.csv"
awk -F, 'NR > 1 {r = substr($1, 2) + 0; print >> (r <= 7000 ? "'"$work"'/a.csv" : "'"$work"'/b.csv")}' "$work/g.csv"
"$lp" infer -o "$work/inc.json" "$work/a.csv" > /dev/null && "$lp" infer --model "$work/inc.json" "$work/b.csv" > "$work/inc.out"
check "refined model covers all requests" grep -q "15000 requests (8000 from these logs, refined)" "$work/inc.out"
"$lp" infer -o /dev/null --diff "$work/inc.json" "$work/g.csv" > /dev/null
check "refined in two runs = one run" test $? -eq 0

# 5. the same corpus compressed, and one file per host with a seq column
gzip -c "$work/g.csv" > "$work/g.csv.gz"
"$lp" infer -o /dev/null --diff "$work/g.truth.json" "$work/g.csv.gz" > /dev/null
check "gzip-compressed log: same model" test $? -eq 0
"$lp" generate requests --requests 15000 --segments 40 --clients 300 --skew 50ms --jitter 100us --seed 4 --per-host \
  -o "$work/h" 2>/dev/null
check "per-host files written" test -s "$work/h.hosts/web1.csv"
"$lp" infer --host-from-name -o /dev/null --diff "$work/g.truth.json" "$work/h.hosts/"*.csv > /dev/null
check "one file per host (seq column): same model" test $? -eq 0

# 6. requests: JSON report, per-request details, strata
"$lp" requests --json --model "$work/m.json" --categories "$work/g.categories" --attrs "$work/g.attrs.csv" \
  --stratify browser --stratify cat.network:5 "$work/g.csv" > "$work/req.json"
check "requests --json" test $? -eq 0
if command -v python3 > /dev/null; then
  python3 - "$work/req.json" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
cats = {c["name"]: c for c in d["categories"]}
assert set(cats) == {"network", "server", "client"}, cats.keys()
assert d["input"]["analysed"] == 15000
assert abs(d["critical_path"]["mean_ns"] - d["latency"]["mean_ns"]) < 1e-6 * d["latency"]["mean_ns"]
assert len(cats["server"]["whatif"]) == 20
assert len(d["strata"]) == 2 and len(d["strata"][1]["values"]) == 5
assert d["outliers"]["requests"] == 750
EOF
  check "JSON report is complete and consistent" test $? -eq 0
fi
"$lp" requests --model "$work/m.json" --request r42 "$work/g.csv" > "$work/one.out"
check "one request's details" grep -q "critical path: page:click->send" "$work/one.out"

# 6b. one reading of the logs: requests --save-model writes the model `infer -o` writes
#     and the same analysis as requests --model with that model
"$lp" requests -q --save-model "$work/m1.json" "$work/g.csv" > "$work/once.out"
check "requests --save-model exits 0" test $? -eq 0
check "requests --save-model writes infer's model" cmp -s "$work/m.json" "$work/m1.json"
"$lp" requests -q --model "$work/m.json" "$work/g.csv" > "$work/twice.out"
check "one pass analyses as two" cmp -s <(grep -v "model" "$work/once.out") <(grep -v "model" "$work/twice.out")
"$lp" requests --model "$work/m.json" --save-model "$work/x.json" "$work/g.csv" > /dev/null 2>&1
check "--save-model with --model is refused (exit 2)" test $? -eq 2

# 7. malformed lines are reported with their line; the other requests are analysed
{ head -200 "$work/g.csv"; echo "r3,web1,notatime,parse,page"; echo "r4,web1,1,parse"; tail -n +201 "$work/g.csv" | head -2000; } \
  > "$work/bad.csv"
"$lp" requests --model "$work/m.json" "$work/bad.csv" > "$work/bad.out" 2> "$work/bad.err"
check "malformed input exits 4" test $? -eq 4
check "bad time reported at line 201" grep -q "bad.csv:201: error: time 'notatime' is not a number" "$work/bad.err"
check "missing field reported at line 202" grep -q "bad.csv:202: error: missing field 'task'" "$work/bad.err"
check "the other requests are analysed" grep -q "analysed, 2 excluded" "$work/bad.out"

exit $fail

#!/usr/bin/env bash
# bench/importers/instr.sh BUILD [WORK]: instruction counts (valgrind callgrind, so the
# figures do not depend on the machine's load) of the readers on generated inputs:
# the request-log reader (lp_reqlog_load, inclusive, in `longpole infer --threads 1` and
# `requests --threads 1 --model`), the causal-model reader (lp_causal_load) and the
# attribute-table reader (JSON lines), the span importers (bench/spans/spanbench file)
# and the Chrome and Spark importers (bench/importers/impbench). Compare two builds by
# running it on each. Inputs (about 20 MB each) are generated into WORK once.
set -euo pipefail
B=$(cd "${1:?usage: instr.sh BUILD [WORK]}" && pwd)
W=${2:-/tmp/lp-instr}
mkdir -p "$W" && cd "$W"
export LONGPOLE_NO_PROGRESS=1
command -v valgrind > /dev/null || { echo "instr.sh: valgrind is needed" >&2; exit 1; }
if [ ! -s req.jsonl ]; then
  "$B/longpole" generate requests --jsonl --requests 3000 --seed 7 -o req > /dev/null
  python3 -c "
import csv, json
with open('req.attrs.jsonl', 'w') as f:
    for row in csv.DictReader(open('req.attrs.csv')): f.write(json.dumps(row) + '\n')"
  "$B/bench/spans/spangen" jaeger --bytes 20M > jaeger.json 2> /dev/null
  "$B/bench/spans/spangen" zipkin --bytes 20M > zipkin.json 2> /dev/null
  "$B/bench/spans/spangen" otlp --bytes 20M > otlp.json 2> /dev/null
  "$B/bench/importers/genchrome" 20000000 1 > chrome.json 2> /dev/null
  "$B/bench/importers/genspark" 20000000 1 > spark.log 2> /dev/null
  "$B/longpole" infer --threads 1 -o model.json req.jsonl > /dev/null
fi
vg() { valgrind --tool=callgrind --callgrind-out-file="cg.$1" "${@:2}" > /dev/null 2> "cg.$1.log" || true; }
incl() { callgrind_annotate --inclusive=yes "cg.$1" 2> /dev/null | grep -E " $2 |:$2 " | head -1 | awk '{print $1}'; }
tot() { grep -m1 Collected "cg.$1.log" | awk '{print $4}'; }
vg infer "$B/longpole" infer --threads 1 -o /dev/null req.jsonl
vg req "$B/longpole" requests --threads 1 --model model.json --attrs req.attrs.jsonl req.jsonl
for f in jaeger zipkin otlp; do vg $f "$B/bench/spans/spanbench" file $f.json; done
vg chrome "$B/bench/importers/impbench" chrome chrome.json
vg spark "$B/bench/importers/impbench" spark spark.log
echo "reqlog load (infer): $(incl infer lp_reqlog_load); infer total: $(tot infer)"
echo "requests total: $(tot req); causal model load: $(incl req lp_causal_load); attribute table: $(incl req lp_reqlog_load_attrs)"
for f in jaeger zipkin otlp chrome spark; do echo "$f import: $(tot $f)"; done

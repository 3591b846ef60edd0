#!/usr/bin/env bash
# bench/layout/instr.sh OLD_BUILD NEW_BUILD [WORK]: the layout refactoring's before/after
# (issue 11) as instruction counts (valgrind callgrind: the machine is shared, so counts,
# not times) and peak RSS (/usr/bin/time) of the foundation, SnailTrail and span workloads
# on the same inputs, generated once with the new build into WORK. Prints a Markdown
# table: workload, before, after, ratio.
set -euo pipefail
OLD=$(cd "${1:?usage: instr.sh OLD_BUILD NEW_BUILD [WORK]}" && pwd)
NEW=$(cd "${2:?usage: instr.sh OLD_BUILD NEW_BUILD [WORK]}" && pwd)
W=${3:-/tmp/lp-layout}
mkdir -p "$W" && cd "$W"
export LONGPOLE_NO_PROGRESS=1
command -v valgrind > /dev/null || { echo "instr.sh: valgrind is needed" >&2; exit 1; }
if [ ! -s g.lpt ]; then
  "$NEW/longpole" generate dataflow --records 300000 -o g.lpt > /dev/null
  "$NEW/longpole" convert g.lpt -o g.lptb > /dev/null
  "$NEW/bench/spans/spangen" jaeger --bytes 20M --spans 50 --seed 1 > j.json 2> /dev/null
  "$NEW/longpole" generate requests --requests 3000 --seed 7 -o req > /dev/null
fi
# workload name, then the command line after the longpole binary
WORKLOADS=(
  "cp text|cp g.lpt"
  "cp binary|cp g.lptb"
  "cp --json text|cp --json g.lpt"
  "summary (SnailTrail, 1 s windows)|summary --window 1s --by worker,operator g.lpt"
  "spans (Jaeger, 20 MB)|spans j.json"
  "infer (Mystery Machine, 3000 requests)|infer --threads 1 -o /dev/null req.csv"
)
count() { # build tag args...
  local b=$1 tag=$2; shift 2
  valgrind --tool=callgrind --callgrind-out-file="cg.$tag" "$b/longpole" "$@" > "out.$tag" 2> "cg.$tag.log" || true
  grep -m1 Collected "cg.$tag.log" | awk '{print $4}'
}
rss() { # build args...: peak RSS in KiB
  local b=$1; shift
  /usr/bin/time -f %M "$b/longpole" "$@" 2>&1 > /dev/null | tail -1
}
echo "| workload | instructions before | after | ratio | peak RSS before (KiB) | after | ratio | output |"
echo "|---|---|---|---|---|---|---|---|"
i=0
for w in "${WORKLOADS[@]}"; do
  name=${w%%|*}; args=${w#*|}; i=$((i + 1))
  # shellcheck disable=SC2086
  a=$(count "$OLD" old$i $args); b=$(count "$NEW" new$i $args)
  # shellcheck disable=SC2086
  ra=$(rss "$OLD" $args); rb=$(rss "$NEW" $args)
  same=$(cmp -s "out.old$i" "out.new$i" && echo identical || echo differs)
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$a" "$b" \
    "$(python3 -c "print(f'{int(\"$b\".replace(\",\",\"\"))/int(\"$a\".replace(\",\",\"\")):.3f}')")" \
    "$ra" "$rb" "$(python3 -c "print(f'{$rb/$ra:.3f}')")" "$same"
done

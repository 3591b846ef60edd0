#!/usr/bin/env bash
# bench/grade10/validate.sh: Grade10's accuracy on a real run of this machine (issue 15;
# the paper's Table II with ground truth from per-thread CPU clocks) and the injected
# straggler's outlier and imbalance issues against a rerun without it.
#   env: LP (longpole), BUILD (build dir, for bench/grade10/g10work), WORK (scratch dir,
#   emptied), optional OUT (markdown written there), G10ARGS (g10work's size: default
#   "-t 4 -r 8 -m 60 -s 1"), RATIOS (default "1 2 4 8 16 32 64").
# Runs, each under `longpole monitor --period 10ms` (the workload writes its OperationLog
# and its ground truth into the recording, LONGPOLE_RECORDING):
#   outlier     one thread computes 3x as long in every round;
#   no-outlier  the same work (same seed) without the outlier: the measured gain;
#   balanced    the same total work, the outlier's extra shared evenly by the threads
#               (what the imbalance issue assumes: durations set to the mean);
#   hog         the outlier run beside two CPU hogs of this script's own (contention).
# Then bench/grade10/validate.py on the outlier and hog runs, with the model's rules and
# with rules fitted (NNLS, --fit-rules) on the balanced run. Every run records the load
# average and CPU pressure before and after, and the process tree's run-queue delay
# (proc.delay: time its threads were runnable but not running) against its CPU time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LP:?}" "${BUILD:?}" "${WORK:?}"
W=$BUILD/bench/grade10/g10work
[ -x "$W" ] || { echo "validate.sh: build g10work first ($W)" >&2; exit 1; }
ARGS=${G10ARGS:--t 4 -r 8 -m 60 -s 1}
cpus=$(nproc)
rm -rf "$WORK"; mkdir -p "$WORK"
sed "s/capacity=2 unit=cores/capacity=$cpus unit=cores/" "$here/g10work.g10" > "$WORK/model.g10"
hogs=()
cleanup() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

psi() { sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null || echo "?"; }
record() { # name outlier-factor [-S]
  local l0 p0
  l0=$(cut -d' ' -f1-3 /proc/loadavg); p0=$(psi)
  "$LP" monitor -q --period 10ms -o "$WORK/$1" -- sh -c \
    'exec "$0" "$@" "$LONGPOLE_RECORDING/phases.oplog" "$LONGPOLE_RECORDING/truth.csv" "$LONGPOLE_RECORDING"' \
    "$W" $ARGS -o "$2" ${3:-} > "$WORK/$1.out"
  cp "$WORK/model.g10" "$WORK/$1/model.g10"
  echo "$1: $(cat "$WORK/$1.out"); load $l0 -> $(cut -d' ' -f1-3 /proc/loadavg); cpu psi avg10 $p0 -> $(psi)" |
    tee -a "$WORK/runs.txt"
  # CPU and run-queue delay of the process tree, from the last samples
  awk -F, '$3 == "proc.cpu" {c = $4} $3 == "proc.delay" {d = $4} END {printf "  cpu %.3f s, run-queue delay %.3f s (%.0f%% of the time runnable)\n", c, d, 100 * d / (c + d)}' \
    "$WORK/$1/monitor.csv" | tee -a "$WORK/runs.txt"
}

record outlier 3
record no-outlier 1
record balanced 3 -S
for _ in 1 2; do sh -c 'while :; do :; done' & hogs+=($!); done
record hog 3
cleanup; hogs=()

for r in outlier no-outlier balanced hog; do
  "$LP" grade10 "$WORK/$r" --json > "$WORK/$r.json" 2> "$WORK/$r.err" || true
  "$LP" grade10 "$WORK/$r" > "$WORK/$r.txt" 2>> "$WORK/$r.err" || true
done
ms() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["run"]["duration_s"])' "$1"; }
gain() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[i for i in d["issues"]["list"] if i["kind"]==sys.argv[2] and i["type"]=="/Round/Compute"]; print(l[0]["gain_s"] if l else "nan")' "$1" "$2"; }
m1=$(ms "$WORK/outlier.json"); m0=$(ms "$WORK/no-outlier.json"); mb=$(ms "$WORK/balanced.json")
est=$(gain "$WORK/outlier.json" imbalance); eso=$(gain "$WORK/outlier.json" outlier)
python3 -c 'import sys; m1, m0, mb, e, o = map(float, sys.argv[1:]); g = m1 - m0; gb = m1 - mb; print("outlier: makespan %.3f s; without the outlier %.3f s (measured gain %.3f s); the same work balanced %.3f s (measured gain %.3f s); the outlier issue /Round/Compute estimates %.3f s: %+.1f%% of the run without it; the imbalance issue estimates %.3f s: %+.1f%% of the run without the outlier, %+.1f%% of the balanced one" % (m1, m0, g, mb, gb, o, 100 * (o - g) / g, e, 100 * (e - g) / g, 100 * (e - gb) / gb))' "$m1" "$m0" "$mb" "$est" "$eso" | tee -a "$WORK/runs.txt"

for r in outlier hog; do
  for mode in slice event; do
    echo "== accuracy: $r run, $mode mode (error of the CPU usage: longpole vs constant upsampling)" | tee -a "$WORK/runs.txt"
    MODE=$mode python3 "$here/validate.py" "$LP" "$WORK/$r" "$WORK/model.g10" "$WORK/$r.$mode.json" | tee -a "$WORK/runs.txt"
  done
done
# Rules fitted by NNLS (--fit-rules) on the balanced run (another run of the same work),
# used on the outlier and hog runs: the cpu rules of the model replaced by the fitted ones.
sed '/^rule \/\*\*\/Compute cpu/d' "$WORK/model.g10" > "$WORK/model_def.g10"
"$LP" grade10 --model "$WORK/model_def.g10" --fit-rules "$WORK/balanced" 2> /dev/null | grep '^rule .* cpu ' > "$WORK/fit.rules" || true
cat "$WORK/model_def.g10" "$WORK/fit.rules" > "$WORK/model_fit.g10"
echo "== rules fitted on the balanced run: $(tr '\n' ';' < "$WORK/fit.rules")" | tee -a "$WORK/runs.txt"
for r in outlier hog; do
  echo "== accuracy: $r run, event mode, fitted rules" | tee -a "$WORK/runs.txt"
  MODE=event python3 "$here/validate.py" "$LP" "$WORK/$r" "$WORK/model_fit.g10" "$WORK/$r.fit.json" | tee -a "$WORK/runs.txt"
done
if [ -n "${OUT:-}" ]; then
  { echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs, $(uname -sr); g10work $ARGS"; echo '```'; cat "$WORK/runs.txt"; echo '```'; } > "$OUT"
fi

#!/bin/sh
# run.sh DIR SECONDS: run every libFuzzer target in DIR for SECONDS each, seeded with
# its corpus (tests/fuzz/corpus/NAME) and the golden test files; new inputs go to a
# scratch folder, never into the repository. Fails if a target finds a crash.
# Reproducible: the mutations come from a fixed seed (FUZZ_SEED, default 1) and a target
# stops after FUZZ_RUNS inputs (default 10000) or SECONDS, whichever comes first, so a run
# explores the same inputs on any machine (a prefix of them on a slow one), and a clean
# run here with the same seed and enough time means a clean run in CI. Other seeds
# (FUZZ_SEED=random: libFuzzer's own) and more runs explore further.
set -eu
dir=$1; secs=$2
seed=${FUZZ_SEED:-1}; runs=${FUZZ_RUNS:-10000}
[ "$seed" = random ] && seed=0
here=$(cd "$(dirname "$0")" && pwd)
status=0
failed=""
summary=$(mktemp)
for f in "$dir"/fuzz_*; do
  [ -x "$f" ] || continue
  name=$(basename "$f"); corpus=${name#fuzz_}
  scratch=$(mktemp -d)
  echo "fuzzing $name for ${secs}s or $runs inputs (seed $seed)"
  if ! "$f" -seed="$seed" -runs="$runs" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$scratch/" "$scratch" "$here/corpus/$corpus" "$here/../data/ok" "$here/../data/bad" \
        > "$scratch/log" 2>&1; then
    echo "FUZZ FAILURE in $name:"; tail -40 "$scratch/log"; status=1
    failed="$failed $name"
    # the reproducers, so the log alone is enough to replay them (base64 -d > file)
    for a in "$scratch"/crash-* "$scratch"/timeout-* "$scratch"/oom-* "$scratch"/leak-* "$scratch"/slow-unit-*; do
      [ -f "$a" ] || continue
      echo "reproducer $(basename "$a") (base64):"; base64 -w0 "$a"; echo
    done
    # the gist again at the very end, where a log cut to its tail still shows it
    { echo "$name: $(grep -m1 -E 'ERROR: libFuzzer|ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error|SUMMARY' "$scratch/log")"
      for a in "$scratch"/crash-* "$scratch"/timeout-* "$scratch"/oom-* "$scratch"/leak-* "$scratch"/slow-unit-*; do
        [ -f "$a" ] && echo "  $(basename "$a") $(head -c 512 "$a" | base64 -w0)"
      done; } >> "$summary"
  else
    grep -E "stat::number_of_executed_units|stat::slowest_unit_time_sec|Done" "$scratch/log" | tail -3
  fi
  rm -rf "$scratch"
done
if [ $status -ne 0 ]; then
  echo "FUZZ FAILURES:$failed"; cat "$summary"
fi
rm -f "$summary"
exit $status

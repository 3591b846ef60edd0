#!/usr/bin/env bash
# run.sh LONGPOLE [AREA...]: run the benchmarks of every area (bench/*/run.sh) or the
# named ones, then assemble bench/RESULTS.md from each area's section
# (bench/out/AREA.md) under a header naming the machine, the command and the date.
# Run on a quiet machine: nothing else should be using the cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lp=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); shift
build=$(dirname "$lp")
mkdir -p "$here/out"
areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then
  for d in "$here"/*/run.sh; do areas+=("$(basename "$(dirname "$d")")"); done
fi
machine="Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r)."
for a in "${areas[@]}"; do
  echo "== bench: $a" >&2
  LP="$lp" BUILD="$build" OUT="$here/out/$a.md" WORK="${BENCH_WORK:-/tmp/longpole-bench}/$a" \
    bash "$here/$a/run.sh"
  # each section names the machine it ran on (areas are rerun at different times)
  sed -i "1a\\\n$machine" "$here/out/$a.md"
done
{
  echo "# Benchmark results"
  echo
  echo "Produced by \`make bench\` (bench/run.sh); each section says the machine, the command and the date it ran (sections are rerun separately, sometimes on another machine of the same size)."
  echo
  for f in "$here"/out/*.md; do cat "$f"; echo; done
} > "$here/RESULTS.md"
echo "bench: wrote $here/RESULTS.md" >&2

#!/bin/bash
# measure_labels.sh [LONGPOLE] [CPWORK]: the measured rows of the classifier's training set
# (share/crystalperf/measured.tsv; docs/analyses/crystalperf.md "The training set").
# Small drivers run under perf with the recorder's flags (Python 3.11: compression, hashing,
# JSON, regular expressions; fsync'ed writes and SQLite commits; a TCP send to a slow local
# reader; dd with O_DSYNC; gzip | sha256sum; the validation workload's three stages), then
# `longpole classify --measure` labels every named user frame by where its time went (thread
# state and kernel blocking stacks only), and frames whose time went at least 80 % to one
# resource are kept (a frame seen in several recordings: the one where it had most time).
# Then: python3 scripts/crystalperf/make_labels.py --measured share/crystalperf/measured.tsv
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
LP=${1:-$root/build/longpole}; CPW=${2:-$root/build/bench/crystalperf/cpwork}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; rm -f /var/tmp/lpmeas.* /var/tmp/lpdd' EXIT
rec() { # name, command...
  local n=$1; shift
  perf record -q -o "$tmp/$n.data" -k mono -g -e cpu-clock/period=1000000/ -e sched:sched_switch --switch-events \
    -- "$@" >/dev/null 2>&1 || true
  perf script -i "$tmp/$n.data" --ns --show-switch-events -F comm,pid,tid,time,period,event,ip,sym,dso,trace \
    2>/dev/null | gzip -1 > "$tmp/$n.perf.txt.gz"
  "$LP" classify --measure "$tmp/$n.perf.txt.gz" 2>/dev/null | tail -n +2 >> "$tmp/all.tsv" || true
}
: > "$tmp/all.tsv"
for m in cpu disk net; do rec py$m python3 "$here/measure_drivers.py" $m; done
rec dd dd if=/dev/zero of=/var/tmp/lpdd bs=64k count=300 oflag=dsync
rec gz sh -c 'head -c 30000000 /dev/urandom | gzip -9 | sha256sum'
"$CPW" sink --port 47311 --rate 2000000 & sink=$!
for m in cpu disk net; do
  rec cp$m "$CPW" run --threads 2 --tasks 2 --stages $m --cpu-mb 1 --disk-mb 0.5 --net-mb 0.5 \
    --sink 127.0.0.1:47311 --dir /var/tmp --trace "$tmp/t.lpt"
done
kill $sink
python3 - "$tmp/all.tsv" "$root/share/crystalperf/measured.tsv" <<'PY'
import re, sys
best = {}
for l in open(sys.argv[1]):
    f = l.rstrip('\n').split('\t')
    if len(f) != 7 or not f[6].startswith('measured:'):
        continue
    m = re.match(r'measured:(\d+)%-of-(\d+)-ms', f[6])
    share, ms = int(m.group(1)), int(m.group(2))
    if share >= 80 and ((f[2], f[3]) not in best or ms > best[(f[2], f[3])][0]):
        best[(f[2], f[3])] = (ms, f)
with open(sys.argv[2], 'w') as o:
    o.write('label\tgroup\tfunction\tlibrary\tfile\tdoc\tsource\n')
    for k in sorted(best):
        o.write('\t'.join(best[k][1]) + '\n')
print(f'{sys.argv[2]}: {len(best)} frames labelled by measurement')
PY

#!/usr/bin/env bash
# test_dist_shard.sh LONGPOLE SRCDIR: the sharded analyses (`longpole dist summary|infer|requests|spans`,
# docs/distributed.md) against their single-process commands, for K = 1, 2, 3, 4 ranks (1, 3 under ASan)
# (oversubscribed): the same stdout byte for byte, the same model file, the same exit
# status, on the repository's test data and on generated inputs; and an input that is
# corrupt on one rank only (rank 1 reads another file: OMPI_COMM_WORLD_RANK) stops
# every rank with an error naming the rank and the file, never a hang (timeout 600: a guard against hangs only, generous for a loaded machine under ASan).
# Skips (77) when mpirun is absent or the build has no MPI.
set -uo pipefail
lp=$(realpath "$1") src=$(realpath "$2")
export LONGPOLE_NO_PROGRESS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# under ASan: only Open MPI's own leaks are suppressed (never a longpole frame). Its
# plugins stay loaded and stacks are unwound fully, so that every leak of Open MPI's
# shows its library (else: "<unknown module>" frames no suppression can name)
export LSAN_OPTIONS="suppressions=$src/tests/scripts/lsan_openmpi.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export OMPI_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
command -v mpirun > /dev/null || { echo "skip: mpirun is not installed (apt-get install openmpi-bin)"; exit 77; }
ldd "$lp" 2>/dev/null | grep libmpi > /dev/null || { echo "skip: this build has no MPI (install libopenmpi-dev and reconfigure)"; exit 77; }
# every K in a plain build; under ASan (full unwinding makes each run slow) K = 1 and 3
ks="1 2 3 4"
ldd "$lp" 2>/dev/null | grep libasan > /dev/null && ks="1 3"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0 cases=0
bad() { echo "FAIL: $*"; fail=1; }
run_mpi() { # K args...: the dist command under mpirun, bounded
  local k=$1; shift
  timeout 600 mpirun --oversubscribe -n "$k" "$lp" dist "$@"
}

# same DIR OUTFILE ARGS...: `longpole ARGS` against `dist ARGS` for K = 1..4 (in DIR);
# OUTFILE (or -) is a file the command writes, compared too.
same() {
  local dir=$1 out=$2; shift 2
  (cd "$dir" && "$lp" "$@" > "$tmp/one.out" 2> "$tmp/one.err"); local want=$?
  [ "$out" = - ] || cp "$dir/$out" "$tmp/one.file"
  for k in $ks; do
    (cd "$dir" && run_mpi "$k" "$@" > "$tmp/d.out" 2> "$tmp/d.err"); local got=$?
    [ $got = $want ] || { bad "dist $* with $k ranks: exit $got, expected $want: $(head -3 "$tmp/d.err")"; continue; }
    cmp -s "$tmp/one.out" "$tmp/d.out" || { bad "dist $* with $k ranks: stdout differs"; diff "$tmp/one.out" "$tmp/d.out" | head -5; }
    [ "$out" = - ] || cmp -s "$tmp/one.file" "$dir/$out" || bad "dist $* with $k ranks: $out differs"
    cases=$((cases + 1))
  done
}

data=$src/tests/data/ok
# summary on the test data: every golden case's options
same "$data" - summary --window 25 --compact --top 2 --by activity,comm summary_small.lpt
same "$data" - summary --window 50 --json summary_small.lpt
same "$data" - summary --window 1s --by worker summary_long_names.lpt
same "$data" - summary model_example.lpt
same "$data" - summary --window 40 --slide 20 --by worker,operator --top 3 summary_small.lpt
same "$data" - summary --window 45ns --json summary_small.lpt
# infer on the test data (the model written to a file, to stdout, refined, compared)
cp "$data"/mm_small.* "$tmp/"
same "$tmp" m.json infer -o m.json mm_small.csv
same "$tmp" - infer --filter '^rpc1:' -o - mm_small.csv
same "$tmp" - infer --diff mm_small.model.json -o /dev/null mm_small.csv
same "$tmp" - infer --no-skew --json -o /dev/null mm_small.csv

# requests on the test data: every golden case's options (the model given)
same "$tmp" - requests --model mm_small.model.json --categories mm_small.categories --attrs mm_small.attrs.csv \
  --stratify browser --stratify latency:4 --buckets 4 --top 5 mm_small.csv
same "$tmp" - requests --json --model mm_small.model.json --categories mm_small.categories --attrs mm_small.attrs.csv \
  --stratify connection --buckets 2 --top 3 mm_small.csv
same "$tmp" - requests --model mm_small.model.json --categories mm_small.categories --request r7 mm_small.csv
# the model inferred from the same logs (over the ranks) and saved; every request listed
same "$tmp" sm.json requests --save-model sm.json --per-request --categories mm_small.categories mm_small.csv

# spans on the test data (many traces in one file, one trace over two files)
same "$data" - spans --sections --percentile 50,all --top 4 spans_cases.json
same "$data" - spans --folded spans_cases.json
same "$data" - spans --json --percentile 95 spans_cases.json
same "$data" - spans spans_rpc.json
same "$data" - spans --percentile 50,90,all spans_cases.json spans_rpc.json

# generated inputs: a dataflow job over many windows, request logs with pipelines
"$lp" generate dataflow -o "$tmp/g.lpt" --duration 300ms > /dev/null 2>&1 || bad "generate dataflow"
same "$tmp" - summary --window 5ms g.lpt
same "$tmp" - summary --window 20ms --slide 7ms --json --top 3 g.lpt
"$lp" generate requests -o "$tmp/r" --requests 3000 > /dev/null 2>&1 || bad "generate requests"
same "$tmp" r.model infer -o r.model r.csv
same "$tmp" - infer --json -o /dev/null r.csv
# requests over 3000 generated requests: inferred, or over the model, strata of a category
same "$tmp" rs.json requests --json --save-model rs.json --categories r.categories --stratify latency:4 r.csv
same "$tmp" - requests --model r.model --categories r.categories --attrs r.attrs.csv --stratify cat.network:3 \
  --outliers 0.1 --buckets 7 --top 0 r.csv
# refining a model: the starting model's counts are counted once
"$lp" infer -o "$tmp/base.json" "$data/mm_small.csv" > /dev/null 2>&1
cp "$tmp/base.json" "$tmp/start.json"
(cd "$tmp" && "$lp" infer --model start.json -o one.json r.csv > one.txt 2>&1)
for k in 2 3; do
  (cd "$tmp" && run_mpi "$k" infer --model start.json -o d.json r.csv > d.txt 2>&1)
  cmp -s "$tmp/one.json" "$tmp/d.json" || bad "dist infer --model with $k ranks: the refined model differs"
  cases=$((cases + 1))
done

# --stats: the distribution block on stderr only
(cd "$tmp" && run_mpi 2 summary --stats --window 5ms g.lpt > s.out 2> s.err)
(cd "$tmp" && "$lp" summary --window 5ms g.lpt > one.out 2> /dev/null)
cmp -s "$tmp/s.out" "$tmp/one.out" || bad "dist summary --stats: stdout differs"
grep -q "distribution (mpi transport, 2 ranks)" "$tmp/s.err" || bad "dist --stats: no distribution block: $(head -2 "$tmp/s.err")"
grep -Eq "^ +1 +[1-9][0-9]* +[1-9]" "$tmp/s.err" || bad "dist --stats: rank 1 sent nothing"

# a corrupt input on rank 1 only: every rank stops, rank 1 and its file are named
printf 'W w0\nA w0 0 10 processing\nthis is not a trace line\x00\x01\n' > "$tmp/bad.lpt"
cp "$tmp/g.lpt" "$tmp/in.0.lpt"; cp "$tmp/bad.lpt" "$tmp/in.1.lpt"
(cd "$tmp" && timeout 600 mpirun --oversubscribe -n 2 sh -c \
  'exec "$0" dist summary --strict --window 5ms in.$OMPI_COMM_WORLD_RANK.lpt' "$lp" > c.out 2> c.err)
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || bad "a corrupt input on rank 1: exit $rc (124: a hang)"
grep -q "rank 1 of 2 failed .*in.1.lpt" "$tmp/c.err" || bad "a corrupt input on rank 1: not named: $(cat "$tmp/c.err" | head -5)"
grep -q "stopped: rank 1 failed" "$tmp/c.err" || bad "a corrupt input on rank 1: rank 0 does not say why it stopped"
[ -s "$tmp/c.out" ] && bad "a corrupt input on rank 1: rank 0 printed a result"
# the same for infer, a log that cannot be read on rank 1
printf 'request,host,time,event,task\n' > "$tmp/l.0.csv"; cat "$tmp/mm_small.csv" > "$tmp/l.0.csv"
(cd "$tmp" && timeout 600 mpirun --oversubscribe -n 2 sh -c \
  'exec "$0" dist infer -o /dev/null l.$OMPI_COMM_WORLD_RANK.csv' "$lp" > c.out 2> c.err)
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || bad "an unreadable log on rank 1: exit $rc (124: a hang)"
grep -q "rank 1 of 2 failed .*l.1.csv" "$tmp/c.err" || bad "an unreadable log on rank 1: not named: $(head -5 "$tmp/c.err")"

# requests: rank 1 reads other logs than rank 0: every rank stops, rank 1 is named
cp "$tmp/r.csv" "$tmp/q.0.csv"; cp "$tmp/mm_small.csv" "$tmp/q.1.csv"
(cd "$tmp" && timeout 600 mpirun --oversubscribe -n 2 sh -c \
  'exec "$0" dist requests q.$OMPI_COMM_WORLD_RANK.csv' "$lp" > c.out 2> c.err)
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || bad "other logs on rank 1 (requests): exit $rc (124: a hang)"
grep -q "rank 1 .*q.1.csv" "$tmp/c.err" || bad "other logs on rank 1 (requests): not named: $(head -5 "$tmp/c.err")"
[ -s "$tmp/c.out" ] && bad "other logs on rank 1 (requests): rank 0 printed a result"

# requests: rank 0 cannot write --save-model: every rank stops (the paths after it are collective)
(cd "$tmp" && timeout 600 mpirun --oversubscribe -n 2 "$lp" dist requests --save-model "$tmp/no/such/dir/m.json" \
  r.csv > c.out 2> c.err)
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || bad "--save-model unwritable (requests): exit $rc (124: a hang)"
grep -q "no/such/dir/m.json" "$tmp/c.err" || bad "--save-model unwritable (requests): the file is not named: $(head -3 "$tmp/c.err")"
[ -s "$tmp/c.out" ] && bad "--save-model unwritable (requests): rank 0 printed a result"

# and for spans, a span file that is not JSON on rank 1
cp "$data/spans_cases.json" "$tmp/j.0.json"; printf '{"data": [ {"traceID": ' > "$tmp/j.1.json"
(cd "$tmp" && timeout 600 mpirun --oversubscribe -n 2 sh -c \
  'exec "$0" dist spans j.$OMPI_COMM_WORLD_RANK.json' "$lp" > c.out 2> c.err)
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] || bad "a corrupt span file on rank 1: exit $rc (124: a hang)"
grep -q "rank 1 of 2 .*j.1.json" "$tmp/c.err" || bad "a corrupt span file on rank 1: not named: $(head -5 "$tmp/c.err")"

[ $fail = 0 ] && echo "ok dist summary/infer/requests/spans equal to summary/infer/requests/spans in $cases runs (K = $ks); failures named, no hang"
exit $fail

#!/usr/bin/env bash
# golden.sh LONGPOLE DATA_DIR [--update]
# Golden tests of the CLI, data-driven. A case is NAME.args (the command line, run in
# the case's folder) or, without one, NAME.lpt (run as "cp NAME.lpt").
#   DATA_DIR/ok/:  NAME.out is the expected stdout; the exit status must be 0 (or the
#                  number in NAME.status).
#   DATA_DIR/bad/: NAME.err is the expected stderr, NAME.status the exit status, and
#                  NAME.out (if present) the expected stdout.
# Commands run inside the data folder so file names in messages are stable.
# --update rewrites the expected files from the current output (review the diff!).
set -u
lp=$1; data=$2; update=${3:-}
fail=0; n=0
run_case() { # dir name
  local dir=$1 name=$2 args
  if [ -f "$dir/$name.args" ]; then args=$(cat "$dir/$name.args"); else args="cp $name.lpt"; fi
  local out err status
  out=$(cd "$dir" && LONGPOLE_NO_PROGRESS=1 eval "\"$lp\" $args" 2>/tmp/golden.$$.err); status=$?
  err=$(cat /tmp/golden.$$.err); rm -f /tmp/golden.$$.err
  local want_status=0
  [ -f "$dir/$name.status" ] && want_status=$(cat "$dir/$name.status")
  n=$((n+1))
  if [ "$update" = "--update" ]; then
    if [ "$(basename "$dir")" = ok ]; then
      printf '%s\n' "$out" > "$dir/$name.out"
      if [ "$status" != 0 ]; then echo "$status" > "$dir/$name.status"; else rm -f "$dir/$name.status"; fi
    else
      printf '%s\n' "$err" > "$dir/$name.err"; echo "$status" > "$dir/$name.status"
      if [ -n "$out" ]; then printf '%s\n' "$out" > "$dir/$name.out"; else rm -f "$dir/$name.out"; fi
    fi
    return
  fi
  if [ "$status" != "$want_status" ]; then
    echo "FAIL $dir/$name: exit status $status, expected $want_status"; echo "$err" | head -5; fail=$((fail+1)); return
  fi
  if [ -f "$dir/$name.out" ] && [ "$out" != "$(cat "$dir/$name.out")" ]; then
    echo "FAIL $dir/$name: stdout differs:"; diff <(printf '%s\n' "$out") "$dir/$name.out" | head -20; fail=$((fail+1)); return
  fi
  if [ -f "$dir/$name.err" ] && [ "$err" != "$(cat "$dir/$name.err")" ]; then
    echo "FAIL $dir/$name: stderr differs:"; diff <(printf '%s\n' "$err") "$dir/$name.err" | head -20; fail=$((fail+1)); return
  fi
}
for d in "$data/ok" "$data/bad"; do
  for f in "$d"/*.args "$d"/*.lpt; do
    [ -e "$f" ] || continue
    name=$(basename "$f"); name=${name%.*}
    case "$f" in *.lpt) [ -f "$d/$name.args" ] && continue ;; esac
    run_case "$d" "$name"
  done
done
echo "golden: $n cases, $fail failed"
[ "$fail" -eq 0 ]

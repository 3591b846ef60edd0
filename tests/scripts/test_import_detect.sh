#!/usr/bin/env bash
# test_import_detect.sh LONGPOLE SRCDIR: format detection from content (import.h) on
# every file of ../shared/data/{zipkin,jaeger,otlp,chrome,pytorch,spark}: converting it
# with the detected format gives exactly what forcing its folder's format gives (so the
# importers' detection scores pick the right one, compressed or not), and forcing one
# of the other formats does not give the same trace. The CTF files (binary) are not
# taken by any of the JSON importers. Skips (77) when ../shared/data is absent.
set -u
lp=$1; src=$2
data=$src/../shared/data
if [ ! -d "$data/chrome" ] || [ ! -d "$data/spark" ]; then echo "skip: $data is absent"; exit 77; fi
export LONGPOLE_NO_PROGRESS=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; n=0
for dir in zipkin jaeger otlp chrome pytorch spark; do
  fmt=$dir; [ $dir = pytorch ] && fmt=chrome
  for f in "$data/$dir"/*; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    "$lp" convert -q "$f" -o "$tmp/auto.lpt" > /dev/null 2>&1
    "$lp" convert -q --format "$fmt" "$f" -o "$tmp/forced.lpt" > /dev/null 2>&1
    if [ ! -s "$tmp/forced.lpt" ] || ! cmp -s "$tmp/auto.lpt" "$tmp/forced.lpt"; then
      echo "FAIL ${f#"$data"/}: not detected as $fmt"; fail=1; continue
    fi
    # another format does not read it into the same trace
    other=chrome; [ $fmt = chrome ] && other=spark
    "$lp" convert -q --format "$other" "$f" -o "$tmp/other.lpt" > /dev/null 2>&1
    if cmp -s "$tmp/auto.lpt" "$tmp/other.lpt"; then echo "FAIL ${f#"$data"/}: reads the same as $other"; fail=1; continue; fi
    echo "ok ${f#"$data"/}: $fmt"
  done
done
if [ -d "$data/ctf" ]; then
  for f in $(find "$data/ctf" -type f | sort); do
    "$lp" convert "$f" -o "$tmp/ctf.lpt" > /dev/null 2> "$tmp/err"
    if grep -Eq "note: (chrome|spark|jaeger|zipkin|otlp)" "$tmp/err"; then
      echo "FAIL ${f#"$data"/}: taken by a JSON importer"; grep note "$tmp/err" | head -2; fail=1
    fi
  done
  echo "ok ctf/: no JSON importer claims its files"
fi
[ "$n" -ge 25 ] || { echo "FAIL: only $n files"; fail=1; }
exit $fail

#!/usr/bin/env bash
# test_kernel_roundtrip.sh LONGPOLE SRCDIR: the two kernel-trace readers agree. Each
# real LTTng trace of ../shared/data/ctf (read by the CTF reader, libbabeltrace2) is
# written as ftrace text by bench/kernel/kgen (the kernel's own line layout, ns stamps)
# and read back by the ftrace reader: the events ftrace can carry must come out the
# same, field for field (kbench --digest: type, time, CPU, context thread, tids, state
# class, names, keys, block sectors, syscall names and returns) and no line may be
# refused. Also the ftrace reader on kgen's output replicated to 13 MB (3 shifted copies)
# reads every line. And kgen's CTF writer (the synthetic traces of the benchmark): the
# three traces rewritten as CTF read back to the same events, the same 46 packets and
# the same clock. Skips (77) when ../shared/data is absent or CTF support was not built.
set -u
lp=$1; src=$2
data=$src/../shared/data/ctf
bench=$(dirname "$lp")/bench/kernel
if [ ! -d "$data/many-threads" ]; then echo "skip: $data is absent"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! "$bench/kbench" "$data/scp_src" > /dev/null 2> "$tmp/err"; then
  if grep -q "built without CTF support" "$tmp/err"; then echo "skip: built without CTF support"; exit 77; fi
  echo "FAIL: kbench on scp_src"; cat "$tmp/err"; exit 1
fi
fail=0
for t in many-threads scp_src scp_dest; do
  "$bench/kgen" ftrace "$data/$t" > "$tmp/$t.ftrace" 2> "$tmp/gen" || { echo "FAIL $t: kgen"; cat "$tmp/gen"; fail=1; continue; }
  a=$("$bench/kbench" --digest "$data/$t" | grep '^digest')
  b=$("$bench/kbench" --digest "$tmp/$t.ftrace" | grep '^digest')
  bad=$("$bench/kbench" "$tmp/$t.ftrace" | grep -o 'bad=[0-9]*')
  n=$(echo "$a" | grep -o 'events=[0-9]*')
  if [ "$a" != "$b" ]; then echo "FAIL $t: CTF $a, ftrace $b"; fail=1; else echo "ok $t: $n read the same through CTF and ftrace"; fi
  if [ "$bad" != "bad=0" ]; then echo "FAIL $t: the ftrace reader refused lines ($bad)"; fail=1; fi
  [ "${n#events=}" -gt 10000 ] || { echo "FAIL $t: too few events compared ($n)"; fail=1; }
done
"$bench/kgen" ftrace --bytes 13000000 "$data/scp_dest" > "$tmp/big.ftrace" 2> "$tmp/gen"
want=$(grep -o 'events [0-9]*' "$tmp/gen" | cut -d' ' -f2)
got=$("$bench/kbench" "$tmp/big.ftrace" | grep -o ' events=[0-9]* ' | tr -dc 0-9)
bad=$("$bench/kbench" "$tmp/big.ftrace" | grep -o 'bad=[0-9]*')
if [ "$want" != "$got" ] || [ "$bad" != "bad=0" ]; then echo "FAIL replicated: kgen wrote $want events, read $got, $bad"; fail=1
elif [ "$got" -lt 150000 ]; then echo "FAIL replicated: only $got events"; fail=1
else echo "ok replicated: $got events"; fi
"$bench/kgen" ctf "$tmp/ctf" "$data/scp_dest" "$data/scp_src" "$data/many-threads" 2> "$tmp/gen" || { echo "FAIL: kgen ctf"; cat "$tmp/gen"; exit 1; }
a=$("$bench/kbench" --digest "$data/scp_dest" "$data/scp_src" "$data/many-threads" | grep '^digest' | sed 's/host=[^ ]* //')
b=$("$bench/kbench" --digest "$tmp/ctf/VM3-0" "$tmp/ctf/VM1-0" "$tmp/ctf/wilbrod-0" | grep '^digest' | sed 's/host=[^ ]* //')
if [ "$a" != "$b" ] || [ -z "$a" ]; then echo "FAIL kgen ctf: original"; echo "$a"; echo "rewritten"; echo "$b"; fail=1
else echo "ok kgen ctf: the rewritten CTF reads to the same events"; fi
a=$("$bench/kbench" --match "$data/scp_dest" "$data/scp_src" | grep -E '^(packets|clock)' | sed 's/host=[^ ]* //')
b=$("$bench/kbench" --match "$tmp/ctf/VM3-0" "$tmp/ctf/VM1-0" | grep -E '^(packets|clock)' | sed 's/host=[^ ]* //')
if [ "$a" != "$b" ] || ! echo "$b" | grep -q '^packets=46 '; then echo "FAIL kgen ctf: packets and clocks differ"; echo "$a"; echo "$b"; fail=1
else echo "ok kgen ctf: 46 packets, the same clock"; fi
exit $fail

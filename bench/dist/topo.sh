# topo.sh: sourced by bench/dist/run.sh and bench/dist/index.sh: the synthetic traces of
# issue 14's topologies (bench/kernel/kgen: pairs, 1 -> N fan-out, all-to-all), made in
# $WORK/<topology>-<N> on first use from the real scp traces in $DATA (kgen at $KG).
# The traces of topology $1 at N = $2: sets hosts=(...), thread, host.
make_topo() {
  local topo=$1 n=$2 dir=$WORK/$1-$2 i
  hosts=()
  case $topo in
  pairs)
    local p=$((n / 2))
    [ -d "$dir/VM1-0" ] || "$KG" ctf --pairs "$p" "$dir" "$DATA/scp_dest" "$DATA/scp_src" 2> /dev/null
    for ((i = 0; i < p; i++)); do hosts+=("$dir/VM3-$i"); done
    for ((i = 0; i < p; i++)); do hosts+=("$dir/VM1-$i"); done
    thread=7421 host=VM1-0 ;;
  fanout)
    [ -d "$dir/VM1-0" ] || "$KG" ctf --fanout "$n" "$dir" "$DATA/scp_dest" "$DATA/scp_src" 2> /dev/null
    hosts+=("$dir/VM1-0")
    for ((i = 1; i < n; i++)); do hosts+=("$dir/VM3-$i"); done
    thread=7417 host=VM1-0 ;;
  alltoall)
    [ -d "$dir/node-0" ] || "$KG" ctf --alltoall "$n" "$dir" "$DATA/scp_dest" "$DATA/scp_src" 2> /dev/null
    for ((i = 0; i < n; i++)); do hosts+=("$dir/node-$i"); done
    thread=7417 host=node-0 ;;
  esac
}

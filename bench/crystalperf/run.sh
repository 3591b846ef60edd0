#!/bin/bash
# run.sh: CrystalPerf's validation benchmark (issue 16; results in bench/RESULTS.md).
#
# Runs the validation workload (cpwork: a CPU stage, a disk stage with fdatasync, a network
# stage to a sink behind a shaped veth, a sequential reduce; it writes its own trace) under
# perf (the flags of the recorder's `stacks` source) in several resource configurations,
# RUNS rounds of every configuration, records the load average before and after every
# run (runs made while it was above 0.5 are marked), then predicts every configuration from a run of every other with
# `longpole whatif` and compares with the median of the real runs, beside the baselines.
#
#   bash bench/crystalperf/run.sh [LONGPOLE] [CPWORK]      (as root; or through bench/run.sh)
# Environment: LP, BUILD (from bench/run.sh), RUNS (5), WORK (the runs' traces and samples:
# /tmp/longpole-bench/crystalperf), OUT (the report: bench/out/crystalperf.md), DIR (where
# the disk stage writes: /var/tmp), CONFIGS (all: "base c1 q50 q25 d20 n50"), TASKS, CPU_MB,
# DISK_MB, NET_MB, SHARES (the workload's cpu.shares: 262144). Where it cannot run (not root, no perf, no cgroup v1) it says so in the
# report and exits 0, so `make bench` goes on.
#
# Resources shaped: cores by taskset (and the pool's threads: one task per core, as a
# Spark executor runs one task per core), CPU share by a cgroup-v1 cpu.cfs_quota_us, disk
# write bandwidth by blkio.throttle.write_bps_device on the disk of DIR, network by
# `tc tbf` on the host end of a veth pair to a network namespace where the sink runs.
# Everything made here (namespace, veth, qdisc, cgroups, files) is removed on exit, also
# on failure or interruption (trap).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
LP=${1:-${LP:-$root/build/longpole}}
BUILD=${BUILD:-$(dirname "$LP")}
CPW=${2:-$BUILD/bench/crystalperf/cpwork}
RUNS=${RUNS:-5}
WORK=${WORK:-/tmp/longpole-bench/crystalperf}
OUT=${OUT:-$root/bench/out/crystalperf.md}
DIR=${DIR:-/var/tmp}
CONFIGS=${CONFIGS:-"base c1 q50 q25 d20 n50"}
TASKS=${TASKS:-8}
CPU_MB=${CPU_MB:-1}
DISK_MB=${DISK_MB:-8}
NET_MB=${NET_MB:-4}
SHARES=${SHARES:-262144}
NS=lpcpf$$
VH=lpcpfh$$
VN=lpcpfn$$
CG=lpcpf$$
SINK_PID=

die() { echo "run.sh: $*" >&2; exit 1; }
skip() { # cannot run here: say so in the report, do not fail `make bench`
  echo "run.sh: skipped: $*" >&2
  mkdir -p "$(dirname "$OUT")"
  printf '## CrystalPerf what-if validation (issue 16)\n\nNot run on %s: %s.\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$*" > "$OUT"
  exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root (cgroups, network namespaces, perf)"
for t in perf ip tc taskset python3 findmnt; do command -v $t >/dev/null || skip "needs $t"; done
[ -x "$LP" ] || die "no longpole at $LP (build first)"
[ -x "$CPW" ] || die "no cpwork at $CPW (build first)"
[ -d /sys/fs/cgroup/cpu ] && [ -d /sys/fs/cgroup/blkio ] || skip "needs cgroup v1 cpu and blkio controllers"

cleanup() {
  [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null && wait "$SINK_PID" 2>/dev/null
  ip netns del $NS 2>/dev/null
  ip link del $VH 2>/dev/null
  for c in cpu blkio; do
    if [ -d /sys/fs/cgroup/$c/$CG ]; then
      cat /sys/fs/cgroup/$c/$CG/cgroup.procs 2>/dev/null | while read -r p; do echo "$p" > /sys/fs/cgroup/$c/cgroup.procs; done
      rmdir /sys/fs/cgroup/$c/$CG 2>/dev/null
    fi
  done
  rm -f "$DIR"/cpwork.*.dat
}
trap cleanup EXIT INT TERM

mkdir -p "$WORK" "$(dirname "$OUT")" || die "cannot make $WORK"
dev=$(findmnt -no MAJ:MIN -T "$DIR" | head -1 | tr -d ' ')
[ -n "$dev" ] || die "cannot find the device of $DIR"

# network: host 10.231.$$ % 250 .1 <-> namespace .2, the sink in the namespace
sub=$(( $$ % 250 ))
ip netns add $NS || die "ip netns add"
ip link add $VH type veth peer name $VN || die "veth"
ip link set $VN netns $NS
ip addr add 10.231.$sub.1/24 dev $VH
ip link set $VH up
ip netns exec $NS ip addr add 10.231.$sub.2/24 dev $VN
ip netns exec $NS ip link set $VN up
ip netns exec $NS ip link set lo up
ip netns exec $NS "$CPW" sink --port 47200 & SINK_PID=$!
sleep 0.5
mkdir -p /sys/fs/cgroup/cpu/$CG /sys/fs/cgroup/blkio/$CG || die "cgroups"
# the machine is shared: the workload's group outweighs every other process (each weighs
# 1024 in the root group), so that their load takes what it leaves (its CPU quota, when a
# configuration sets one, still caps it); the sink runs at a high priority too
echo $SHARES > /sys/fs/cgroup/cpu/$CG/cpu.shares || die "cpu.shares"
renice -n -10 -p "$SINK_PID" >/dev/null

# config NAME -> cores quota_pct disk_MiBps net_Mbit
conf() {
  case $1 in
    base) echo "2 100 40 100";;
    c1)   echo "1 100 40 100";;
    q50)  echo "2 50 40 100";;
    q25)  echo "2 25 40 100";;
    d20)  echo "2 100 20 100";;
    n50)  echo "2 100 40 50";;
    *) die "unknown config $1";;
  esac
}

apply() { # cores quota disk net
  local cores=$1 q=$2 d=$3 n=$4
  echo 100000 > /sys/fs/cgroup/cpu/$CG/cpu.cfs_period_us
  echo $(( q * cores * 1000 )) > /sys/fs/cgroup/cpu/$CG/cpu.cfs_quota_us
  echo "$dev $(( d * 1048576 ))" > /sys/fs/cgroup/blkio/$CG/blkio.throttle.write_bps_device
  tc qdisc replace dev $VH root tbf rate ${n}mbit burst 32kbit latency 50ms || die "tc"
}

runs="$WORK/runs.tsv"
printf "config\trun\tcores\tquota_pct\tdisk_MiBps\tnet_Mbit\twall_ns\tload1\tloaded\ttrace\tsamples\tload1_end\n" > "$runs"
# rounds: every configuration once per round, so that the load of the shared machine,
# which drifts over minutes, falls on every configuration alike
for r in $(seq 1 "$RUNS"); do
  for c in $CONFIGS; do
    read -r cores q d n <<< "$(conf $c)"
    apply "$cores" "$q" "$d" "$n"
    cpus=$([ "$cores" = 1 ] && echo 0 || echo 0-$((cores - 1)))
    load=$(cut -d' ' -f1 /proc/loadavg)
    tr="$WORK/$c.$r.lpt"; pd="$WORK/$c.$r.perf.data"; st="$WORK/$c.$r.perf.txt.gz"
    sh -c "echo \$\$ > /sys/fs/cgroup/cpu/$CG/cgroup.procs && echo \$\$ > /sys/fs/cgroup/blkio/$CG/cgroup.procs && \
           exec taskset -c $cpus perf record -q -o $pd -k mono -g -e cpu-clock/period=10000000/ -e sched:sched_switch \
           --switch-events -- $CPW run --threads $cores --tasks $TASKS --cpu-mb $CPU_MB --disk-mb $DISK_MB \
           --net-mb $NET_MB --dir $DIR --sink 10.231.$sub.2:47200 --trace $tr" > "$WORK/$c.$r.log" 2>&1 \
      || { echo "run $c.$r failed (see $WORK/$c.$r.log)"; continue; }
    load_end=$(cut -d' ' -f1 /proc/loadavg)
    loaded=$(python3 -c "print(1 if max($load, $load_end) > 0.5 else 0)")
    wall=$(sed -n 's/^wall_ns //p' "$WORK/$c.$r.log" | tail -1)
    perf script -i "$pd" --ns --show-switch-events -F comm,pid,tid,time,period,event,ip,sym,dso,trace 2>/dev/null \
      | gzip -1 > "$st"
    rm -f "$pd"
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$c" "$r" "$cores" "$q" "$d" "$n" "$wall" "$load" "$loaded" \
      "$tr" "$st" "$load_end" >> "$runs"
    echo "$c run $r: $(python3 -c "print(f'{$wall/1e9:.3f} s')") (load $load .. $load_end)"
  done
done
{
  python3 "$here/analyze.py" "$LP" "$runs"
  echo
  echo "Run: \`bash bench/crystalperf/run.sh\` (RUNS=$RUNS, TASKS=$TASKS, CPU_MB=$CPU_MB, DISK_MB=$DISK_MB, NET_MB=$NET_MB) on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "### The resource classifier (grouped cross-validation, deterministic)"
  echo
  echo "\`longpole classify --cv share/crystalperf/labels.tsv\` (5 folds, seed 1; whole groups — libraries, modules, packages, headers — held out):"
  echo
  echo '```'
  "$LP" classify --cv "$root/share/crystalperf/labels.tsv" 2>&1
  echo '```'
} | tee "$OUT"

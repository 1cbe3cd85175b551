#!/bin/bash
# A private Slurm cluster on this machine (issue 16): slurmctld in the root namespace on
# the hosts' bridge (10.77.0.1) and one slurmd per network-namespace host
# (tests/cluster/netns_hosts.sh), node zt-hI at 10.77.0.(10+i), 2 CPUs each, one partition
# "zt". Authentication is auth/none and cred/none (a single-user test cluster; no munge
# daemon), processes tracked without cgroups (proctrack/linuxproc), no accounting.
# Everything lives in DIR.
#   tests/cluster/slurm_cluster.sh up DIR N     # prints "export SLURM_CONF=DIR/slurm.conf"
#   tests/cluster/slurm_cluster.sh down DIR N
# `up` starts the hosts too and waits until sinfo shows N idle nodes. Exit status 3: this
# machine cannot run it (no slurm-wlm, or no namespaces): callers skip with the reason.
set -u
cmd=${1:-}
DIR=${2:-/tmp/zt_slurm}
N=${3:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
CTL=$(hostname -s)
export SLURM_CONF=$DIR/slurm.conf

write_conf() {
  mkdir -p "$DIR/state" "$DIR/spool"
  {
    echo "ClusterName=zt"
    echo "SlurmctldHost=$CTL(10.77.0.1)"
    echo "SlurmctldPort=6917"
    echo "SlurmdPort=6918"
    echo "AuthType=auth/none"
    echo "CredType=cred/none"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$DIR/state"
    echo "SlurmdSpoolDir=$DIR/spool/%n"
    echo "TmpFS=$DIR/tmp/%n"  # per node: the PMIx plugin makes its directories there
    echo "SlurmctldPidFile=$DIR/slurmctld.pid"
    echo "SlurmdPidFile=$DIR/slurmd.%n.pid"
    echo "SlurmctldLogFile=$DIR/slurmctld.log"
    echo "SlurmdLogFile=$DIR/slurmd.%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=30"
    local nodes=""
    for i in $(seq 1 "$N"); do
      echo "NodeName=zt-h$i NodeAddr=10.77.0.$((10 + i)) CPUs=2 State=UNKNOWN"
      nodes="$nodes${nodes:+,}zt-h$i"
    done
    echo "PartitionName=zt Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } > "$DIR/slurm.conf"
  # slurmd always loads a cgroup plugin; its autodetection refuses machines that mix v1 and
  # v2 hierarchies (containers often do), so the plugin is named here.
  printf "CgroupPlugin=cgroup/%s\nCgroupAutomount=no\n" "$(cgroup_version)" > "$DIR/cgroup.conf"
}

# v2 where /sys/fs/cgroup is cgroup2 or nothing is mounted (slurmd then gets a private
# cgroup2 mount), v1 where the v1 controllers are mounted.
cgroup_version() {
  if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ] && mountpoint -q /sys/fs/cgroup/freezer 2>/dev/null; then
    echo v1
  else
    echo v2
  fi
}

down() {
  for f in "$DIR"/slurmd.*.pid "$DIR"/slurmctld.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.5
  for f in "$DIR"/slurmd.*.pid "$DIR"/slurmctld.pid; do
    [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
    rm -f "$f"
  done
  "$HERE/netns_hosts.sh" down "$N"
  return 0
}

up() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null ||
    { echo "slurm_cluster.sh: slurm-wlm is not installed" >&2; exit 3; }
  down
  "$HERE/netns_hosts.sh" up "$N" >/dev/null || exit $?
  rm -rf "$DIR/state" "$DIR/spool" "$DIR/tmp"
  write_conf
  slurmctld -i || { echo "slurm_cluster.sh: slurmctld failed: $(tail -3 "$DIR/slurmctld.log")" >&2; exit 1; }
  for i in $(seq 1 "$N"); do
    mkdir -p "$DIR/spool/zt-h$i" "$DIR/tmp/zt-h$i"
    # Without a cgroup file system, slurmd gets a cgroup2 mount in a private mount
    # namespace, so the machine's own /sys/fs/cgroup is untouched.
    ip netns exec "zt-h$i" unshare -m -u /bin/sh -c \
      "hostname zt-h$i; mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup; exec slurmd -N zt-h$i" ||
      { echo "slurm_cluster.sh: slurmd zt-h$i failed: $(tail -3 "$DIR/slurmd.zt-h$i.log")" >&2; exit 1; }
  done
  for _ in $(seq 1 100); do
    if [ "$(sinfo -h -t idle -o %D 2>/dev/null | head -1)" = "$N" ]; then
      echo "export SLURM_CONF=$SLURM_CONF"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm_cluster.sh: the nodes did not become idle: $(sinfo 2>&1 | tail -3)" >&2
  exit 1
}

case "$cmd" in
  up) up ;;
  down) down ;;
  *) echo "usage: slurm_cluster.sh up|down DIR N" >&2; exit 2 ;;
esac

# Shared by the bench/*.sh scripts: configure and build the named targets in
# build-bench/ (Release, no tests), and locate the interpreter that has python3-torch.
ZT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ZT_BENCH_BUILD="${ZT_BENCH_BUILD:-$ZT_ROOT/build-bench}"
ZT_PYTHON="${ZT_PYTHON:-/usr/bin/python3}"

# Builds the named targets in ZT_BENCH_BUILD; with ZT_BENCH_PREBUILT=1 (a machine that
# cannot build, such as the GPU machine) only checks that they are there.
zt_build() {
  if [ "${ZT_BENCH_PREBUILT:-0}" = 1 ]; then
    local t
    for t in "$@"; do
      [ "$t" = zerotrain_cli ] && t=zerotrain  # the CLI target's binary
      [ -x "$ZT_BENCH_BUILD/$t" ] || { echo "zt_build: $ZT_BENCH_BUILD/$t is missing (ZT_BENCH_PREBUILT=1)" >&2; return 1; }
    done
    return 0
  fi
  cmake -S "$ZT_ROOT" -B "$ZT_BENCH_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DZT_BUILD_TESTS=OFF -DZT_BUILD_BENCH=ON >/dev/null || return 1
  ninja -C "$ZT_BENCH_BUILD" "$@" >/dev/null || return 1
}

zt_machine() {
  local cpu
  cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
  echo "$cpu, $(nproc --all) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r)"
}

# Runs two commands that each print one JSON line, alternately, ROUNDS times; appends
# every line to LOG and echoes it to stderr.  zt_alternate ROUNDS LOG "command 1" "command 2"
zt_alternate() {
  local rounds=$1 log=$2 first=$3 second=$4 round cmd out
  for round in $(seq "$rounds"); do
    for cmd in "$first" "$second"; do
      out=$(eval "$cmd")
      echo "$out" >>"$log"
      echo "round $round: $out" >&2
    done
  done
}

# Network-namespace hosts (tests/cluster/netns_hosts.sh) for one benchmark at a time.
# zt_netns_begin DIR N: takes the hosts' lock; at exit the N hosts go down and DIR (the
# benchmark's work directory) is removed.
zt_netns_begin() {
  ZT_NETNS_DIR=$1
  ZT_NETNS_N=$2
  exec 9>/tmp/zt_netns_hosts.lock
  flock 9
  trap '"$ZT_ROOT/tests/cluster/netns_hosts.sh" down "$ZT_NETNS_N" >/dev/null 2>&1 || true; rm -rf "$ZT_NETNS_DIR"' EXIT
}

# mpirun's options for ranks on those hosts, listed in HOSTFILE, into the array
# ZT_NETNS_MPIRUN: the namespace remote shell, TCP on the hosts' bridge only, and
# --bind-to none and ZT_PIN_THREADS=0 (the hosts share this machine's cores: each host's
# Open MPI daemon would bind its first rank to core 0, and zerotrain, told by Open MPI that
# its rank is alone on its host, would pin its threads from CPU 0).  zt_netns_mpirun HOSTFILE
zt_netns_mpirun() {
  ZT_NETNS_MPIRUN=(--hostfile "$1" --bind-to none --mca plm_rsh_agent "$ZT_ROOT/tests/cluster/netns_rsh.sh"
                   --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24
                   -x OMP_NUM_THREADS -x ZT_PIN_THREADS=0)
}

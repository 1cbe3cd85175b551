#!/bin/bash
# Creates (up) or removes (down) N "hosts" on this machine as Linux network namespaces
# zt-h1 .. zt-hN, each with its own address on a private bridge, so that MPI ranks in
# different namespaces can reach each other only over TCP (no shared-memory transport
# between them: Open MPI is run with btl tcp,self). Root only.
#   tests/cluster/netns_hosts.sh up N [--delay MS] [--rate MBIT]   prints the host addresses
#   tests/cluster/netns_hosts.sh down N
# Layout: bridge zt-br0 with 10.77.0.1/24 in the root namespace (mpirun's side); host i is
# namespace zt-hI with veth zt-vI (root side, on the bridge) <-> eth0 (10.77.0.(10+i)/24),
# loopback up. --delay/--rate add a tc netem qdisc on each host's eth0 (egress); without
# netem in the kernel, --rate alone uses tbf instead (limit_link).
# Idempotent: `up` first removes leftovers of the same names. Exit status 3: namespaces
# cannot be created here (not root, no ip netns, no veth): callers skip with the reason.
set -u
cmd=${1:-}
N=${2:-0}
shift 2 2>/dev/null || true
DELAY="" RATE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --delay) DELAY=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    *) echo "netns_hosts.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
BR=zt-br0
addr() { echo "10.77.0.$((10 + $1))"; }

down() {
  for i in $(seq 1 "$N"); do
    ip netns del "zt-h$i" 2>/dev/null
    ip link del "zt-v$i" 2>/dev/null
  done
  if [ "$N" -gt 0 ] || [ "$cmd" = down ]; then
    # Remove the bridge only when no host is left on it.
    if ! ip -o link show master "$BR" 2>/dev/null | grep -q .; then ip link del "$BR" 2>/dev/null; fi
  fi
  return 0
}

# netem when the kernel has it; else a rate alone goes through tbf (a token bucket with a
# burst of 4 ms at the rate), and a delay cannot be had: exit 3 saying so.
limit_link() {
  local ns=$1
  if ip netns exec "$ns" tc qdisc add dev eth0 root netem ${DELAY:+delay ${DELAY}ms} ${RATE:+rate ${RATE}mbit} 2>/dev/null; then
    return 0
  fi
  if [ -n "$DELAY" ]; then
    echo "netns_hosts.sh: --delay needs tc netem, which this kernel does not have (no sch_netem)" >&2
    exit 3
  fi
  local burst=$(( RATE * 1000 / 8 * 4 / 1000 + 16 ))  # KB in 4 ms at RATE Mbit/s, at least 16
  ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "${RATE}mbit" burst "${burst}kb" latency 100ms ||
    { echo "netns_hosts.sh: neither tc netem nor tbf is available" >&2; exit 3; }
  echo "netns_hosts.sh: no tc netem in this kernel: $ns's link limited to ${RATE} Mbit/s with tbf" >&2
}

up() {
  if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo "netns_hosts.sh: needs root and iproute2 to create network namespaces" >&2
    exit 3
  fi
  down
  if ! ip link show "$BR" >/dev/null 2>&1; then
    ip link add "$BR" type bridge || { echo "netns_hosts.sh: cannot create bridge $BR" >&2; exit 3; }
    ip addr add 10.77.0.1/24 dev "$BR"
    ip link set "$BR" up
  fi
  for i in $(seq 1 "$N"); do
    local ns="zt-h$i"
    ip netns add "$ns" || { echo "netns_hosts.sh: cannot create namespace $ns" >&2; exit 3; }
    ip link add "zt-v$i" type veth peer name eth0 netns "$ns" || { echo "netns_hosts.sh: no veth" >&2; exit 3; }
    ip link set "zt-v$i" master "$BR" up
    ip -n "$ns" addr add "$(addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add default via 10.77.0.1 2>/dev/null
    if [ -n "$DELAY$RATE" ]; then
      limit_link "$ns"
    fi
    addr "$i"
  done
}

case "$cmd" in
  up) up ;;
  down) down ;;
  *) echo "usage: netns_hosts.sh up|down N [--delay MS] [--rate MBIT]" >&2; exit 2 ;;
esac

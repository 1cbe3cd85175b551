# Shared by the bench/*.sh scripts: configure and build the named targets in
# build-bench/ (Release, no tests), and locate the interpreter that has python3-torch.
ZT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ZT_BENCH_BUILD="${ZT_BENCH_BUILD:-$ZT_ROOT/build-bench}"
ZT_PYTHON="${ZT_PYTHON:-/usr/bin/python3}"

zt_build() {
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

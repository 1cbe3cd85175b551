#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) if needed and runs each for N
# seconds (default 60), seeded with the handcrafted corpus in tests/corpus/:
#   fuzz/run.sh [seconds] [harness...]      e.g. fuzz/run.sh 600 manifest
# Prints one summary line per harness (runs, execs/s, coverage, result) and exits
# non-zero if any harness found something (crash, sanitizer report, timeout, OOM);
# the input that triggered it is kept in <build>/findings/. New inputs the fuzzer finds
# go to <build>/corpus-<harness>/, never into tests/corpus/.
# Environment: ZT_FUZZ_BUILD_DIR (default <repo>/build-fuzz), CC/CXX (default clang),
# ZT_FUZZ_JOBS (ninja -j, default 2).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=${1:-60}
shift || true
HARNESSES=("$@")
[ ${#HARNESSES[@]} -eq 0 ] && HARNESSES=(config token_file safetensors manifest)
BUILD=${ZT_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}

if ! [[ "$SECONDS_EACH" =~ ^[0-9]+$ ]] || [ "$SECONDS_EACH" -lt 1 ]; then
  echo "usage: fuzz/run.sh [seconds >= 1] [config|token_file|safetensors|manifest ...]" >&2
  exit 2
fi

# Seed directories per harness (the checked-in corpus is read, never written).
seeds_of() {
  case "$1" in
    config) echo "$ROOT/tests/corpus/config" ;;
    token_file) echo "$ROOT/tests/corpus/token" ;;
    safetensors) echo "$ROOT/tests/corpus/safetensors" ;;
    manifest) echo "$ROOT/tests/corpus/manifest $ROOT/tests/corpus/latest" ;;
    *) echo "fuzz/run.sh: unknown harness $1" >&2; return 1 ;;
  esac
}
dict_of() {
  case "$1" in
    config | manifest | safetensors) echo "-dict=$ROOT/fuzz/json.dict" ;;
  esac
}

if [ ! -f "$BUILD/build.ninja" ]; then
  CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S "$ROOT/fuzz" -B "$BUILD" -G Ninja >/dev/null || exit 2
fi
nice -n 10 ninja -C "$BUILD" -j "${ZT_FUZZ_JOBS:-2}" >/dev/null || { echo "fuzz/run.sh: build failed" >&2; exit 2; }

mkdir -p "$BUILD/findings"
failed=0
for h in "${HARNESSES[@]}"; do
  seeds=$(seeds_of "$h") || exit 2
  corpus="$BUILD/corpus-$h"
  log="$BUILD/fuzz-$h.log"
  mkdir -p "$corpus"
  # shellcheck disable=SC2086  # seeds and dict are word lists
  nice -n 10 "$BUILD/fuzz_$h" "$corpus" $seeds $(dict_of "$h") \
    -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$BUILD/findings/$h-" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
  units=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1)
  rate="?"
  [ -n "$runs" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ] && rate=$((runs / secs))
  if [ $rc -eq 0 ]; then
    result="OK (no finding)"
  else
    failed=1
    artifact=$(grep -o 'Test unit written to [^ ]*' "$log" | tail -1 | sed 's/Test unit written to //')
    reason=$(grep -m1 -E 'ERROR: |runtime error|invariant violated|Timeout|out-of-memory' "$log" | cut -c1-160)
    result="FINDING (exit $rc): ${reason:-see log}; input: ${artifact:-none}; log: $log"
  fi
  printf 'fuzz_%-12s %6ss  runs %-9s %7s exec/s  %-20s %-16s %s\n' "$h" "${secs:-?}" "${runs:-?}" "$rate" \
    "${cov:-cov: ?}" "${units:-}" "$result"
done
exit $failed

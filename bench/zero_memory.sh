#!/usr/bin/env bash
# Benchmark (issue 4, acceptance 2): a model that does not fit one rank's memory cap
# under ZeRO stage 0 trains under stage 3 at N = 4. Every rank runs under the same cap
# on its private writable memory (prlimit --data, RLIMIT_DATA: heap and private
# anonymous mappings, which is where parameters, gradients, optimizer state, buckets and
# activations live). GPT-2 small (124 M parameters: 16 x Psi = 1.99 GB of model states at
# stage 0) on 4 ranks x 1 thread, B=1 T=64, CAP_MB=1536 by default.
#   CAP_MB=1536 bench/zero_memory.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
CAP_MB="${CAP_MB:-1536}"
zt_build zero_bench || exit 1
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cap=$((CAP_MB * 1024 * 1024))
echo "machine: $(zt_machine)"
echo "cap: ${CAP_MB} MiB of private writable memory per rank (RLIMIT_DATA)"
results=()
for stage in 0 3; do
  out=$(mpirun --oversubscribe --mca btl self,vader -np 4 prlimit --data="$cap:$cap" \
        "$ZT_BENCH_BUILD/zero_bench" --stage "$stage" --batch 1 --seq 64 --steps 2 --warmup 1 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ]; then
    json=$(echo "$out" | grep '^{')
    echo "stage $stage: trained: $json"
    results+=("\"stage${stage}_trains\": true")
  else
    echo "stage $stage: failed (exit $rc): $(echo "$out" | grep -m1 -E 'out of memory|ResourceExhausted|Error' || echo "$out" | tail -1)"
    results+=("\"stage${stage}_trains\": false")
  fi
done
echo "{\"bench\": \"zero_memory\", \"cap_mb\": $CAP_MB, \"ranks\": 4, ${results[0]}, ${results[1]}}"

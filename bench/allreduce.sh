#!/usr/bin/env bash
# Benchmark: zerotrain's ring all_reduce (through the ProcessGroup: CommAlgorithm::kRing,
# communication thread with polling back-off) against plain MPI_Allreduce (the library
# called directly, in place) at 1, 16, 64 and 256 MiB of floats, 2 ranks on this machine
# over shared memory. The two alternate, several repetitions each; the table shows median
# bus bandwidth (2(N-1)/N * bytes / time). Last line: one JSON object. Extra arguments go
# to allreduce_bench (--chunk BYTES, --spin-us US, --max-sleep-us US, --sizes-mib, --reps).
#   bench/allreduce.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
zt_build allreduce_bench
echo "machine: $(zt_machine)"
export OMP_NUM_THREADS=1
mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 2 "$ZT_BENCH_BUILD/allreduce_bench" "$@"

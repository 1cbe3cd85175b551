#!/usr/bin/env bash
# Benchmark (issue 30): MoE's all-to-all. zerotrain's own exchange over send/recv, the
# ProcessGroup's MPI_Ialltoallv, and MPI_Alltoall called directly, at 1, 8 and 32 MiB per
# rank, on 2 and 4 ranks of this machine over shared memory, alternating; medians of the
# algorithm bandwidth (bytes each rank sends / time). Extra arguments go to alltoall_bench
# (--sizes-mib, --reps). Last line per rank count: one JSON object.
#   bench/alltoall.sh
set -euo pipefail
source "$(dirname "$0")/common.sh"
zt_build alltoall_bench
echo "machine: $(zt_machine)"
export OMP_NUM_THREADS=1
for np in 2 4; do
  mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np" "$ZT_BENCH_BUILD/alltoall_bench" "$@"
done

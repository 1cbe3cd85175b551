// Where a rank's compute threads run (issue 32): the topology of the CPUs it may use and
// core/cpu_topology.h's pinning rule, applied once the thread count is set. The rank's place
// on its machine comes from the launcher: Open MPI's OMPI_COMM_WORLD_LOCAL_RANK and
// OMPI_COMM_WORLD_LOCAL_SIZE, or Slurm's SLURM_LOCALID with SLURM_NTASKS_PER_NODE when srun
// did not bind the task itself. A process started by hand is pinned only where its mask was
// narrowed for it (taskset, numactl). ZT_PIN_THREADS=0 turns pinning off for every rank a
// launcher starts (mpirun -x): the launcher's local size counts the ranks of its host, which
// is not the ranks sharing the cores where "hosts" are containers or network namespaces of one
// machine (the benches' namespace hosts: each would pin its rank to CPU 0).
// Thread-safety: call from the main thread, before the kernels run.
#pragma once

#include <string>

namespace zt {

struct PinningResult {
  std::string topology;  // CpuTopology::describe()
  std::string decision;  // "pinned to CPUs 0-7", or "not pinned: ..."
};

// enabled: training.pin_threads. Pins the kernels' threads where the rule allows.
PinningResult pin_compute_threads(bool enabled);

}  // namespace zt

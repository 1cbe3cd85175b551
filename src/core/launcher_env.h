// Where the launcher put this process on its machine: the local rank and the number of
// ranks on the host, from Open MPI (OMPI_COMM_WORLD_LOCAL_RANK / _LOCAL_SIZE), Slurm
// (SLURM_LOCALID / SLURM_NTASKS_PER_NODE) or torchrun (LOCAL_RANK / LOCAL_WORLD_SIZE), in
// that order. Thread pinning, the GPU a rank takes and the host-memory check read it.
// Thread-safety: reads the environment only.
#pragma once

namespace zt {

struct LocalPlace {
  int rank = 0;
  int size = 0;  // 0: no launcher says
};

LocalPlace launcher_local_place();

}  // namespace zt

// Host-staged process groups: the collectives of a host group (MPI, in-process threads)
// for a backend whose memory that group cannot reach. A GPU without NCCL, several MPI
// ranks sharing one GPU (NCCL 2.28 refuses them), and the guarded test backend under
// mpirun (a peer process reads pages directly, outside any memory domain) all take it.
// Each operation on backend memory runs on a host buffer: the bytes it reads cross to the
// host when it is issued (after the backend's queued kernels), the host group runs it,
// and Work::wait() copies the bytes it wrote back into backend memory before returning.
// Buffers already in host memory (a stack scalar, a pinned staging piece) go to the host
// group unchanged. The arithmetic is the host group's, so a staged run gives the host
// run's bits.
// Invariants: host code never dereferences backend memory (only the backend's
// copy_to_host / copy_from_host touch it); a staged operation's results reach backend
// memory only inside its wait() (completed() says only that wait() will not block on the
// peers), so every operation that writes must be waited for; host buffers come from a
// pool of staging_host() arenas and return to it when their Work is done. A buffer the
// staging host cannot give (page-locked memory exhausted) fails the operation with that
// reason and abandons the host group's pending work (under MPI: the job ends, naming it),
// so the peers entering the same collective do not wait out their deadline.
// Cost: each operation waits for the backend's queue at issue and crosses the bus twice;
// the banner names this path. NCCL (backend/cuda) is the fast one.
// Thread-safety: as ProcessGroup (one issuing thread); the pool is locked.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "comm/process_group.h"

namespace zt {

// True when `group` cannot move `backend`'s memory itself: the backend's memory is not
// the host's, the group's collectives touch their buffers (not the group of one process),
// and it cannot work inside the backend's memory domain (there is none, as on a GPU, or
// the group is not in-process, as MPI's).
bool needs_host_staging(const ProcessGroup& group, const Backend& backend);

// `inner` through host buffers of `backend`'s staging_host(); `inner` must outlive it.
std::unique_ptr<ProcessGroup> make_staged_process_group(ProcessGroup& inner, const Backend& backend);

// The staged groups of one trainer: wrap(g) is g where it needs no staging, else its
// staged group (one per distinct g, owned here; null stays null).
class StagedGroups {
 public:
  explicit StagedGroups(const Backend& backend) : backend_(backend) {}
  ProcessGroup* wrap(ProcessGroup* g);
  bool any() const { return !staged_.empty(); }

 private:
  const Backend& backend_;
  std::map<ProcessGroup*, std::unique_ptr<ProcessGroup>> staged_;
};

}  // namespace zt

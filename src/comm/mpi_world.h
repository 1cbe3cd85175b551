// MpiWorld: the MPI backend. init() initialises MPI (MPI_THREAD_MULTIPLE, refused
// otherwise) and builds the world group; split() makes sub-groups (MPI_Comm_split). Every
// group owns duplicated communicators (one for collectives and user point-to-point, one
// for the ring's messages) and its own communication thread (comm_engine.h). A deadline
// passed prints one line to stderr and aborts the job with MPI_Abort(kExitCommTimeout).
// Destroying the MpiWorld stops every group's thread (draining their queues), frees the
// communicators and finalises MPI; groups that outlive it become inert.
// Thread-safety: init/split/destruction from one thread; each group per process_group.h.
#pragma once

#include <memory>
#include <string>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

// Ends an MPI job that cannot go on: prints "zerotrain: <message>", then MPI_Abort
// with kExitCommTimeout for DeadlineExceeded, else 1 (plain _exit without MPI).
[[noreturn]] void abort_mpi_job(const Status& why);

// True when this process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE
// or PMIX_RANK is set); a plain `zerotrain train` never initialises MPI.
bool launched_by_mpi();

struct MpiRegistry;

class MpiWorld {
 public:
  // Initialises MPI once per process. FailedPrecondition when MPI was initialised before
  // or grants less than MPI_THREAD_MULTIPLE.
  static StatusOr<std::unique_ptr<MpiWorld>> init(const CommOptions& options);
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  ProcessGroup& world() { return *world_; }
  // Collective over the world: ranks passing the same color form a group, ordered by key
  // (then world rank). Same options as the world.
  StatusOr<std::unique_ptr<ProcessGroup>> split(int color, int key);
  // The same with its own options (e.g. another algorithm or chunk size for this group).
  StatusOr<std::unique_ptr<ProcessGroup>> split(int color, int key, const CommOptions& options);

 private:
  MpiWorld(const CommOptions& options, std::shared_ptr<MpiRegistry> registry);

  CommOptions options_;
  std::shared_ptr<MpiRegistry> registry_;
  std::unique_ptr<ProcessGroup> world_;
};

}  // namespace zt

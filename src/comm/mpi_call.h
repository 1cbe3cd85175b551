// The checking wrapper every MPI call of zerotrain goes through, and MpiRequestTask: an
// operation that is one non-blocking MPI call (MPI_Iallreduce, MPI_Ibcast, MPI_Isend, ...)
// progressed with MPI_Test on the communication thread, with an optional completion step
// (copying a temporary into place).
// Thread-safety: MPI is initialised with MPI_THREAD_MULTIPLE; a task is touched only by its
// group's communication thread.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

#include "comm/comm_engine.h"

namespace zt {

// OK, or Internal("<call> failed: <MPI error string> (<where>)"). `where` names the
// operation and the group, e.g. "all_reduce #5 (4.00 MiB) on group world, rank 1 of 2".
Status mpi_check(int rc, const char* call, const std::string& where);

// For calls whose failure cannot be returned (destructors): prints
// "zerotrain: warning: <call> failed: ..." to stderr.
void mpi_warn(int rc, const char* call, const std::string& where);

// "<op description> on group <name>, rank <r> of <n>".
std::string mpi_where(const OpInfo& info, const std::string& group, int rank, int size);

class MpiRequestTask final : public CommTask {
 public:
  using StartFn = std::function<int(MPI_Request*)>;
  // `call` names the MPI function for messages; `start_fn` posts it; `on_done` runs once
  // the request has completed. `group`, `rank`, `size` are for messages.
  MpiRequestTask(const char* call, StartFn start_fn, std::function<void()> on_done, std::string group, int rank,
                 int size);
  MpiRequestTask(const MpiRequestTask&) = delete;
  MpiRequestTask& operator=(const MpiRequestTask&) = delete;

  Status start(const OpInfo& info) override;
  Status progress(bool* done, bool* progressed) override;

 private:
  const char* call_;
  StartFn start_fn_;
  std::function<void()> on_done_;
  std::string group_;
  int rank_, size_;
  std::string where_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace zt

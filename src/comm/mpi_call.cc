// mpi_check and MpiRequestTask.
#include "comm/mpi_call.h"

#include <cstdio>
#include <utility>

namespace zt {

Status mpi_check(int rc, const char* call, const std::string& where) {
  if (rc == MPI_SUCCESS) return Status::OK();
  char text[MPI_MAX_ERROR_STRING + 1] = {0};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof(text), "MPI error %d", rc);
  return Status::Internal(std::string(call) + " failed: " + text + " (" + where + ")");
}

void mpi_warn(int rc, const char* call, const std::string& where) {
  const Status s = mpi_check(rc, call, where);
  if (!s.ok()) std::fprintf(stderr, "zerotrain: warning: %s\n", s.message().c_str());
}

std::string mpi_where(const OpInfo& info, const std::string& group, int rank, int size) {
  return describe_op(info) + " on group " + group + ", rank " + std::to_string(rank) + " of " +
         std::to_string(size);
}

MpiRequestTask::MpiRequestTask(const char* call, StartFn start_fn, std::function<void()> on_done,
                               std::string group, int rank, int size)
    : call_(call), start_fn_(std::move(start_fn)), on_done_(std::move(on_done)), group_(std::move(group)),
      rank_(rank), size_(size) {}

Status MpiRequestTask::start(const OpInfo& info) {
  where_ = mpi_where(info, group_, rank_, size_);
  return mpi_check(start_fn_(&request_), call_, where_);
}

Status MpiRequestTask::progress(bool* done, bool* progressed) {
  int flag = 0;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), "MPI_Test", where_));
  if (!flag) return Status::OK();
  if (on_done_) on_done_();
  *done = true;
  *progressed = true;
  return Status::OK();
}

}  // namespace zt

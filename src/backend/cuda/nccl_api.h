// NCCL, loaded when a NCCL process group is first made rather than linked (as cuBLASLt is,
// kernels/cuda/cublaslt_api.h): the library is over 200 MB, and CPU runs and one-GPU runs
// never touch it. The functions are nccl.h's own (the header gives their types).
// Thread-safety: nccl_api() loads once (a function-local static); the table is immutable.
#pragma once

#include <nccl.h>

#include <string>

#include "core/status.h"

namespace zt::cuda {

struct NcclApi {
  decltype(&ncclGetVersion) get_version;
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRankConfig) init_rank_config;
  decltype(&ncclCommDestroy) destroy;
  decltype(&ncclCommAbort) abort;
  decltype(&ncclCommGetAsyncError) async_error;
  decltype(&ncclGetErrorString) error_string;
  decltype(&ncclGetLastError) last_error;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclReduceScatter) reduce_scatter;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclReduce) reduce;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  int version = 0;  // ncclGetVersion's, e.g. 22809 for 2.28.9
};

// The loaded table, or FailedPrecondition naming libnccl.so.2 and the loader's error.
StatusOr<const NcclApi*> nccl_api();

// "ncclInvalidUsage: <NCCL's last error>" for a failed call, for messages.
std::string nccl_error(const NcclApi& api, ncclComm_t comm, ncclResult_t r);

}  // namespace zt::cuda

// nccl_api (nccl_api.h): dlopen of libnccl.so.2 and dlsym of each entry.
#include "backend/cuda/nccl_api.h"

#include <dlfcn.h>

#include "core/dl_symbol.h"

namespace zt::cuda {

namespace {

StatusOr<NcclApi> load() {
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return Status::FailedPrecondition(std::string("several GPUs need NCCL 2 (libnccl.so.2): ") +
                                      (err != nullptr ? err : "not found") +
                                      "; install NCCL or add its lib directory to LD_LIBRARY_PATH");
  }
  NcclApi a{};
  std::string missing;
  bind_symbol(lib, "ncclGetVersion", &a.get_version, &missing);
  bind_symbol(lib, "ncclGetUniqueId", &a.get_unique_id, &missing);
  bind_symbol(lib, "ncclCommInitRankConfig", &a.init_rank_config, &missing);
  bind_symbol(lib, "ncclCommDestroy", &a.destroy, &missing);
  bind_symbol(lib, "ncclCommAbort", &a.abort, &missing);
  bind_symbol(lib, "ncclCommGetAsyncError", &a.async_error, &missing);
  bind_symbol(lib, "ncclGetErrorString", &a.error_string, &missing);
  bind_symbol(lib, "ncclGetLastError", &a.last_error, &missing);
  bind_symbol(lib, "ncclAllReduce", &a.all_reduce, &missing);
  bind_symbol(lib, "ncclReduceScatter", &a.reduce_scatter, &missing);
  bind_symbol(lib, "ncclAllGather", &a.all_gather, &missing);
  bind_symbol(lib, "ncclReduce", &a.reduce, &missing);
  bind_symbol(lib, "ncclBroadcast", &a.broadcast, &missing);
  bind_symbol(lib, "ncclGroupStart", &a.group_start, &missing);
  bind_symbol(lib, "ncclGroupEnd", &a.group_end, &missing);
  if (!missing.empty()) return Status::FailedPrecondition("libnccl.so.2 has no " + missing + " (an NCCL older than 2.14?)");
  if (a.get_version(&a.version) != ncclSuccess) return Status::FailedPrecondition("ncclGetVersion failed");
  return a;
}

}  // namespace

StatusOr<const NcclApi*> nccl_api() {
  static const StatusOr<NcclApi> api = load();
  if (!api.ok()) return api.status();
  return &api.value();
}

std::string nccl_error(const NcclApi& api, ncclComm_t comm, ncclResult_t r) {
  const char* last = api.last_error(comm);
  return std::string(api.error_string(r)) + (last != nullptr && *last != '\0' ? std::string(": ") + last : "");
}

}  // namespace zt::cuda

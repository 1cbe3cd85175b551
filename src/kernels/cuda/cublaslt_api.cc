// cublaslt_api (cublaslt_api.h): dlopen of libcublasLt.so.13 and dlsym of each entry.
#include "kernels/cuda/cublaslt_api.h"

#include <dlfcn.h>

#include "core/dl_symbol.h"

#include <string>

namespace zt::cuda {

namespace {

StatusOr<CublasLtApi> load() {
  void* lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return Status::FailedPrecondition(std::string("the CUDA backend needs cuBLASLt 13 (libcublasLt.so.13): ") +
                                      (err != nullptr ? err : "not found") +
                                      "; install the CUDA 13 toolkit or add its lib64 to LD_LIBRARY_PATH");
  }
  CublasLtApi a{};
  std::string missing;
  bind_symbol(lib, "cublasLtCreate", &a.create, &missing);
  bind_symbol(lib, "cublasLtDestroy", &a.destroy, &missing);
  bind_symbol(lib, "cublasLtGetVersion", &a.get_version, &missing);
  bind_symbol(lib, "cublasLtGetStatusString", &a.status_string, &missing);
  bind_symbol(lib, "cublasLtMatmulDescCreate", &a.desc_create, &missing);
  bind_symbol(lib, "cublasLtMatmulDescDestroy", &a.desc_destroy, &missing);
  bind_symbol(lib, "cublasLtMatmulDescSetAttribute", &a.desc_set, &missing);
  bind_symbol(lib, "cublasLtMatrixLayoutCreate", &a.layout_create, &missing);
  bind_symbol(lib, "cublasLtMatrixLayoutDestroy", &a.layout_destroy, &missing);
  bind_symbol(lib, "cublasLtMatrixLayoutSetAttribute", &a.layout_set, &missing);
  bind_symbol(lib, "cublasLtMatmulPreferenceCreate", &a.pref_create, &missing);
  bind_symbol(lib, "cublasLtMatmulPreferenceDestroy", &a.pref_destroy, &missing);
  bind_symbol(lib, "cublasLtMatmulPreferenceSetAttribute", &a.pref_set, &missing);
  bind_symbol(lib, "cublasLtMatmulAlgoGetHeuristic", &a.heuristic, &missing);
  bind_symbol(lib, "cublasLtMatmul", &a.matmul, &missing);
  if (!missing.empty()) {
    return Status::FailedPrecondition("libcublasLt.so.13 has no " + missing + " (a cuBLASLt older than 13?)");
  }
  return a;
}

}  // namespace

StatusOr<const CublasLtApi*> cublaslt_api() {
  static const StatusOr<CublasLtApi> api = load();
  if (!api.ok()) return api.status();
  return &api.value();
}

}  // namespace zt::cuda

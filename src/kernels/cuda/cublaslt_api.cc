// cublaslt_api (cublaslt_api.h): dlopen of libcublasLt.so.13 and dlsym of each entry.
#include "kernels/cuda/cublaslt_api.h"

#include <dlfcn.h>

#include <string>

namespace zt::cuda {

namespace {

template <class F>
bool bind(void* lib, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (*out == nullptr && missing->empty()) *missing = name;
  return *out != nullptr;
}

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
  bind(lib, "cublasLtCreate", &a.create, &missing);
  bind(lib, "cublasLtDestroy", &a.destroy, &missing);
  bind(lib, "cublasLtGetVersion", &a.get_version, &missing);
  bind(lib, "cublasLtGetStatusString", &a.status_string, &missing);
  bind(lib, "cublasLtMatmulDescCreate", &a.desc_create, &missing);
  bind(lib, "cublasLtMatmulDescDestroy", &a.desc_destroy, &missing);
  bind(lib, "cublasLtMatmulDescSetAttribute", &a.desc_set, &missing);
  bind(lib, "cublasLtMatrixLayoutCreate", &a.layout_create, &missing);
  bind(lib, "cublasLtMatrixLayoutDestroy", &a.layout_destroy, &missing);
  bind(lib, "cublasLtMatrixLayoutSetAttribute", &a.layout_set, &missing);
  bind(lib, "cublasLtMatmulPreferenceCreate", &a.pref_create, &missing);
  bind(lib, "cublasLtMatmulPreferenceDestroy", &a.pref_destroy, &missing);
  bind(lib, "cublasLtMatmulPreferenceSetAttribute", &a.pref_set, &missing);
  bind(lib, "cublasLtMatmulAlgoGetHeuristic", &a.heuristic, &missing);
  bind(lib, "cublasLtMatmul", &a.matmul, &missing);
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

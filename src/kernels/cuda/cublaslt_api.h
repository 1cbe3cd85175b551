// cuBLASLt, loaded when a CUDA backend is first made rather than linked: the library is
// 540 MB and linking it added about 0.1 s to every start of every zerotrain process (each
// mpirun rank, each CLI test), CUDA or not. So the binary starts as fast as a CPU-only
// build, runs where the CUDA libraries are absent, and `--device cuda` names what is
// missing. The functions are cublasLt.h's own (the header gives their types).
// Thread-safety: cublaslt_api() loads once (a function-local static); the table is
// immutable afterwards.
#pragma once

#include <cublasLt.h>

#include "core/status.h"

namespace zt::cuda {

struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetVersion) get_version;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&cublasLtMatmul) matmul;
};

// The loaded table, or FailedPrecondition naming libcublasLt.so.13 and the loader's error.
StatusOr<const CublasLtApi*> cublaslt_api();

}  // namespace zt::cuda

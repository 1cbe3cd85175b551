// What the CPU backend can say about itself, for `zerotrain doctor` and the banner: its GEMM
// path (which library runs which GEMM pattern, OpenBLAS's core against the CPU), the GEMM
// speeds it reaches, the FMA peak they are a fraction of, oneDNN's ISA and how f16 converts.
// Plain data out, no printing and no judging (the caller decides what is a problem), so the
// command line needs no kernel header.
// Thread-safety: call from the main thread (the measurements run OpenMP regions).
#pragma once

#include <string>

#include "core/cpu_features.h"
#include "core/status.h"

namespace zt {

// The GEMM path under ZT_GEMM, or, when ZT_GEMM is invalid (selected not OK), the path with
// ZT_GEMM unset.
struct GemmPathReport {
  Status selected;                 // select_gemm_path()'s status
  std::string describe;            // "openblas(Cooperlake) for X.W^T, onednn 2.6.3 for dY.W and dY^T.X"
  std::string forward_library;     // "openblas" or "onednn": X.W^T
  std::string backward_library;    // dY.W and dY^T.X
  std::string openblas_version, openblas_core, suggested_core, onednn_version;
  bool openblas_core_forced = false;  // OPENBLAS_CORETYPE was set
  bool openblas_sound = true;         // the loaded core's kernels use the CPU's widest ISA
  bool uses_slow_core = false;        // a GEMM will run on an unsound core (ZT_GEMM=openblas)
  Isa cpu_isa = Isa::kScalar, openblas_core_isa = Isa::kScalar;
  std::string warning;                // empty, or the mismatch and its fix
  std::string blas_threading;         // OpenBLAS's build: "OpenMP", "pthreads" or "sequential"
  bool blas_shares_openmp = true;     // its threads are the kernels' OpenMP threads
  std::string onednn_runtime;         // "OpenMP", "sequential", "TBB", "threadpool"
  bool onednn_own_pool = false;       // oneDNN runs threads of its own beside OpenMP's
};
GemmPathReport gemm_path_report();

// Best-of-repetitions GFLOP/s of an n^3 sgemm (through the GEMM path) in the forward pattern
// X.W^T and the backward pattern dY.W, each timed for about seconds/3 after one warm-up call;
// and the same X.W^T with bf16 operands and fp32 accumulation (what mixed precision runs),
// with oneDNN's implementation name. REQUIRES: gemm_path_report().selected.ok(), n >= 1.
struct GemmSpeed {
  double forward_gflops = 0.0;
  double backward_gflops = 0.0;
  double bf16_gflops = 0.0;
  std::string bf16_impl;  // e.g. "brg:avx512_core_bf16"; or why there is none
  std::string bf16_blocks;  // how the LM head's bf16 GEMMs are split here ("" for one call)
};
GemmSpeed measure_gemm_speed(int n, double seconds);

// The FMA peak of `threads` threads in GFLOP/s, measured for about `seconds`; 0 without AVX2+FMA.
double measure_fma_peak(int threads, double seconds);

// The widest ISA oneDNN will dispatch ("avx512_core_bf16"; DNNL_MAX_CPU_ISA caps it).
std::string onednn_isa();

// How f16 values widen and narrow: "F16C" or "scalar". REQUIRES: active_isa_status().ok().
const char* f16_conversion_name();

}  // namespace zt

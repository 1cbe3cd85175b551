// GemmPath: which library runs each fp32 GEMM shape class on this machine, decided once
// at start-up from what the CPU can do and what OpenBLAS actually loaded, never from one
// machine's frozen benchmark.
//
// Rule (docs/design/backend.md has the measurements behind it):
//  - OpenBLAS (DYNAMIC_ARCH) picks its kernels by CPU model. On a CPU it does not know it
//    falls back to an old core (Prescott, SSE3) and runs at a fraction of the speed; a
//    user can also force any core with OPENBLAS_CORETYPE. The core is *sound* when its
//    kernels use the CPU's widest vector ISA (an AVX-512 core on an AVX-512 CPU, an AVX2
//    core on an AVX2 CPU).
//  - Sound core: OpenBLAS for the forward pattern X W^T, oneDNN for the backward patterns
//    dY W and dY^T X (each library's better half; the same shapes on every machine, so
//    the choice never depends on timing noise and the arithmetic is reproducible).
//  - Unsound core: oneDNN for every shape, including the per-head attention GEMMs that
//    run inside OpenMP loops; the banner, the metrics header and `zerotrain doctor` say
//    so and give the OPENBLAS_CORETYPE that would restore the default path.
//  - A BLAS that cannot share the kernels' OpenMP threads (OpenBLAS's pthreads or
//    sequential build, core/threads.h) is held at one thread: oneDNN, which runs on the
//    OpenMP threads, then takes every shape, whatever the core.
//  - ZT_GEMM=auto|openblas|onednn overrides (openblas on an unsound core, or on a BLAS held
//    at one thread, is honoured and named as the slow path it is).
// Thread-safety: gemm_path() is computed once (static local) and immutable afterwards.
#pragma once

#include <string>

#include "core/cpu_features.h"
#include "core/status.h"
#include "core/threads.h"

namespace zt {

enum class GemmPolicy { kAuto, kOpenBlas, kOneDnn };

// The library that runs one shape class.
enum class GemmLibrary { kOpenBlas, kOneDnn };

struct GemmPath {
  GemmPolicy policy = GemmPolicy::kAuto;      // from ZT_GEMM
  std::string openblas_version;              // "0.3.21"
  std::string openblas_core;                 // openblas_get_corename(): "Cooperlake", "Prescott", ...
  bool openblas_core_forced = false;          // OPENBLAS_CORETYPE was set
  Isa cpu_isa = Isa::kScalar;                 // detect_isa(): the CPU's widest vector ISA
  Isa openblas_core_isa = Isa::kScalar;       // the ISA the loaded core's kernels use
  std::string suggested_core;                 // OPENBLAS_CORETYPE matching the CPU ("SkylakeX", ...)
  std::string onednn_version;                 // "2.6.3"
  BlasThreading blas = BlasThreading::kOpenMp;   // how OpenBLAS runs its threads (core/threads.h)
  std::string onednn_runtime = "OpenMP";         // oneDNN's CPU runtime: "OpenMP", "sequential", "TBB", ...
  GemmLibrary forward = GemmLibrary::kOpenBlas;   // X W^T (op(B) transposed)
  GemmLibrary backward = GemmLibrary::kOneDnn;    // dY W and dY^T X
  GemmLibrary inner = GemmLibrary::kOpenBlas;     // per-head GEMMs inside an OpenMP loop (single-threaded)

  // The loaded core's kernels use the CPU's widest vector ISA.
  bool openblas_sound() const { return static_cast<int>(openblas_core_isa) >= static_cast<int>(cpu_isa); }
  // True when a GEMM will run on OpenBLAS's unsound core (only with ZT_GEMM=openblas).
  bool uses_slow_core() const;
  // True when a GEMM will run on OpenBLAS held at one thread (only with ZT_GEMM=openblas).
  bool uses_held_blas() const;
  // oneDNN runs a thread pool of its own (TBB, threadpool): beside the OpenMP kernels it
  // oversubscribes the cores.
  bool onednn_own_pool() const { return onednn_runtime != "OpenMP" && onednn_runtime != "sequential"; }
  // One line for banners and metrics headers, e.g.
  // "openblas(Cooperlake) for X.W^T, onednn 2.6.3 for dY.W and dY^T.X".
  std::string describe() const;
  // Empty, or a warning naming the mismatch and the fix.
  std::string warning() const;
};

// The ISA level of an OpenBLAS core name (x86-64 DYNAMIC_ARCH names); unknown names map
// to kScalar (treated as unsound on any vector CPU).
Isa openblas_core_isa(const std::string& core);
// The OpenBLAS core that matches a CPU of this ISA (AVX-512 with BF16: Cooperlake).
std::string openblas_core_for(Isa isa, bool avx512_bf16);

// The path under `policy` for the loaded libraries and this CPU.
GemmPath gemm_path_for(GemmPolicy policy);
// Sets p's three shape classes from its policy, its core's soundness and its BLAS threading.
void route_gemms(GemmPath* p);
// The same with the policy from ZT_GEMM. A value other than auto/openblas/onednn is an
// InvalidArgument naming the allowed values.
StatusOr<GemmPath> select_gemm_path();

// The path every sgemm uses; aborts with select_gemm_path()'s message if ZT_GEMM is
// invalid, so binaries check gemm_path_status() at start-up to exit cleanly instead.
const GemmPath& gemm_path();
Status gemm_path_status();

}  // namespace zt

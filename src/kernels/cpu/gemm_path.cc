// GemmPath: OpenBLAS core soundness and the per-shape-class library choice.
#include "kernels/cpu/gemm_path.h"

#include <cblas.h>
#include <cpuid.h>
#include <dnnl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/check.h"

namespace zt {

namespace {

const char* library_name(GemmLibrary l) { return l == GemmLibrary::kOpenBlas ? "openblas" : "onednn"; }

bool cpu_has_avx512_bf16() {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax & (1u << 5)) != 0;
}

// "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." -> "0.3.21".
std::string openblas_version_of(const char* config) {
  const char* p = std::strchr(config, ' ');
  if (p == nullptr) return config;
  const char* e = std::strchr(p + 1, ' ');
  return e == nullptr ? std::string(p + 1) : std::string(p + 1, e);
}

std::string onednn_runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_OMP: return "OpenMP";
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_TBB: return "TBB";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    default: return "runtime " + std::to_string(runtime);
  }
}

StatusOr<GemmPolicy> policy_from_env() {
  const char* e = std::getenv("ZT_GEMM");
  if (e == nullptr || *e == '\0' || std::strcmp(e, "auto") == 0) return GemmPolicy::kAuto;
  if (std::strcmp(e, "openblas") == 0) return GemmPolicy::kOpenBlas;
  if (std::strcmp(e, "onednn") == 0) return GemmPolicy::kOneDnn;
  return Status::InvalidArgument(std::string("ZT_GEMM=") + e + ": expected auto, openblas or onednn");
}

}  // namespace

Isa openblas_core_isa(const std::string& core) {
  for (const char* c : {"SkylakeX", "Cooperlake", "SapphireRapids"}) {
    if (core == c) return Isa::kAvx512;
  }
  for (const char* c : {"Haswell", "Zen"}) {
    if (core == c) return Isa::kAvx2;
  }
  return Isa::kScalar;  // Prescott, Nehalem, Sandybridge (AVX without FMA), ... : no FMA kernels
}

std::string openblas_core_for(Isa isa, bool avx512_bf16) {
  switch (isa) {
    case Isa::kAvx512: return avx512_bf16 ? "Cooperlake" : "SkylakeX";
    case Isa::kAvx2: return "Haswell";
    case Isa::kScalar: return "Prescott";
  }
  return "Prescott";
}

StatusOr<GemmPath> select_gemm_path() {
  ZT_ASSIGN_OR_RETURN(const GemmPolicy policy, policy_from_env());
  return gemm_path_for(policy);
}

GemmPath gemm_path_for(GemmPolicy policy) {
  GemmPath p;
  p.policy = policy;
  p.openblas_version = openblas_version_of(openblas_get_config());
  p.openblas_core = openblas_get_corename();
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  p.openblas_core_forced = forced != nullptr && *forced != '\0';
  p.cpu_isa = detect_isa();
  p.openblas_core_isa = openblas_core_isa(p.openblas_core);
  p.suggested_core = openblas_core_for(p.cpu_isa, cpu_has_avx512_bf16());
  const dnnl_version_t* v = dnnl_version();
  p.onednn_version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  p.onednn_runtime = onednn_runtime_name(v->cpu_runtime);
  p.blas = blas_threading();
  route_gemms(&p);
  return p;
}

void route_gemms(GemmPath* p) {
  switch (p->policy) {
    case GemmPolicy::kOpenBlas:
      p->forward = p->backward = p->inner = GemmLibrary::kOpenBlas;
      break;
    case GemmPolicy::kOneDnn:
      p->forward = p->backward = p->inner = GemmLibrary::kOneDnn;
      break;
    case GemmPolicy::kAuto: {
      const bool blas_ok = p->openblas_sound() && p->blas == BlasThreading::kOpenMp;
      p->forward = p->inner = blas_ok ? GemmLibrary::kOpenBlas : GemmLibrary::kOneDnn;
      p->backward = GemmLibrary::kOneDnn;
      break;
    }
  }
}

bool GemmPath::uses_held_blas() const {
  if (blas == BlasThreading::kOpenMp) return false;
  return forward == GemmLibrary::kOpenBlas || backward == GemmLibrary::kOpenBlas || inner == GemmLibrary::kOpenBlas;
}

bool GemmPath::uses_slow_core() const {
  if (openblas_sound()) return false;
  return forward == GemmLibrary::kOpenBlas || backward == GemmLibrary::kOpenBlas || inner == GemmLibrary::kOpenBlas;
}

std::string GemmPath::describe() const {
  std::string s = std::string(library_name(forward)) + " for X.W^T, " + library_name(backward) + " for dY.W and dY^T.X, " +
                  library_name(inner) + " for per-head GEMMs; OpenBLAS " + openblas_version + " core " + openblas_core +
                  (openblas_core_forced ? " (OPENBLAS_CORETYPE)" : "") + (openblas_sound() ? "" : " [older than the CPU]") +
                  ", " + blas_threading_name(blas) + (blas == BlasThreading::kOpenMp ? "" : " (held at 1 thread)") +
                  ", oneDNN " + onednn_version + " " + onednn_runtime;
  if (forward == GemmLibrary::kOneDnn) s += " (X.W^T as its matmul primitive, gemm.cc)";
  if (policy != GemmPolicy::kAuto) s += policy == GemmPolicy::kOpenBlas ? " (ZT_GEMM=openblas)" : " (ZT_GEMM=onednn)";
  return s;
}

std::string GemmPath::warning() const {
  std::string w;
  if (blas != BlasThreading::kOpenMp) {
    w = std::string("OpenBLAS is its ") + blas_threading_name(blas) + " build, whose threads cannot be the kernels' "
        "OpenMP threads: it is held at 1 thread so that it never runs beside them, and ";
    w += uses_held_blas() ? "GEMMs run on that one thread because ZT_GEMM=openblas; "
                          : "zerotrain runs every GEMM through oneDNN instead; ";
    w += "for OpenBLAS's GEMMs on every thread install its OpenMP build (libopenblas0-openmp)";
  }
  if (openblas_sound()) return w;
  const char* core_isa = openblas_core_isa == Isa::kScalar ? "pre-AVX2, no FMA" : isa_name(openblas_core_isa);
  const bool said = !w.empty();  // the routing is already told
  if (said) w += "; ";
  w += "OpenBLAS " + openblas_version + " loaded its " + openblas_core + " kernels (" + core_isa +
       ") on a CPU with " + isa_name(cpu_isa) + "; ";
  if (uses_slow_core()) {
    w += "GEMMs run on that slow core because ZT_GEMM=openblas; ";
  } else if (!said) {
    w += "zerotrain runs every GEMM through oneDNN instead; ";
  }
  w += "for OpenBLAS's fast kernels set OPENBLAS_CORETYPE=" + suggested_core;
  return w;
}

Status gemm_path_status() { return select_gemm_path().status(); }

const GemmPath& gemm_path() {
  static const GemmPath path = [] {
    StatusOr<GemmPath> p = select_gemm_path();
    ZT_CHECK(p.ok(), "%s", p.status().to_string().c_str());
    return std::move(p).value();
  }();
  return path;
}

}  // namespace zt

// cpuid/xgetbv probing for AVX2+FMA and AVX-512 (F, DQ, BW, VL).
#include "core/cpu_features.h"

#include <cpuid.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/check.h"

namespace zt {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

static unsigned long long read_xcr0() {
  unsigned int eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

Isa detect_isa() {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return Isa::kScalar;
  const bool osxsave = ecx & (1u << 27);
  const bool fma = ecx & (1u << 12);
  if (!osxsave) return Isa::kScalar;
  const unsigned long long xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return Isa::kScalar;
  const bool avx2 = ebx & (1u << 5);
  const bool avx512f = ebx & (1u << 16), avx512dq = ebx & (1u << 17);
  const bool avx512bw = ebx & (1u << 30), avx512vl = ebx & (1u << 31);
  if (zmm_state && avx512f && avx512dq && avx512bw && avx512vl && fma) return Isa::kAvx512;
  if (ymm_state && avx2 && fma) return Isa::kAvx2;
  return Isa::kScalar;
}

static StatusOr<Isa> compute_active_isa() {
  const Isa best = detect_isa();
  const char* env = std::getenv("ZT_ISA");
  if (env == nullptr || *env == '\0') return best;
  Isa wanted;
  if (std::strcmp(env, "scalar") == 0) {
    wanted = Isa::kScalar;
  } else if (std::strcmp(env, "avx2") == 0) {
    wanted = Isa::kAvx2;
  } else if (std::strcmp(env, "avx512") == 0) {
    wanted = Isa::kAvx512;
  } else {
    return Status::InvalidArgument(std::string("ZT_ISA=") + env + ": expected one of scalar, avx2, avx512");
  }
  if (static_cast<int>(wanted) > static_cast<int>(best)) {
    return Status::InvalidArgument(std::string("ZT_ISA=") + env + " is not supported by this CPU (best: " +
                                   isa_name(best) + ")");
  }
  return wanted;
}

Status active_isa_status() { return compute_active_isa().status(); }

Isa active_isa() {
  static const Isa isa = [] {
    StatusOr<Isa> r = compute_active_isa();
    ZT_CHECK(r.ok(), "%s", r.status().to_string().c_str());
    return r.value();
  }();
  return isa;
}

int64_t l2_cache_bytes() {
  constexpr int64_t kLow = int64_t{256} << 10, kHigh = int64_t{4} << 20, kUnknown = int64_t{1} << 20;
  const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (reported <= 0) return kUnknown;
  return reported < kLow ? kLow : reported > kHigh ? kHigh : reported;
}

}  // namespace zt

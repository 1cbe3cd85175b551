// CpuInfo: what the x86-64 CPU under this process reports about itself (cpuid), what the
// OS has enabled of it (xgetbv's XCR0) and what Linux permits (AMX tile data), for
// `zerotrain doctor` and for start-up banners. Kernel dispatch does not use this struct:
// it uses detect_isa()/active_isa() (core/cpu_features.h), whose answer this struct
// must never contradict (detect_isa() == kAvx512 implies avx512f && os_avx512 && fma).
// Invariants: a feature bit is the CPU's claim only; os_* says whether the OS saves the
// matching register state; amx_permitted is true only if amx_tile is reported and Linux
// granted this process XTILEDATA (arch_prctl ARCH_REQ_XCOMP_PERM). x86-64 only, like
// core/cpu_features.cc.
// Thread-safety: cpu_info() may be called from any thread; it probes afresh each call.
#pragma once

#include <string>

namespace zt {

struct CpuInfo {
  std::string vendor;      // cpuid leaf 0: "GenuineIntel", "AuthenticAMD", ...
  std::string model_name;  // brand string, cpuid 0x80000002..4, spaces trimmed; may be empty
  int family = 0;          // with the extended family folded in (AMD Zen 3: 25)
  int model = 0;           // with the extended model folded in (Sapphire Rapids: 143)
  int stepping = 0;

  // The CPU's claims (cpuid leaves 1 and 7).
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512_bf16 = false, avx512_fp16 = false, avx512_vnni = false;
  bool amx_tile = false, amx_bf16 = false, amx_int8 = false;

  // What the OS enabled in XCR0.
  bool os_avx512 = false;  // opmask, upper ZMM and ZMM16-31 state (bits 5, 6, 7) plus SSE/AVX
  bool os_amx = false;     // XTILECFG and XTILEDATA (bits 17, 18)
  // Linux granted this process AMX tile data (arch_prctl(ARCH_REQ_XCOMP_PERM, 18)).
  bool amx_permitted = false;

  int logical_cpus = 1;  // CPUs this process may run on (its affinity mask), >= 1
};

// Probes the CPU, the OS and the kernel; asks Linux for AMX permission only when the
// CPU reports AMX tiles (a granted permission lasts for the process, which is harmless).
CpuInfo cpu_info();

}  // namespace zt

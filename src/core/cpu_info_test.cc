// cpu_info() against the two other witnesses on this machine: detect_isa() (the kernel
// dispatcher's own cpuid reading) and Linux's /proc/cpuinfo (the kernel's). For
// detect_isa() only implications that must hold are tested (it also needs DQ, BW, VL).
// Linux reports fma, avx2 and avx512f (the latter only with ZMM state enabled) exactly
// as cpuid and XCR0 say unless booted with clearcpuid=; a newer flag may be missing
// from a kernel too old to know it, so for those /proc implies cpuid, not the reverse.
#include "core/cpu_info.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "core/cpu_features.h"

namespace zt {
namespace {

struct ProcCpu {
  bool found = false;
  std::string model_name;
  std::set<std::string> flags;
};

// The first processor's "model name" and "flags" lines of /proc/cpuinfo.
ProcCpu read_proc_cpuinfo() {
  ProcCpu p;
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && p.model_name.empty()) p.model_name = value;
    if (key == "flags" && !p.found) {
      p.found = true;
      std::istringstream words(value);
      for (std::string w; words >> w;) p.flags.insert(w);
    }
  }
  return p;
}

TEST(CpuInfo, AgreesWithDetectIsa) {
  const CpuInfo c = cpu_info();
  const Isa isa = detect_isa();
  if (isa >= Isa::kAvx2) {
    EXPECT_TRUE(c.avx2);
    EXPECT_TRUE(c.fma);
  }
  if (isa == Isa::kAvx512) {
    EXPECT_TRUE(c.avx512f);
    EXPECT_TRUE(c.os_avx512);
  }
  // A CPU with AVX-512 F and FMA whose OS saves ZMM state is at least AVX2 for the dispatcher.
  if (c.avx512f && c.os_avx512 && c.fma && c.avx2) { EXPECT_GE(isa, Isa::kAvx2); }
}

TEST(CpuInfo, IdentityAndCounts) {
  const CpuInfo c = cpu_info();
  EXPECT_FALSE(c.vendor.empty());
  ASSERT_FALSE(c.model_name.empty());
  EXPECT_NE(c.model_name.front(), ' ');
  EXPECT_NE(c.model_name.back(), ' ');
  EXPECT_GT(c.family, 0);
  EXPECT_GE(c.logical_cpus, 1);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0) { EXPECT_LE(c.logical_cpus, online); }
}

TEST(CpuInfo, AmxPermissionImpliesSupport) {
  const CpuInfo c = cpu_info();
  if (c.amx_permitted) {
    EXPECT_TRUE(c.amx_tile);
    EXPECT_TRUE(c.os_amx);
  }
  if (!c.amx_tile) { EXPECT_FALSE(c.amx_permitted); }
}

TEST(CpuInfo, MatchesProcCpuinfo) {
  const ProcCpu p = read_proc_cpuinfo();
  if (!p.found) GTEST_SKIP() << "no /proc/cpuinfo flags line";
  const CpuInfo c = cpu_info();
  // Flags every x86-64 Linux since 3.x knows: equal.
  EXPECT_EQ(c.fma, p.flags.count("fma") == 1);
  EXPECT_EQ(c.avx2, p.flags.count("avx2") == 1);
  EXPECT_EQ(c.avx512f && c.os_avx512, p.flags.count("avx512f") == 1);
  // Newer flags: what Linux reports, cpuid reports.
  for (const auto& [flag, ours] : {std::pair<const char*, bool>{"avx512_bf16", c.avx512_bf16},
                                   {"avx512_fp16", c.avx512_fp16},
                                   {"avx512_vnni", c.avx512_vnni},
                                   {"amx_tile", c.amx_tile},
                                   {"amx_bf16", c.amx_bf16},
                                   {"amx_int8", c.amx_int8}}) {
    if (p.flags.count(flag) == 1) {
      EXPECT_TRUE(ours) << flag << " is in /proc/cpuinfo but not in cpuid";
    }
  }
  // Linux usually copies the brand string and trims it the same way, but a hypervisor can show
  // the kernel another name than cpuid gives the process (seen on a VM: cpuid "Oxide Virtual
  // Turin-like Processor", /proc/cpuinfo "AMD EPYC"). So cpuid's name must be there, trimmed
  // and printable; a different kernel name is printed, not failed.
  ASSERT_FALSE(c.model_name.empty());
  EXPECT_NE(c.model_name.front(), ' ');
  EXPECT_NE(c.model_name.back(), ' ');
  for (char ch : c.model_name) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << "in the brand string \"" << c.model_name << "\"";
  if (!p.model_name.empty() && p.model_name != "unknown" && p.model_name != c.model_name) {
    std::printf("  cpuid's brand string \"%s\", /proc/cpuinfo's model name \"%s\"\n", c.model_name.c_str(),
                p.model_name.c_str());
  }
}

}  // namespace
}  // namespace zt

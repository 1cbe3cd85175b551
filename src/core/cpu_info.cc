// cpu_info(): cpuid leaves 0, 1, 7.0, 7.1 and 0x80000002..4, xgetbv(0), sched_getaffinity
// and, on AMX CPUs, Linux's arch_prctl(ARCH_REQ_XCOMP_PERM). Bit positions are from the
// Intel SDM vol. 2A (CPUID) and vol. 1 ch. 13 (XCR0); each is named where it is read.
#include "core/cpu_info.h"

#include <cpuid.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace zt {

namespace {

constexpr unsigned kArchReqXcompPerm = 0x1023;  // arch_prctl code, Linux >= 5.16
constexpr unsigned long kXfeatureXtiledata = 18;

bool bit(unsigned reg, int b) { return (reg >> b) & 1u; }

unsigned long long read_xcr0() {
  unsigned int eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Leaf 0: vendor (EBX, EDX, ECX); leaf 1 EAX: stepping, model, family with extensions.
void read_identity(CpuInfo* c) {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  c->vendor = vendor;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return;
  const int base_family = (eax >> 8) & 0xf;
  const int base_model = (eax >> 4) & 0xf;
  c->stepping = eax & 0xf;
  c->family = base_family == 0xf ? base_family + static_cast<int>((eax >> 20) & 0xff) : base_family;
  c->model = (base_family == 0x6 || base_family == 0xf) ? base_model + static_cast<int>(((eax >> 16) & 0xf) << 4)
                                                         : base_model;
}

// Brand string: 48 bytes from leaves 0x80000002..0x80000004 (EAX, EBX, ECX, EDX each).
void read_brand(CpuInfo* c) {
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000004u) return;
  char brand[49] = {};
  for (unsigned leaf = 0; leaf < 3; ++leaf) {
    unsigned int regs[4];
    __get_cpuid(0x80000002u + leaf, &regs[0], &regs[1], &regs[2], &regs[3]);
    std::memcpy(brand + 16 * leaf, regs, 16);
  }
  c->model_name = trimmed(brand);
}

// Leaf 1 ECX: FMA (12), OSXSAVE (27). Leaf 7.0 EBX: AVX2 (5), AVX512F (16); ECX:
// AVX512_VNNI (11); EDX: AMX_BF16 (22), AVX512_FP16 (23), AMX_TILE (24), AMX_INT8 (25).
// Leaf 7.1 EAX: AVX512_BF16 (5). XCR0: SSE|AVX (1, 2), opmask|ZMM_Hi256|Hi16_ZMM (5, 6, 7),
// XTILECFG|XTILEDATA (17, 18).
void read_features(CpuInfo* c) {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return;
  c->fma = bit(ecx, 12);
  const bool osxsave = bit(ecx, 27);
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const unsigned max_subleaf = eax;
    c->avx2 = bit(ebx, 5);
    c->avx512f = bit(ebx, 16);
    c->avx512_vnni = bit(ecx, 11);
    c->amx_bf16 = bit(edx, 22);
    c->avx512_fp16 = bit(edx, 23);
    c->amx_tile = bit(edx, 24);
    c->amx_int8 = bit(edx, 25);
    if (max_subleaf >= 1) {
      __cpuid_count(7, 1, eax, ebx, ecx, edx);
      c->avx512_bf16 = bit(eax, 5);
    }
  }
  if (osxsave) {
    const unsigned long long xcr0 = read_xcr0();
    c->os_avx512 = (xcr0 & 0xe6) == 0xe6;
    c->os_amx = ((xcr0 >> 17) & 0x3) == 0x3;
  }
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

}  // namespace

CpuInfo cpu_info() {
  CpuInfo c;
  read_identity(&c);
  read_brand(&c);
  read_features(&c);
  if (c.amx_tile) {
    c.amx_permitted = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }
  c.logical_cpus = affinity_cpus();
  return c;
}

}  // namespace zt

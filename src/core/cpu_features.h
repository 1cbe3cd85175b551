// Run-time ISA detection. Kernels are compiled for several ISAs (scalar, AVX2+FMA,
// AVX-512) and the best one the CPU and OS support is chosen once at start-up;
// ZT_ISA=scalar|avx2|avx512 in the environment forces a lower one (tests, benchmarks).
// Thread-safety: all functions are safe to call from any thread.
#pragma once

#include <cstdint>

#include "core/status.h"

namespace zt {

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* isa_name(Isa isa);

// The best ISA this CPU and OS support (cpuid + xgetbv), ignoring ZT_ISA.
Isa detect_isa();

// The ISA kernels use: detect_isa(), lowered by ZT_ISA if set. An unknown or
// unsupported ZT_ISA value is an InvalidArgument from active_isa_status(), which every
// binary checks at start-up (cli/startup.h); active_isa() aborts on it (an invariant by
// then).
Isa active_isa();
Status active_isa_status();

// The L2 cache of one core in bytes, as the C library reports it (sysconf), clamped to
// [256 KiB, 4 MiB]; 1 MiB where it reports none. Cache-sized chunks are cut from it.
int64_t l2_cache_bytes();

}  // namespace zt

// The compute peak a run's MFU divides by, per rank: a device backend's datasheet rate
// (Backend::peak_flops), else this CPU's measured fp32 FMA peak (kernels/cpu/fma_peak.h)
// times what the compute dtype gains per FMA lane: 2 for bf16 on AVX-512 BF16 (vdpbf16ps
// does two products per fp32 lane), 0 (unknown: no MFU shown) on AMX, whose tile rate is not
// measured, and 1 for fp32, f16 (fp32 GEMMs) and the bf16 fallback. Also the backend's
// start-up warning (the CPU's: OpenBLAS running cores older than the CPU).
// Thread-safety: measures with `threads` OpenMP threads; call from one thread.
#pragma once

#include <string>

#include "backend/backend.h"

namespace zt {

// FLOP/s of one rank; `seconds` bounds the CPU measurement.
double rank_peak_flops(const Backend& backend, int threads, double seconds);

// "" or one line for the banner.
std::string backend_warning(const Backend& backend);

}  // namespace zt

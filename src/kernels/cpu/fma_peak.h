// Measures this machine's fp32 FMA throughput (GFLOP/s) with the widest ISA available:
// independent FMA chains, enough to cover latency, on `threads` OpenMP threads. The
// denominator of MFU in the progress line and of "fraction of peak" in benchmarks.
#pragma once

namespace zt {

// Runs for roughly `seconds` (best of five repetitions); 0 on a scalar-only CPU.
double measure_fma_peak_gflops(int threads, double seconds);

}  // namespace zt

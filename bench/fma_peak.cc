// Prints this machine's fp32 FMA peak as one JSON line (see kernels/cpu/fma_peak.h).
//   fma_peak [--threads P]
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/cpu_features.h"
#include "kernels/cpu/fma_peak.h"

int main(int argc, char** argv) {
  int threads = 2;
  if (argc == 3 && std::strcmp(argv[1], "--threads") == 0) threads = std::atoi(argv[2]);
  const double gflops = zt::measure_fma_peak_gflops(threads, 2.0);
  std::printf("{\"bench\":\"fma_peak\",\"isa\":\"%s\",\"threads\":%d,\"gflops\":%.1f}\n",
              zt::isa_name(zt::detect_isa()), threads, gflops);
  return 0;
}

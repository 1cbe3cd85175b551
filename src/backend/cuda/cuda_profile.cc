// The table profiler (cuda_profile.h): an event pair per call, summed at exit.
#include "backend/cuda/cuda_profile.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/cuda/cuda_context.h"
#include "backend/profile_request.h"
#include "backend/table_wrap.h"

namespace zt::cuda {

namespace {

struct Record {
  int entry;
  cudaEvent_t start, stop;
};

std::vector<Record>& records() {
  static std::vector<Record> r;
  return r;
}

void report() {
  if (records().empty()) return;
  check_cuda(cudaDeviceSynchronize(), "profile report");
  const int n = static_cast<int>(TableEntry::kCount);
  std::vector<double> ms(n, 0.0);
  std::vector<long> calls(n, 0);
  double total = 0.0;
  for (const Record& r : records()) {
    float t = 0.0f;
    cudaEventElapsedTime(&t, r.start, r.stop);
    ms[r.entry] += t;
    ++calls[r.entry];
    total += t;
  }
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return ms[a] > ms[b]; });
  std::fprintf(stderr, "CUDA table profile (ZT_CUDA_PROFILE): %.1f ms of timed work in %zu calls\n", total,
               records().size());
  for (int i : order) {
    if (calls[i] == 0) continue;
    std::fprintf(stderr, "  %-26s %7ld calls %10.2f ms %5.1f%%\n", table_entry_name(i), calls[i], ms[i],
                 100.0 * ms[i] / total);
  }
}

}  // namespace

bool profiling_requested() {
  static const bool on = profile_requested_by("ZT_CUDA_PROFILE", report);
  return on;
}

ProfileScope::ProfileScope(int entry) : entry_(entry), start_(nullptr) {
  cudaEvent_t e;
  check_cuda(cudaEventCreate(&e), "profile event");
  check_cuda(cudaEventRecord(e, CudaContext::get().stream()), "profile event");
  start_ = e;
}

ProfileScope::~ProfileScope() {
  cudaEvent_t stop;
  check_cuda(cudaEventCreate(&stop), "profile event");
  check_cuda(cudaEventRecord(stop, CudaContext::get().stream()), "profile event");
  records().push_back({entry_, static_cast<cudaEvent_t>(start_), stop});
}

}  // namespace zt::cuda

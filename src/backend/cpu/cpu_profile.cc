// The CPU table profiler (cpu_profile.h): steady-clock time per outermost call, summed at exit.
#include "backend/cpu/cpu_profile.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/profile_request.h"
#include "backend/table_wrap.h"

namespace zt {

namespace {

constexpr int kEntries = static_cast<int>(TableEntry::kCount);
std::atomic<long long> g_ns[kEntries];
std::atomic<long long> g_calls[kEntries];
thread_local int t_depth = 0;

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Entries whose work is mostly GEMMs.
bool runs_gemms(const char* name) {
  for (const char* p : {"linear_", "attention_", "flash_attention_", "vocab_xent_partials"}) {
    if (std::strncmp(name, p, std::strlen(p)) == 0) return true;
  }
  return std::strcmp(name, "gemm") == 0;
}

void report() {
  double total = 0.0, gemm = 0.0;
  long long calls = 0;
  std::vector<int> order;
  for (int i = 0; i < kEntries; ++i) {
    if (g_calls[i].load() == 0) continue;
    order.push_back(i);
    const double ms = static_cast<double>(g_ns[i].load()) / 1e6;
    total += ms;
    if (runs_gemms(table_entry_name(i))) gemm += ms;
    calls += g_calls[i].load();
  }
  if (order.empty()) return;
  std::sort(order.begin(), order.end(), [](int a, int b) { return g_ns[a].load() > g_ns[b].load(); });
  std::fprintf(stderr, "CPU table profile (ZT_CPU_PROFILE): %.1f ms of timed work in %lld calls; entries with "
               "GEMMs %.1f ms, the rest %.1f ms\n", total, calls, gemm, total - gemm);
  for (int i : order) {
    const double ms = static_cast<double>(g_ns[i].load()) / 1e6;
    std::fprintf(stderr, "  %-26s %7lld calls %10.2f ms %5.1f%%%s\n", table_entry_name(i), g_calls[i].load(), ms,
                 100.0 * ms / total, runs_gemms(table_entry_name(i)) ? "  (GEMMs)" : "");
  }
}

}  // namespace

bool cpu_profiling_requested() {
  static const bool on = profile_requested_by("ZT_CPU_PROFILE", report);
  return on;
}

void cpu_profile_reset() {
  for (int i = 0; i < kEntries; ++i) {
    g_ns[i] = 0;
    g_calls[i] = 0;
  }
}

CpuProfileScope::CpuProfileScope(int entry) : entry_(entry), start_ns_(t_depth++ == 0 ? now_ns() : -1) {}

CpuProfileScope::~CpuProfileScope() {
  --t_depth;
  if (start_ns_ < 0) return;
  g_ns[entry_] += now_ns() - start_ns_;
  ++g_calls[entry_];
}

}  // namespace zt

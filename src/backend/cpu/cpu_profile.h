// ZT_CPU_PROFILE=1: where a CPU run's time goes, per kernel-table entry (issue 32's
// per-operation profile). Every outermost table call of the CPU backend is timed on the
// steady clock (a call an entry makes into the table is part of its caller's time); at exit
// the totals per entry go to stderr, largest first: calls, milliseconds, share of the timed
// work, and the split between the entries that run GEMMs (linear, attention, gemm, the
// vocabulary's partial logits) and the rest. The time between entries (the engine's own
// loops, copies and communication) is not in the table.
// Thread-safety: the totals are atomic; each thread counts its own nesting.
#pragma once

namespace zt {

bool cpu_profiling_requested();

// Forgets the totals so far (a bench's warm-up steps); call between steps, not inside one.
void cpu_profile_reset();

// The hook of table_wrap.h: times one call of entry `entry`.
class CpuProfileScope {
 public:
  explicit CpuProfileScope(int entry);
  ~CpuProfileScope();
  CpuProfileScope(const CpuProfileScope&) = delete;
  CpuProfileScope& operator=(const CpuProfileScope&) = delete;

 private:
  int entry_;
  long long start_ns_;  // -1: a nested call, not timed
};

}  // namespace zt

// The kernel timer (op_timer.h) on a backend whose memory host code cannot touch (the
// guarded backend, as a GPU's): every kernel call of a small model's micro-batch, and
// AdamW, is timed in bf16 (and fp32's GEMMs and AdamW) through the backend's own
// allocations and copies (a host access to its arenas would fault), with positive medians
// and no workspace (the process's resident memory measures none of a device's).
#include "planner/op_timer.h"

#include <gtest/gtest.h>

#include "backend/cpu/guarded_backend.h"

namespace zt {
namespace {

std::vector<OpCall> small_calls() {
  GptConfig m;
  m.n_layer = 2;
  m.n_head = 4;
  m.n_embd = 64;
  m.vocab_size = 257;
  m.n_positions = 32;
  std::vector<OpCall> calls = calibration_calls(m, 32, {2}, {1});
  OpCall adam;
  adam.kind = OpKind::kAdamW;
  adam.dims[0] = 4096;
  calls.push_back(adam);
  return calls;
}

TEST(OpTimer, TimesEveryCallInTheBackendsOwnMemory) {
  OpTimerOptions o;
  o.min_seconds = 0;
  o.min_reps = 1;
  o.device_evict_bytes = size_t{1} << 20;  // a token flush: the guarded backend has no device cache
  for (DType dt : {DType::kF32, DType::kBF16}) {
    const Backend& b = guarded_cpu_backend(dt);
    ASSERT_FALSE(b.host());
    for (const OpCall& c : small_calls()) {
      if (dt == DType::kF32 && c.kind != OpKind::kAdamW && !c.is_gemm()) continue;  // fp32: the f32 table's GEMMs
      auto t = measure_op(b, c, o);
      ASSERT_TRUE(t.ok()) << c.key() << ": " << t.status().to_string();
      EXPECT_GT(t->seconds, 0.0) << c.key();
      EXPECT_EQ(t->workspace_bytes, 0.0) << c.key() << ": a device's memory is not the process's";
    }
  }
}

}  // namespace
}  // namespace zt

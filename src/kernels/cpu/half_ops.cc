// The two mixed-precision tables, assembled from the per-file fillers, and the per-thread
// scratch they share (see half_ops.h for the numerics and the memory bound).
#include "kernels/cpu/half_ops.h"

#include <memory>
#include <vector>

#include "core/check.h"
#include "core/cpu_features.h"
#include "core/huge_pages.h"
#include "kernels/cpu/half_ops_impl.h"

namespace zt {

int64_t half_cache_floats() {
  static const int64_t floats = l2_cache_bytes() / static_cast<int64_t>(sizeof(float));
  return floats;
}

float* half_scratch(int slot, size_t n) {
  thread_local std::vector<float> slots[kHalfScratchSlots];
  ZT_CHECK(slot >= 0 && slot < kHalfScratchSlots, "half_scratch slot %d out of range", slot);
  std::vector<float>& s = slots[slot];
  if (s.size() < n) s.resize(n);
  return s.data();
}

float* half_weight_scratch(size_t n) {
  thread_local std::unique_ptr<float[]> buffer;
  thread_local size_t size = 0;
  if (size < n) {
    buffer.reset();
    buffer.reset(new float[n]);  // uninitialized: advised before anything touches it
    advise_huge_pages(buffer.get(), n * sizeof(float));
    size = n;
  }
  return buffer.get();
}

namespace {

ActivationOps<half_t> make_half_ops(DType compute) {
  ActivationOps<half_t> ops;
  ops.compute = compute;
  fill_half_elementwise_ops(&ops);
  fill_half_sequence_ops(&ops);
  fill_half_linear_ops(&ops);
  fill_half_tp_ops(&ops);
  fill_half_llama_ops(&ops);
  return ops;
}

}  // namespace

const ActivationOps<half_t>& cpu_half_ops(DType compute) {
  ZT_CHECK(compute == DType::kBF16 || compute == DType::kF16,
           "cpu_half_ops: compute dtype %s has no 16-bit table (use the fp32 ActivationOps<float>)",
           dtype_name(compute));
  static const ActivationOps<half_t> bf16 = make_half_ops(DType::kBF16);
  static const ActivationOps<half_t> f16 = make_half_ops(DType::kF16);
  return compute == DType::kBF16 ? bf16 : f16;
}

}  // namespace zt

// GradWire: gradient buckets in 16 bits on the wire (DeepSpeed's communication_data_type
// "bf16" / "fp16"). Gradients accumulate in fp32 within a rank; a bucket about to be reduced
// is rounded once into a pooled 16-bit buffer (nearest, ties to even), the collective sums the
// 16-bit values by comm/half_sum.h's rule (each addition in fp32, rounded to 16 bits), and the
// rank's reduced values are widened back into fp32 (exactly). Error of one reduced element
// over n ranks, against the fp32 sum of the fp32 gradients g_i: the input rounding adds
// u sum |g_i|, the n - 1 additions (n - 1) u sum |g_i| (half_sum.h), so at most
// n u sum |g_i|, u the unit roundoff 2^-8 (bf16) or 2^-11 (f16), before f16 overflow
// (|sum| >= 65520 becomes inf; the fp16 loss scaler then skips the step).
// Buffers are pooled per bucket size: the caller bounds how many are in use.
// Thread-safety: used by the training thread only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/backend.h"
#include "comm/process_group.h"
#include "parallel/data/bucket_pool.h"

namespace zt {

class GradWire {
 public:
  GradWire(const Backend& backend, CommDType dtype) : backend_(backend), dtype_(dtype) {}
  bool active() const { return dtype_ == CommDType::kBF16 || dtype_ == CommDType::kF16; }
  CommDType dtype() const { return dtype_; }

  // The 16-bit buffers, and the element type to allocate them as.
  BucketPool<uint16_t>& pool() { return pool_; }
  const BucketPool<uint16_t>& pool() const { return pool_; }
  DType storage() const { return dtype_ == CommDType::kBF16 ? DType::kBF16 : DType::kF16; }

  // dst (16-bit) = src rounded; dst (fp32) = src widened. Backend memory, backend kernels.
  void narrow(uint16_t* dst, const float* src, size_t n) const;
  void widen(float* dst, const uint16_t* src, size_t n) const;

 private:
  const Backend& backend_;
  CommDType dtype_;
  BucketPool<uint16_t> pool_;
};

}  // namespace zt

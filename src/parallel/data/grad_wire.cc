// GradWire's casts through the backend's kernel table (grad_wire.h).
#include "parallel/data/grad_wire.h"

namespace zt {

void GradWire::narrow(uint16_t* dst, const float* src, size_t n) const {
  const KernelOps& k = backend_.ops();
  if (dtype_ == CommDType::kBF16) {
    k.cast_f32_to_bf16(reinterpret_cast<bf16_t*>(dst), src, static_cast<int64_t>(n));
  } else {
    k.cast_f32_to_f16(reinterpret_cast<f16_t*>(dst), src, static_cast<int64_t>(n));
  }
}

void GradWire::widen(float* dst, const uint16_t* src, size_t n) const {
  const KernelOps& k = backend_.ops();
  if (dtype_ == CommDType::kBF16) {
    k.cast_bf16_to_f32(dst, reinterpret_cast<const bf16_t*>(src), static_cast<int64_t>(n));
  } else {
    k.cast_f16_to_f32(dst, reinterpret_cast<const f16_t*>(src), static_cast<int64_t>(n));
  }
}

}  // namespace zt

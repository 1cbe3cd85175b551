// DType: the element types an arena or a kernel table can hold. f32 is what every
// backend computes in today; bf16 and f16 are the mixed-precision compute types the
// backend seam is shaped for (a table per (device, compute dtype)).
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zt {

enum class DType { kF32, kBF16, kF16 };

inline size_t dtype_size(DType t) { return t == DType::kF32 ? 4 : 2; }

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
  }
  return "?";
}

// DeepSpeed's names for the training precision: "fp32", "bf16", "fp16".
inline const char* precision_name(DType t) {
  switch (t) {
    case DType::kF32: return "fp32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "fp16";
  }
  return "?";
}

// The inverse of precision_name for a name already checked against {"fp32", "bf16", "fp16"}.
inline DType dtype_from_precision(std::string_view name) {
  return name == "bf16" ? DType::kBF16 : name == "fp16" ? DType::kF16 : DType::kF32;
}

// Storage of one bf16 element (the high half of an IEEE float).
using bf16_t = uint16_t;
// Storage of one IEEE binary16 element.
using f16_t = uint16_t;
// 16-bit activation storage of the mixed-precision tables (ActivationOps<half_t>): bf16 or
// f16 bits, which the table's `compute` dtype names.
using half_t = uint16_t;

}  // namespace zt

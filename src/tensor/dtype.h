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

// The 16-bit element types, distinct so that bf16 data cannot reach an f16 function (or
// either one a uint16_t token array) without a named conversion: each holds the bit
// pattern in `bits`, and arrays of them are arrays of uint16_t in memory.
struct bf16_t {  // bfloat16: the high half of an IEEE float
  uint16_t bits;
};
struct f16_t {  // IEEE binary16
  uint16_t bits;
};
// 16-bit activation storage of the mixed-precision tables (ActivationOps<half_t>): bf16 or
// f16 bits, which the table's `compute` dtype names. A kernel that needs the format views
// the storage as bf16_t or f16_t through as_format<D>(), where its D is known.
struct half_t {
  uint16_t bits;
};
static_assert(sizeof(bf16_t) == 2 && sizeof(f16_t) == 2 && sizeof(half_t) == 2, "16-bit element types are 2 bytes");

// The element type of a 16-bit DType.
template <DType D>
struct HalfFormat;
template <>
struct HalfFormat<DType::kBF16> {
  using type = bf16_t;
};
template <>
struct HalfFormat<DType::kF16> {
  using type = f16_t;
};

// Table storage viewed as the format D names (same bytes, same layout).
template <DType D>
typename HalfFormat<D>::type* as_format(half_t* p) {
  return reinterpret_cast<typename HalfFormat<D>::type*>(p);
}
template <DType D>
const typename HalfFormat<D>::type* as_format(const half_t* p) {
  return reinterpret_cast<const typename HalfFormat<D>::type*>(p);
}

// The bit patterns of 16-bit elements, for code that works on bits (conversions, copies),
// and a format's array as table storage.
template <typename H>
uint16_t* bits_of(H* p) {
  static_assert(sizeof(H) == 2, "a 16-bit element type");
  return reinterpret_cast<uint16_t*>(p);
}
template <typename H>
const uint16_t* bits_of(const H* p) {
  static_assert(sizeof(H) == 2, "a 16-bit element type");
  return reinterpret_cast<const uint16_t*>(p);
}
inline half_t* as_storage(bf16_t* p) { return reinterpret_cast<half_t*>(p); }
inline const half_t* as_storage(const bf16_t* p) { return reinterpret_cast<const half_t*>(p); }
inline half_t* as_storage(f16_t* p) { return reinterpret_cast<half_t*>(p); }
inline const half_t* as_storage(const f16_t* p) { return reinterpret_cast<const half_t*>(p); }

}  // namespace zt

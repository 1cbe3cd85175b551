// Arena: one aligned, zero-initialised allocation made by a Backend (parameters,
// gradients, optimizer state, activations, communication buckets), freed by the same
// backend. Move-only. It knows its element type; f32 arenas are read as float* through
// data(), other types through as<T>(). A device backend's arenas hold device memory:
// code outside kernels never dereferences an arena of a backend that is not host().
// Thread-safety: like a std::unique_ptr.
#pragma once

#include <cstddef>

#include "tensor/dtype.h"
#include "core/check.h"

namespace zt {

class Backend;

class Arena {
 public:
  Arena() = default;
  Arena(const Backend* owner, void* data, size_t count, DType dtype)
      : owner_(owner), data_(data), count_(count), dtype_(dtype) {}
  ~Arena();
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // f32 views (REQUIRES: dtype() == kF32 or the arena is empty).
  float* data() { return f32(); }
  const float* data() const { return const_cast<Arena*>(this)->f32(); }
  float& operator[](size_t i) { return f32()[i]; }
  const float& operator[](size_t i) const { return data()[i]; }
  template <typename T>
  T* as() { return static_cast<T*>(data_); }
  template <typename T>
  const T* as() const { return static_cast<const T*>(data_); }

  size_t size() const { return count_; }
  size_t bytes() const { return count_ * dtype_size(dtype_); }
  bool empty() const { return count_ == 0; }
  DType dtype() const { return dtype_; }
  // Sets every element to 0 through the owning backend.
  void zero();

 private:
  float* f32() {
    ZT_CHECK(dtype_ == DType::kF32 || count_ == 0, "a %s arena read as f32", dtype_name(dtype_));
    return static_cast<float*>(data_);
  }
  void release();

  const Backend* owner_ = nullptr;
  void* data_ = nullptr;
  size_t count_ = 0;
  DType dtype_ = DType::kF32;
};

}  // namespace zt

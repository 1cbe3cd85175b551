// FloatBuffer: one aligned, zero-initialised allocation of floats in host memory, for
// host-side staging (checkpoint resharding, parameter-server messages, tools). The
// arenas the model and optimizer compute on come from a Backend (backend/arena.h).
// Move-only.
// Alignment is 64 bytes (one cache line, one AVX-512 vector).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace zt {

class FloatBuffer {
 public:
  FloatBuffer() = default;
  explicit FloatBuffer(size_t count);  // aborts if the allocation fails
  // The same, but an allocation failure is a ResourceExhausted-style Status naming `what`
  // and the bytes, for the large arenas a user sizes through the model and ZeRO stage.
  static StatusOr<FloatBuffer> allocate(size_t count, const char* what);
  ~FloatBuffer();
  FloatBuffer(FloatBuffer&& other) noexcept;
  FloatBuffer& operator=(FloatBuffer&& other) noexcept;
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(float); }
  bool empty() const { return size_ == 0; }
  float& operator[](size_t i) { return data_[i]; }
  const float& operator[](size_t i) const { return data_[i]; }
  // Sets every element to 0.
  void zero();

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace zt

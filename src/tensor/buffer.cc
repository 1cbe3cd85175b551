// FloatBuffer allocation and zeroing.
#include "tensor/buffer.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/check.h"
#include "core/huge_pages.h"

namespace zt {

FloatBuffer::FloatBuffer(size_t count) : size_(count) {
  if (count == 0) return;
  const size_t bytes = ((count * sizeof(float) + 63) / 64) * 64;
  data_ = static_cast<float*>(std::aligned_alloc(64, bytes));
  ZT_CHECK(data_ != nullptr, "out of memory allocating %zu bytes", bytes);
  advise_huge_pages(data_, bytes);  // before zero(), the first touch
  zero();
}

StatusOr<FloatBuffer> FloatBuffer::allocate(size_t count, const char* what) {
  FloatBuffer b;
  if (count == 0) return b;
  const size_t bytes = ((count * sizeof(float) + 63) / 64) * 64;
  b.data_ = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (b.data_ == nullptr) {
    return Status::ResourceExhausted("out of memory: cannot allocate " + std::to_string(bytes) + " bytes for " + what +
                                     "; use a higher ZeRO stage, more ranks or a smaller model");
  }
  b.size_ = count;
  advise_huge_pages(b.data_, bytes);
  b.zero();
  return b;
}

FloatBuffer::~FloatBuffer() { std::free(data_); }

FloatBuffer::FloatBuffer(FloatBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

FloatBuffer& FloatBuffer::operator=(FloatBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void FloatBuffer::zero() {
  if (size_ > 0) std::memset(data_, 0, size_ * sizeof(float));
}

}  // namespace zt

// Arena: release and zero through the owning backend.
#include "backend/arena.h"

#include <utility>

#include "backend/backend.h"

namespace zt {

Arena::~Arena() { release(); }

Arena::Arena(Arena&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      count_(std::exchange(other.count_, 0)),
      dtype_(other.dtype_) {}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    count_ = std::exchange(other.count_, 0);
    dtype_ = other.dtype_;
  }
  return *this;
}

void Arena::release() {
  if (owner_ != nullptr && data_ != nullptr) owner_->release(data_, bytes());
  data_ = nullptr;
  count_ = 0;
}

void Arena::zero() {
  if (owner_ != nullptr && count_ > 0) owner_->zero(data_, bytes());
}

}  // namespace zt

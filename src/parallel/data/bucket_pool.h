// BucketPool<T>: gradient bucket buffers made by a backend and kept per size (GradReducer's
// fp32 buckets, GradWire's 16-bit copies): a buffer given back is reused by the next bucket
// of the same size. The caller bounds how many are in use (in_use()).
// Thread-safety: used by the training thread only.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "core/check.h"

namespace zt {

template <class T>
class BucketPool {
 public:
  // A free buffer of `elems` elements, or null.
  T* find_free(size_t elems) {
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].first != elems) continue;
      T* p = free_[i].second;
      free_.erase(free_.begin() + static_cast<long>(i));
      return p;
    }
    return nullptr;
  }
  // A new buffer of `elems` elements of `dtype` (sizeof(T) bytes each) from `backend`.
  T* allocate(const Backend& backend, size_t elems, DType dtype, const char* what) {
    StatusOr<Arena> buf = backend.allocate(elems, dtype, what);
    ZT_CHECK(buf.ok(), "%s", buf.status().to_string().c_str());
    pool_.push_back(std::move(buf).value());
    bytes_ += pool_.back().bytes();
    return pool_.back().template as<T>();
  }
  void give_back(T* buffer, size_t elems) { free_.emplace_back(elems, buffer); }
  size_t in_use() const { return pool_.size() - free_.size(); }
  size_t bytes() const { return bytes_; }  // every buffer made

 private:
  std::vector<Arena> pool_;
  std::vector<std::pair<size_t, T*>> free_;  // (elements, buffer) not in use
  size_t bytes_ = 0;
};

}  // namespace zt

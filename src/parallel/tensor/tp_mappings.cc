// The four paired ops; gathers pack (tp, rows, cols/tp) and interleave into (rows, cols).
#include "parallel/tensor/tp_mappings.h"

#include <cstring>
#include <vector>

namespace zt {

namespace {

bool trivial(ProcessGroup* tp) { return tp == nullptr || tp->size() == 1; }

Status all_reduce(ProcessGroup* tp, float* x, size_t n) {
  if (trivial(tp)) return Status::OK();
  return tp->all_reduce(x, n, CommDType::kF32)->wait();
}

void copy_slice(float* slice, const float* full, size_t rows, size_t cols, size_t part, size_t r) {
  for (size_t i = 0; i < rows; ++i) std::memcpy(slice + i * part, full + i * cols + r * part, part * sizeof(float));
}

Status all_gather_last_dim(ProcessGroup* tp, float* full, const float* slice, size_t rows, size_t cols) {
  if (trivial(tp)) {
    std::memcpy(full, slice, rows * cols * sizeof(float));
    return Status::OK();
  }
  const size_t P = static_cast<size_t>(tp->size()), part = cols / P, r = static_cast<size_t>(tp->rank());
  std::vector<float> packed(rows * cols);  // (tp, rows, part)
  std::memcpy(packed.data() + r * rows * part, slice, rows * part * sizeof(float));
  ZT_RETURN_IF_ERROR(tp->all_gather(packed.data(), std::vector<size_t>(P, rows * part))->wait());
  for (size_t p = 0; p < P; ++p) {
    for (size_t i = 0; i < rows; ++i) {
      std::memcpy(full + i * cols + p * part, packed.data() + (p * rows + i) * part, part * sizeof(float));
    }
  }
  return Status::OK();
}

}  // namespace

Status copy_to_tp_backward(ProcessGroup* tp, float* grad, size_t n) { return all_reduce(tp, grad, n); }

Status reduce_from_tp_forward(ProcessGroup* tp, float* x, size_t n) { return all_reduce(tp, x, n); }

void scatter_to_tp_forward(ProcessGroup* tp, float* slice, const float* full, size_t rows, size_t cols) {
  const size_t P = trivial(tp) ? 1 : static_cast<size_t>(tp->size());
  copy_slice(slice, full, rows, cols, cols / P, trivial(tp) ? 0 : static_cast<size_t>(tp->rank()));
}

Status scatter_to_tp_backward(ProcessGroup* tp, float* dfull, const float* dslice, size_t rows, size_t cols) {
  return all_gather_last_dim(tp, dfull, dslice, rows, cols);
}

Status gather_from_tp_forward(ProcessGroup* tp, float* full, const float* slice, size_t rows, size_t cols) {
  return all_gather_last_dim(tp, full, slice, rows, cols);
}

void gather_from_tp_backward(ProcessGroup* tp, float* dslice, const float* dfull, size_t rows, size_t cols) {
  scatter_to_tp_forward(tp, dslice, dfull, rows, cols);
}

}  // namespace zt

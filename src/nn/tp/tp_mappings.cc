// The paired ops: an all-reduce over the tensor-parallel group, or nothing.
#include "nn/tp/tp_mappings.h"

#include <vector>

#include "core/check.h"

namespace zt {

namespace {

Status all_reduce(ProcessGroup* tp, float* x, size_t n) {
  if (tp == nullptr || tp->size() == 1) return Status::OK();
  return tp->all_reduce(x, n, CommDType::kF32)->wait();
}

}  // namespace

Status copy_to_tp_backward(ProcessGroup* tp, float* grad, size_t n) { return all_reduce(tp, grad, n); }

Status reduce_from_tp_forward(ProcessGroup* tp, float* x, size_t n) { return all_reduce(tp, x, n); }


Status all_gather_tp(ProcessGroup* tp, float* data, size_t n) {
  return tp->all_gather(data, std::vector<size_t>(static_cast<size_t>(tp->size()), n))->wait();
}

Status all_gather_tp(ProcessGroup* tp, half_t* data, size_t n) {
  ZT_CHECK(n % 2 == 0, "16-bit all-gather of odd length %zu", n);
  return tp->all_gather(reinterpret_cast<float*>(data), std::vector<size_t>(static_cast<size_t>(tp->size()), n / 2))
      ->wait();
}

}  // namespace zt

// The paired ops: an all-reduce over the tensor-parallel group, or nothing.
#include "nn/tp/tp_mappings.h"

namespace zt {

namespace {

Status all_reduce(ProcessGroup* tp, float* x, size_t n) {
  if (tp == nullptr || tp->size() == 1) return Status::OK();
  return tp->all_reduce(x, n, CommDType::kF32)->wait();
}

}  // namespace

Status copy_to_tp_backward(ProcessGroup* tp, float* grad, size_t n) { return all_reduce(tp, grad, n); }

Status reduce_from_tp_forward(ProcessGroup* tp, float* x, size_t n) { return all_reduce(tp, x, n); }

}  // namespace zt

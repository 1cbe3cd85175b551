// BatchStaging (batch_staging.h): arenas grown to the largest step seen, filled with one
// copy per token or target array, losses read with one copy.
#include "nn/batch_staging.h"

#include <algorithm>

namespace zt {

Status BatchStaging::reserve(size_t micro_batches, int64_t BT) {
  if (micro_batches <= micro_capacity_ && BT <= bt_capacity_) return Status::OK();
  micro_capacity_ = std::max(micro_capacity_, micro_batches);
  bt_capacity_ = std::max(bt_capacity_, BT);
  const size_t per_micro = 2 * static_cast<size_t>(bt_capacity_);
  ZT_ASSIGN_OR_RETURN(inputs_, backend_.allocate(micro_capacity_ * per_micro, DType::kF32, "the staged tokens and targets"));
  ZT_ASSIGN_OR_RETURN(losses_, backend_.allocate(4 * micro_capacity_, DType::kF32, "the micro-batch losses"));
  return Status::OK();
}

StatusOr<std::vector<MicroBatch>> BatchStaging::stage(const std::vector<MicroBatch>& host, int64_t BT) {
  ZT_RETURN_IF_ERROR(reserve(host.size(), BT));
  const size_t bytes = static_cast<size_t>(BT) * sizeof(int32_t);
  std::vector<MicroBatch> out(host.size(), MicroBatch{nullptr, nullptr});
  for (size_t i = 0; i < host.size(); ++i) {
    int32_t* tokens = inputs_.as<int32_t>() + 2 * static_cast<size_t>(bt_capacity_) * i;
    int32_t* targets = tokens + bt_capacity_;
    if (host[i].tokens != nullptr) {
      backend_.copy_from_host(tokens, host[i].tokens, bytes);
      out[i].tokens = tokens;
    }
    if (host[i].targets != nullptr) {
      backend_.copy_from_host(targets, host[i].targets, bytes);
      out[i].targets = targets;
    }
  }
  backend_.zero(losses_.as<double>(), 2 * host.size() * sizeof(double));
  return out;
}

std::vector<LossSum> BatchStaging::read_losses(size_t n) const {
  std::vector<double> raw(2 * n);
  if (n > 0) backend_.copy_to_host(raw.data(), losses_.as<double>(), raw.size() * sizeof(double));
  std::vector<LossSum> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = LossSum{raw[2 * i], static_cast<int64_t>(raw[2 * i + 1])};
  return out;
}

}  // namespace zt

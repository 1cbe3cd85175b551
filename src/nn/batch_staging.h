// BatchStaging: a step's micro-batches in backend memory, and their losses there.
// stage() copies each micro-batch's tokens and targets into backend memory (one explicit
// copy each, so a device backend's kernels read them where they run) and hands back
// MicroBatches that point there. loss_slot(i) is two doubles of backend memory that the
// model's loss_into() fills for micro-batch i; read_losses() brings every slot to the host
// in one copy, once per step or evaluation.
// Invariants: the pointers stage() returns stay valid until the next stage() call; host
// code never reads through them (they are backend memory); slots are zeroed by stage().
// Thread-safety: one thread (the engine's).
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "core/status.h"
#include "nn/gpt_model.h"
#include "nn/gpt_training.h"

namespace zt {

class BatchStaging {
 public:
  explicit BatchStaging(const Backend& backend) : backend_(backend) {}

  // The host micro-batches of B x T positions each (tokens may be null) in backend memory.
  StatusOr<std::vector<MicroBatch>> stage(const std::vector<MicroBatch>& host, int64_t BT);
  // Two doubles for micro-batch i's loss (i < the last stage()'s count).
  double* loss_slot(size_t i) { return losses_.as<double>() + 2 * i; }
  // The first n slots, in one copy.
  std::vector<LossSum> read_losses(size_t n) const;

 private:
  Status reserve(size_t micro_batches, int64_t BT);

  const Backend& backend_;
  Arena inputs_;  // per micro-batch, BT tokens then BT targets (int32 in f32-sized elements)
  Arena losses_;  // per micro-batch, two doubles (four f32-sized elements)
  size_t micro_capacity_ = 0;
  int64_t bt_capacity_ = 0;
};

}  // namespace zt

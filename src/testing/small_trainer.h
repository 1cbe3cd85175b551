// The small ZeRO trainer the in-process engine tests share (2 sequences of 8 tokens per
// micro-batch, lr 1e-2, 4000-element buckets so every stage cuts tensors, nothing
// persistent under ZeRO-3). Tests only.
#pragma once

#include "engine/trainer.h"

namespace zt::testing {

inline TrainerOptions small_trainer(const GptConfig& model, ZeroStage stage) {
  TrainerOptions o;
  o.model = model;
  o.micro_batch = 2;
  o.seq_len = 8;
  o.schedule.base_lr = 1e-2;
  o.zero.stage = stage;
  o.zero.reduce_bucket_elems = 4000;
  o.zero.allgather_bucket_elems = 4000;
  o.zero.prefetch_elems = 8000;
  o.zero.persistence_threshold = 0;
  return o;
}

}  // namespace zt::testing

// Sequence parallelism's input split (issue 31): every rank of a sequence-parallel group
// is given the same micro-batches (its data rank's), and keeps positions
// [rank Tl, (rank + 1) Tl) of every sequence, Tl = T / size, tokens and targets alike.
// The copies are host memory, valid until the next slice() call.
// Thread-safety: one training thread per rank.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/gpt_training.h"

namespace zt {

class SequenceSlicer {
 public:
  SequenceSlicer(int rank, int size) : rank_(rank), size_(size) {}
  // B x T micro-batches -> B x T/size views of this rank's positions (null pointers stay null).
  std::vector<MicroBatch> slice(const std::vector<MicroBatch>& full, int B, int T);

 private:
  int rank_, size_;
  std::vector<std::vector<int32_t>> tokens_, targets_;
};

}  // namespace zt

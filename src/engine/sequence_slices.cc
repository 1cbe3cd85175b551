// SequenceSlicer: this rank's columns of every row.
#include "engine/sequence_slices.h"

namespace zt {

namespace {

const int32_t* cut(const int32_t* full, int B, int T, int first, int Tl, std::vector<int32_t>* out) {
  if (full == nullptr) return nullptr;
  out->clear();
  for (int b = 0; b < B; ++b) {
    const int32_t* row = full + static_cast<size_t>(b) * T + first;
    out->insert(out->end(), row, row + Tl);
  }
  return out->data();
}

}  // namespace

std::vector<MicroBatch> SequenceSlicer::slice(const std::vector<MicroBatch>& full, int B, int T) {
  const int Tl = T / size_, first = rank_ * Tl;
  tokens_.resize(full.size());
  targets_.resize(full.size());
  std::vector<MicroBatch> out;
  for (size_t i = 0; i < full.size(); ++i) {
    out.push_back({cut(full[i].tokens, B, T, first, Tl, &tokens_[i]), cut(full[i].targets, B, T, first, Tl, &targets_[i])});
  }
  return out;
}

}  // namespace zt

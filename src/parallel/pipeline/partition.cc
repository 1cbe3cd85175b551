// Stage partitioning: uniform, or the contiguous split minimising the largest stage.
#include "parallel/pipeline/partition.h"

#include <algorithm>
#include <cstdint>

namespace zt {

StatusOr<std::vector<int>> partition_stages(const GptConfig& c, int S, StagePartition method) {
  const int L = c.n_layer;
  if (S < 1 || S > L) {
    return Status::InvalidArgument("/parallel/pp: " + std::to_string(S) + " pipeline stages for " +
                                   std::to_string(L) + " transformer blocks; every stage needs at least one block");
  }
  std::vector<int> bounds(static_cast<size_t>(S) + 1, 0);
  if (method == StagePartition::kUniform) {
    for (int s = 0; s < S; ++s) bounds[static_cast<size_t>(s) + 1] = bounds[static_cast<size_t>(s)] + L / S + (s < L % S ? 1 : 0);
    return bounds;
  }
  const int64_t C = c.n_embd;
  // Block l's load: its weights held, or the matmul weights a token goes through (its work
  // per token, x 6 for training; an MoE block's k experts of E).
  auto block = [&](int l) { return method == StagePartition::kFlops ? c.block_active_parameters(l) : c.block_parameters(l); };
  const int64_t vocab = static_cast<int64_t>(c.padded_vocab()) * C;
  const int64_t positions = c.position_parameters();
  // Per-stage load beyond its blocks: parameters held, or matmul work per token.
  const int64_t first_extra = method == StagePartition::kFlops ? 0 : vocab + positions;
  const int64_t last_extra = method == StagePartition::kFlops ? vocab : (S > 1 ? vocab : 0) + 2 * C;
  // Smallest feasible maximum stage load, then the greedy split that achieves it.
  auto fits = [&](int64_t cap, std::vector<int>* out) {
    std::vector<int> b(1, 0);
    int s = 0;
    int64_t load = first_extra;
    for (int l = 0; l < L; ++l) {
      const int64_t extra = (s == S - 1) ? last_extra : 0;
      const int remaining_stages = S - s - 1, remaining_blocks = L - l;
      const bool must_close = remaining_blocks == remaining_stages;  // every later stage needs a block
      if (l > b.back() && (load + block(l) + extra > cap || must_close) && s < S - 1) {
        b.push_back(l);
        ++s;
        load = 0;
      }
      load += block(l);
    }
    b.push_back(L);
    const bool ok = static_cast<int>(b.size()) == S + 1 && load + last_extra <= cap;
    if (ok && out != nullptr) *out = b;
    return ok;
  };
  int64_t lo = 1, hi = first_extra + last_extra;
  for (int l = 0; l < L; ++l) hi += block(l);
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (fits(mid, nullptr)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (!fits(lo, &bounds)) return partition_stages(c, S, StagePartition::kUniform);
  return bounds;
}

}  // namespace zt

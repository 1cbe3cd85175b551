// RankStateView: the model state one rank holds, as checkpoints see it. The engine
// (Trainer::checkpoint_view) describes where its arenas are; the checkpoint code never
// looks inside the engine.
//
// Every array mirrors the rank's ParamTable arena element for element: `data` points at
// arena element `held.begin`, and elements outside `held` are not on this rank (ZeRO
// shards). "param" is always first; the optimizer's state follows by its own names
// ("exp_avg", "exp_avg_sq" for AdamW, "momentum_buffer" for SGD). zerotrain trains in
// fp32, so "param" is also the master copy of the weights.
//
// Saving writes each element exactly once across the job: a rank writes only the
// arena elements in `save_range` (its share of the data-parallel partition), only
// tensors it is the tensor-parallel owner of, and never the layer `skip_layer` (the last
// pipeline stage's copy of the tied wte, equal to the first stage's). Loading fills
// every held element of every array, including skip_layer (by name, from the original).
#pragma once

#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "optim/optimizer.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Every state kind a checkpoint may hold: "param" and each optimizer's state_names()
// (AdamW and LAMB: exp_avg, exp_avg_sq; SGD: momentum_buffer; 0/1 Adam adds sync_params;
// 1-bit LAMB adds exp_avg_sq_fresh). A new optimizer's names are added here, or its
// checkpoints are refused (optimizer_kinds_test checks every optimizer against it).
inline const std::vector<std::string>& state_kinds() {
  static const std::vector<std::string> kinds = {"param",         "exp_avg",     "exp_avg_sq",
                                                 "momentum_buffer", "sync_params", "exp_avg_sq_fresh"};
  return kinds;
}

struct StateArray {
  std::string kind;   // one of state_kinds()
  float* data;        // arena element held.begin
  ElementRange held;  // arena elements present on this rank
};

struct RankStateView {
  const ParamTable* table = nullptr;  // this rank's tensors: its pipeline stage, its tp slice
  std::vector<StateArray> arrays;     // "param" first
  ElementRange save_range;            // arena elements this rank writes
  // Expert parallelism: the arena elements of routed experts' tensors this rank writes
  // (its share among the ranks holding the same experts); unset: save_range.
  std::optional<ElementRange> expert_save_range;
  bool save_tp_replicated = true;     // writes the tensors every tp rank holds whole (tp rank 0)
  int skip_layer = INT_MIN;           // never written; loaded from the tensor of the same name
  std::vector<RankArray> rank_arrays; // this rank's own state (checkpoint/rank_state.h)

  const StateArray* array(const std::string& kind) const {
    for (const StateArray& a : arrays) {
      if (a.kind == kind) return &a;
    }
    return nullptr;
  }
};

// Which tensor ranges this rank writes: (spec index, [begin, end) within the tensor's
// tp-local elements). Follows the rules above.
struct SavedRange {
  int spec;
  size_t begin;
  size_t end;
};
std::vector<SavedRange> saved_ranges(const RankStateView& view);

}  // namespace zt

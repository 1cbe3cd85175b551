// Random-LTD; see random_ltd.h.
#include "engine/random_ltd.h"

#include <algorithm>
#include <numeric>

#include "core/rng.h"
#include "engine/layer_drop.h"

namespace zt {

namespace {

CurriculumOptions as_schedule(const RandomLtdOptions& o) {
  CurriculumOptions c;
  c.kind = CurriculumKind::kFixedLinear;
  c.min_difficulty = o.min_value;
  c.max_difficulty = o.max_value;
  c.total_curriculum_step = o.require_steps;
  c.difficulty_step = o.seq_per_step;
  return c;
}

}  // namespace

RandomLtd::RandomLtd(const RandomLtdOptions& options, int n_layer, uint64_t seed)
    : o_(options), n_layer_(n_layer), seed_(seed), schedule_(as_schedule(options)) {
  state_.current_value = options.min_value;
}

Status RandomLtd::validate(const RandomLtdOptions& o, int n_layer, const std::string& where) {
  if (o.layers.empty()) return Status::InvalidArgument(where + "/random_ltd_layer_id: lists no block");
  for (int l : o.layers) {
    if (l < 0 || l >= n_layer) {
      return Status::InvalidArgument(where + "/random_ltd_layer_id: block " + std::to_string(l) + " is not in [0, " +
                                     std::to_string(n_layer) + ")");
    }
  }
  const std::string s = where + "/random_ltd_schedule";
  if (o.min_value < 1 || o.max_value < o.min_value) {
    return Status::InvalidArgument(s + "/min_value: expected 1 <= min_value <= max_value");
  }
  if (o.require_steps < 1) return Status::InvalidArgument(s + "/schedule_config/require_steps: must be at least 1");
  if (o.seq_per_step < 1) return Status::InvalidArgument(s + "/schedule_config/seq_per_step: must be at least 1");
  if (o.min_value < o.seq_per_step) {
    return Status::InvalidArgument(s + "/min_value: " + std::to_string(o.min_value) + " rounds down to 0 tokens with seq_per_step " +
                                   std::to_string(o.seq_per_step));
  }
  return Status::OK();
}

int64_t RandomLtd::update(int64_t g, int64_t global_batch) {
  schedule_.set_current(state_.current_value);
  state_.current_value = schedule_.update(g);
  if (g != state_.current_steps) {
    const int64_t dropped = static_cast<int64_t>(o_.layers.size());
    state_.consumed_layer_tokens += global_batch * (state_.current_value * dropped + o_.max_value * (n_layer_ - dropped));
    state_.current_steps = g;
  }
  return state_.current_value;
}

void RandomLtd::route(std::vector<BlockRoute>* routes, int64_t g, int64_t first_sample, int B, int T) const {
  const int r = static_cast<int>(std::min<int64_t>(state_.current_value, T));
  if (r >= T) return;  // DeepSpeed drops only while r is below the sequence length
  if (routes->empty()) routes->resize(static_cast<size_t>(n_layer_));
  std::vector<int32_t> pool(static_cast<size_t>(T));
  for (int l : o_.layers) {
    BlockRoute& route = (*routes)[static_cast<size_t>(l)];
    if (route.skip) continue;
    route.kept = r;
    route.positions.clear();
    for (int b = 0; b < B; ++b) {
      Rng rng(mix_seed(seed_ ^ 0x4c5444ull, static_cast<uint64_t>(g), static_cast<uint64_t>(first_sample + b),
                       static_cast<uint64_t>(l)));
      std::iota(pool.begin(), pool.end(), 0);
      for (int i = 0; i < r; ++i) std::swap(pool[static_cast<size_t>(i)], pool[i + rng.below(static_cast<uint64_t>(T - i))]);
      std::sort(pool.begin(), pool.begin() + r);
      route.positions.insert(route.positions.end(), pool.begin(), pool.begin() + r);
    }
  }
}

RandomLtdState RandomLtd::state() const { return state_; }

void RandomLtd::set_state(const RandomLtdState& s) { state_ = s; }

}  // namespace zt

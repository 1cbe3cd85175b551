// decay_segments: intersect the optimizer's range with the tensor table, merging
// neighbours that share a decay flag; the whole-range step over the own state; the
// update followed by the compute copy.
#include "optim/optimizer.h"

#include <algorithm>

#include "core/check.h"

namespace zt {

std::vector<DecaySegment> decay_segments(const ParamTable& table, ElementRange range) {
  std::vector<DecaySegment> out;
  for (const TensorSpec& s : table.specs()) {
    const size_t lo = std::max(s.offset, range.begin);
    const size_t hi = std::min(s.offset + s.numel, range.end);
    if (lo >= hi) continue;
    const size_t b = lo - range.begin, e = hi - range.begin;
    if (!out.empty() && out.back().end == b && out.back().decay == s.weight_decay) {
      out.back().end = e;
    } else {
      out.push_back({b, e, s.weight_decay});
    }
  }
  return out;
}

}  // namespace zt

namespace zt {

void Optimizer::step(float* params, const float* grads, const StepHyper& hyper) {
  std::vector<float*> states;
  for (const StateTensor& t : state()) states.push_back(t.data);
  ZT_CHECK(states.size() == state_names().size(), "%s::step needs its own state (it was created without)", name());
  begin_step(hyper);
  update(0, range().size(), params, grads, states.data());
}

void Optimizer::update_copy(size_t offset, size_t n, float* params, const float* grads, float* const* states,
                            half_t* copy, const ActivationOps<half_t>& half) {
  update(offset, n, params, grads, states);
  if (last_error().ok()) half.from_f32(copy, params, static_cast<int64_t>(n));
}

}  // namespace zt

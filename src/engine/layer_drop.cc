// Progressive layer drop; see layer_drop.h.
#include "engine/layer_drop.h"

#include <cmath>

#include "core/rng.h"

namespace zt {

uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  for (uint64_t v : {a, b, c}) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h = Rng(h).next_u64();
  }
  return h;
}

double LayerDrop::theta_after(int64_t t) const {
  return (1.0 - o_.theta) * std::exp(-o_.gamma * static_cast<double>(t)) + o_.theta;
}

double LayerDrop::theta_used(int64_t steps_done) const { return steps_done == 0 ? 1.0 : theta_after(steps_done - 1); }

std::vector<double> LayerDrop::keep_probs(int64_t steps_done) const {
  const double step = (1.0 - theta_used(steps_done)) / n_layer_;
  std::vector<double> p(static_cast<size_t>(n_layer_) + 1);
  p[0] = 1.0;
  for (int i = 0; i < n_layer_; ++i) p[static_cast<size_t>(i) + 1] = p[static_cast<size_t>(i)] - step;
  return p;
}

std::vector<BlockRoute> LayerDrop::routes(int64_t steps_done, int64_t micro) const {
  const std::vector<double> p = keep_probs(steps_done);
  std::vector<BlockRoute> out(static_cast<size_t>(n_layer_));
  for (int i = 0; i < n_layer_; ++i) {
    Rng rng(mix_seed(seed_, static_cast<uint64_t>(steps_done), static_cast<uint64_t>(micro), static_cast<uint64_t>(i)));
    BlockRoute& r = out[static_cast<size_t>(i)];
    r.skip = !(rng.uniform() < p[static_cast<size_t>(i)]);
    if (!r.skip) r.scale = static_cast<float>(1.0 / p[static_cast<size_t>(i) + 1]);
  }
  return out;
}

}  // namespace zt

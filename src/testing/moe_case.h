// Test helpers for the MoE kernels' PyTorch checks (kernels/cpu/moe_gate_test.cc,
// moe_dispatch_test.cc): the random draws both sides route with, rows as JSON, and the
// gate's options in the keys tests/moe/moe_gate_reference.py reads. Header-only, tests only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "io/json_strict.h"
#include "kernels/cpu/moe_gate.h"

namespace zt::testing {

// n standard Gumbel draws (gumbel) or U(0, 1) draws from seed.
inline std::vector<float> moe_draws(size_t n, uint64_t seed, bool gumbel) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    const double u = std::max(rng.uniform(), 1e-12);
    x = static_cast<float>(gumbel ? -std::log(-std::log(u)) : u);
  }
  return v;
}

// v as rows of w values.
inline Json json_rows(const std::vector<float>& v, int w) {
  Json a = Json::array();
  for (size_t i = 0; i < v.size(); i += static_cast<size_t>(w)) a.push_back(std::vector<float>(v.begin() + i, v.begin() + i + w));
  return a;
}

// The gate's options and draws (E per row) into j.
inline void gate_json(Json& j, const MoeGateOptions& o, const MoeGateNoise& noise, int E) {
  j["k"] = o.k;
  j["routing"] = o.routing == MoeRouting::kDeepSpeed ? "deepspeed" : "mixtral";
  j["capacity_factor"] = o.capacity_factor;
  j["min_capacity"] = o.min_capacity;
  j["drop_tokens"] = o.drop_tokens;
  j["use_rts"] = o.use_rts;
  j["rsample"] = o.rsample;
  j["second_sampling"] = o.second_sampling;
  j["drop_policy"] = o.drop_policy == MoeDropPolicy::kProbs ? "probs" : "position";
  j["renormalize"] = o.renormalize;
  j["gumbel"] = json_rows(noise.gumbel, E);
  j["uniform"] = json_rows(noise.uniform, E);
}

}  // namespace zt::testing

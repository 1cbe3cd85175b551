// Test helpers for the MoE kernels' PyTorch checks (kernels/cpu/moe_*_test.cc): the random
// draws both sides route with, rows as JSON and back, the gate's options in the keys
// tests/moe/moe_gate_reference.py reads, and one call of a reference script over a list of
// cases. Header-only, tests only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"
#include "io/json_strict.h"
#include "kernels/moe_gate.h"
#include "testing/python_oracle.h"

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

// Every number of a nested JSON array, in order.
inline std::vector<double> json_flat(const Json& v) {
  std::vector<double> out;
  if (!v.is_array()) return {v.get<double>()};
  for (const Json& x : v) {
    const std::vector<double> inner = json_flat(x);
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

// Runs tests/moe/<script> on `cases` (written under dir) and returns its list of results;
// a failed run fails the calling test (the result is then empty).
inline Json run_moe_reference(const std::string& script, const Json& cases, const std::string& dir) {
  const std::string in = dir + "/" + script + ".in.json", out = dir + "/" + script + ".out.json";
  std::ofstream(in) << cases.dump();
  const std::string cmd = python() + " " + oracle_source_dir() + "/tests/moe/" + script + " " + in + " " + out;
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << "PyTorch reference failed (" << cmd << "); python3-torch must be installed";
  if (rc != 0) return Json::array();
  std::ifstream f(out);
  return Json::parse(f);
}

}  // namespace zt::testing

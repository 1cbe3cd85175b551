// MoE routing against a PyTorch statement of DeepSpeed's and Mixtral's rules
// (tests/moe/moe_gate_reference.py, autograd for the backward): top-1 with capacity
// dropping (random token selection, RSample noise, and neither), top-1 without dropping,
// top-2 with and without its second-expert sampling and dropping, top-3 under both drop
// policies, Mixtral's renormalised top-2 and Qwen2-MoE's plain top-4. Choices, locations
// and the capacity must be equal; weights, l_aux and the logits' gradient within 1e-6
// relative (the reference computes in float64, this kernel rounds gates to float once).
#include "kernels/moe_gate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/json_strict.h"
#include "testing/moe_case.h"
#include "testing/python_oracle.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

struct Case {
  std::string name;
  MoeGateOptions o;
  int64_t N = 24;
  int E = 4;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  auto add = [&](const std::string& name, auto set, int E = 4) {
    Case x{name, MoeGateOptions{}, 24, E};
    x.o.min_capacity = 2;
    set(x.o);
    c.push_back(x);
  };
  add("top1_rts_capacity", [](MoeGateOptions& o) { o.capacity_factor = 0.75; });
  add("top1_rsample_rts", [](MoeGateOptions& o) { o.rsample = true; o.capacity_factor = 1.0; });
  add("top1_first_tokens", [](MoeGateOptions& o) { o.use_rts = false; o.capacity_factor = 0.5; });
  add("top1_no_drop", [](MoeGateOptions& o) { o.drop_tokens = false; });
  add("top2_sampling_capacity", [](MoeGateOptions& o) { o.k = 2; o.capacity_factor = 0.5; });
  add("top2_no_noise", [](MoeGateOptions& o) { o.k = 2; o.second_sampling = false; o.capacity_factor = 0.75; });
  add("top2_no_drop", [](MoeGateOptions& o) { o.k = 2; o.drop_tokens = false; });
  add("top3_probs", [](MoeGateOptions& o) { o.k = 3; o.capacity_factor = 0.6; }, 6);
  add("top3_position", [](MoeGateOptions& o) { o.k = 3; o.capacity_factor = 0.6; o.drop_policy = MoeDropPolicy::kPosition; }, 6);
  add("mixtral_top2", [](MoeGateOptions& o) { o.routing = MoeRouting::kMixtral; o.k = 2; }, 8);
  add("qwen2_moe_top4_plain", [](MoeGateOptions& o) { o.routing = MoeRouting::kMixtral; o.k = 4; o.renormalize = false; }, 8);
  return c;
}

// One routed case: its inputs (as the reference reads them) and this kernel's results.
struct Routed {
  Case c;
  Json input;
  MoeGateResult r;
  std::vector<float> dlogits;
};

Routed route_case(const Case& c, uint64_t seed) {
  const size_t NE = static_cast<size_t>(c.N) * c.E, NK = static_cast<size_t>(c.N) * c.o.k;
  std::vector<float> logits = testing::moe_draws(NE, seed, true), dweight = testing::moe_draws(NK, seed + 1, false);
  MoeGateNoise noise{testing::moe_draws(NE, seed + 2, true), testing::moe_draws(NE, seed + 3, false)};
  const double dl_aux = 0.37;
  Routed out{c, Json{}, {}, std::vector<float>(NE)};
  auto r = moe_gate_forward(logits.data(), c.N, c.E, c.o, noise);
  EXPECT_TRUE(r.ok()) << c.name << ": " << r.status().to_string();
  if (!r.ok()) return out;
  out.r = std::move(r).value();
  moe_gate_backward(out.dlogits.data(), out.r, dweight.data(), deepspeed_aux_dgate(out.r, c.o, c.N, c.E, dl_aux), c.N, c.E, c.o);
  Json& j = out.input;
  testing::gate_json(j, c.o, noise, c.E);
  j["logits"] = testing::json_rows(logits, c.E);
  j["dweight"] = testing::json_rows(dweight, c.o.k);
  j["dl_aux"] = dl_aux;
  return out;
}

void expect_matches(const Routed& x, const Json& ref) {
  const Case& c = x.c;
  const MoeGateResult& g = x.r;
  EXPECT_EQ(g.capacity, ref["capacity"].get<int64_t>()) << c.name;
  EXPECT_EQ(g.counts, ref["counts"].get<std::vector<int64_t>>()) << c.name;
  int dropped = 0;
  for (int64_t t = 0; t < c.N; ++t) {
    for (int s = 0; s < c.o.k; ++s) {
      const size_t i = static_cast<size_t>(t * c.o.k + s);
      EXPECT_EQ(g.expert[i], ref["expert"][t][s].get<int>()) << c.name << " token " << t << " slot " << s;
      EXPECT_EQ(g.location[i], ref["location"][t][s].get<int>()) << c.name << " token " << t << " slot " << s;
      EXPECT_NEAR(g.weight[i], ref["weight"][t][s].get<double>(), 1e-6) << c.name << " token " << t;
      dropped += g.expert[i] < 0;
    }
    for (int e = 0; e < c.E; ++e) {
      const double want = ref["dlogits"][t][e].get<double>();
      EXPECT_NEAR(x.dlogits[static_cast<size_t>(t * c.E + e)], want, 1e-6 * (1.0 + std::fabs(want))) << c.name << " token " << t;
    }
  }
  EXPECT_NEAR(g.l_aux, ref["l_aux"].get<double>(), 1e-6) << c.name;
  const bool drops = c.o.routing == MoeRouting::kDeepSpeed && c.o.drop_tokens;
  if (drops) {
    EXPECT_GT(dropped, 0) << c.name << ": the case is meant to drop tokens";
  } else {
    EXPECT_EQ(dropped, 0) << c.name;
  }
  std::printf("  %-24s capacity %lld, dropped %d of %lld, l_aux %.6f\n", c.name.c_str(),
              static_cast<long long>(g.capacity), dropped, static_cast<long long>(c.N * c.o.k), g.l_aux);
}

class MoeGate : public testing::TempDirTest {};

TEST_F(MoeGate, RoutesAndDifferentiatesAsThePyTorchStatement) {
  std::vector<Routed> routed;
  Json inputs = Json::array();
  uint64_t seed = 1;
  for (const Case& c : cases()) {
    routed.push_back(route_case(c, seed));
    seed += 4;
    inputs.push_back(routed.back().input);
  }
  const Json ref = testing::run_moe_reference("moe_gate_reference.py", inputs, dir_);
  ASSERT_EQ(ref.size(), routed.size());
  for (size_t i = 0; i < routed.size(); ++i) expect_matches(routed[i], ref[i]);
}

// HF's balance loss spans the layers: three Mixtral top-2 layers' routings, the loss
// sum(weight * dweight) over the layers + coef * aux, against load_balancing_loss_func's
// statement in PyTorch (the layers' logits concatenated).
TEST_F(MoeGate, MixtralBalanceLossSpansTheLayersAsHf) {
  const int64_t N = 20;
  const int E = 6, L = 3;
  const double coef = 0.02;
  MoeGateOptions o;
  o.routing = MoeRouting::kMixtral;
  o.k = 2;
  std::vector<std::vector<float>> logits, dweight;
  std::vector<MoeGateResult> routed;
  Json j;
  j["kind"] = "mixtral_balance";
  j["k"] = o.k;
  j["coef"] = coef;
  for (int l = 0; l < L; ++l) {
    logits.push_back(testing::moe_draws(static_cast<size_t>(N) * E, 900 + 2 * l, true));
    dweight.push_back(testing::moe_draws(static_cast<size_t>(N) * o.k, 901 + 2 * l, false));
    auto r = moe_gate_forward(logits.back().data(), N, E, o, {});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    routed.push_back(std::move(r).value());
    j["layers"].push_back(testing::json_rows(logits.back(), E));
    j["dweights"].push_back(testing::json_rows(dweight.back(), o.k));
  }
  std::vector<const MoeGateResult*> ptrs;
  for (const MoeGateResult& r : routed) ptrs.push_back(&r);
  const MixtralBalance b = mixtral_balance(ptrs, N, E, o.k, coef);
  const Json refs = testing::run_moe_reference("moe_gate_reference.py", Json::array({j}), dir_);
  ASSERT_EQ(refs.size(), 1u);
  const Json& ref = refs[0];
  EXPECT_NEAR(b.aux, ref["aux"].get<double>(), 1e-6);
  EXPECT_GT(b.aux, 0.9);  // about 1 for a balanced router; the check is not vacuous
  for (int l = 0; l < L; ++l) {
    std::vector<float> dlogits(static_cast<size_t>(N) * E);
    moe_gate_backward(dlogits.data(), routed[l], dweight[l].data(), b.dgate, N, E, o);
    for (int64_t t = 0; t < N; ++t) {
      for (int e = 0; e < E; ++e) {
        const double want = ref["dlogits"][l][t][e].get<double>();
        EXPECT_NEAR(dlogits[static_cast<size_t>(t * E + e)], want, 1e-6 * (1.0 + std::fabs(want))) << "layer " << l;
      }
    }
  }
}

TEST(MoeGateRefusal, NamesWhatIsWrong) {
  MoeGateOptions o;
  o.k = 5;
  EXPECT_NE(validate_moe_gate(o, 16, 4, {}).message().find("experts per token 5 must be in [1, 4]"), std::string::npos);
  o.k = 1;
  EXPECT_NE(validate_moe_gate(o, 16, 4, {}).message().find("uniform draws"), std::string::npos);
  o.use_rts = false;
  o.min_capacity = 32;
  EXPECT_NE(validate_moe_gate(o, 16, 4, {}).message().find("fewer than min_capacity 32"), std::string::npos);
  o.k = 2;
  EXPECT_NE(validate_moe_gate(o, 16, 4, {}).message().find("Gumbel noise"), std::string::npos);
}

}  // namespace
}  // namespace zt

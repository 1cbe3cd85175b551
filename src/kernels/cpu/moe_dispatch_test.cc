// A whole MoE layer from the kernels (router linear, moe_gate, moe_dispatch, moe_experts on
// each expert's filled rows, moe_combine) against
// a PyTorch statement of DeepSpeed's MOELayer (tests/moe/moe_layer_reference.py: one-hot
// dispatch and combine einsums, experts on their whole capacity buffers), forward and
// backward with l_aux in the loss: top-1 with capacity drops and GPT-2 experts, top-2 with
// drops and SwiGLU experts, Mixtral's top-2 and a top-3 with GELU experts. The output, l_aux
// and every gradient within 1e-5 relative (fp32 kernels against float64).
#include "kernels/cpu/moe_dispatch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "io/json_strict.h"
#include "kernels/cpu/moe_experts.h"
#include "kernels/cpu/linear.h"
#include "kernels/moe_gate.h"
#include "testing/gradcheck.h"
#include "testing/moe_case.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

constexpr int kN = 16, kC = 8, kI = 12;

struct Expert {
  std::vector<float> w1, b1, w3, w2, b2;     // w1 (I, C) [gate or fc], w3 (I, C) [up], w2 (C, I)
  std::vector<float> dw1, db1, dw3, dw2, db2;
};

struct Layer {
  std::string name;
  MoeGateOptions o;
  int E = 4;
  bool swiglu = false;
  double coef = 0.01;
  std::vector<float> x, router, R;
  MoeGateNoise draws;
  std::vector<Expert> experts;
  // results
  std::vector<float> y, dx, drouter;
  double l_aux = 0.0;
};

Layer make(const std::string& name, MoeGateOptions o, int E, bool swiglu, uint64_t seed) {
  Layer L{name, o, E, swiglu};
  L.x = testing::random_vector(kN * kC, seed, 1.0);
  L.router = testing::random_vector(static_cast<size_t>(E) * kC, seed + 1, 0.5);
  L.R = testing::random_vector(kN * kC, seed + 2, 1.0);
  L.draws = {testing::moe_draws(static_cast<size_t>(kN) * E, seed + 3, true), testing::moe_draws(static_cast<size_t>(kN) * E, seed + 4, false)};
  for (int e = 0; e < E; ++e) {
    const uint64_t s = seed + 10 + 10 * static_cast<uint64_t>(e);
    Expert x{testing::random_vector(kI * kC, s, 0.3), swiglu ? std::vector<float>{} : testing::random_vector(kI, s + 1, 0.1),
             swiglu ? testing::random_vector(kI * kC, s + 2, 0.3) : std::vector<float>{}, testing::random_vector(kC * kI, s + 3, 0.3),
             swiglu ? std::vector<float>{} : testing::random_vector(kC, s + 4, 0.1)};
    x.dw1.assign(x.w1.size(), 0.0f);
    x.db1.assign(x.b1.size(), 0.0f);
    x.dw3.assign(x.w3.size(), 0.0f);
    x.dw2.assign(x.w2.size(), 0.0f);
    x.db2.assign(x.b2.size(), 0.0f);
    L.experts.push_back(std::move(x));
  }
  return L;
}

const float* or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }
float* or_null(std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// The kernels' view of the layer's experts.
void expert_views(Layer& L, std::vector<MoeExpertWeights>* w, std::vector<MoeExpertGrads>* g) {
  for (Expert& x : L.experts) {
    w->push_back({x.w1.data(), or_null(x.b1), or_null(x.w3), x.w2.data(), or_null(x.b2)});
    g->push_back({x.dw1.data(), or_null(x.db1), or_null(x.dw3), x.dw2.data(), or_null(x.db2)});
  }
}

// The layer forward and backward with dy = R and l_aux's coefficient.
void run(Layer& L) {
  const int E = L.E, k = L.o.k;
  std::vector<float> logits(static_cast<size_t>(kN) * E);
  linear_forward(logits.data(), L.x.data(), L.router.data(), nullptr, nullptr, kN, kC, E);
  auto gate = moe_gate_forward(logits.data(), kN, E, L.o, L.draws);
  ASSERT_TRUE(gate.ok()) << L.name << ": " << gate.status().to_string();
  const MoeGateResult& g = gate.value();
  L.l_aux = g.l_aux;
  const MoeSlots s{g.expert.data(), g.location.data(), kN, k, E, g.capacity};
  const std::vector<int64_t> fill = moe_fill(s);
  const size_t B = static_cast<size_t>(E) * g.capacity * kC;
  std::vector<float> buf(B), out(B, 0.0f), dout(B), dbuf(B, 0.0f), dweight(static_cast<size_t>(kN) * k);
  moe_dispatch(buf.data(), L.x.data(), s, kC);
  const MoeExpertShape shape{E, g.capacity, kC, kI, L.swiglu};
  std::vector<MoeExpertWeights> w;
  std::vector<MoeExpertGrads> grads;
  expert_views(L, &w, &grads);
  const size_t BI = static_cast<size_t>(E) * g.capacity * kI;
  std::vector<float> h_in(BI), h_up(L.swiglu ? BI : 0), act(BI), scratch(moe_experts_scratch_floats(shape));
  const MoeExpertActs acts{h_in.data(), or_null(h_up), act.data()};
  moe_experts_forward(out.data(), acts, buf.data(), w, fill, shape);
  L.y.assign(kN * kC, 0.0f);
  moe_combine(L.y.data(), out.data(), g.weight.data(), s, kC);
  moe_combine_backward(dout.data(), dweight.data(), L.R.data(), out.data(), g.weight.data(), s, kC);
  moe_experts_backward(dbuf.data(), grads, dout.data(), acts, buf.data(), w, fill, shape, scratch.data());
  L.dx.assign(kN * kC, 0.0f);
  moe_dispatch_backward(L.dx.data(), dbuf.data(), s, kC);
  std::vector<float> dlogits(static_cast<size_t>(kN) * E), dx_router(kN * kC);
  moe_gate_backward(dlogits.data(), g, dweight.data(), deepspeed_aux_dgate(g, L.o, kN, E, L.coef), kN, E, L.o);
  L.drouter.assign(static_cast<size_t>(E) * kC, 0.0f);
  linear_backward(dx_router.data(), L.drouter.data(), nullptr, dlogits.data(), L.x.data(), L.router.data(), kN, kC, E);
  for (int i = 0; i < kN * kC; ++i) L.dx[static_cast<size_t>(i)] += dx_router[static_cast<size_t>(i)];
}

Json case_json(const Layer& L) {
  Json j;
  testing::gate_json(j, L.o, L.draws, L.E);
  j["x"] = testing::json_rows(L.x, kC);
  j["router"] = testing::json_rows(L.router, kC);
  j["R"] = testing::json_rows(L.R, kC);
  j["coef"] = L.coef;
  j["swiglu"] = L.swiglu;
  j["experts"] = Json::array();
  for (const Expert& e : L.experts) {
    Json p;
    p["w1"] = testing::json_rows(e.w1, kC);
    p["w2"] = testing::json_rows(e.w2, kI);
    if (L.swiglu) p["w3"] = testing::json_rows(e.w3, kC);
    if (!L.swiglu) p["b1"] = e.b1;
    if (!L.swiglu) p["b2"] = e.b2;
    j["experts"].push_back(p);
  }
  return j;
}

// Worst |a - b| / (max |b| + 1e-12) over a flat array and a nested JSON array of the same values.
double worst(const std::vector<float>& a, const Json& b) {
  const std::vector<double> flat = testing::json_flat(b);
  EXPECT_EQ(flat.size(), a.size());
  double diff = 0.0, scale = 1e-12;
  for (size_t i = 0; i < flat.size() && i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - flat[i]));
    scale = std::max(scale, std::fabs(flat[i]));
  }
  return diff / scale;
}

void expect_matches(const Layer& L, const Json& ref) {
  EXPECT_LE(worst(L.y, ref["y"]), 1e-5) << L.name << " y";
  EXPECT_NEAR(L.l_aux, ref["l_aux"].get<double>(), 1e-6) << L.name;
  EXPECT_LE(worst(L.dx, ref["dx"]), 1e-5) << L.name << " dx";
  EXPECT_LE(worst(L.drouter, ref["drouter"]), 1e-5) << L.name << " drouter";
  for (size_t e = 0; e < L.experts.size(); ++e) {
    const Expert& x = L.experts[e];
    const Json& r = ref["experts"][e];
    EXPECT_LE(worst(x.dw1, r["w1"]), 1e-5) << L.name << " expert " << e << " w1";
    EXPECT_LE(worst(x.dw2, r["w2"]), 1e-5) << L.name << " expert " << e << " w2";
    if (L.swiglu) {
      EXPECT_LE(worst(x.dw3, r["w3"]), 1e-5) << L.name << " expert " << e << " w3";
    } else {
      EXPECT_LE(worst(x.db1, r["b1"]), 1e-5) << L.name << " expert " << e << " b1";
      EXPECT_LE(worst(x.db2, r["b2"]), 1e-5) << L.name << " expert " << e << " b2";
    }
  }
}

class MoeLayer : public testing::TempDirTest {};

TEST_F(MoeLayer, KernelsComposeToDeepSpeedsMoeLayerForwardAndBackward) {
  std::vector<Layer> layers;
  MoeGateOptions top1;
  top1.min_capacity = 2;
  top1.capacity_factor = 0.75;
  layers.push_back(make("top1_rts_gelu", top1, 4, false, 100));
  MoeGateOptions top2 = top1;
  top2.k = 2;
  layers.push_back(make("top2_drop_swiglu", top2, 4, true, 200));
  MoeGateOptions mixtral;
  mixtral.routing = MoeRouting::kMixtral;
  mixtral.k = 2;
  layers.push_back(make("mixtral_top2_swiglu", mixtral, 8, true, 300));
  MoeGateOptions top3 = top1;
  top3.k = 3;
  layers.push_back(make("top3_probs_gelu", top3, 6, false, 400));
  Json cases = Json::array();
  for (Layer& L : layers) {
    run(L);
    cases.push_back(case_json(L));
  }
  const Json ref = testing::run_moe_reference("moe_layer_reference.py", cases, dir_);
  ASSERT_EQ(ref.size(), layers.size());
  for (size_t i = 0; i < layers.size(); ++i) expect_matches(layers[i], ref[i]);
}

}  // namespace
}  // namespace zt

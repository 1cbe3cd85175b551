// The layer walk: the same bits as the model's own forward and backward, the fixed call
// order that ZeRO-3's fetch order and the gradient buckets depend on, and a pipeline last
// stage reading and completing its tied copy of the embedding.
#include "nn/layer_walk.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "testing/synthetic_data.h"
#include "testing/tiny_model.h"

namespace zt {
namespace {

// Parameters and gradients of a whole arena, recording every call of the walk.
struct Recorder final : LayerParamSource, LayerGradSink {
  Recorder(float* params, float* grads, const ParamTable& table) : params_(params), grads_(grads), table_(table) {}
  void begin_micro(bool) override {}
  StatusOr<void*> layer_params(int layer) override {
    calls += " p" + std::to_string(layer);
    return static_cast<void*>(params_ + table_.layer_range(layer).begin);
  }
  void release(int layer) override { calls += " r" + std::to_string(layer); }
  float* acquire_layer(int layer) override {
    calls += " a" + std::to_string(layer);
    return grads_ + table_.layer_range(layer).begin;
  }
  void layer_done(int layer) override { calls += " d" + std::to_string(layer); }
  Status end_micro() override { return Status::OK(); }

  float* params_;
  float* grads_;
  const ParamTable& table_;
  std::string calls;
};

TEST(LayerWalk, EqualsTheModelsOwnPassesBitForBit) {
  const int B = 2, T = 6;
  for (bool llama : {false, true}) {
    const GptConfig c = testing::tiny_config(llama, 2, 16, 23, 8, 24);
    testing::TinyModel a(c, B, T), b(c, B, T);
    const auto x = testing::random_tokens(B * T, c.vocab_size, 5), y = testing::random_tokens(B * T, c.vocab_size, 6);
    a.grads.zero();
    b.grads.zero();
    ASSERT_TRUE(a.model->forward(x.data(), B, T).ok());
    const LossSum la = a.model->loss(y.data()).value();
    ASSERT_TRUE(a.model->backward(x.data(), y.data(), 0.25f).ok());
    Recorder rec(b.params.data(), b.grads.data(), b.table);
    LayerWalk walk(*b.model);
    const MicroBatch mb{x.data(), y.data()};
    ASSERT_TRUE(walk.forward(mb, B, T, /*with_backward=*/true, rec).ok());
    const LossSum lb = b.model->loss(y.data()).value();
    ASSERT_TRUE(walk.backward(mb, 0.25f, rec, rec).ok());
    EXPECT_EQ(std::memcmp(&la.sum, &lb.sum, sizeof(double)), 0) << (llama ? "llama" : "gpt2");
    EXPECT_EQ(std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(float)), 0)
        << (llama ? "llama" : "gpt2");
  }
}

TEST(LayerWalk, CallsComeInTheFixedOrder) {
  const GptConfig c = testing::tiny_gpt_config();  // two blocks
  testing::TinyModel m(c, 1, 4);
  Recorder rec(m.params.data(), m.grads.data(), m.table);
  const std::vector<int32_t> x = {1, 2, 3, 4}, y = {2, 3, 4, 5};
  LayerWalk walk(*m.model);
  ASSERT_TRUE(walk.forward({x.data(), y.data()}, 1, 4, /*with_backward=*/true, rec).ok());
  EXPECT_EQ(rec.calls, " p-1 r-1 p0 r0 p1 r1 p2 p-1");  // ln_f and the tied head stay held
  rec.calls.clear();
  ASSERT_TRUE(walk.backward({x.data(), y.data()}, 0.25f, rec, rec).ok());
  EXPECT_EQ(rec.calls, " a2 a-1 d2 r2 r-1 p1 a1 d1 r1 p0 a0 d0 r0 a-1 d-1");
  rec.calls.clear();
  ASSERT_TRUE(walk.forward({x.data(), y.data()}, 1, 4, /*with_backward=*/false, rec).ok());
  EXPECT_EQ(rec.calls, " p-1 r-1 p0 r0 p1 r1 p2 p-1 r2 r-1");
}

TEST(LayerWalk, ALastStageReadsAndCompletesItsTiedCopy) {
  const GptConfig c = testing::tiny_gpt_config();
  GptModelOptions mo;
  mo.layout.first_block = 1;
  mo.layout.embedding = false;
  mo.max_seq = 4;
  auto model = GptModel::create(c, mo);
  const ParamTable& table = model->param_table();
  std::vector<float> params(table.numel(), 0.01f), grads(table.numel(), 0.0f);
  Recorder rec(params.data(), grads.data(), table);
  const std::vector<int32_t> y = {2, 3, 4, 5};
  LayerWalk walk(*model);
  ASSERT_TRUE(walk.forward({nullptr, y.data()}, 1, 4, /*with_backward=*/true, rec).ok());
  const int tied = tied_head_layer(c);
  EXPECT_EQ(rec.calls, " p1 r1 p2 p" + std::to_string(tied));
  rec.calls.clear();
  ASSERT_TRUE(walk.backward({nullptr, y.data()}, 0.25f, rec, rec).ok());
  const std::string t = std::to_string(tied);
  EXPECT_EQ(rec.calls, " a2 a" + t + " d2 d" + t + " r2 r" + t + " p1 a1 d1 r1");
}

}  // namespace
}  // namespace zt

// Block routing (block_route.h) beyond the PyTorch oracle's routed cases
// (tests/oracle/*_oracle_test.cc, which state random-LTD and layer drop independently):
// a route over every position in order is the whole block bit for bit (with a branch scale
// too, against the scale alone), a checkpointed
// routed block recomputes to the same bits, and bad routes are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "nn/gpt_model.h"
#include "nn/gpt_params.h"
#include "tensor/buffer.h"
#include "testing/model_oracle.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

constexpr int kB = 2, kT = 8;

struct RouteRun {
  std::vector<float> logits, grads;
};

// Forward, loss and backward of one batch with the given routes (and checkpointing).
RouteRun run(const GptConfig& cfg, const std::vector<BlockRoute>& routes, bool checkpoint) {
  GptModelOptions o;
  o.max_batch = kB;
  o.max_seq = kT;
  o.block_routing = true;
  if (checkpoint) o.checkpoint.assign(static_cast<size_t>(cfg.n_layer), true);
  std::unique_ptr<GptModel> m = GptModel::create(cfg, o);
  const ParamTable table = build_gpt_param_table(cfg);
  FloatBuffer params(table.numel()), grads(table.numel());
  init_params(table, params.data(), 42);
  grads.zero();
  m->bind(params.data(), grads.data());
  const auto x = testing::random_tokens(kB * kT, cfg.vocab_size, 1), y = testing::random_tokens(kB * kT, cfg.vocab_size, 2);
  EXPECT_TRUE(m->set_routes(routes, kB, kT).ok());
  EXPECT_TRUE(m->forward(x.data(), kB, kT).ok());
  RouteRun r;
  r.logits.resize(static_cast<size_t>(cfg.padded_vocab()));
  m->logits_row(kB * kT - 1, r.logits.data());
  const LossSum l = m->loss(y.data()).value();
  EXPECT_TRUE(m->backward(x.data(), y.data(), 1.0f / static_cast<float>(l.count)).ok());
  r.grads.assign(grads.data(), grads.data() + grads.size());
  return r;
}

std::vector<GptConfig> families() {
  return {testing::tiny_config(false, 3, 16, 29, 16, 0), testing::tiny_config(true, 3, 16, 29, 16, 24)};
}

TEST(BlockRoute, EveryPositionInOrderIsTheWholeBlockBitForBit) {
  for (const GptConfig& cfg : families()) {
    BlockRoute all;
    all.kept = kT;
    for (int b = 0; b < kB; ++b) {
      for (int t = 0; t < kT; ++t) all.positions.push_back(t);
    }
    const RouteRun whole = run(cfg, {}, false), routed = run(cfg, {all, all, all}, false);
    EXPECT_EQ(std::memcmp(whole.logits.data(), routed.logits.data(), whole.logits.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(whole.grads.data(), routed.grads.data(), whole.grads.size() * sizeof(float)), 0);
    BlockRoute scaled;  // layer drop's scale alone, and with every position kept
    scaled.scale = 1.5f;
    all.scale = 1.5f;
    const RouteRun a = run(cfg, {scaled, {}, scaled}, false), b = run(cfg, {all, {}, all}, false);
    EXPECT_EQ(std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.grads.data(), b.grads.data(), a.grads.size() * sizeof(float)), 0);
    EXPECT_NE(std::memcmp(a.logits.data(), whole.logits.data(), a.logits.size() * sizeof(float)), 0);
  }
}

TEST(BlockRoute, CheckpointedRoutedBlocksRecomputeTheSameBits) {
  for (const GptConfig& cfg : families()) {
    std::vector<BlockRoute> routes = testing::oracle_routes(kB, kT, 5, 3);  // block 0 kept 5, block 1 skipped
    routes.push_back(routes[0]);
    const RouteRun plain = run(cfg, routes, false), ckpt = run(cfg, routes, true);
    EXPECT_EQ(std::memcmp(plain.logits.data(), ckpt.logits.data(), plain.logits.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(plain.grads.data(), ckpt.grads.data(), plain.grads.size() * sizeof(float)), 0);
    const ParamTable table = build_gpt_param_table(cfg);
    const ElementRange skipped = table.layer_range(1);
    for (size_t i = skipped.begin; i < skipped.end; ++i) ASSERT_EQ(plain.grads[i], 0.0f) << "a skipped block has no gradient";
  }
}

TEST(BlockRoute, BadRoutesAreRefused) {
  const GptConfig cfg = families()[0];
  std::unique_ptr<GptModel> plain = GptModel::create(cfg, kB, kT);
  BlockRoute skip;
  skip.skip = true;
  EXPECT_EQ(plain->set_routes({skip, {}, {}}, kB, kT).code(), StatusCode::kFailedPrecondition);
  GptModelOptions o;
  o.max_batch = kB;
  o.max_seq = kT;
  o.block_routing = true;
  std::unique_ptr<GptModel> m = GptModel::create(cfg, o);
  BlockRoute r;
  r.kept = 2;
  r.positions = {0, 3, 2, 1};  // the second sequence's positions descend
  const Status s = m->set_routes({r, {}, {}}, kB, kT);
  EXPECT_NE(s.message().find("block 0's route: positions must ascend within [0, 8)"), std::string::npos) << s.message();
  r.positions = {0, 3, 1};
  EXPECT_FALSE(m->set_routes({r, {}, {}}, kB, kT).ok());
  EXPECT_FALSE(m->set_routes({r}, kB, kT).ok());
}

}  // namespace
}  // namespace zt

// The single-process Trainer: model-state memory against its closed form, and
// run-to-run determinism (the same seed gives the same bits).
#include "engine/trainer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "testing/synthetic_data.h"

namespace zt {
namespace {

using testing::random_tokens;
using testing::tiny_gpt_config;

TEST(Trainer, ModelStateBytesMatchClosedForm) {
  TrainerOptions o;
  o.model = tiny_gpt_config();
  o.micro_batch = 2;
  o.seq_len = 8;
  auto t = Trainer::create(o);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  const size_t psi = static_cast<size_t>(o.model.num_parameters());
  const MemoryReport m = t.value()->memory();
  EXPECT_EQ(m.param_bytes, 4 * psi);
  EXPECT_EQ(m.grad_bytes, 4 * psi);
  EXPECT_EQ(m.optimizer_bytes, 8 * psi);
  EXPECT_GT(m.activation_bytes, 0u);
  EXPECT_GT(m.peak_rss_bytes, 0u);
}

TEST(Trainer, SameSeedSameBits) {
  TrainerOptions o;
  o.model = tiny_gpt_config();
  o.micro_batch = 2;
  o.seq_len = 8;
  o.schedule.base_lr = 1e-2;
  auto x = random_tokens(16, 23, 5), y = random_tokens(16, 23, 6);
  std::vector<std::vector<float>> finals;
  for (int run = 0; run < 2; ++run) {
    auto t = Trainer::create(o);
    ASSERT_TRUE(t.ok());
    for (int s = 0; s < 3; ++s) ASSERT_TRUE(t.value()->step({{x.data(), y.data()}}).ok());
    std::vector<float> p(t.value()->param_table().numel());
    ASSERT_TRUE(t.value()->gather_params(p.data()).ok());
    finals.push_back(p);
  }
  EXPECT_EQ(0, std::memcmp(finals[0].data(), finals[1].data(), finals[0].size() * sizeof(float)));
}

}  // namespace
}  // namespace zt

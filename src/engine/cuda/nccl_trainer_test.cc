// NCCL at world 1 gives the same bits as no communicator (issue 29, acceptance 1): the
// Trainer on the GPU with a one-rank NCCL group as its data-parallel group, at ZeRO
// stages 0-3, against the same Trainer with none, loss and parameters after each step.
#include <gtest/gtest.h>

#include <vector>

#include "backend/cuda/nccl_process_group.h"
#include "engine/trainer.h"
#include "testing/cuda_test.h"
#include "testing/small_trainer.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

struct Steps {
  std::vector<double> losses;
  std::vector<std::vector<float>> params;
};

Steps train(ZeroStage stage, ProcessGroup* dp) {
  GptConfig model = testing::tiny_config(false, 2, 64, 61, 16, 0);
  model.padded_vocab_size = 64;
  TrainerOptions o = testing::small_trainer(model, stage);
  o.seq_len = 16;
  o.micro_batches = 2;
  o.backend = backend_for(Device::kCuda, DType::kBF16).value();
  Steps r;
  auto t = Trainer::create(o, dp);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  if (!t.ok()) return r;
  for (int s = 0; s < 3; ++s) {
    const testing::SyntheticStep data = testing::synthetic_step(61, 16, 2, 2, 0, 1, s, 11);
    auto st = (*t)->step(data.micro_batches());
    EXPECT_TRUE(st.ok()) << st.status().to_string();
    if (!st.ok()) return r;
    r.losses.push_back(st->loss);
    r.params.emplace_back((*t)->param_table().numel());
    EXPECT_TRUE((*t)->gather_params(r.params.back().data()).ok());
  }
  return r;
}

TEST(NcclTrainer, AtWorldOneTheSameBitsAsNoCommunicator) {
  ZT_REQUIRE_CUDA();
  if (cuda::loaded_nccl_version() == 0) GTEST_SKIP() << "libnccl.so.2 is not loadable here";
  ASSERT_TRUE(backend_for(Device::kCuda, DType::kBF16).ok());  // the context first: NCCL uses its device
  auto host = make_single_process_group();
  CommOptions quick;  // a hang would cost the GPU session's minutes
  quick.timeout_s = 60.0;
  auto nccl = cuda::make_nccl_process_group(*host, quick);
  ASSERT_TRUE(nccl.ok()) << nccl.status().to_string();
  for (int stage = 0; stage <= 3; ++stage) {
    const Steps none = train(static_cast<ZeroStage>(stage), nullptr);
    nccl.value()->reset_stats();
    const Steps with = train(static_cast<ZeroStage>(stage), nccl.value().get());
    EXPECT_EQ(with.losses, none.losses) << "stage " << stage;
    EXPECT_EQ(with.params, none.params) << "stage " << stage;
    EXPECT_GT(nccl.value()->stats().total_logical_bytes(), 0) << "the trainer did not use the NCCL group";
  }
}

}  // namespace
}  // namespace zt

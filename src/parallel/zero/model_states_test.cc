// ModelStates: which arrays each ZeRO stage keeps and how large (the thresholds as one
// owner sees them), the owned range the optimizer gets, the pipeline refusal, and that the
// end-of-step exchange and gather_params give every rank the same full parameters
// (2 thread-ranks; the same initialisation whatever the stage).
#include "parallel/zero/model_states.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "comm/thread_world.h"
#include "nn/gpt_params.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

constexpr int kRanks = 2;

ParamTable tiny_table() { return build_gpt_param_table(testing::tiny_gpt_config()); }

ModelStatesOptions at(ZeroStage stage) {
  ModelStatesOptions o;
  o.stage = stage;
  o.allgather_bucket_elems = 1000;
  o.fetch.prefetch_elems = 2000;
  o.fetch.persistence_threshold = 0;
  return o;
}

TEST(ModelStates, EachStageKeepsItsThresholdsArrays) {
  const ParamTable table = tiny_table();
  const size_t psi = table.numel();
  const Partition partition(psi, kRanks);
  ThreadWorld world(kRanks, CommOptions{});
  for (int s = 0; s <= 3; ++s) {
    const ZeroStage stage = static_cast<ZeroStage>(s);
    const Status st = run_ranks(kRanks, [&](int rank) -> Status {
      auto group = world.group(rank);
      ZT_ASSIGN_OR_RETURN(auto m, ModelStates::create(table, partition, group.get(), 2, at(stage)));
      const size_t shard = partition.shard(rank).size();
      EXPECT_EQ(m->param_bytes(), 4 * (s >= 3 ? shard : psi)) << "stage " << s;
      EXPECT_EQ(m->grad_bytes(), 4 * (s >= 2 ? shard : psi)) << "stage " << s;
      EXPECT_EQ(m->owned_range().size(), s >= 1 ? shard : psi) << "stage " << s;
      EXPECT_EQ(m->full_grads() == nullptr, s >= 2);
      EXPECT_EQ(m->grad_shard() == nullptr, s < 2 || shard == 0);
      EXPECT_EQ(m->gathers_layers(), s == 3);
      return Status::OK();
    });
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
}

TEST(ModelStates, PipelinesRefuseStagesTwoAndThreeInOnePlace) {
  EXPECT_TRUE(ModelStates::validate(ZeroStage::kOptimizer, 4).ok());
  EXPECT_TRUE(ModelStates::validate(ZeroStage::kParameters, 1).ok());
  const Status s = ModelStates::validate(ZeroStage::kGradients, 2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/zero_optimization/stage"), std::string::npos) << s.to_string();
}

// Every rank scales its owned parameters by (rank + 2); after finish_step (stages 1-2)
// or through the shards (stage 3), gather_params must show each element scaled by its
// owner's factor, identically on every rank.
TEST(ModelStates, FinishStepAndGatherGiveEveryRankTheOwnersValues) {
  const ParamTable table = tiny_table();
  const size_t psi = table.numel();
  const Partition partition(psi, kRanks);
  std::vector<float> init(psi);
  init_params(table, init.data(), at(ZeroStage::kNone).seed);
  ThreadWorld world(kRanks, CommOptions{});
  for (int s = 1; s <= 3; ++s) {
    std::vector<std::vector<float>> gathered(kRanks, std::vector<float>(psi));
    const Status st = run_ranks(kRanks, [&](int rank) -> Status {
      auto group = world.group(rank);
      ZT_ASSIGN_OR_RETURN(auto m, ModelStates::create(table, partition, group.get(), 2, at(static_cast<ZeroStage>(s))));
      std::vector<float> p(m->owned_range().size());  // through the backend: arenas may not be host memory
      const Backend& b = cpu_backend();
      b.copy_to_host(p.data(), m->owned_params(), p.size() * sizeof(float));
      for (float& x : p) x *= static_cast<float>(rank + 2);
      b.copy_from_host(m->owned_params(), p.data(), p.size() * sizeof(float));
      ZT_RETURN_IF_ERROR(m->finish_step());
      return m->gather_params(gathered[static_cast<size_t>(rank)].data());
    });
    ASSERT_TRUE(st.ok()) << st.to_string();
    for (int r = 0; r < kRanks; ++r) {
      for (size_t i = 0; i < psi; ++i) {
        const int owner = static_cast<int>(i / partition.shard_size());
        ASSERT_EQ(gathered[static_cast<size_t>(r)][i], init[i] * static_cast<float>(owner + 2))
            << "stage " << s << " rank " << r << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace zt

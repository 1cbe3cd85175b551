// Expert parallelism through the zerotrain binary under mpirun (issue 30): a config's
// model.moe.ep_size splits the MPI world into expert-parallel and expert-data-parallel
// communicators, 4 ranks with ep 2 and ZeRO-1 train as one process does on the same global
// batch, and their checkpoint, whose experts were written by the ranks holding them,
// resumes in one process and exports as one MixtralForCausalLM. MPI's own all-to-all
// (allreduce_algorithm "mpi": MPI_Ialltoallv) trains the same model as zerotrain's exchange,
// and bf16 with ep trains close to fp32.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "testing/cli_corpus_test.h"

namespace zt {
namespace {

class MoeEpCli : public testing::CliCorpusTest {
 protected:
  // A 2-block Mixtral with 4 top-2 experts per block, 8 sequences of 16 tokens per step.
  static std::string config(int ep, int stage, const std::string& out, int steps, const char* algorithm = "ring",
                            int sample_tokens = 0) {
    return R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
      "parallel": {"allreduce_algorithm": ")" + std::string(algorithm) + R"("},
      "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
      "zero_optimization": {"stage": )" + std::to_string(stage) + R"(},
      "model": {"family": "llama", "n_layer": 2, "n_head": 2, "n_embd": 16, "intermediate_size": 32,
                "n_positions": 16,
                "moe": {"routing": "mixtral", "num_experts": 4, "num_experts_per_tok": 2,
                        "router_aux_loss_coef": 0.02, "ep_size": )" + std::to_string(ep) + R"(}},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": )" + std::to_string(steps) + R"(, "output_dir": ")" + out + R"(", "save_interval": 2,
                   "eval_interval": 0, "sample_tokens": )" + std::to_string(sample_tokens) + R"(}})";
  }
  std::map<int64_t, double> losses(const std::string& out) { return testing::metrics_losses(dir_ + "/" + out + "/metrics.csv"); }
};

TEST_F(MoeEpCli, FourRanksWithEp2MatchOneProcessAndResumeInIt) {
  // The end-of-run sample reads the whole model back from the last checkpoint (each rank
  // holds half the experts).
  ASSERT_EQ(train(4, config(2, 1, "ep", 4, "ring", 8)), 0) << out_;
  EXPECT_NE(out_.find("--- sample"), std::string::npos) << out_;
  EXPECT_NE(out_.find("expert parallel: ep 2 (2 of 4 experts per rank), expert-data-parallel 2"), std::string::npos) << out_;
  ASSERT_EQ(train(1, config(1, 0, "one", 4)), 0) << out_;
  const std::map<int64_t, double> ep = losses("ep"), one = losses("one");
  ASSERT_EQ(ep.size(), 4u);
  ASSERT_EQ(one.size(), 4u);
  for (const auto& [step, loss] : one) EXPECT_NEAR(ep.at(step), loss, 1e-5 * loss) << "step " << step;
  // One process resumes the 4-rank checkpoint of step 2 and takes the same steps 3 and 4.
  ASSERT_EQ(train(1, config(1, 0, "ep", 4), "--resume ep/checkpoints/global_step2"), 0) << out_;
  EXPECT_NE(out_.find("resharded from dp 4 x pp 1 x tp 1 (ep 2), ZeRO-1"), std::string::npos) << out_;
  const std::map<int64_t, double> resumed = losses("ep");
  for (int64_t step : {3, 4}) EXPECT_NEAR(resumed.at(step), one.at(step), 1e-5 * one.at(step)) << "step " << step;
  // The 4-rank checkpoint is one HF model with every expert.
  ASSERT_EQ(run(testing::binary_dir() + "/zerotrain export ep/checkpoints/global_step2 -o hf"), 0) << out_;
  const std::string config_json = testing::read_text(dir_ + "/hf/config.json");
  EXPECT_NE(config_json.find("MixtralForCausalLM"), std::string::npos) << config_json;
  const std::string weights = testing::read_text(dir_ + "/hf/model.safetensors");
  for (int l = 0; l < 2; ++l) {
    for (int j = 0; j < 4; ++j) {
      const std::string name = "model.layers." + std::to_string(l) + ".block_sparse_moe.experts." + std::to_string(j) + ".w2.weight";
      EXPECT_NE(weights.find(name), std::string::npos) << name;
    }
  }
  // bf16 with ep 2 and ZeRO-2 through the binary: the MoE MLP's fp32 island trains close to fp32.
  std::string bf16 = config(2, 2, "bf16", 4);
  bf16.insert(1, R"("bf16": {"enabled": true}, )");
  ASSERT_EQ(train(4, bf16), 0) << out_;
  EXPECT_NE(out_.find("backend: cpu bf16"), std::string::npos) << out_;
  for (const auto& [step, loss] : losses("bf16")) EXPECT_NEAR(loss, one.at(step), 2e-2 * one.at(step)) << "step " << step;
  // MPI_Ialltoallv moves the tokens, MPI's collectives the gradients.
  ASSERT_EQ(train(4, config(4, 2, "mpi", 4, "mpi")), 0) << out_;
  const std::map<int64_t, double> mpi = losses("mpi");
  for (const auto& [step, loss] : one) EXPECT_NEAR(mpi.at(step), loss, 1e-5 * loss) << "step " << step;
}

}  // namespace
}  // namespace zt

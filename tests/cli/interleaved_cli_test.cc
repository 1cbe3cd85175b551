// Interleaved 1F1B through the zerotrain binary under mpirun (issue 31): DeepSpeed's
// pipeline section with virtual_stages 2 runs 2 ranks of pp 2 as 4 virtual stages (MPI
// point-to-point between chunks, which the thread-rank tests do not reach). Its losses
// are plain 1F1B's bits (trainer_interleaved_test.cc argues why); its step-2 checkpoint
// resumes in plain 1F1B for the same steps 3 and 4, and plain 1F1B's resumes interleaved.
#include <gtest/gtest.h>

#include <string>

#include "testing/cli_corpus_test.h"

namespace zt {
namespace {

class InterleavedCli : public testing::CliCorpusTest {
 protected:
  // A 4-block GPT (tied head), 8 sequences of 16 tokens per step in 4 micro-batches.
  static std::string config(int virtual_stages, const std::string& out) {
    return R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2,
      "parallel": {"pp": 2}, "pipeline": {"virtual_stages": )" + std::to_string(virtual_stages) + R"(},
      "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
      "model": {"n_layer": 4, "n_head": 4, "n_embd": 32, "n_positions": 16},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": 4, "output_dir": ")" + out + R"(", "save_interval": 2, "eval_interval": 2,
                   "sample_tokens": 0}})";
  }
  std::map<int64_t, double> losses(const std::string& out) { return testing::metrics_losses(dir_ + "/" + out + "/metrics.csv"); }
};

TEST_F(InterleavedCli, TwoChunksPerRankGiveOneFOneBsLossesAndCheckpoints) {
  ASSERT_EQ(train(2, config(2, "v2")), 0) << out_;
  EXPECT_NE(out_.find("pp 2 (interleaved 2-chunk 1f1b schedule"), std::string::npos) << out_;
  ASSERT_EQ(train(2, config(1, "v1")), 0) << out_;
  const std::map<int64_t, double> v2 = losses("v2"), v1 = losses("v1");
  ASSERT_EQ(v2.size(), 4u);
  EXPECT_EQ(v2, v1);
  // Each layout resumes the other's step-2 checkpoint and takes the same steps 3 and 4.
  ASSERT_EQ(train(2, config(1, "v2"), "--resume v2/checkpoints/global_step2"), 0) << out_;
  for (int64_t step : {3, 4}) EXPECT_EQ(losses("v2").at(step), v1.at(step)) << "step " << step;
  ASSERT_EQ(train(2, config(2, "v1"), "--resume v1/checkpoints/global_step2"), 0) << out_;
  for (int64_t step : {3, 4}) EXPECT_EQ(losses("v1").at(step), v1.at(step)) << "step " << step;
  // The refusal names the rule: 3 micro-batches on 2 stages.
  EXPECT_NE(train(2, R"({"train_batch_size": 6, "train_micro_batch_size_per_gpu": 2, "parallel": {"pp": 2},
      "pipeline": {"virtual_stages": 2}, "model": {"n_layer": 4, "n_head": 4, "n_embd": 32, "n_positions": 16},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16}, "training": {"steps": 1}})"), 0);
  EXPECT_NE(out_.find("/parallel/virtual_stages: interleaved 1F1B needs the micro-batches per step (3)"),
            std::string::npos) << out_;
}

}  // namespace
}  // namespace zt

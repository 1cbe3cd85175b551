// Sequence parallelism and ZeRO++ through the zerotrain binary under mpirun (issue 31):
// DeepSpeed's sequence_parallel_size and zero_hpz_partition_size split the MPI world into
// sequence-parallel and hpZ communicators (MpiWorld::split, which the thread-rank tests do
// not reach). 4 ranks with sp 2, ZeRO-3 and hpZ 2 train as one process does on the same
// global batch (sp's fp32 reassociation bound, 1e-5 of the loss; hpZ changes no bit), also
// with MPI's own collectives and all-to-all; their checkpoint resumes in one process; qwZ
// on top stays within 1 % of it. qgZ (zero_quantized_gradients) in its two levels over the
// hpZ and dp communicators gives the same bits with zerotrain's exchange and with
// MPI_Ialltoallv, and stays within 1 % of one process.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "testing/cli_corpus_test.h"

namespace zt {
namespace {

class SeqParZeroPpCli : public testing::CliCorpusTest {
 protected:
  // A 2-block GQA Llama (4 heads, 2 kv heads), 8 sequences of 16 tokens per step.
  static std::string config(int sp, int hpz, bool qwz, const std::string& out, const char* algorithm = "ring",
                            bool qgz = false) {
    return R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "sequence_parallel_size": )" +
           std::to_string(sp) + R"(,
      "parallel": {"allreduce_algorithm": ")" + std::string(algorithm) + R"("},
      "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
      "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0, "zero_hpz_partition_size": )" +
           std::to_string(hpz) + R"(, "zero_quantized_weights": )" + (qwz ? "true" : "false") +
           R"(, "zero_quantized_gradients": )" + (qgz ? "true" : "false") + R"(},
      "model": {"family": "llama", "n_layer": 2, "n_head": 4, "num_key_value_heads": 2, "n_embd": 32,
                "intermediate_size": 48, "n_positions": 16},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": 4, "output_dir": ")" + out + R"(", "save_interval": 2, "eval_interval": 0,
                   "sample_tokens": 0}})";
  }
  std::map<int64_t, double> losses(const std::string& out) { return testing::metrics_losses(dir_ + "/" + out + "/metrics.csv"); }
};

TEST_F(SeqParZeroPpCli, FourRanksWithSp2AndHpz2MatchOneProcessAndResumeInIt) {
  ASSERT_EQ(train(4, config(2, 2, false, "sp")), 0) << out_;
  EXPECT_NE(out_.find("sequence parallel (Ulysses): sp 2, 8 of 16 tokens per sequence and 2 of 4 heads"), std::string::npos)
      << out_;
  ASSERT_EQ(train(1, config(1, 1, false, "one")), 0) << out_;
  const std::map<int64_t, double> sp = losses("sp"), one = losses("one");
  ASSERT_EQ(sp.size(), 4u);
  ASSERT_EQ(one.size(), 4u);
  for (const auto& [step, loss] : one) EXPECT_NEAR(sp.at(step), loss, 1e-5 * loss) << "step " << step;
  ASSERT_EQ(train(4, config(2, 2, false, "mpi", "mpi")), 0) << out_;  // MPI_Ialltoallv and MPI's collectives
  for (const auto& [step, loss] : losses("mpi")) EXPECT_NEAR(loss, one.at(step), 1e-5 * one.at(step)) << "step " << step;
  // One process resumes the 4-rank checkpoint of step 2 and takes the same steps 3 and 4.
  ASSERT_EQ(train(1, config(1, 1, false, "sp"), "--resume sp/checkpoints/global_step2"), 0) << out_;
  const std::map<int64_t, double> resumed = losses("sp");
  for (int64_t step : {3, 4}) EXPECT_NEAR(resumed.at(step), one.at(step), 1e-5 * one.at(step)) << "step " << step;
  // qwZ on top: int8 weights in every gather, within 1 % of the exact run.
  ASSERT_EQ(train(4, config(2, 2, true, "qwz")), 0) << out_;
  const std::map<int64_t, double> q = losses("qwz");
  ASSERT_EQ(q.size(), 4u);
  bool differs = false;
  for (const auto& [step, loss] : q) {
    EXPECT_NEAR(loss, one.at(step), 1e-2 * one.at(step)) << "step " << step;
    differs = differs || loss != sp.at(step);
  }
  EXPECT_TRUE(differs) << "qwZ changed nothing";
}

TEST_F(SeqParZeroPpCli, QgzTwoLevelsSameBitsOverEitherExchangeNearOneProcess) {
  ASSERT_EQ(train(1, config(1, 1, false, "one")), 0) << out_;
  ASSERT_EQ(train(4, config(2, 2, false, "qgz", "ring", true)), 0) << out_;
  ASSERT_EQ(train(4, config(2, 2, false, "qgz_mpi", "mpi", true)), 0) << out_;
  const std::map<int64_t, double> one = losses("one"), q = losses("qgz"), m = losses("qgz_mpi");
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q, m);  // the arithmetic does not depend on how the bytes move
  bool differs = false;
  for (const auto& [step, loss] : q) {
    EXPECT_NEAR(loss, one.at(step), 1e-2 * one.at(step)) << "step " << step;
    differs = differs || std::fabs(loss - one.at(step)) > 1e-5 * one.at(step);
  }
  EXPECT_TRUE(differs) << "qgZ changed nothing";
}

}  // namespace
}  // namespace zt

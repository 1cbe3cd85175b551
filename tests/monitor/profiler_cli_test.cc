// DeepSpeed's flops_profiler and comms_logger through the zerotrain binary:
//  - the profile's model FLOPs equal the closed form MFU uses (flops_per_token x tokens)
//    and the modules' FLOPs sum to it exactly; the modules' measured latencies sum to the
//    measured step within 10 %; the requested depth and top-k appear;
//  - the comms logger's logical volume per rank at dp 2 (accumulation 1) is, relative to
//    stage 0's all-reduce, 1x for ZeRO-1 and -2 and 1.5x for ZeRO-3, as the ZeRO paper
//    counts (within 5 %: the loss and norm all-reduces add a few bytes), and its table
//    lists the collectives each stage uses.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>

#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

class ProfilerCli : public zt::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    testing::write_small_corpus(dir_);
    ASSERT_EQ(run(1, testing::kPrepareSmallCorpus), 0) << out_;
  }
  int run(int np, const std::string& args) {
    return testing::run_logged("cd " + dir_ + " && OMP_NUM_THREADS=1 " + (np > 1 ? testing::mpirun_prefix(np) : "") +
                                   testing::binary_dir() + "/zerotrain " + args,
                               dir_ + "/log", &out_);
  }
  std::string config(const std::string& name, int batch, int stage, const std::string& extra) {
    std::ofstream(dir_ + "/" + name + ".json") << R"({"train_batch_size": )" << batch
        << R"(, "train_micro_batch_size_per_gpu": 4, "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
      "zero_optimization": {"stage": )" << stage << R"(, "stage3_param_persistence_threshold": 0}, )" << extra << R"(
      "model": {"n_layer": 4, "n_head": 4, "n_embd": 128, "n_positions": 64},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 64},
      "training": {"steps": 3, "eval_interval": 0, "output_dir": ")" << name << R"(", "save_at_end": false}})";
    return "train --config " + name + ".json";
  }
  double number_after(const std::string& key) {
    const size_t at = out_.find(key);
    EXPECT_NE(at, std::string::npos) << key << "\n" << out_;
    return at == std::string::npos ? -1 : std::strtod(out_.c_str() + at + key.size(), nullptr);
  }
  std::string out_;
};

TEST_F(ProfilerCli, ModelFlopsAreTheClosedFormAndLatenciesSumToTheStep) {
  ASSERT_EQ(run(1, config("f", 8, 0, R"("flops_profiler": {"enabled": true, "profile_step": 2, "module_depth": 1,
                                       "top_modules": 3},)")), 0) << out_;
  // flops_per_token(T) = 6 (12 L C^2 + V C) + 12 L C T; 8 sequences of 64 tokens per step.
  const double L = 4, C = 128, V = 257, T = 64;
  const double closed = (6 * (12 * L * C * C + V * C) + 12 * L * C * T) * 8 * T;
  EXPECT_EQ(number_after("model FLOPs per step: "), closed);
  EXPECT_EQ(number_after("module FLOPs sum: "), closed);
  const double sum = number_after("sum of module latencies:"), step = number_after("iter latency (measured step):");
  EXPECT_NEAR(sum / step, 1.0, 0.10) << out_;
  std::printf("  module latencies sum to %.3f of the measured step (%.2f of %.2f ms)\n", sum / step, sum, step);
  EXPECT_NE(out_.find("Profile Summary at step 2:"), std::string::npos);
  EXPECT_TRUE(std::regex_search(out_, std::regex(R"(params      - \{'h\.\d': '[^']+', 'h\.\d': '[^']+', 'h\.\d')")))
      << "top 3 at depth 1:\n" << out_;
  for (const char* m : {"  wte+wpe", "  h.3", "  ln_f+lm_head+loss", "  optimizer step"}) {
    EXPECT_NE(out_.find(m), std::string::npos) << m;
  }
}

TEST_F(ProfilerCli, CommsLoggerVolumeFollowsTheZeroPaperAtDp2) {
  double volume[4];
  for (int stage = 0; stage <= 3; ++stage) {
    const std::string name = "z" + std::to_string(stage);
    ASSERT_EQ(run(2, config(name, 8, stage, R"("comms_logger": {"enabled": true},)")), 0) << out_;
    volume[stage] = number_after("logical volume per rank (ZeRO paper's count): ");
    EXPECT_NE(out_.find("Comm. Op            Message Size        Count"), std::string::npos);
    EXPECT_NE(out_.find(stage == 0 ? "\nall_reduce\n" : "\nreduce_scatter\n"), std::string::npos) << out_;
    if (stage > 0) EXPECT_NE(out_.find("\nall_gather\n"), std::string::npos) << out_;
  }
  EXPECT_NEAR(volume[1] / volume[0], 1.0, 0.05);
  EXPECT_NEAR(volume[2] / volume[0], 1.0, 0.05);
  EXPECT_NEAR(volume[3] / volume[0], 1.5, 0.05);
  std::printf("  logical volume per rank, 3 steps: stage 0 %.0f, 1 %.3fx, 2 %.3fx, 3 %.3fx\n", volume[0],
              volume[1] / volume[0], volume[2] / volume[0], volume[3] / volume[0]);
}

}  // namespace
}  // namespace zt

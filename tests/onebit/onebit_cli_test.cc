// The wild vocabulary through the zerotrain binary (2 ranks):
//  - OneBitAdam, ZeroOneAdam and OneBitLamb train (the loss falls) and, after their
//    warm-up, move a fraction of AdamW's all-reduce volume, the rest as compressed bits;
//  - a 1-bit optimizer with ZeRO-1 is refused naming /optimizer/type (exit 2);
//  - "auto" values are resolved, printed in the banner with their pointers, and
//    --print-config prints the resolved configuration.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using testing::read_text;

class OnebitCli : public zt::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    testing::write_small_corpus(dir_);
    ASSERT_EQ(run(1, testing::kPrepareSmallCorpus), 0);
  }

  int run(int np, const std::string& args) {
    const std::string launcher = np > 1 ? testing::mpirun_prefix(np) : "";
    return testing::run_logged("cd " + dir_ + " && OMP_NUM_THREADS=1 " + launcher + testing::binary_dir() +
                                   "/zerotrain " + args,
                               dir_ + "/log", &out_);
  }

  std::string config(const std::string& name, const std::string& optimizer, int stage = 0) {
    std::string extra;  // each optimizer's warm-up key, and the backend keys DeepSpeed's 1-bit configs carry
    if (optimizer == "OneBitAdam" || optimizer == "OneBitLamb") extra = R"(, "freeze_step": 4)";
    if (optimizer == "ZeroOneAdam") extra = R"(, "var_freeze_step": 4)";
    if (optimizer != "AdamW") extra += R"(, "comm_backend_name": "nccl", "cuda_aware": false)";
    std::ofstream(dir_ + "/" + name + ".json") << R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4,
      "optimizer": {"type": ")" << optimizer << R"(", "params": {"lr": 3e-3, "weight_decay": 0.01)" << extra << R"(}},
      "gradient_clipping": "auto", "steps_per_print": 1, "zero_optimization": {"stage": )" << stage << R"(},
      "model": {"n_layer": 2, "n_head": 2, "n_embd": 64, "n_positions": 32},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": 16, "eval_interval": 0, "output_dir": ")" << name << R"(", "save_at_end": false}})";
    return "train --config " + name + ".json";
  }

  // Rank 0's logical bytes of `op` from the run's report.
  double comm_bytes(const std::string& run, const std::string& op) {
    auto j = parse_json_strict(read_text(dir_ + "/" + run + "/run_report.json"), "run_report.json");
    EXPECT_TRUE(j.ok());
    const Json& b = j.value()["ranks"][0]["comm_logical_bytes"];
    return b.contains(op) ? b[op].get<double>() : 0.0;
  }

  std::string out_;
};

TEST_F(OnebitCli, EachTrainsAndCompressesAfterItsWarmup) {
  ASSERT_EQ(run(2, config("adamw", "AdamW")), 0) << out_;
  const double adam = comm_bytes("adamw", "all_reduce");
  for (const char* opt : {"OneBitAdam", "ZeroOneAdam", "OneBitLamb"}) {
    ASSERT_EQ(run(2, config(opt, opt)), 0) << opt << "\n" << out_;
    std::vector<double> loss;  // the "step N/M | loss X | ..." lines
    std::istringstream lines(out_);
    for (std::string line; std::getline(lines, line);) {
      int step = 0, steps = 0;
      double x = 0.0;
      if (std::sscanf(line.c_str(), "step %d/%d | loss %lf", &step, &steps, &x) == 3) loss.push_back(x);
    }
    ASSERT_EQ(loss.size(), 16u) << out_;
    EXPECT_LT(loss.back(), loss.front()) << opt;
    EXPECT_GT(comm_bytes(opt, "send"), 0.0) << opt;  // the compressed exchange ran
    // Four warm-up steps of 16 reduce whole gradients (0/1 Adam: the variance steps too).
    EXPECT_LT(comm_bytes(opt, "all_reduce"), 0.55 * adam) << opt;
  }
  EXPECT_NE(out_.find("config: /gradient_clipping: \"auto\" -> 1.0"), std::string::npos) << out_;
  EXPECT_NE(out_.find("config: /optimizer/params/comm_backend_name"), std::string::npos) << out_;
}

TEST_F(OnebitCli, RefusedWithZeroStageOne) {
  EXPECT_EQ(run(2, config("z1", "OneBitAdam", 1)), 2) << out_;
  EXPECT_NE(out_.find("/optimizer/type: the 1-bit optimizers compress the data-parallel exchange"), std::string::npos)
      << out_;
}

TEST_F(OnebitCli, PrintConfigShowsResolvedAutoValues) {
  std::ofstream(dir_ + "/auto.json") << R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto", "gradient_clipping": "auto", "bfloat16": {"enabled": false},
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 32, "n_positions": 32},
    "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16}})";
  ASSERT_EQ(run(2, "train --config auto.json --print-config"), 0) << out_;
  auto j = parse_json_strict(out_, "stdout");
  ASSERT_TRUE(j.ok()) << out_;
  EXPECT_EQ(j.value()["train_batch_size"], 16);  // 8 (HuggingFace's default micro-batch) x 1 x dp 2
  EXPECT_EQ(j.value()["train_micro_batch_size_per_gpu"], 8);
  EXPECT_EQ(j.value()["gradient_accumulation_steps"], 1);
  EXPECT_EQ(j.value()["gradient_clipping"], 1.0);
  EXPECT_FALSE(j.value().contains("bfloat16"));
  EXPECT_EQ(j.value()["bf16"]["enabled"], false);
}

}  // namespace
}  // namespace zt

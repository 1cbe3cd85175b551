// The eigenvalue block through the zerotrain binary (cli/eigenvalue_step.h): 2 ranks at
// ZeRO-2, every 2nd step; verbose prints DeepSpeed's lines per block, and csv_monitor gets
// Train/Eigenvalues/ModelBlockParam_<i> for each parameter tensor of each block on exactly
// those steps (x = global samples), post-processed into (0, 1] with the largest block at 1.
// With pipeline parallelism the block is refused by path before any work.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "testing/cli_corpus_test.h"

namespace zt {
namespace {

class EigenvalueCli : public testing::CliCorpusTest {
 protected:
  int train_with(int np, const std::string& extra) {
    return train(np, R"({"train_batch_size": 4, "train_micro_batch_size_per_gpu": 2,
      "zero_optimization": {"stage": 2}, "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
      "model": {"n_layer": 2, "n_head": 2, "n_embd": 16, "n_positions": 16},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 8},
      "training": {"steps": 4, "output_dir": "out"},
      "csv_monitor": {"enabled": true, "output_path": "mon", "job_name": "j"},
      "eigenvalue": {"enabled": true, "verbose": true, "max_iter": 20, "tol": 1e-2, "gas_boundary_resolution": 2,
                     "layer_name": "h", "model_name": "tiny"})" + extra + "}");
  }
};

TEST_F(EigenvalueCli, EveryOtherStepLogsEachBlockToTheMonitors) {
  ASSERT_EQ(train_with(2, ""), 0) << out_;
  for (const char* line : {"step 2: block: 0, power iteration: ", "step 2: block: 1, power iteration: ",
                           "step 4: block: 1, power iteration: ", "step 4: post processed block_eigenvalue: ["}) {
    EXPECT_NE(out_.find(line), std::string::npos) << line << "\n" << out_;
  }
  EXPECT_EQ(out_.find("step 1: block:"), std::string::npos) << out_;
  EXPECT_NE(out_.find("/eigenvalue/layer_name: no effect here"), std::string::npos) << out_;
  bool some_one = false;
  for (int i = 0; i < 24; ++i) {  // 12 tensors in each of 2 GPT-2 blocks
    const std::string csv = testing::read_text(dir_ + "/mon/j/Train_Eigenvalues_ModelBlockParam_" + std::to_string(i) + ".csv");
    std::istringstream rows(csv);
    std::string header, a, b, extra;
    ASSERT_TRUE(std::getline(rows, header) && std::getline(rows, a) && std::getline(rows, b)) << i << ": " << csv;
    EXPECT_FALSE(std::getline(rows, extra)) << "steps 2 and 4 only: " << csv;
    EXPECT_EQ(header, "step,ModelBlockParam_" + std::to_string(i));
    EXPECT_EQ(a.substr(0, 2), "8,") << "x = global samples after step 2";
    EXPECT_EQ(b.substr(0, 3), "16,");
    const double v = std::stod(b.substr(3));
    EXPECT_GT(v, 0.0);
    EXPECT_LE(v, 1.0);
    some_one = some_one || v == 1.0;
  }
  EXPECT_TRUE(some_one) << "the largest block post-processes to 1";
}

TEST_F(EigenvalueCli, PipelineParallelismIsRefusedByPath) {
  EXPECT_EQ(train_with(2, R"(, "parallel": {"pp": 2})"), 2) << out_;
  EXPECT_NE(out_.find("/eigenvalue/enabled: the estimate needs the whole model on every rank"), std::string::npos) << out_;
}

}  // namespace
}  // namespace zt

// DeepSpeed's autotuning block through the zerotrain binary (cli/autotune.h):
//  1. A user tuning space (stages [0, 1] x micro-batches [1, 2], 2 ranks) runs all four
//     experiments (gradient accumulation 2 / micro, DeepSpeed's rule), writes DeepSpeed's files (exps_dir/<name>.json, results_dir/<name>/
//     {ds_config.json, metrics.json}, summary.txt, ds_config_optimal.json, cmd_optimal.txt),
//     and trains with the best: the optimal config has no autotuning block, its stage and
//     micro-batch come from the space, and its summary names it. A resumed run reuses the
//     optimal config instead of tuning again, and resuming without it is an error naming it.
//  2. A fixed train_batch_size keeps every experiment's global batch: micro x gas x dp.
//  3. metric "flops" is refused by JSON path (zerotrain's step time is the honest metric).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/json_strict.h"
#include "testing/cli_corpus_test.h"

namespace zt {
namespace {

class Autotune : public testing::CliCorpusTest {
 protected:
  Json optimal() {
    auto j = parse_json_strict(testing::read_text(dir_ + "/results/ds_config_optimal.json"), "ds_config_optimal.json");
    EXPECT_TRUE(j.ok()) << j.status().to_string();
    return j.ok() ? *j : Json();
  }
  std::string config(const std::string& batch, const std::string& stage, const std::string& extra_tuning) {
    return R"({)" + batch + R"(, "zero_optimization": {"stage": )" + stage + R"(},
      "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
      "model": {"n_layer": 1, "n_head": 2, "n_embd": 32, "n_positions": 32},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": 4, "output_dir": "out", "save_interval": 2},
      "autotuning": {"enabled": true, "start_profile_step": 2, "end_profile_step": 3,
                     "results_dir": "results", "exps_dir": "exps")" + extra_tuning + "}}";
  }
};

TEST_F(Autotune, UserSpaceRunsEveryExperimentWritesDeepSpeedsFilesAndTrainsWithTheBest) {
  ASSERT_EQ(train(2, config(R"("train_micro_batch_size_per_gpu": [1, 2])", "[0, 1]", "")), 0) << out_;
  for (const char* e : {"z0_gas2_tmbspg1", "z0_gas1_tmbspg2", "z1_gas2_tmbspg1", "z1_gas1_tmbspg2"}) {
    EXPECT_TRUE(std::filesystem::exists(dir_ + "/exps/" + std::string(e) + ".json")) << e;
    EXPECT_TRUE(std::filesystem::exists(dir_ + "/results/" + std::string(e) + "/ds_config.json")) << e;
    auto m = parse_json_strict(testing::read_text(dir_ + "/results/" + e + "/metrics.json"), e);
    ASSERT_TRUE(m.ok()) << e << ": " << m.status().to_string();
    EXPECT_GT((*m)["throughput"].get<double>(), 0.0) << e;
    EXPECT_NE(out_.find(std::string("autotuning: ") + e + " latency"), std::string::npos) << out_;
  }
  const Json best = optimal();
  EXPECT_FALSE(best.contains("autotuning"));
  const int stage = best["zero_optimization"]["stage"].get<int>();
  const int64_t micro = best["train_micro_batch_size_per_gpu"].get<int64_t>();
  EXPECT_TRUE(stage == 0 || stage == 1);
  EXPECT_TRUE(micro == 1 || micro == 2);
  EXPECT_EQ(best["train_batch_size"].get<int64_t>(), 4) << "DeepSpeed's rule: gas = the largest micro-batch / micro";
  const std::string name = "z" + std::to_string(stage) + "_gas" + std::to_string(2 / micro) + "_tmbspg" + std::to_string(micro);
  EXPECT_NE(testing::read_text(dir_ + "/results/summary.txt").find("| global | 4 | "), std::string::npos);
  EXPECT_NE(testing::read_text(dir_ + "/results/summary.txt").find(name), std::string::npos);
  EXPECT_NE(testing::read_text(dir_ + "/results/cmd_optimal.txt").find("ds_config_optimal.json"), std::string::npos);
  EXPECT_NE(out_.find("autotuning: best " + name + " by throughput"), std::string::npos) << out_;
  EXPECT_NE(out_.find("step 4/4"), std::string::npos) << out_;
  // The resumed run keeps the tuned configuration; without it, the error names the file.
  ASSERT_EQ(train(2, config(R"("train_micro_batch_size_per_gpu": [1, 2])", "[0, 1]", R"(, "tuner_num_trials": 9)"),
                  "--resume out/checkpoints"),
            0)
      << out_;
  EXPECT_NE(out_.find("autotuning: resumed run"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("latency"), std::string::npos) << "tuned again: " << out_;
  std::filesystem::remove(dir_ + "/results/ds_config_optimal.json");
  EXPECT_EQ(train(1, config(R"("train_micro_batch_size_per_gpu": [1, 2])", "[0, 1]", ""), "--resume out/checkpoints"), 2);
  EXPECT_NE(out_.find("/autotuning: resuming a tuned run needs its results/ds_config_optimal.json"), std::string::npos) << out_;
}

TEST_F(Autotune, FixedGlobalBatchKeepsMicroTimesGasTimesDp) {
  ASSERT_EQ(train(1, config(R"("train_batch_size": 4, "train_micro_batch_size_per_gpu": [1, 2, 3])", "1", "")), 0) << out_;
  EXPECT_NE(out_.find("autotuning: z1_gas4_tmbspg1 latency"), std::string::npos) << out_;
  EXPECT_NE(out_.find("autotuning: z1_gas2_tmbspg2 latency"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("tmbspg3"), std::string::npos) << "3 does not divide 4: " << out_;
  const Json best = optimal();
  EXPECT_EQ(best["train_micro_batch_size_per_gpu"].get<int64_t>() * best["gradient_accumulation_steps"].get<int64_t>(), 4);
}

TEST_F(Autotune, FlopsMetricIsRefusedByPath) {
  EXPECT_EQ(train(1, config(R"("train_micro_batch_size_per_gpu": 1)", "0", R"(, "metric": "flops")")), 2) << out_;
  EXPECT_NE(out_.find("/autotuning/metric"), std::string::npos) << out_;
}

}  // namespace
}  // namespace zt

// The zerotrain binary end to end: each class of bad configuration and input exits with
// status 2 before any work, with the exact message; prepare -> train -> sample -> eval
// works on a tiny corpus; --help works for every sub-command.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <string>

#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace {

std::string binary() { return zt::testing::binary_dir() + "/zerotrain"; }

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

class Cli : public zt::testing::TempDirTest {
 protected:
  CliRun run(const std::string& args) {
    const std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    const int status = std::system(("cd " + dir_ + " && OMP_NUM_THREADS=1 " + binary() + " " + args + " >" + out +
                                    " 2>" + err).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, zt::testing::read_text(out), zt::testing::read_text(err)};
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }
  void expect_config_error(const std::string& json, const std::string& message) {
    write("bad.json", json);
    const CliRun r = run("train --config bad.json");
    EXPECT_EQ(r.code, 2) << json << "\n" << r.err;
    EXPECT_EQ(r.err, "zerotrain: " + message + "\n") << json;
    EXPECT_EQ(r.out, "") << "work started before the configuration was validated";
  }
};

TEST_F(Cli, HelpForEverySubcommand) {
  for (const char* sub : {"", "train ", "prepare ", "sample ", "eval "}) {
    const CliRun r = run(std::string(sub) + "--help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
  EXPECT_EQ(run("frobnicate").code, 2);
}

TEST_F(Cli, BadConfigurationsExitTwoWithThePointer) {
  expect_config_error(R"({"train_batch_size": 8, "zero_optimization": {"stage": "2"}})",
                      R"(/zero_optimization/stage: expected an integer 0..3, got "2")");
  expect_config_error(R"({"train_batch_size": 8, "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "betas": [0.9]}}})",
                      "/optimizer/params/betas: expected two numbers in [0, 1), got [0.9]");
  expect_config_error(R"({"train_batch_size": 8, "zero_optimization": {"stage": 0, "overlap_com": true}})",
                      "/zero_optimization/overlap_com: unknown key; allowed here: allgather_bucket_size, "
                      "allgather_partitions, allgather_sequential, contiguous_gradients, cpu_offload, cpu_offload_param, "
                      "cpu_offload_params, cpu_offload_use_pin_memory, elastic_checkpoint, "
                      "gather_16bit_weights_on_model_save, ignore_unused_parameters, load_from_fp32_weights, "
                      "log_trace_cache_warnings, "
                      "max_live_parameters, max_reuse_distance, memory_efficient_linear, "
                      "mics_hierarchical_params_gather, mics_shard_size, model_persistence_threshold, "
                      "module_granularity_threshold, offload_optimizer, "
                      "offload_param, overlap_comm, param_persistence_threshold, prefetch_bucket_size, reduce_bucket_size, "
                      "reduce_scatter, round_robin_gradients, stage, stage3_allgather_sequential, "
                      "stage3_gather_16bit_weights_on_model_save, stage3_gather_fp16_weights_on_model_save, "
                      "stage3_max_live_parameters, stage3_max_reuse_distance, stage3_model_persistence_threshold, "
                      "stage3_module_granularity_threshold, stage3_param_persistence_threshold, "
                      "stage3_prefetch_bucket_size, stage3_use_all_reduce_for_fetch_params, sub_group_size, "
                      "use_all_reduce_for_fetch_params, use_multi_rank_bucket_allreduce, zero_hpz_partition_size, "
                      "zero_quantized_gradients, "
                      "zero_quantized_nontrainable_weights, zero_quantized_weights");
  expect_config_error(R"({"train_batch_size": 8, "gradient_clipping": -1})",
                      "/gradient_clipping: expected a number >= 0, got -1");
  expect_config_error(R"({"train_batch_size": 8, "train_batch_size": 16})",
                      "bad.json: /train_batch_size: duplicate key");
  expect_config_error(R"({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 3, "gradient_accumulation_steps": 2})",
                      "/train_batch_size: 8 is not train_micro_batch_size_per_gpu 3 x gradient_accumulation_steps 2 x "
                      "data-parallel size 1 (= 6)");
  expect_config_error(R"({"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": true}})",
                      "/fp16/enabled and /bf16/enabled are both true: choose one precision");
  expect_config_error(R"({"train_batch_size": 8, "bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "bf16"}})",
                      "/data_types/grad_accum_dtype: not built: fp16 and bf16 are not built: gradients accumulate in "
                      "fp32; use \"fp32\" instead");
  expect_config_error(R"({"train_batch_size": 8, "model": {"n_layer": 2}, "data": {"train": "missing.bin"}})",
                      "no such token file: missing.bin");
  const CliRun r = run("train --config nope.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "zerotrain: config file not found: nope.json\n");
  const CliRun o = run("train --set training.steps=zero");
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err, "zerotrain: /training/steps: expected an integer >= 1, got \"zero\"\n");
}

TEST_F(Cli, CorruptDataFileIsRefusedNamingIt) {
  write("bad.bin", std::string(2048, '\x01'));
  expect_config_error(R"({"train_batch_size": 2, "data": {"train": "bad.bin", "format": "llmc", "tokenizer": "byte"}})",
                      "bad.bin: bad magic 0x01010101, expected 20240520 or 20240801 (an llm.c token file); a headerless nanoGPT "
                      "file must be opened as raw uint16");
}

// A model far beyond this host's memory (GPT-3's shape, 174 B parameters) stops before
// anything is allocated, naming what it would need and what is available.
TEST_F(Cli, ARunThatCannotFitTheHostIsRefusedBeforeAnyAllocation) {
  write("corpus.txt", "a b c d e f g h i j k l m n o p\n%\nq r s t u v w x y z\n");
  ASSERT_EQ(run("prepare corpus.txt -o train.bin --separator % --tokenizer byte").code, 0);
  write("huge.json", R"({
    "train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "AdamW", "params": {"lr": 3e-4}},
    "model": {"n_layer": 96, "n_head": 96, "n_embd": 12288, "n_positions": 16},
    "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16}, "training": {"steps": 1}})");
  const CliRun r = run("train --config huge.json");
  EXPECT_EQ(r.code, 2) << r.err;  // nothing was run
  EXPECT_NE(r.err.find("host memory: this host's 1 rank(s) would hold about"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is available; use a higher ZeRO stage"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("step 1/"), std::string::npos) << r.out;
}

TEST_F(Cli, PrepareTrainSampleEval) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "the quick brown fox jumps over the lazy dog " + std::to_string(i % 7) + "\n%\n";
  write("corpus.txt", text);
  CliRun r = run("prepare corpus.txt -o train.bin --val-output val.bin --separator % --tokenizer byte");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("60 documents"), std::string::npos) << r.out;
  write("run.json", R"({
    "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2,
    "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 32, "n_positions": 32},
    "data": {"train": "train.bin", "val": "val.bin", "tokenizer": "byte", "seq_len": 16},
    "training": {"steps": 6, "eval_interval": 3, "eval_batches": 2, "output_dir": "out", "sample_tokens": 20},
    "wall_clock_breakdown": true, "steps_per_print": 3})");
  r = run("train --config run.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("step 6/6"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("val loss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("forward:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--- sample"), std::string::npos) << r.out;
  // estimate, before any run, gives the parameters, gradients, optimizer state and
  // activations the run reported.
  const CliRun est = run("estimate --config run.json");
  ASSERT_EQ(est.code, 0) << est.err;
  std::istringstream report(r.out.substr(r.out.find("\n  rank 0 ") + 1)), row(est.out.substr(est.out.find("\n0 ") + 1));
  std::string rk, zero, p1, u1, g1, u2, o1, u3, b1, ub, a1, ua;
  report >> rk >> zero >> p1 >> u1 >> g1 >> u2 >> o1 >> u3 >> b1 >> ub >> a1 >> ua;
  std::string r0, coord, psi, ep, eu1, eg, eu2, eo, eu3, ea, eua;
  row >> r0 >> coord >> psi >> ep >> eu1 >> eg >> eu2 >> eo >> eu3 >> ea >> eua;
  EXPECT_EQ(p1 + u1 + g1 + u2 + o1 + u3 + a1 + ua, ep + eu1 + eg + eu2 + eo + eu3 + ea + eua) << r.out << est.out;
  EXPECT_EQ(run("estimate --config run.json --world 0").code, 2);
  const std::string csv = zt::testing::read_text(dir_ + "/out/metrics.csv");
  // "# <version and backend>", the header, 6 rows.
  EXPECT_EQ(csv.rfind("# zerotrain ", 0), 0u) << csv;
  EXPECT_NE(csv.find("gemm: "), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nstep,loss,val_loss,lr,grad_norm,tokens_per_s,forward_ms,backward_ms,optimizer_ms,loss_hex\n"),
            std::string::npos);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 8);
  r = run("sample out/checkpoints --prompt 'the ' --max-tokens 10 --seed 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("the ", 0), 0u);
  const CliRun again = run("sample out/checkpoints --prompt 'the ' --max-tokens 10 --seed 3");
  EXPECT_EQ(again.out, r.out) << "same seed, same text";
  r = run("eval out/checkpoints --data val.bin --batch-size 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("eval loss ", 0), 0u) << r.out;
  // The same weights in bf16 and fp16 compute: the loss within the 16-bit rounding of the
  // fp32 one (a 4-block model: well inside 1 %), and sampling runs.
  const double fp32_loss = std::strtod(r.out.c_str() + 10, nullptr);
  for (const char* p : {"bf16", "fp16"}) {
    const CliRun half = run(std::string("eval out/checkpoints --data val.bin --batch-size 2 --precision ") + p);
    ASSERT_EQ(half.code, 0) << half.err;
    EXPECT_NEAR(std::strtod(half.out.c_str() + 10, nullptr), fp32_loss, 0.01 * fp32_loss) << p << ": " << half.out;
    EXPECT_EQ(run(std::string("sample out/checkpoints --max-tokens 5 --precision ") + p).code, 0) << p;
  }
  // Resuming continues the step count and appends to the metrics file under one header.
  r = run("train --config run.json --set training.steps=8 --resume out/checkpoints");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("resumed from out/checkpoints/global_step6 at step 6"), std::string::npos) << r.out;
  const std::string csv2 = zt::testing::read_text(dir_ + "/out/metrics.csv");
  EXPECT_EQ(std::count(csv2.begin(), csv2.end(), '\n'), 11);  // + "# resumed after step 6: ..." + 2 rows
  EXPECT_NE(csv2.find("# resumed after step 6: "), std::string::npos) << csv2;
}

}  // namespace

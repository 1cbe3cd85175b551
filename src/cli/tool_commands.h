// The smaller sub-commands: `prepare` (text -> token files), `sample` (text from a saved
// model) and `eval` (validation loss of a saved model on token files). Exit status 0 on
// success, 2 for bad arguments or input files, 1 for failures while running.
#pragma once

#include "cli/command.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zt {

struct PrepareCommandArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string val_output;
  double val_fraction = 0.1;
  std::string separator;
  std::string tokenizer = "gpt2";
  std::string bpe_dir;
  std::string format = "llmc";
};
int run_prepare(const PrepareCommandArgs& args);

struct SampleCommandArgs {
  std::string checkpoint;
  std::string prompt = "\n";
  double temperature = 0.8;
  int top_k = 40;
  uint64_t seed = 1;
  int64_t max_tokens = 200;
  std::string bpe_dir;
  std::string precision = "fp32";  // fp32 | bf16 | fp16: the compute dtype (weights rounded from the fp32 master)
};
int run_sample(const SampleCommandArgs& args);

struct EvalCommandArgs {
  std::string checkpoint;
  std::vector<std::string> data;
  std::string format = "auto";
  int64_t batches = 0;  // 0 = the whole split
  int batch_size = 8;
  std::string precision = "fp32";  // as SampleCommandArgs::precision
};
int run_eval(const EvalCommandArgs& args);

// `zerotrain config-coverage`: prints docs/config-coverage.md (config/coverage.h).
int run_config_coverage();

// Registers `zerotrain prepare` and its flags.
Command add_prepare_command(CLI::App& app);
// Registers `zerotrain sample` and its flags.
Command add_sample_command(CLI::App& app);
// Registers `zerotrain eval` and its flags.
Command add_eval_command(CLI::App& app);
// Registers `zerotrain config-coverage` and its flags.
Command add_config_coverage_command(CLI::App& app);

}  // namespace zt

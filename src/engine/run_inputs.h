// What every training run (all-reduce, parameter server) reads before it runs and prints
// when it ends: the tokenizer, the train and validation token files (the demo corpus
// prepared on first use), and the closing sample. Errors are the user's input.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "data/dataset.h"
#include "data/tokenizer.h"
#include "engine/training_loop.h"  // as_micro_batches
#include "nn/gpt_training.h"

namespace zt {

// The tokenizer for cfg.data, checked against model.vocab_size; with the demo (no
// --config) points cfg.data at the fortunes corpus, which `write` (one rank) prepares.
StatusOr<std::unique_ptr<Tokenizer>> prepare_inputs(ZtConfig* cfg, bool demo, bool write);

struct RunData {
  std::optional<TokenDataset> train;
  std::optional<TokenDataset> val;
  std::vector<Batch> val_batches;  // eval_batches micro-batches spread over the split
};
// Opens cfg.data's splits (after prepare_inputs, and after any barrier that makes the
// demo files visible to every rank).
StatusOr<RunData> open_datasets(const ZtConfig& cfg);


// Generates cfg.training.sample_tokens tokens from the full parameters and prints them.
void print_sample(const ZtConfig& cfg, const Tokenizer& tokenizer, float* full_params);

}  // namespace zt

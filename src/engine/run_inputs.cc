// Shared inputs and the closing sample of the training runs.
#include "engine/run_inputs.h"

#include <algorithm>
#include <cstdio>

#include "engine/demo.h"
#include "engine/sampling.h"
#include "io/filesystem.h"
#include "nn/gpt_model.h"

namespace zt {

StatusOr<std::unique_ptr<Tokenizer>> prepare_inputs(ZtConfig* cfg, bool demo, bool write) {
  ZT_ASSIGN_OR_RETURN(auto tok, make_tokenizer(cfg->data.tokenizer, cfg->data.bpe_dir));
  if (tok->vocab_size() > cfg->model.vocab_size) {
    return Status::InvalidArgument("/model/vocab_size: " + std::to_string(cfg->model.vocab_size) +
                                   " is smaller than the " + tok->name() + " tokenizer's " +
                                   std::to_string(tok->vocab_size()));
  }
  if (write) ZT_RETURN_IF_ERROR(make_dirs(cfg->training.output_dir));
  if (demo) ZT_RETURN_IF_ERROR(prepare_demo_data(cfg, *tok, write));
  if (cfg->data.train.empty()) return Status::InvalidArgument("/data/train: required: the token files to train on");
  return tok;
}

StatusOr<RunData> open_datasets(const ZtConfig& cfg) {
  RunData d;
  ZT_ASSIGN_OR_RETURN(d.train, TokenDataset::open(cfg.data.train, cfg.data.format, cfg.model.vocab_size, cfg.data.seq_len));
  if (cfg.data.val.empty()) return d;
  ZT_ASSIGN_OR_RETURN(d.val, TokenDataset::open(cfg.data.val, cfg.data.format, cfg.model.vocab_size, cfg.data.seq_len));
  d.val_batches = validation_batches(*d.val, static_cast<int>(cfg.batch.micro_batch), cfg.training.eval_batches);
  if (d.val_batches.empty()) {
    return Status::InvalidArgument("/data/val: the validation split holds " + std::to_string(d.val->num_windows()) +
                                   " sequences, fewer than one micro-batch");
  }
  return d;
}

void print_sample(const ZtConfig& cfg, const Tokenizer& tok, float* full_params) {
  const TrainingConfig& tc = cfg.training;
  std::unique_ptr<GptModel> model = GptModel::create(cfg.model, 1, cfg.data.seq_len);
  model->bind(full_params, nullptr);
  std::vector<int32_t> prompt = tok.encode(tc.sample_prompt);
  if (prompt.empty()) prompt.push_back(tok.eot_token());
  SampleOptions so;
  so.max_tokens = tc.sample_tokens;
  so.temperature = tc.sample_temperature;
  so.top_k = tc.sample_top_k;
  so.seed = tc.seed;
  const std::vector<int32_t> out = generate(*model, prompt, so);
  std::printf("--- sample (temperature %.2f, top-k %d) ---\n%s%s\n---\n", so.temperature, so.top_k,
              tc.sample_prompt.c_str(), tok.decode(out).c_str());
  std::fflush(stdout);
}

}  // namespace zt

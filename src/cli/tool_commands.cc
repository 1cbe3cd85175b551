// prepare / sample / eval.
#include "cli/tool_commands.h"

#include <CLI/CLI.hpp>

#include <memory>

#include "config/coverage.h"

#include <cstdio>
#include <memory>

#include "checkpoint/sharded_load.h"
#include "cli/exit_status.h"
#include "cli/progress.h"
#include "cli/task_progress.h"
#include "config/config.h"
#include "data/dataset.h"
#include "data/prepare.h"
#include "engine/sampling.h"
#include "engine/trainer.h"
#include "nn/gpt_model.h"
#include "tensor/buffer.h"

namespace zt {

namespace {

// A saved model ready for inference: its config, weights and a model sized for (B, T).
struct LoadedModel {
  ZtConfig config;
  ParamTable table;
  FloatBuffer params;
  FloatBuffer grads;  // unused by inference, but bind() takes a gradient arena
  std::vector<half_t> compute;  // bf16/fp16: the weights the model reads, rounded from params
  std::unique_ptr<GptModel> model;
};

StatusOr<std::unique_ptr<LoadedModel>> load_model(const std::string& path, int batch, int seq,
                                                  const std::string& precision) {
  ZT_ASSIGN_OR_RETURN(const CheckpointRef ckpt, open_checkpoint(path));
  auto cfg = parse_config(ckpt.manifest.config);
  if (!cfg.ok()) return Status::Corruption(ckpt.dir + "/manifest.json: stored config: " + cfg.status().message());
  auto m = std::make_unique<LoadedModel>();
  m->config = cfg.value();
  m->config.model = ckpt.manifest.model;  // the checkpoint's shape, whatever padding the run used
  const int T = seq > 0 ? std::min(seq, m->config.model.n_positions) : m->config.model.n_positions;
  GptModelOptions mo;
  mo.backend = backend_for(Device::kCpu, dtype_from_precision(precision)).value();
  mo.max_batch = batch;
  mo.max_seq = T;
  m->model = GptModel::create(m->config.model, mo);
  m->table = m->model->param_table();
  m->params = FloatBuffer(m->table.numel());
  m->grads = FloatBuffer(0);
  ZT_RETURN_IF_ERROR(load_whole_params(ckpt, m->table, m->params.data()));
  if (const ActivationOps<half_t>* half = mo.backend->half_ops()) {
    m->compute.resize(m->table.numel());
    half->from_f32(m->compute.data(), m->params.data(), static_cast<int64_t>(m->compute.size()));
    m->model->bind(m->compute.data(), nullptr);
  } else {
    m->model->bind(m->params.data(), nullptr);
  }
  return m;
}

}  // namespace

int run_prepare(const PrepareCommandArgs& a) {
  auto tok = make_tokenizer(a.tokenizer, a.bpe_dir);
  if (!tok.ok()) return report_error(tok.status(), kExitBadInput);
  PrepareOptions o;
  o.inputs = a.inputs;
  o.separator = a.separator;
  o.train_output = a.output;
  o.val_output = a.val_output;
  o.val_fraction = a.val_fraction;
  o.format = a.format == "raw_uint16" ? TokenFileFormat::kRawUint16 : TokenFileFormat::kLlmc;
  TaskProgress progress("prepare", Progress::stdout_is_terminal());
  o.progress = progress.fn();
  auto r = prepare_corpus(o, *tok.value());
  progress.finish();
  if (!r.ok()) return report_error(r.status(), kExitBadInput);
  std::printf("%lld documents, %.2f MB of text -> %s: %lld tokens", static_cast<long long>(r->documents),
              r->bytes / 1e6, a.output.c_str(), static_cast<long long>(r->train_tokens));
  if (!a.val_output.empty()) {
    std::printf("; %s: %lld tokens", a.val_output.c_str(), static_cast<long long>(r->val_tokens));
  }
  std::printf(" (%s tokenizer, %s format)\n", tok.value()->name(), a.format.c_str());
  return kExitOk;
}

int run_sample(const SampleCommandArgs& a) {
  auto loaded = load_model(a.checkpoint, 1, 0, a.precision);
  if (!loaded.ok()) return report_error(loaded.status(), kExitBadInput);
  LoadedModel& m = *loaded.value();
  auto tok = make_tokenizer(m.config.data.tokenizer, a.bpe_dir.empty() ? m.config.data.bpe_dir : a.bpe_dir);
  if (!tok.ok()) return report_error(tok.status(), kExitBadInput);
  std::vector<int32_t> prompt = tok.value()->encode(a.prompt);
  if (prompt.empty()) prompt.push_back(tok.value()->eot_token());
  SampleOptions so;
  so.max_tokens = a.max_tokens;
  so.temperature = a.temperature;
  so.top_k = a.top_k;
  so.seed = a.seed;
  const std::vector<int32_t> out = generate(*m.model, prompt, so);
  std::printf("%s%s\n", a.prompt.c_str(), tok.value()->decode(out).c_str());
  return kExitOk;
}

int run_eval(const EvalCommandArgs& a) {
  auto loaded = load_model(a.checkpoint, a.batch_size, 0, a.precision);
  if (!loaded.ok()) return report_error(loaded.status(), kExitBadInput);
  LoadedModel& m = *loaded.value();
  const int T = m.config.data.seq_len;
  auto data = TokenDataset::open(a.data, a.format, m.config.model.vocab_size, T);
  if (!data.ok()) return report_error(data.status(), kExitBadInput);
  const int64_t count = a.batches > 0 ? a.batches : data->num_windows() / a.batch_size;
  const std::vector<Batch> batches = validation_batches(data.value(), a.batch_size, count);
  if (batches.empty()) return report_error(Status::InvalidArgument("eval: fewer sequences than one batch"), kExitBadInput);
  double sum = 0.0;
  int64_t n = 0;
  for (const Batch& b : batches) {
    Status st = m.model->forward(b.tokens.data(), b.rows, T);
    auto l_or = st.ok() ? m.model->loss(b.targets.data()) : StatusOr<LossSum>(st);
    if (!l_or.ok()) return report_error(l_or.status(), kExitFailure);
    const LossSum l = l_or.value();
    sum += l.sum;
    n += l.count;
  }
  std::printf("eval loss %.6f over %lld tokens (%zu batches of %d x %d)\n", sum / static_cast<double>(n),
              static_cast<long long>(n), batches.size(), a.batch_size, T);
  return kExitOk;
}

int run_config_coverage() {
  auto md = config_coverage_markdown();
  if (!md.ok()) return report_error(md.status(), kExitFailure);
  std::fputs(md.value().c_str(), stdout);
  return 0;
}

Command add_prepare_command(CLI::App& app) {
  auto prep = std::make_shared<PrepareCommandArgs>();
  CLI::App* p = app.add_subcommand("prepare", "Tokenize text files into a token file (llm.c format)");
  p->add_option("inputs", prep->inputs, "Text files")->required();
  p->add_option("-o,--output", prep->output, "Token file for the training split")->required();
  p->add_option("--val-output", prep->val_output, "Token file for a validation split");
  p->add_option("--val-fraction", prep->val_fraction, "Fraction of documents for validation")->check(CLI::Range(0.0, 1.0));
  p->add_option("--separator", prep->separator, "A line equal to this separates documents (default: one per file)");
  p->add_option("--tokenizer", prep->tokenizer,
                "gpt2, byte, a SentencePiece path/to/tokenizer.model or a HuggingFace path/to/tokenizer.json")
      ->check(tokenizer_validator());
  p->add_option("--bpe-dir", prep->bpe_dir, "Directory with GPT-2's encoder.json and vocab.bpe");
  p->add_option("--format", prep->format, "llmc or raw_uint16")->check(CLI::IsMember({"llmc", "raw_uint16"}));
  return {p, [prep] { return run_prepare(*prep); }, true};
}

Command add_sample_command(CLI::App& app) {
  auto sample = std::make_shared<SampleCommandArgs>();
  CLI::App* s = app.add_subcommand("sample", "Generate text from a saved model");
  s->add_option("checkpoint", sample->checkpoint, "Checkpoint directory (tag, or save dir with 'latest')")->required();
  s->add_option("--prompt", sample->prompt, "Text to continue");
  s->add_option("--temperature", sample->temperature, "0 = greedy")->check(CLI::Range(0.0, 100.0));
  s->add_option("--top-k", sample->top_k, "0 = whole vocabulary")->check(CLI::NonNegativeNumber);
  s->add_option("--seed", sample->seed, "Random seed");
  s->add_option("--max-tokens", sample->max_tokens, "Tokens to generate")->check(CLI::PositiveNumber);
  s->add_option("--bpe-dir", sample->bpe_dir, "Directory with GPT-2's BPE files");
  s->add_option("--precision", sample->precision, "Compute dtype: fp32 (default), bf16 or fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  return {s, [sample] { return run_sample(*sample); }, true};
}

Command add_eval_command(CLI::App& app) {
  auto eval = std::make_shared<EvalCommandArgs>();
  CLI::App* e = app.add_subcommand("eval", "Validation loss of a saved model on token files");
  e->add_option("checkpoint", eval->checkpoint, "Checkpoint directory")->required();
  e->add_option("--data", eval->data, "Token files or globs")->required();
  e->add_option("--format", eval->format, "auto, llmc or raw_uint16")->check(CLI::IsMember({"auto", "llmc", "raw_uint16"}));
  e->add_option("--precision", eval->precision, "Compute dtype: fp32 (default), bf16 or fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  e->add_option("--batches", eval->batches, "Batches to evaluate (0 = all)")->check(CLI::NonNegativeNumber);
  e->add_option("--batch-size", eval->batch_size, "Sequences per batch")->check(CLI::PositiveNumber);
  return {e, [eval] { return run_eval(*eval); }, true};
}

Command add_config_coverage_command(CLI::App& app) {
  CLI::App* cov = app.add_subcommand("config-coverage", "Print docs/config-coverage.md: every DeepSpeed key zerotrain "
                                                        "reads, maps, resolves from \"auto\" or refuses");
  return {cov, [] { return run_config_coverage(); }, false};
}

}  // namespace zt

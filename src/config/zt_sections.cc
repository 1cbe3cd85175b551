// zerotrain's own sections: "data", "training" and "parallel" ("model" is model_section.cc).
#include <limits>

#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr int64_t kMaxInt = INT64_MAX;

}  // namespace

void parse_data(JsonReader& root, DataConfig* d) {
  JsonReader r = root.object_or_empty("data");
  d->train = r.strings("train");
  d->val = r.strings("val");
  d->format = r.choice("format", "auto", {"auto", "llmc", "raw_uint16"});
  d->tokenizer = r.string("tokenizer", "gpt2");
  if (d->tokenizer != "gpt2" && d->tokenizer != "byte" && !d->tokenizer.ends_with(".model") &&
      !d->tokenizer.ends_with(".json")) {
    r.fail("tokenizer", "\"" + d->tokenizer + "\" is not one of \"gpt2\", \"byte\", a SentencePiece "
                        "path/to/tokenizer.model or a HuggingFace path/to/tokenizer.json");
  }
  d->bpe_dir = r.string("bpe_dir", "");
  d->seq_len = static_cast<int>(r.integer("seq_len", 256, 1, 1 << 20));
  r.done();
}

void parse_training(JsonReader& root, TrainingConfig* t) {
  JsonReader r = root.object_or_empty("training");
  t->steps = r.integer("steps", t->steps, 1, kMaxInt);
  t->eval_interval = r.integer("eval_interval", t->eval_interval, 0, kMaxInt);
  t->eval_batches = r.integer("eval_batches", t->eval_batches, 1, kMaxInt);
  t->output_dir = r.string("output_dir", t->output_dir);
  t->seed = static_cast<uint64_t>(r.integer("seed", static_cast<int64_t>(t->seed), 0, kMaxInt));
  t->threads = static_cast<int>(r.integer("threads", 0, 0, 4096));
  t->pin_threads = r.boolean("pin_threads", true);
  t->device = r.choice("device", "cpu", {"cpu", "cuda", "auto"});
  t->metrics_csv = r.boolean("metrics_csv", true);
  t->attention = r.choice("attention", "materialized", {"materialized", "flash"});
  t->sample_tokens = r.integer("sample_tokens", 0, 0, 1 << 20);
  t->sample_prompt = r.string("sample_prompt", t->sample_prompt);
  t->sample_temperature = r.number("sample_temperature", 0.8, 0.0, 100.0);
  t->sample_top_k = static_cast<int>(r.integer("sample_top_k", 40, 0, 1 << 24));
  t->save_at_end = r.boolean("save_at_end", true);
  t->save_interval = r.integer("save_interval", 0, 0, kMaxInt);
  t->keep_last = r.integer("keep_last", 0, 0, kMaxInt);
  t->save_dir = r.string("save_dir", "");
  r.done();
}

void parse_parallel(JsonReader& root, ParallelConfig* p) {
  JsonReader r = root.object_or_empty("parallel");
  if (const Json* dp = r.raw("dp"); dp != nullptr && !(dp->is_string() && dp->get<std::string>() == "auto")) {
    p->dp = static_cast<int>(r.integer("dp", 0, 1, 1 << 20));
  }
  p->pp = static_cast<int>(r.integer("pp", 1, 1, 1 << 20));
  p->tp = static_cast<int>(r.integer("tp", 1, 1, 1 << 20));
  p->ep = static_cast<int>(r.integer("ep", 1, 1, 1 << 16));  // or DeepSpeed's model.moe.ep_size
  p->algorithm = r.choice("allreduce_algorithm", "ring", {"ring", "mpi"}) == "ring" ? CommAlgorithm::kRing
                                                                                  : CommAlgorithm::kMpi;
  p->pipeline_schedule = r.choice("pipeline_schedule", "1f1b", {"1f1b", "gpipe"});
  p->virtual_stages = static_cast<int>(r.integer("virtual_stages", 1, 1, 1 << 10));
  p->partition_method = r.choice("partition_method", "flops", {"flops", "parameters", "uniform"});
  p->comm_timeout_s = r.number("comm_timeout_s", 600.0, 0.001, 1e9);
  p->ring_chunk_bytes = r.integer("ring_chunk_bytes", 1 << 20, 64, 1LL << 32);
  p->sp = static_cast<int>(r.integer("sp", 1, 1, 1 << 16));  // or DeepSpeed's top-level sequence_parallel_size
  r.done();
  if (root.has("sequence_parallel_size")) {
    const int sp = static_cast<int>(root.integer("sequence_parallel_size", 1, 1, 1 << 16));
    if (p->sp != 1 && p->sp != sp) root.fail("sequence_parallel_size", "contradicts /parallel/sp (" + std::to_string(p->sp) + ")");
    p->sp = sp;
  }
}

}  // namespace zt::config_sections

// Times zerotrain's training step (forward + backward + AdamW) for one model shape and
// prints one JSON line with medians: used by bench/train_step.sh, which runs the same
// shape in PyTorch alternately and computes the ratios.
//   train_step_bench --layers L --heads H --embd C --vocab V --batch B --seq T
//                    [--steps N] [--warmup W] [--threads P] [--positions P] [--profile-steps-only]
//                    [--family llama --intermediate I --kv-heads KV --tied]
//                    [--experts E --experts-per-tok K --expert-intermediate I --routing mixtral|deepspeed]
// For --family llama, --layers/--heads/--embd/--vocab/--positions are HF LlamaConfig's
// num_hidden_layers, num_attention_heads, hidden_size, vocab_size, max_position_embeddings;
// --intermediate is intermediate_size, --kv-heads num_key_value_heads (0 = --heads),
// --tied tie_word_embeddings; rms_norm_eps and rope_theta keep their defaults (1e-5, 10000).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_profile.h"
#include "kernels/cpu/gemm_bf16.h"
#include "core/rng.h"
#include "core/threads.h"
#include "engine/trainer.h"
#include "kernels/cpu/gemm_path.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  zt::TrainerOptions o;
  int steps = 5, warmup = 1, threads = 2;
  o.model.n_positions = 1024;
  CLI::App app{"train_step_bench: times zerotrain training steps"};
  app.add_option("--layers", o.model.n_layer);
  app.add_option("--heads", o.model.n_head);
  app.add_option("--embd", o.model.n_embd);
  app.add_option("--vocab", o.model.vocab_size);
  app.add_option("--positions", o.model.n_positions);
  app.add_option("--batch", o.micro_batch);
  app.add_option("--seq", o.seq_len);
  app.add_option("--steps", steps);
  app.add_option("--warmup", warmup);
  bool profile_steps_only = false;
  app.add_flag("--profile-steps-only", profile_steps_only,
               "ZT_CPU_PROFILE's totals cover the timed steps only, not the warm-up");
  app.add_option("--threads", threads);
  app.add_option("--padded-vocab", o.model.padded_vocab_size);
  std::string family = "gpt2";
  app.add_option("--family", family, "gpt2 | llama")->check(CLI::IsMember({"gpt2", "llama"}));
  app.add_option("--intermediate", o.model.intermediate_size, "llama: intermediate_size");
  app.add_option("--kv-heads", o.model.n_kv_head, "llama: num_key_value_heads (0 = --heads)");
  bool tied = false;
  app.add_flag("--tied", tied, "llama: tie_word_embeddings");
  zt::MoeConfig& moe = o.model.moe;
  std::string routing = "mixtral";
  app.add_option("--experts", moe.num_experts, "MoE: experts per block (0: dense)");
  app.add_option("--experts-per-tok", moe.gate.k, "MoE: k");
  app.add_option("--expert-intermediate", moe.intermediate_size, "MoE: each expert's width (0: --intermediate)");
  app.add_option("--routing", routing, "MoE: mixtral (no drops) | deepspeed (capacity 1.25, drops)")
      ->check(CLI::IsMember({"mixtral", "deepspeed"}));
  std::string precision = "fp32";
  app.add_option("--precision", precision, "fp32 | bf16 | fp16 (mixed precision: 16-bit compute, fp32 master)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  CLI11_PARSE(app, argc, argv);
  if (family == "llama") o.model.set_family(zt::ModelFamily::kLlama);  // the preset first: it unties the head
  if (tied) o.model.tie_word_embeddings = true;
  moe.gate.routing = routing == "mixtral" ? zt::MoeRouting::kMixtral : zt::MoeRouting::kDeepSpeed;
  moe.gate.capacity_factor = 1.25;
  moe.gate.use_rts = moe.gate.second_sampling = false;
  if (!zt::backend_environment_ok()) return 2;
  o.backend = zt::backend_for(zt::Device::kCpu, zt::dtype_from_precision(precision)).value();
  zt::set_num_threads(threads);
  o.schedule.base_lr = 1e-4;
  auto created = zt::Trainer::create(o);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().to_string().c_str());
    return 2;
  }
  zt::Trainer& t = *created.value();
  const int n = o.micro_batch * o.seq_len;
  zt::Rng rng(1);
  std::vector<int32_t> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<int32_t>(rng.below(o.model.vocab_size));
  for (int i = 0; i < n; ++i) y[i] = x[(i + 1) % n];
  std::vector<double> total, fwd, bwd, opt;
  for (int s = 0; s < warmup + steps; ++s) {
    auto st = t.step({{x.data(), y.data()}});
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.status().to_string().c_str());
      return 1;
    }
    if (s < warmup) {
      if (s + 1 == warmup && profile_steps_only) zt::cpu_profile_reset();
      continue;
    }
    fwd.push_back(st->forward_s);
    bwd.push_back(st->backward_s);
    opt.push_back(st->optimizer_s);
    total.push_back(st->forward_s + st->backward_s + st->optimizer_s);
  }
  const zt::MemoryReport m = t.memory();
  // The kernel oneDNN picks for the bf16 GEMMs of this model (AMX or not).
  const auto bf16_impl = zt::bf16_gemm_impl(o.micro_batch * o.seq_len, 4 * o.model.n_embd, o.model.n_embd);
  std::printf("{\"family\":\"%s\",\"flops_per_token\":%.0f,\"experts\":%d,\"active_params\":%lld,", family.c_str(),
              o.model.flops_per_token(o.seq_len), moe.num_experts, static_cast<long long>(o.model.active_parameters()));
  std::printf("\"precision\":\"%s\",\"bf16_gemm\":\"%s\",\"backend\":\"%s\",", precision.c_str(),
              bf16_impl.ok() ? bf16_impl.value().c_str() : "unavailable", t.backend().describe().c_str());
  std::printf("\"impl\":\"zerotrain\",\"ms\":%.2f,\"forward_ms\":%.2f,\"backward_ms\":%.2f,\"optimizer_ms\":%.2f,"
              "\"ms_min\":%.2f,\"ms_max\":%.2f,\"params\":%lld,\"peak_rss_mb\":%.1f,\"activation_mb\":%.1f,"
              "\"isa\":\"%s\",\"openblas_core\":\"%s\",\"gemm\":\"%s\"}\n",
              1e3 * median(total), 1e3 * median(fwd), 1e3 * median(bwd), 1e3 * median(opt),
              1e3 * *std::min_element(total.begin(), total.end()), 1e3 * *std::max_element(total.begin(), total.end()),
              static_cast<long long>(o.model.num_parameters()), m.peak_rss_bytes / 1048576.0,
              m.activation_bytes / 1048576.0, t.backend().ops().kernel_isa, zt::gemm_path().openblas_core.c_str(),
              zt::gemm_path().describe().c_str());
  return 0;
}

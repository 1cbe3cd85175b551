// The PyTorch oracle run every model family's oracle test shares (gpt2_oracle_test.cc,
// llama_oracle_test.cc): a Trainer for the given model (B=3, T=16, AdamW with WarmupLR and
// clipping 0.5, every matrix scaled by weight_boost after init), random token streams, the
// weights (by name, or as the HuggingFace export) and tokens written for the family's
// reference script, then
//   logits, gradients: max|zt - torch| / max|torch| per tensor <= 1e-4
//   loss and each of 10 training steps' losses: |zt - torch| / |torch| <= 1e-5
//   an MoE model's balance loss: 1e-4 on batch 0 (it is a sum of products of means of the
//   gates, as close as the logits), 1e-5 on the training steps' (as their losses)
// Vocabulary matrices (first dim = the padded vocabulary) are compared on their real rows.
// A missing python3-torch fails the test (never a skip). Tests only.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint/hf_model.h"
#include "checkpoint/safetensors.h"
#include "core/rng.h"
#include "engine/trainer.h"
#include "testing/python_oracle.h"

namespace zt::testing {

struct OracleRun {
  const char* name;
  GptConfig model;
  float weight_boost = 1.0f;
  std::string model_json;  // the case's "model" object for the reference script
  std::string script;      // tests/oracle/<family>_reference.py
  // > 0: the weights reach the script only as zerotrain's HuggingFace export (WORKDIR/hf,
  // checkpoint/hf_model.h), sharded at this many bytes; init.safetensors then holds only
  // the tokens and targets.
  uint64_t hf_export_shard_bytes = 0;
  // Batch 0 runs under these block routes (nn/block_route.h; empty: every block whole),
  // given to the script as case.json's "routes".
  std::vector<BlockRoute> routes;
};

// Two blocks' routes for the oracle's routed cases: block 0 runs on `kept` random
// ascending positions of each of B sequences of T tokens with its branches scaled by 1.25,
// block 1 is skipped.
inline std::vector<BlockRoute> oracle_routes(int B, int T, int kept, uint64_t seed) {
  Rng rng(seed);
  BlockRoute r;
  r.kept = kept;
  r.scale = 1.25f;
  for (int b = 0; b < B; ++b) {
    std::vector<int32_t> all(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) all[static_cast<size_t>(t)] = t;
    for (int i = 0; i < kept; ++i) std::swap(all[static_cast<size_t>(i)], all[i + rng.below(static_cast<uint64_t>(T - i))]);
    std::sort(all.begin(), all.begin() + kept);
    r.positions.insert(r.positions.end(), all.begin(), all.begin() + kept);
  }
  BlockRoute skip;
  skip.skip = true;
  return {r, skip};
}

// case.json's "routes": per block {"skip": bool, "positions": B lists}.
inline std::string routes_json(const std::vector<BlockRoute>& routes, int B) {
  std::string out = "[";
  for (size_t l = 0; l < routes.size(); ++l) {
    const BlockRoute& r = routes[l];
    out += std::string(l ? ", " : "") + "{\"skip\": " + (r.skip ? "true" : "false") +
           ", \"scale\": " + std::to_string(r.scale) + ", \"positions\": [";
    for (int b = 0; b < B && r.kept > 0; ++b) {
      out += b ? ", [" : "[";
      for (int j = 0; j < r.kept; ++j) out += (j ? ", " : "") + std::to_string(r.positions[static_cast<size_t>(b * r.kept + j)]);
      out += "]";
    }
    out += "]}";
  }
  return out + "]";
}

// Batch 0: logits, loss and every gradient (no update), against ref.
inline void expect_first_batch(Trainer& trainer, const std::vector<int32_t>& tokens, const std::vector<int32_t>& targets,
                               int B, int T, const SafetensorsFile& ref, const char* name,
                               const std::vector<BlockRoute>& routes = {}) {
  GptModel& model = trainer.model();
  ASSERT_TRUE(model.set_routes(routes, B, T).ok());
  const GptConfig& m = model.config();
  const int V = m.vocab_size, Vp = m.padded_vocab();
  ASSERT_TRUE(model.forward(tokens.data(), B, T).ok());
  std::vector<float> logits(static_cast<size_t>(B) * T * V), row(static_cast<size_t>(Vp));
  for (int r = 0; r < B * T; ++r) {
    model.logits_row(r, row.data());
    for (int j = 0; j < V; ++j) logits[static_cast<size_t>(r) * V + j] = row[static_cast<size_t>(j)];
  }
  const double logits_err = max_rel(logits.data(), static_cast<const float*>(ref.data("logits")), logits.size());
  EXPECT_LE(logits_err, 1e-4);
  const LossSum l = model.loss(targets.data()).value();
  const double loss = l.sum / static_cast<double>(l.count);
  const double ref_loss = static_cast<const float*>(ref.data("loss"))[0];
  EXPECT_LE(std::fabs(loss - ref_loss) / ref_loss, 1e-5) << loss << " vs " << ref_loss;
  if (m.moe.enabled()) {  // the balance loss, and its coefficient in the objective backward differentiates
    const double aux = model.moe_aux_loss(), ref_aux = static_cast<const float*>(ref.data("aux"))[0];
    EXPECT_LE(std::fabs(aux - ref_aux) / ref_aux, 1e-4) << aux << " vs " << ref_aux;
    model.set_moe_aux_weight(static_cast<float>(m.moe.aux_loss_coef));
    int64_t dropped = 0;
    for (const MoeGateResult& r : model.moe_routing()) dropped += std::count(r.expert.begin(), r.expert.end(), -1);
    std::printf("  [%s] balance loss %.7f torch %.7f, %lld token slots dropped\n", name, aux, ref_aux,
                static_cast<long long>(dropped));
  }
  trainer.grads().zero();
  ASSERT_TRUE(model.backward(tokens.data(), targets.data(), static_cast<float>(1.0 / static_cast<double>(l.count))).ok());
  double worst_grad = 0.0;
  for (const TensorSpec& s : model.param_table().specs()) {
    const float* g = static_cast<const float*>(ref.data("grad." + s.name));
    ASSERT_NE(g, nullptr) << s.name;
    const bool vocab_rows = s.shape.size() == 2 && s.shape[0] == Vp;
    const size_t n = vocab_rows ? static_cast<size_t>(V) * static_cast<size_t>(s.shape[1]) : s.numel;
    const double err = max_rel(trainer.grads().data() + s.offset, g, n);
    EXPECT_LE(err, 1e-4) << s.name;
    worst_grad = std::max(worst_grad, err);
  }
  ASSERT_TRUE(model.set_routes({}, B, T).ok());
  std::printf("  [%s] logits max rel err %.2e, loss rel err %.2e, worst grad max rel err %.2e\n", name, logits_err,
              std::fabs(loss - ref_loss) / ref_loss, worst_grad);
}

inline void run_model_oracle(const OracleRun& c) {
  constexpr int kSteps = 10, B = 3, T = 16;
  TrainerOptions o;
  o.model = c.model;
  o.micro_batch = B;
  o.seq_len = T;
  o.adamw.weight_decay = 0.1;
  o.adamw.beta2 = 0.95;
  o.schedule.kind = ScheduleKind::kWarmupLR;
  o.schedule.warmup_min_lr = 1e-4;
  o.schedule.warmup_max_lr = 3e-3;
  o.schedule.warmup_num_steps = 5;
  o.gradient_clipping = 0.5;
  o.block_routing = !c.routes.empty();
  auto created = Trainer::create(o);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  Trainer& trainer = *created.value();
  const ParamTable& table = trainer.model().param_table();
  for (const TensorSpec& s : table.specs()) {
    if (s.init != InitKind::kNormal) continue;
    for (size_t i = 0; i < s.numel; ++i) trainer.params()[s.offset + i] *= c.weight_boost;
  }

  // Token streams: targets are the next token, with a few ignored positions.
  Rng rng(99);
  std::vector<int32_t> tokens(kSteps * B * T), targets(kSteps * B * T);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(o.model.vocab_size));
  for (size_t i = 0; i < targets.size(); ++i) targets[i] = (i % 13 == 5) ? -1 : tokens[(i + 1) % tokens.size()];

  char tmpl[] = "/tmp/zt_oracle_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::vector<TensorToWrite> init;
  if (c.hf_export_shard_bytes > 0) {
    const Status exported = export_hf_model(o.model, table, trainer.params().data(), dir + "/hf",
                                            {.max_shard_bytes = c.hf_export_shard_bytes});
    ASSERT_TRUE(exported.ok()) << exported.to_string();
  } else {
    for (const TensorSpec& s : table.specs()) init.push_back({s.name, StDType::kF32, s.shape, trainer.params().data() + s.offset});
  }
  init.push_back({"tokens", StDType::kI32, {kSteps, B, T}, tokens.data()});
  init.push_back({"targets", StDType::kI32, {kSteps, B, T}, targets.data()});
  ASSERT_TRUE(write_safetensors(dir + "/init.safetensors", init).ok());
  std::ofstream(dir + "/case.json") << R"({"model": )" << c.model_json << R"(, "routes": )" << routes_json(c.routes, B)
                                     << R"(, "steps": 10, "gradient_clipping": 0.5,
    "adamw": {"beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1},
    "warmup_lr": {"warmup_min_lr": 1e-4, "warmup_max_lr": 3e-3, "warmup_num_steps": 5, "warmup_type": "log"}})";
  const std::string cmd = python() + " " + oracle_source_dir() + "/" + c.script + " " + dir;
  const int rc = std::system(cmd.c_str());
  ASSERT_EQ(rc, 0) << "PyTorch reference failed (" << cmd << "); under CI python3-torch must be installed";
  auto ref_or = SafetensorsFile::read(dir + "/torch.safetensors");
  ASSERT_TRUE(ref_or.ok()) << ref_or.status().to_string();
  const SafetensorsFile& ref = ref_or.value();
  expect_first_batch(trainer, tokens, targets, B, T, ref, c.name, c.routes);

  // 10 AdamW steps with warmup and clipping.
  const auto* ref_losses = static_cast<const float*>(ref.data("step_losses"));
  double worst_step = 0.0;
  for (int step = 0; step < kSteps; ++step) {
    const size_t off = static_cast<size_t>(step) * B * T;
    auto stats = trainer.step({{tokens.data() + off, targets.data() + off}});
    ASSERT_TRUE(stats.ok()) << stats.status().to_string();
    const double rel = std::fabs(stats->loss - ref_losses[step]) / ref_losses[step];
    worst_step = std::max(worst_step, rel);
    EXPECT_LE(rel, 1e-5) << "step " << step << ": " << stats->loss << " vs " << ref_losses[step];
    if (o.model.moe.enabled()) {
      const double ref_aux = static_cast<const float*>(ref.data("step_aux"))[step];
      EXPECT_LE(std::fabs(stats->moe_aux_loss - ref_aux) / ref_aux, 1e-5) << "step " << step << " balance loss";
    }
    std::printf("  step %2d loss %.7f torch %.7f lr %.6f grad_norm %.4f%s\n", step + 1, stats->loss, ref_losses[step],
                stats->lr, stats->grad_norm, stats->grad_norm > o.gradient_clipping ? " (clipped)" : "");
  }
  std::printf("  [%s] worst step loss rel err %.2e\n", c.name, worst_step);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace zt::testing

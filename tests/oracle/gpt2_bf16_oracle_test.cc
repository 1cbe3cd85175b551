// PyTorch oracle for bf16 compute (issue 13, acceptance 1): zerotrain's bf16 GPT-2
// (bf16 weights and activations, fp32 sums, fp32 parameter gradients) on weights rounded
// to bf16, against PyTorch in fp32 on the same weights (the exact answer) and, for
// scale, PyTorch's own bf16 (CPU autocast). tests/oracle/gpt2_bf16_reference.py runs
// PyTorch.
//
// The bound. Every op of the bf16 model rounds its output once to bf16 (relative error
// at most u = 2^-8, bf16 having 8 significand bits) and sums in fp32 (error ~2^-24 K, negligible). A value reaching the
// logits has passed, per block, ln_1, c_attn, attention, c_proj + residual, ln_2, c_fc,
// GELU, c_proj + residual (8 roundings) and then ln_f and the head (2), so with 2 blocks
// at most R = 18 roundings, each perturbing by u relative to the value it rounds. To
// first order those perturbations add, so the logits' error is within R u of their
// largest magnitude when the layers do not amplify perturbations (LayerNorm renormalises
// and GPT-2's initialisation keeps the residual branches small): max|zt - fp32| <= R u
// max|fp32|, R u = 0.070. The backward runs the same ops' adjoints on bf16 activations
// and bf16 activation gradients: another R roundings before any parameter gradient, so
// gradients get 2 R u = 0.14 of each tensor's largest magnitude. The loss, an fp32 sum of
// per-token values, is within R u relative.
// A missing python3-torch fails the test (never a skip).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "core/rng.h"
#include "nn/gpt_model.h"
#include "testing/python_oracle.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using testing::max_rel;
using testing::python;

std::string source_dir() { return testing::oracle_source_dir(); }

class Bf16Oracle : public testing::TempDirTest {};

TEST_F(Bf16Oracle, LogitsAndGradientsWithinTheBf16Bound) {
  constexpr int B = 3, T = 16;
  const double u = std::ldexp(1.0, -8), R = 18;
  GptConfig cfg;
  cfg.n_layer = 2;
  cfg.n_head = 4;
  cfg.n_embd = 64;
  cfg.vocab_size = 211;
  cfg.n_positions = 32;
  const Backend& bf16 = *backend_for(Device::kCpu, DType::kBF16).value();
  GptModelOptions mo;
  mo.backend = &bf16;
  mo.max_batch = B;
  mo.max_seq = T;
  std::unique_ptr<GptModel> model = GptModel::create(cfg, mo);
  const ParamTable& table = model->param_table();
  const size_t n = table.numel();
  std::vector<float> master(n), rounded(n), grads(n, 0.0f);
  std::vector<half_t> compute(n);
  init_params(table, master.data(), 7);
  bf16.half_ops()->from_f32(compute.data(), master.data(), static_cast<int64_t>(n));
  bf16.half_ops()->to_f32(rounded.data(), compute.data(), static_cast<int64_t>(n));
  model->bind(compute.data(), grads.data());

  Rng rng(5);
  std::vector<int32_t> tokens(B * T), targets(B * T);
  for (auto& t : tokens) t = static_cast<int32_t>(rng.below(cfg.vocab_size));
  for (size_t i = 0; i < targets.size(); ++i) targets[i] = (i % 11 == 3) ? -1 : tokens[(i + 1) % tokens.size()];
  ASSERT_TRUE(model->forward(tokens.data(), B, T).ok());
  const LossSum l = model->loss(targets.data()).value();
  std::vector<float> logits(static_cast<size_t>(B) * T * cfg.vocab_size);
  for (int r = 0; r < B * T; ++r) model->logits_row(r, logits.data() + static_cast<size_t>(r) * cfg.vocab_size);
  ASSERT_TRUE(model->backward(tokens.data(), targets.data(), static_cast<float>(1.0 / static_cast<double>(l.count))).ok());

  std::vector<TensorToWrite> init;
  for (const TensorSpec& s : table.specs()) init.push_back({s.name, StDType::kF32, s.shape, rounded.data() + s.offset});
  init.push_back({"tokens", StDType::kI32, {B, T}, tokens.data()});
  init.push_back({"targets", StDType::kI32, {B, T}, targets.data()});
  ASSERT_TRUE(write_safetensors(dir_ + "/init.safetensors", init).ok());
  std::ofstream(dir_ + "/case.json") << R"({"model": {"n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 211,
    "n_positions": 32}})";
  // PyTorch's autocast bf16 needs oneDNN's bf16 kernels: an ONEDNN_MAX_CPU_ISA forced on
  // zerotrain (the fp32 fallback) is not passed to the reference.
  const std::string cmd =
      "env -u ONEDNN_MAX_CPU_ISA " + python() + " " + source_dir() + "/tests/oracle/gpt2_bf16_reference.py " + dir_;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "PyTorch reference failed (" << cmd << "); python3-torch must be installed";
  auto ref = SafetensorsFile::read(dir_ + "/torch.safetensors");
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  auto tensor = [&](const std::string& name) { return static_cast<const float*>(ref->data(name)); };

  const double e_logits = max_rel(logits.data(), tensor("fp32.logits"), logits.size());
  const double ac_logits = max_rel(tensor("autocast.logits"), tensor("fp32.logits"), logits.size());
  EXPECT_LE(e_logits, R * u);
  std::printf("  logits: zerotrain bf16 %.2e of max|logit| (bound %.2e), PyTorch autocast bf16 %.2e\n", e_logits, R * u,
              ac_logits);
  double worst = 0.0, worst_ac = 0.0;
  for (const TensorSpec& s : table.specs()) {
    const float* want = tensor("fp32.grad." + s.name);
    const double e = max_rel(grads.data() + s.offset, want, s.numel);
    EXPECT_LE(e, 2 * R * u) << s.name;
    worst = std::max(worst, e);
    worst_ac = std::max(worst_ac, max_rel(tensor("autocast.grad." + s.name), want, s.numel));
  }
  std::printf("  gradients: zerotrain bf16 worst tensor %.2e of its max (bound %.2e), PyTorch autocast bf16 %.2e\n",
              worst, 2 * R * u, worst_ac);
}

}  // namespace
}  // namespace zt

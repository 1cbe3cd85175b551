// A whole model of any family on one process with its own fp32 arenas, for the model
// tests (nn/gpt_model_test.cc, nn/llama_model_test.cc): built, initialised (seed 42) and
// bound; loss() runs forward and returns the mean loss. Also the checks every family must
// pass: finite differences through every tensor, and vocabulary padding changing nothing.
// Tests only.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nn/gpt_model.h"
#include "core/rng.h"
#include "kernels/kernel_args.h"
#include "nn/gpt_params.h"
#include "tensor/buffer.h"
#include "testing/gradcheck.h"
#include "testing/synthetic_data.h"

namespace zt::testing {

struct TinyModel {
  GptConfig cfg;
  ParamTable table;
  FloatBuffer params, grads;
  std::unique_ptr<GptModel> model;
  TinyModel(const GptConfig& c, int B, int T)
      : cfg(c), table(build_gpt_param_table(c)), params(table.numel()), grads(table.numel()) {
    model = GptModel::create(c, B, T);
    init_params(table, params.data(), 42);
    model->bind(params.data(), grads.data());
  }
  double loss(const std::vector<int32_t>& x, const std::vector<int32_t>& y, int B, int T) {
    EXPECT_TRUE(model->forward(x.data(), B, T).ok());
    const LossSum l = model->loss(y.data()).value();
    return l.sum / static_cast<double>(l.count);
  }
};

// Finite differences through every tensor of `cfg` against the analytic gradient, with
// weights boosted by N(0, 0.3) so every path carries signal and one target ignored.
inline void expect_finite_differences(const GptConfig& cfg, int B, int T, const std::string& label) {
  TinyModel run(cfg, B, T);
  Rng rng(7);
  for (size_t i = 0; i < run.params.size(); ++i) run.params[i] += static_cast<float>(rng.normal() * 0.3);
  auto x = random_tokens(B * T, run.cfg.vocab_size, 1);
  auto y = random_tokens(B * T, run.cfg.vocab_size, 2);
  y[3] = kIgnoreIndex;
  EXPECT_GT(run.loss(x, y, B, T), 0.0);
  int64_t counted = 0;
  for (int32_t v : y) counted += v >= 0;
  run.grads.zero();
  ASSERT_TRUE(run.model->backward(x.data(), y.data(), 1.0f / static_cast<float>(counted)).ok());
  for (const TensorSpec& s : run.table.specs()) {
    std::vector<float> analytic(run.grads.data() + s.offset, run.grads.data() + s.offset + s.numel);
    expect_gradient(label + s.name, run.params.data() + s.offset, s.numel, analytic,
                    [&] { return run.loss(x, y, B, T); }, 1e-2f, 2e-2, 2e-4, 12);
  }
}

// The same real weights with the vocabulary padded to padded_vocab: the same loss, the
// same gradients, and no gradient on a padding row.
inline void expect_padding_changes_nothing(const GptConfig& base, int padded_vocab, int B, int T) {
  GptConfig padded = base;
  padded.padded_vocab_size = padded_vocab;
  TinyModel a(base, B, T), b(padded, B, T);
  for (const TensorSpec& s : a.table.specs()) {  // tensor by tensor: the vocabulary matrices have extra zero rows
    const TensorSpec& t = b.table.at(b.table.find(s.name));
    std::memcpy(b.params.data() + t.offset, a.params.data() + s.offset, s.numel * sizeof(float));
  }
  auto x = random_tokens(B * T, base.vocab_size, 3), y = random_tokens(B * T, base.vocab_size, 4);
  const double la = a.loss(x, y, B, T), lb = b.loss(x, y, B, T);
  EXPECT_NEAR(la, lb, 1e-6 * la);
  a.grads.zero();
  b.grads.zero();
  ASSERT_TRUE(a.model->backward(x.data(), y.data(), 1.0f / (B * T)).ok());
  ASSERT_TRUE(b.model->backward(x.data(), y.data(), 1.0f / (B * T)).ok());
  for (const TensorSpec& s : a.table.specs()) {
    const TensorSpec& t = b.table.at(b.table.find(s.name));
    for (size_t i = 0; i < s.numel; ++i) {
      ASSERT_NEAR(a.grads[s.offset + i], b.grads[t.offset + i], 1e-6) << s.name << "[" << i << "]";
    }
    for (size_t i = s.numel; i < t.numel; ++i) ASSERT_EQ(b.grads[t.offset + i], 0.0f) << "padding row got a gradient";
  }
}

}  // namespace zt::testing

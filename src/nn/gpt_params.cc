// GPT-2 parameter table, binding and initialisation.
#include "nn/gpt_params.h"

#include <cmath>
#include <string>

#include "core/check.h"
#include "core/rng.h"

namespace zt {

namespace {

TensorSpec spec(std::string name, std::vector<int64_t> shape, int layer, InitKind init, float std = 0.0f) {
  TensorSpec s;
  s.name = std::move(name);
  s.weight_decay = shape.size() >= 2;
  s.shape = std::move(shape);
  s.layer = layer;
  s.init = init;
  s.init_std = std;
  return s;
}

}  // namespace

ParamTable build_gpt_param_table(const GptConfig& cfg) {
  const int64_t C = cfg.n_embd;
  const float kStd = 0.02f;
  const float proj_std = kStd / std::sqrt(2.0f * static_cast<float>(cfg.n_layer));
  ParamTable table;
  TensorSpec wte = spec("wte.weight", {cfg.padded_vocab(), C}, kEmbeddingLayer, InitKind::kNormal, kStd);
  wte.init_rows = cfg.vocab_size;
  table.add(wte);
  table.add(spec("wpe.weight", {cfg.n_positions, C}, kEmbeddingLayer, InitKind::kNormal, kStd));
  for (int l = 0; l < cfg.n_layer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    table.add(spec(p + "ln_1.weight", {C}, l, InitKind::kOnes));
    table.add(spec(p + "ln_1.bias", {C}, l, InitKind::kZeros));
    table.add(spec(p + "attn.c_attn.weight", {3 * C, C}, l, InitKind::kNormal, kStd));
    table.add(spec(p + "attn.c_attn.bias", {3 * C}, l, InitKind::kZeros));
    table.add(spec(p + "attn.c_proj.weight", {C, C}, l, InitKind::kNormal, proj_std));
    table.add(spec(p + "attn.c_proj.bias", {C}, l, InitKind::kZeros));
    table.add(spec(p + "ln_2.weight", {C}, l, InitKind::kOnes));
    table.add(spec(p + "ln_2.bias", {C}, l, InitKind::kZeros));
    table.add(spec(p + "mlp.c_fc.weight", {4 * C, C}, l, InitKind::kNormal, kStd));
    table.add(spec(p + "mlp.c_fc.bias", {4 * C}, l, InitKind::kZeros));
    table.add(spec(p + "mlp.c_proj.weight", {C, 4 * C}, l, InitKind::kNormal, proj_std));
    table.add(spec(p + "mlp.c_proj.bias", {C}, l, InitKind::kZeros));
  }
  table.add(spec("ln_f.weight", {C}, cfg.n_layer, InitKind::kOnes));
  table.add(spec("ln_f.bias", {C}, cfg.n_layer, InitKind::kZeros));
  return table;
}

GptWeights bind_gpt_weights(const GptConfig& cfg, const ParamTable& table, float* base) {
  auto at = [&](const std::string& name) {
    const int i = table.find(name);
    ZT_CHECK(i >= 0, "parameter %s missing from table", name.c_str());
    return base + table.at(i).offset;
  };
  GptWeights w;
  w.wte = at("wte.weight");
  w.wpe = at("wpe.weight");
  w.blocks.resize(static_cast<size_t>(cfg.n_layer));
  for (int l = 0; l < cfg.n_layer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    BlockWeights& b = w.blocks[static_cast<size_t>(l)];
    b.ln1w = at(p + "ln_1.weight");
    b.ln1b = at(p + "ln_1.bias");
    b.qkvw = at(p + "attn.c_attn.weight");
    b.qkvb = at(p + "attn.c_attn.bias");
    b.attprojw = at(p + "attn.c_proj.weight");
    b.attprojb = at(p + "attn.c_proj.bias");
    b.ln2w = at(p + "ln_2.weight");
    b.ln2b = at(p + "ln_2.bias");
    b.fcw = at(p + "mlp.c_fc.weight");
    b.fcb = at(p + "mlp.c_fc.bias");
    b.fcprojw = at(p + "mlp.c_proj.weight");
    b.fcprojb = at(p + "mlp.c_proj.bias");
  }
  w.lnfw = at("ln_f.weight");
  w.lnfb = at("ln_f.bias");
  return w;
}

void init_params(const ParamTable& table, float* params, uint64_t seed) {
  const auto& specs = table.specs();
#pragma omp parallel for schedule(dynamic)
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    float* p = params + s.offset;
    switch (s.init) {
      case InitKind::kZeros:
        for (size_t j = 0; j < s.numel; ++j) p[j] = 0.0f;
        break;
      case InitKind::kOnes:
        for (size_t j = 0; j < s.numel; ++j) p[j] = 1.0f;
        break;
      case InitKind::kNormal: {
        Rng rng(seed * 0x9e3779b97f4a7c15ull + (i + 1) * 0xbf58476d1ce4e5b9ull);
        const size_t row = s.shape.size() >= 2 ? s.numel / static_cast<size_t>(s.shape[0]) : s.numel;
        const size_t filled = s.init_rows >= 0 ? static_cast<size_t>(s.init_rows) * row : s.numel;
        for (size_t j = 0; j < filled; ++j) p[j] = static_cast<float>(rng.normal() * s.init_std);
        for (size_t j = filled; j < s.numel; ++j) p[j] = 0.0f;
        break;
      }
    }
  }
}

}  // namespace zt

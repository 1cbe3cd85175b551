// GPT-2 parameter table, binding and initialisation.
#include "nn/gpt_params.h"

#include <algorithm>
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

void bind_gpt_layer(const ParamTable& table, int layer, float* layer_base, GptWeights* w) {
  const size_t begin = table.layer_range(layer).begin;
  auto at = [&](const std::string& name) -> float* {
    const int i = table.find(name);
    ZT_CHECK(i >= 0, "parameter %s missing from table", name.c_str());
    return layer_base == nullptr ? nullptr : layer_base + (table.at(i).offset - begin);
  };
  const int n_layer = static_cast<int>(w->blocks.size());
  if (layer == kEmbeddingLayer) {
    w->wte = at("wte.weight");
    w->wpe = at("wpe.weight");
  } else if (layer == n_layer) {
    w->lnfw = at("ln_f.weight");
    w->lnfb = at("ln_f.bias");
  } else {
    const std::string p = "h." + std::to_string(layer) + ".";
    BlockWeights& b = w->blocks[static_cast<size_t>(layer)];
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
}

GptWeights bind_gpt_weights(const GptConfig& cfg, const ParamTable& table, float* base) {
  GptWeights w;
  w.blocks.resize(static_cast<size_t>(cfg.n_layer));
  for (int layer = kEmbeddingLayer; layer <= cfg.n_layer; ++layer) {
    bind_gpt_layer(table, layer, base == nullptr ? nullptr : base + table.layer_range(layer).begin, &w);
  }
  return w;
}

void init_params_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed) {
  const auto& specs = table.specs();
#pragma omp parallel for schedule(dynamic)
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo >= hi) continue;
    float* p = out + (lo - range.begin);  // element j of the tensor lands at p[j - (lo - s.offset)]
    const size_t first = lo - s.offset, last = hi - s.offset;
    switch (s.init) {
      case InitKind::kZeros:
        for (size_t j = first; j < last; ++j) p[j - first] = 0.0f;
        break;
      case InitKind::kOnes:
        for (size_t j = first; j < last; ++j) p[j - first] = 1.0f;
        break;
      case InitKind::kNormal: {
        // The tensor's whole stream is drawn in order so every element gets the value
        // it would get in a full initialisation; only the owned part is stored.
        Rng rng(seed * 0x9e3779b97f4a7c15ull + (i + 1) * 0xbf58476d1ce4e5b9ull);
        const size_t row = s.shape.size() >= 2 ? s.numel / static_cast<size_t>(s.shape[0]) : s.numel;
        const size_t filled = s.init_rows >= 0 ? static_cast<size_t>(s.init_rows) * row : s.numel;
        for (size_t j = 0; j < last; ++j) {
          const float v = j < filled ? static_cast<float>(rng.normal() * s.init_std) : 0.0f;
          if (j >= first) p[j - first] = v;
        }
        break;
      }
    }
  }
}

void init_params(const ParamTable& table, float* params, uint64_t seed) {
  init_params_range(table, {0, table.numel()}, params, seed);
}

}  // namespace zt

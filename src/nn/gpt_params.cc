// GPT-2 parameter table, binding and initialisation.
#include "nn/gpt_params.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/check.h"
#include "nn/param_spec.h"
#include "core/rng.h"
#include "core/threads.h"
#include "nn/llama_params.h"

namespace zt {

ParamTable build_gpt_param_table(const GptConfig& cfg, const GptLayout& lay) {
  if (cfg.is_llama()) return build_llama_param_table(cfg, lay);
  const int64_t C = cfg.n_embd;
  const float kStd = 0.02f;
  const float proj_std = kStd / std::sqrt(2.0f * static_cast<float>(cfg.n_layer));
  ParamTable table;
  table.set_tp(lay.tp_rank, lay.tp_size);
  auto wte = [&](int layer) {
    TensorSpec w = param_spec("wte.weight", {cfg.padded_vocab(), C}, layer, InitKind::kNormal, kStd);
    w.init_rows = cfg.vocab_size;
    return tp_slice(w, lay, 0);
  };
  if (lay.embedding) {
    table.add(wte(kEmbeddingLayer));
    table.add(param_spec("wpe.weight", {cfg.n_positions, C}, kEmbeddingLayer, InitKind::kNormal, kStd));
  }
  for (int l = lay.first_block; l < lay.end(cfg); ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    table.add(param_spec(p + "ln_1.weight", {C}, l, InitKind::kOnes));
    table.add(param_spec(p + "ln_1.bias", {C}, l, InitKind::kZeros));
    table.add(tp_slice(param_spec(p + "attn.c_attn.weight", {3 * C, C}, l, InitKind::kNormal, kStd), lay, 0, 3));
    table.add(tp_slice(param_spec(p + "attn.c_attn.bias", {3 * C}, l, InitKind::kZeros), lay, 0, 3));
    table.add(tp_slice(param_spec(p + "attn.c_proj.weight", {C, C}, l, InitKind::kNormal, proj_std), lay, 1));
    table.add(param_spec(p + "attn.c_proj.bias", {C}, l, InitKind::kZeros));
    table.add(param_spec(p + "ln_2.weight", {C}, l, InitKind::kOnes));
    table.add(param_spec(p + "ln_2.bias", {C}, l, InitKind::kZeros));
    table.add(tp_slice(param_spec(p + "mlp.c_fc.weight", {4 * C, C}, l, InitKind::kNormal, kStd), lay, 0));
    table.add(tp_slice(param_spec(p + "mlp.c_fc.bias", {4 * C}, l, InitKind::kZeros), lay, 0));
    table.add(tp_slice(param_spec(p + "mlp.c_proj.weight", {C, 4 * C}, l, InitKind::kNormal, proj_std), lay, 1));
    table.add(param_spec(p + "mlp.c_proj.bias", {C}, l, InitKind::kZeros));
  }
  if (lay.head) {
    table.add(param_spec("ln_f.weight", {C}, cfg.n_layer, InitKind::kOnes));
    table.add(param_spec("ln_f.bias", {C}, cfg.n_layer, InitKind::kZeros));
    if (lay.has_tied_copy()) table.add(wte(tied_head_layer(cfg)));
  }
  return table;
}

template <typename W>
void bind_gpt_layer(const ParamTable& table, int layer, W* layer_base, GptWeightsT<W>* w) {
  auto at = [&](const std::string& name) { return param_in_layer(table, layer, layer_base, name); };
  const int n_layer = static_cast<int>(w->blocks.size());
  if (layer == kEmbeddingLayer) {
    w->wte = at("wte.weight");
    w->wpe = at("wpe.weight");
  } else if (layer == n_layer + 1) {  // the LM head's copy of wte on a last pipeline stage
    w->wte = at("wte.weight");
  } else if (layer == n_layer) {
    w->lnfw = at("ln_f.weight");
    w->lnfb = at("ln_f.bias");
  } else {
    const std::string p = "h." + std::to_string(layer) + ".";
    BlockWeightsT<W>& b = w->blocks[static_cast<size_t>(layer)];
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

template <typename W>
GptWeightsT<W> bind_gpt_weights(const GptConfig& cfg, const ParamTable& table, W* base) {
  GptWeightsT<W> w;
  w.blocks.resize(static_cast<size_t>(cfg.n_layer));
  for (int layer : table.layers()) {
    bind_gpt_layer(table, layer, base == nullptr ? nullptr : base + table.layer_range(layer).begin, &w);
  }
  return w;
}

template void bind_gpt_layer<float>(const ParamTable&, int, float*, GptWeightsT<float>*);
template void bind_gpt_layer<half_t>(const ParamTable&, int, half_t*, GptWeightsT<half_t>*);
template GptWeightsT<float> bind_gpt_weights<float>(const GptConfig&, const ParamTable&, float*);
template GptWeightsT<half_t> bind_gpt_weights<half_t>(const GptConfig&, const ParamTable&, half_t*);

static uint64_t name_hash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void init_params_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed) {
  const auto& specs = table.specs();
  const int tp_rank = table.tp_rank(), tp_size = table.tp_size();
parallel_for(static_cast<int64_t>(specs.size()), [&](int64_t i) {
    const TensorSpec& s = specs[static_cast<size_t>(i)];
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo >= hi) return;
    // Local element k of the tensor lands at out[s.offset + k - range.begin] when in [lo, hi).
    auto store = [&](size_t k, float v) {
      if (s.offset + k >= lo && s.offset + k < hi) out[s.offset + k - range.begin] = v;
    };
    if (s.init != InitKind::kNormal) {
      const float v = s.init == InitKind::kOnes ? 1.0f : 0.0f;
      for (size_t k = lo - s.offset; k < hi - s.offset; ++k) store(k, v);
      return;
    }
    // The whole global tensor's stream in order, so every element gets the value a full
    // initialisation gives it; only this slice's part of [lo, hi) is stored.
    const std::vector<int64_t>& gs = s.global_shape.empty() ? s.shape : s.global_shape;
    size_t global_numel = 1;
    for (int64_t d : gs) global_numel *= static_cast<size_t>(d);
    const size_t row = gs.size() >= 2 ? static_cast<size_t>(gs[1]) : global_numel;
    const size_t filled = s.init_rows >= 0 ? static_cast<size_t>(s.init_rows) * row : global_numel;
    const bool sliced = s.tp_dim >= 0 && tp_size > 1;
    const size_t stop = sliced ? global_numel : hi - s.offset;  // unsliced: nothing after hi is needed
    Rng rng(seed * 0x9e3779b97f4a7c15ull + name_hash(s.name));
    for (size_t g = 0; g < stop; ++g) {
      const float v = g < filled ? static_cast<float>(rng.normal() * s.init_std) : 0.0f;
      size_t k;
      if (tp_local_index(s, tp_rank, tp_size, g, &k)) store(k, v);
    }
  });
}

void init_params(const ParamTable& table, float* params, uint64_t seed) {
  init_params_range(table, {0, table.numel()}, params, seed);
}

}  // namespace zt

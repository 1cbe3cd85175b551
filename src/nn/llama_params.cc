// Llama parameter table and binding.
#include "nn/llama_params.h"

#include <string>

#include "core/check.h"
#include "nn/param_spec.h"

namespace zt {

ParamTable build_llama_param_table(const GptConfig& cfg, const GptLayout& lay) {
  ZT_CHECK(cfg.is_llama(), "build_llama_param_table on a %s config", "GPT-2");
  const int64_t C = cfg.n_embd, KV = cfg.kv_dim(), I = cfg.intermediate_size;
  const float kStd = 0.02f;
  ParamTable table;
  table.set_tp(lay.tp_rank, lay.tp_size);
  auto vocab_matrix = [&](const char* name, int layer) {
    TensorSpec w = param_spec(name, {cfg.padded_vocab(), C}, layer, InitKind::kNormal, kStd);
    w.init_rows = cfg.vocab_size;
    return tp_slice(w, lay, 0);  // vocabulary-parallel
  };
  if (lay.embedding) table.add(vocab_matrix("embed_tokens.weight", kEmbeddingLayer));
  for (int l = lay.first_block; l < lay.end(cfg); ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    table.add(param_spec(p + "input_layernorm.weight", {C}, l, InitKind::kOnes));
    // Column-parallel (rows: whole heads, whole kv heads, MLP columns) and row-parallel (inputs).
    table.add(tp_slice(param_spec(p + "self_attn.q_proj.weight", {C, C}, l, InitKind::kNormal, kStd), lay, 0));
    table.add(tp_slice(param_spec(p + "self_attn.k_proj.weight", {KV, C}, l, InitKind::kNormal, kStd), lay, 0));
    table.add(tp_slice(param_spec(p + "self_attn.v_proj.weight", {KV, C}, l, InitKind::kNormal, kStd), lay, 0));
    table.add(tp_slice(param_spec(p + "self_attn.o_proj.weight", {C, C}, l, InitKind::kNormal, kStd), lay, 1));
    table.add(param_spec(p + "post_attention_layernorm.weight", {C}, l, InitKind::kOnes));
    table.add(tp_slice(param_spec(p + "mlp.gate_proj.weight", {I, C}, l, InitKind::kNormal, kStd), lay, 0));
    table.add(tp_slice(param_spec(p + "mlp.up_proj.weight", {I, C}, l, InitKind::kNormal, kStd), lay, 0));
    table.add(tp_slice(param_spec(p + "mlp.down_proj.weight", {C, I}, l, InitKind::kNormal, kStd), lay, 1));
  }
  if (lay.head) {
    table.add(param_spec("norm.weight", {C}, cfg.n_layer, InitKind::kOnes));
    if (!cfg.tie_word_embeddings) {
      table.add(vocab_matrix("lm_head.weight", cfg.n_layer));
    } else if (lay.has_tied_copy()) {
      table.add(vocab_matrix("embed_tokens.weight", tied_head_layer(cfg)));
    }
  }
  return table;
}

template <typename W>
void bind_llama_layer(const GptConfig& cfg, const ParamTable& table, int layer, W* layer_base, LlamaWeightsT<W>* w) {
  auto at = [&](const std::string& name) { return param_in_layer(table, layer, layer_base, name); };
  if (layer == kEmbeddingLayer) {
    w->embed = at("embed_tokens.weight");
    if (cfg.tie_word_embeddings) w->lm_head = w->embed;
  } else if (layer == tied_head_layer(cfg)) {  // the LM head's copy of embed_tokens on a last stage
    w->lm_head = at("embed_tokens.weight");
  } else if (layer == cfg.n_layer) {
    w->norm = at("norm.weight");
    if (!cfg.tie_word_embeddings) w->lm_head = at("lm_head.weight");
  } else {
    const std::string p = "layers." + std::to_string(layer) + ".";
    LlamaBlockWeightsT<W>& b = w->blocks[static_cast<size_t>(layer)];
    b.in_norm = at(p + "input_layernorm.weight");
    b.q = at(p + "self_attn.q_proj.weight");
    b.k = at(p + "self_attn.k_proj.weight");
    b.v = at(p + "self_attn.v_proj.weight");
    b.o = at(p + "self_attn.o_proj.weight");
    b.post_norm = at(p + "post_attention_layernorm.weight");
    b.gate = at(p + "mlp.gate_proj.weight");
    b.up = at(p + "mlp.up_proj.weight");
    b.down = at(p + "mlp.down_proj.weight");
  }
}

template <typename W>
LlamaWeightsT<W> bind_llama_weights(const GptConfig& cfg, const ParamTable& table, W* base) {
  LlamaWeightsT<W> w;
  w.blocks.resize(static_cast<size_t>(cfg.n_layer));
  for (int layer : table.layers()) {
    bind_llama_layer(cfg, table, layer, base == nullptr ? nullptr : base + table.layer_range(layer).begin, &w);
  }
  return w;
}

template void bind_llama_layer<float>(const GptConfig&, const ParamTable&, int, float*, LlamaWeightsT<float>*);
template void bind_llama_layer<half_t>(const GptConfig&, const ParamTable&, int, half_t*, LlamaWeightsT<half_t>*);
template LlamaWeightsT<float> bind_llama_weights<float>(const GptConfig&, const ParamTable&, float*);
template LlamaWeightsT<half_t> bind_llama_weights<half_t>(const GptConfig&, const ParamTable&, half_t*);

}  // namespace zt

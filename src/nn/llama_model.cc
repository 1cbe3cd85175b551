// LlamaModel: activations, binding, embeddings, blocks and the head (fp32, one rank).
#include "nn/llama_model.h"

#include <cstring>
#include <string>

#include "core/check.h"

namespace zt {

namespace {

// Hands out 64-byte aligned float buffers of an arena in order; with a null base it only counts.
class FloatCarver {
 public:
  explicit FloatCarver(float* base) : base_(base) {}
  float* take(size_t count) {
    float* p = base_ == nullptr ? nullptr : base_ + used_;
    used_ += (count + 15) / 16 * 16;
    return p;
  }
  size_t used() const { return used_; }  // floats

 private:
  float* base_;
  size_t used_ = 0;
};

}  // namespace

LlamaModel::LlamaModel(const GptConfig& config, const GptModelOptions& options)
    : GptModel(config, options), k_(backend_.ops()) {
  const Status supported = check_supported(config, options);
  ZT_CHECK(supported.ok(), "%s", supported.to_string().c_str());
  const size_t B = static_cast<size_t>(options.max_batch), T = static_cast<size_t>(options.max_seq);
  const size_t BT = B * T, C = static_cast<size_t>(config.n_embd), NH = static_cast<size_t>(config.n_head);
  const size_t KV = static_cast<size_t>(config.kv_dim()), I = static_cast<size_t>(config.intermediate_size);
  const size_t Vp = static_cast<size_t>(config.padded_vocab()), HD = static_cast<size_t>(config.head_size());
  const GptLayout& lay = options.layout;
  auto carve = [&](FloatCarver* c) {
    slots_.assign(static_cast<size_t>(options.slots), LlamaActivations{});
    for (LlamaActivations& s : slots_) {
      s.encoded = c->take(BT * C);
      s.blocks.assign(static_cast<size_t>(config.n_layer), LlamaBlockActivations{});
      for (int l = lay.first_block; l < lay.end(config); ++l) {
        LlamaBlockActivations& b = s.blocks[static_cast<size_t>(l)];
        b.n1 = c->take(BT * C);
        b.rstd1 = c->take(BT);
        b.qkv = c->take(BT * 3 * C);
        b.att = c->take(B * NH * T * T);
        b.atty = c->take(BT * C);
        b.res2 = c->take(BT * C);
        b.n2 = c->take(BT * C);
        b.rstd2 = c->take(BT);
        b.gate = c->take(BT * I);
        b.up = c->take(BT * I);
        b.act = c->take(BT * I);
        b.res3 = c->take(BT * C);
      }
      if (lay.head) {
        s.normed = c->take(BT * C);
        s.rstdf = c->take(BT);
        s.logits = c->take(BT * Vp);
        s.losses = c->take(BT);
        s.xent_stats = c->take(2 * BT);
      }
    }
    saved_bytes_ = c->used() * sizeof(float);
    freqs_ = c->take(T * HD);
    dres_ = c->take(BT * C);
    dln_ = c->take(BT * C);
    dtmp_ = c->take(BT * C);
    dqkv_ = c->take(BT * 3 * C);
    q_ = c->take(BT * C);
    k_tmp_ = c->take(BT * KV);
    v_tmp_ = c->take(BT * KV);
    dgate_ = c->take(BT * I);
    dup_ = c->take(BT * I);
    dact_ = c->take(BT * I);
  };
  FloatCarver counter(nullptr);
  carve(&counter);
  StatusOr<Arena> arena = backend_.allocate(counter.used(), DType::kF32, "the activations");
  ZT_CHECK(arena.ok(), "%s", arena.status().to_string().c_str());
  arena_ = std::move(arena).value();
  FloatCarver carver(arena_.data());
  carve(&carver);
  k_.rope_table(freqs_, options.max_seq, config.head_size(), config.rope_theta);
  w_.blocks.resize(static_cast<size_t>(config.n_layer));
  dw_.blocks.resize(static_cast<size_t>(config.n_layer));
}

void LlamaModel::bind(void* params, float* grads) {
  w_ = bind_llama_weights(config_, table_, static_cast<float*>(params));
  dw_ = bind_llama_weights(config_, table_, grads);
}

void LlamaModel::bind_layer(int layer, void* params_at, float* grads_at) {
  bind_llama_layer(config_, table_, layer, static_cast<float*>(params_at), &w_);
  bind_llama_layer(config_, table_, layer, grads_at, &dw_);
}

void* LlamaModel::bound_params(int layer) const {
  // Each layer's first tensor: embed_tokens, a block's input_layernorm, norm, the tied copy.
  if (layer == kEmbeddingLayer) return w_.embed;
  if (layer == tied_head_layer(config_)) return w_.lm_head;
  if (layer == config_.n_layer) return w_.norm;
  return w_.blocks[static_cast<size_t>(layer)].in_norm;
}

const float* LlamaModel::block_input(int layer) const {
  if (layer == options_.layout.first_block) return slot().encoded;
  return slot().blocks[static_cast<size_t>(layer - 1)].res3;
}

void LlamaModel::logits_row(int64_t row, float* out) const {
  const int Vp = config_.padded_vocab();
  std::memcpy(out, slot().logits + row * Vp, sizeof(float) * static_cast<size_t>(Vp));
}

Status LlamaModel::forward_embedding(const int32_t* tokens, int B, int T) {
  ZT_CHECK(options_.layout.embedding, "this stage does not hold the embeddings");
  begin_stage(B, T);
  const int64_t C = config_.n_embd, BT = static_cast<int64_t>(B) * T;
  float* out = slot().encoded;
  for (int64_t i = 0; i < BT; ++i) {
    std::memcpy(out + i * C, w_.embed + static_cast<int64_t>(tokens[i]) * C, sizeof(float) * static_cast<size_t>(C));
  }
  return Status::OK();
}

void LlamaModel::backward_embedding(const int32_t* tokens) {
  ZT_CHECK(options_.layout.embedding, "this stage does not hold the embeddings");
  const int64_t C = config_.n_embd, BT = static_cast<int64_t>(B_) * T_;
  for (int64_t i = 0; i < BT; ++i) {  // rows in order: deterministic with repeated tokens
    float* d = dw_.embed + static_cast<int64_t>(tokens[i]) * C;
    const float* g = dres_ + i * C;
    for (int64_t c = 0; c < C; ++c) d[c] += g[c];
  }
}

Status LlamaModel::forward_block(int l) {
  ZT_CHECK(options_.layout.owns_block(config_, l), "block %d is not on this stage", l);
  const int C = config_.n_embd, NH = config_.n_head, NKV = config_.kv_heads(), HD = config_.head_size();
  const int KV = config_.kv_dim(), I = config_.intermediate_size, rep = NH / NKV;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const LlamaBlockWeightsT<float>& w = w_.blocks[static_cast<size_t>(l)];
  const LlamaBlockActivations& a = slot().blocks[static_cast<size_t>(l)];
  const float* x = block_input(l);
  // Attention.
  k_.rmsnorm_forward(a.n1, a.rstd1, x, w.in_norm, BT, C, config_.rms_norm_eps);
  k_.linear_forward(q_, a.n1, w.q, nullptr, nullptr, BT, C, C);
  k_.linear_forward(k_tmp_, a.n1, w.k, nullptr, nullptr, BT, C, KV);
  k_.linear_forward(v_tmp_, a.n1, w.v, nullptr, nullptr, BT, C, KV);
  k_.rope_forward(q_, q_, freqs_, B_, T_, NH, HD, 0);
  k_.rope_forward(k_tmp_, k_tmp_, freqs_, B_, T_, NKV, HD, 0);
  const size_t head_bytes = sizeof(float) * static_cast<size_t>(HD);
  for (int64_t i = 0; i < BT; ++i) {  // pack (B, T, 3C): query head h reads kv head h / rep
    float* row = a.qkv + i * 3 * C;
    std::memcpy(row, q_ + i * C, sizeof(float) * static_cast<size_t>(C));
    for (int h = 0; h < NH; ++h) {
      std::memcpy(row + C + h * HD, k_tmp_ + i * KV + (h / rep) * HD, head_bytes);
      std::memcpy(row + 2 * C + h * HD, v_tmp_ + i * KV + (h / rep) * HD, head_bytes);
    }
  }
  k_.attention_forward(a.atty, a.att, a.qkv, B_, T_, C, NH);
  k_.linear_forward(a.res2, a.atty, w.o, nullptr, x, BT, C, C);
  // SwiGLU MLP.
  k_.rmsnorm_forward(a.n2, a.rstd2, a.res2, w.post_norm, BT, C, config_.rms_norm_eps);
  k_.linear_forward(a.gate, a.n2, w.gate, nullptr, nullptr, BT, C, I);
  k_.linear_forward(a.up, a.n2, w.up, nullptr, nullptr, BT, C, I);
  k_.swiglu_forward(a.act, a.gate, a.up, BT * I);
  k_.linear_forward(a.res3, a.act, w.down, nullptr, a.res2, BT, I, C);
  return Status::OK();
}

Status LlamaModel::backward_block(int l) {
  ZT_CHECK(options_.layout.owns_block(config_, l), "block %d is not on this stage", l);
  const int C = config_.n_embd, NH = config_.n_head, NKV = config_.kv_heads(), HD = config_.head_size();
  const int KV = config_.kv_dim(), I = config_.intermediate_size, rep = NH / NKV;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const LlamaBlockWeightsT<float>& w = w_.blocks[static_cast<size_t>(l)];
  const LlamaBlockWeightsT<float>& dw = dw_.blocks[static_cast<size_t>(l)];
  const LlamaBlockActivations& a = slot().blocks[static_cast<size_t>(l)];
  const float* x = block_input(l);
  float* dres = dres_;  // dL/d(res3) on entry, dL/d(block input) on exit
  // MLP.
  k_.linear_backward(dact_, dw.down, nullptr, dres, a.act, w.down, BT, I, C);
  k_.swiglu_backward(dgate_, dup_, dact_, a.gate, a.up, BT * I);
  k_.linear_backward(dln_, dw.gate, nullptr, dgate_, a.n2, w.gate, BT, C, I);
  k_.linear_backward(dtmp_, dw.up, nullptr, dup_, a.n2, w.up, BT, C, I);
  k_.accumulate(dln_, dtmp_, BT * C);
  k_.rmsnorm_backward(dres, dw.post_norm, dln_, a.res2, w.post_norm, a.rstd2, BT, C);
  // Attention.
  k_.linear_backward(dln_, dw.o, nullptr, dres, a.atty, w.o, BT, C, C);
  k_.attention_backward(dqkv_, dln_, a.qkv, a.att, B_, T_, C, NH);
  const size_t head_bytes = sizeof(float) * static_cast<size_t>(HD);
  for (int64_t i = 0; i < BT; ++i) {  // unpack; each kv head sums the gradients of its rep query heads
    const float* row = dqkv_ + i * 3 * C;
    std::memcpy(q_ + i * C, row, sizeof(float) * static_cast<size_t>(C));
    float* dk = k_tmp_ + i * KV;
    float* dv = v_tmp_ + i * KV;
    for (int g = 0; g < NKV; ++g) {
      std::memcpy(dk + g * HD, row + C + g * rep * HD, head_bytes);
      std::memcpy(dv + g * HD, row + 2 * C + g * rep * HD, head_bytes);
      for (int r = 1; r < rep; ++r) {
        const float* sk = row + C + (g * rep + r) * HD;
        const float* sv = row + 2 * C + (g * rep + r) * HD;
        for (int d = 0; d < HD; ++d) {
          dk[g * HD + d] += sk[d];
          dv[g * HD + d] += sv[d];
        }
      }
    }
  }
  k_.rope_backward(q_, q_, freqs_, B_, T_, NH, HD, 0);
  k_.rope_backward(k_tmp_, k_tmp_, freqs_, B_, T_, NKV, HD, 0);
  k_.linear_backward(dln_, dw.q, nullptr, q_, a.n1, w.q, BT, C, C);
  k_.linear_backward(dtmp_, dw.k, nullptr, k_tmp_, a.n1, w.k, BT, C, KV);
  k_.accumulate(dln_, dtmp_, BT * C);
  k_.linear_backward(dtmp_, dw.v, nullptr, v_tmp_, a.n1, w.v, BT, C, KV);
  k_.accumulate(dln_, dtmp_, BT * C);
  k_.rmsnorm_backward(dres, dw.in_norm, dln_, x, w.in_norm, a.rstd1, BT, C);
  return Status::OK();
}

Status LlamaModel::forward_head() {
  ZT_CHECK(options_.layout.head, "this stage does not hold the head");
  const int C = config_.n_embd, Vp = config_.padded_vocab();
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  LlamaActivations& a = slot();
  k_.rmsnorm_forward(a.normed, a.rstdf, block_input(config_.n_layer), w_.norm, BT, C, config_.rms_norm_eps);
  k_.linear_forward(a.logits, a.normed, w_.lm_head, nullptr, nullptr, BT, C, Vp);
  return Status::OK();
}

StatusOr<LossSum> LlamaModel::loss(const int32_t* targets) {
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  LlamaActivations& a = slot();
  k_.crossentropy_forward(a.losses, a.xent_stats, a.logits, targets, BT, config_.vocab_size, config_.padded_vocab());
  LossSum result;
  for (int64_t i = 0; i < BT; ++i) {
    if (targets[i] == kIgnoreIndex) continue;
    result.sum += a.losses[i];
    ++result.count;
  }
  return result;
}

Status LlamaModel::backward_head(const int32_t* targets, float dloss) {
  const int C = config_.n_embd, Vp = config_.padded_vocab();
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  LlamaActivations& a = slot();
  float* dlogits = a.logits;  // in place
  k_.crossentropy_backward(dlogits, a.logits, a.xent_stats, targets, dloss, BT, config_.vocab_size, Vp);
  backend_.zero(dres_, sizeof(float) * static_cast<size_t>(BT) * C);
  k_.linear_backward(dln_, dw_.lm_head, nullptr, dlogits, a.normed, w_.lm_head, BT, C, Vp);
  k_.rmsnorm_backward(dres_, dw_.norm, dln_, block_input(config_.n_layer), w_.norm, a.rstdf, BT, C);
  return Status::OK();
}

}  // namespace zt

// GPT-2 forward/backward: the layer sequence, one line per kernel call.
#include "nn/gpt_model.h"

#include <cstring>
#include <string>

#include "core/check.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/crossentropy.h"
#include "kernels/cpu/encoder.h"
#include "kernels/cpu/gelu.h"
#include "kernels/cpu/layernorm.h"
#include "kernels/cpu/linear.h"

namespace zt {

GptModel::GptModel(const GptConfig& config, int max_batch, int max_seq)
    : config_(config), table_(build_gpt_param_table(config)), max_batch_(max_batch), max_seq_(max_seq) {
  ZT_CHECK(config.validate().ok(), "invalid GptConfig: %s", config.validate().to_string().c_str());
  ZT_CHECK(max_batch > 0 && max_seq > 0 && max_seq <= config.n_positions, "bad activation shape %d x %d",
           max_batch, max_seq);
  acts_ = GptActivations::allocate(config, max_batch, max_seq);
}

void GptModel::bind(float* params, float* grads) {
  w_ = bind_gpt_weights(config_, table_, params);
  dw_ = bind_gpt_weights(config_, table_, grads);
}

void GptModel::bind_layer(int layer, float* params_at, float* grads_at) {
  if (w_.blocks.empty()) w_.blocks.resize(static_cast<size_t>(config_.n_layer));
  if (dw_.blocks.empty()) dw_.blocks.resize(static_cast<size_t>(config_.n_layer));
  bind_gpt_layer(table_, layer, params_at, &w_);
  bind_gpt_layer(table_, layer, grads_at, &dw_);
}

float* GptModel::bound_params(int layer) const {
  if (layer == kEmbeddingLayer) return w_.wte;  // wte is the first tensor of its layer
  if (layer == config_.n_layer) return w_.lnfw;
  return w_.blocks[static_cast<size_t>(layer)].ln1w;  // ln_1.weight is the block's first tensor
}

Status GptModel::validate_batch(const int32_t* tokens, const int32_t* targets, int B, int T) const {
  if (B <= 0 || B > max_batch_ || T <= 0 || T > max_seq_) {
    return Status::InvalidArgument("batch of " + std::to_string(B) + " x " + std::to_string(T) +
                                   " tokens does not fit the model's allocation of " + std::to_string(max_batch_) +
                                   " x " + std::to_string(max_seq_));
  }
  const int64_t n = static_cast<int64_t>(B) * T;
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= config_.vocab_size) {
      return Status::InvalidArgument("input token " + std::to_string(tokens[i]) + " at position " +
                                     std::to_string(i) + " is outside the vocabulary [0, " +
                                     std::to_string(config_.vocab_size) + ")");
    }
    if (targets != nullptr && (targets[i] < -1 || targets[i] >= config_.vocab_size)) {
      return Status::InvalidArgument("target token " + std::to_string(targets[i]) + " at position " +
                                     std::to_string(i) + " is neither -1 (ignore) nor in [0, " +
                                     std::to_string(config_.vocab_size) + ")");
    }
  }
  return Status::OK();
}

const float* GptModel::block_input(int layer) const {
  return layer == 0 ? acts_.encoded : acts_.blocks[static_cast<size_t>(layer - 1)].res3;
}

void GptModel::forward(const int32_t* tokens, int B, int T) {
  forward_embedding(tokens, B, T);
  for (int l = 0; l < config_.n_layer; ++l) forward_block(l);
  forward_head();
}

void GptModel::forward_embedding(const int32_t* tokens, int B, int T) {
  ZT_CHECK(B > 0 && B <= max_batch_ && T > 0 && T <= max_seq_, "batch %d x %d exceeds allocation", B, T);
  B_ = B;
  T_ = T;
  encoder_forward(acts_.encoded, tokens, w_.wte, w_.wpe, B, T, config_.n_embd);
}

void GptModel::forward_block(int l) {
  const int C = config_.n_embd, NH = config_.n_head;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const BlockWeights& w = w_.blocks[static_cast<size_t>(l)];
  const BlockActivations& a = acts_.blocks[static_cast<size_t>(l)];
  const float* res_in = block_input(l);
  layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, res_in, w.ln1w, w.ln1b, BT, C);
  linear_forward(a.qkv, a.ln1, w.qkvw, w.qkvb, nullptr, BT, C, 3 * C);
  attention_forward(a.atty, a.att, a.qkv, B_, T_, C, NH);
  linear_forward(a.res2, a.atty, w.attprojw, w.attprojb, res_in, BT, C, C);
  layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, w.ln2w, w.ln2b, BT, C);
  linear_forward(a.fch, a.ln2, w.fcw, w.fcb, nullptr, BT, C, 4 * C);
  gelu_forward(a.fch_gelu, a.fch, BT * 4 * C);
  linear_forward(a.res3, a.fch_gelu, w.fcprojw, w.fcprojb, a.res2, BT, 4 * C, C);
}

void GptModel::forward_head() {
  const int C = config_.n_embd;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const float* res = block_input(config_.n_layer);
  layernorm_forward(acts_.lnf, acts_.lnf_mean, acts_.lnf_rstd, res, w_.lnfw, w_.lnfb, BT, C);
  linear_forward(acts_.logits, acts_.lnf, w_.wte, nullptr, nullptr, BT, C, config_.padded_vocab());
}

LossSum GptModel::loss(const int32_t* targets) {
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  crossentropy_forward(acts_.losses, acts_.xent_stats, acts_.logits, targets, BT, config_.vocab_size,
                       config_.padded_vocab());
  LossSum result;
  for (int64_t i = 0; i < BT; ++i) {
    if (targets[i] == kIgnoreIndex) continue;
    result.sum += acts_.losses[i];
    ++result.count;
  }
  return result;
}

void GptModel::backward(const int32_t* tokens, const int32_t* targets, float dloss) {
  backward_head(targets, dloss);
  for (int l = config_.n_layer - 1; l >= 0; --l) backward_block(l);
  backward_embedding(tokens);
}

void GptModel::backward_head(const int32_t* targets, float dloss) {
  const int C = config_.n_embd, Vp = config_.padded_vocab();
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  float* dlogits = acts_.logits;  // in place
  crossentropy_backward(dlogits, acts_.logits, acts_.xent_stats, targets, dloss, BT, config_.vocab_size, Vp);
  std::memset(acts_.dresidual, 0, sizeof(float) * static_cast<size_t>(BT) * C);
  linear_backward(acts_.dln, dw_.wte, nullptr, dlogits, acts_.lnf, w_.wte, BT, C, Vp);
  layernorm_backward(acts_.dresidual, dw_.lnfw, dw_.lnfb, acts_.dln, block_input(config_.n_layer), w_.lnfw,
                     acts_.lnf_mean, acts_.lnf_rstd, BT, C);
}

void GptModel::backward_block(int l) {
  const int C = config_.n_embd, NH = config_.n_head;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const BlockWeights& w = w_.blocks[static_cast<size_t>(l)];
  const BlockWeights& dw = dw_.blocks[static_cast<size_t>(l)];
  const BlockActivations& a = acts_.blocks[static_cast<size_t>(l)];
  float* dres = acts_.dresidual;  // holds dL/d(res3) on entry, dL/d(block input) on exit
  linear_backward(acts_.dfch, dw.fcprojw, dw.fcprojb, dres, a.fch_gelu, w.fcprojw, BT, 4 * C, C);
  gelu_backward(acts_.dfch, a.fch, acts_.dfch, BT * 4 * C);
  linear_backward(acts_.dln, dw.fcw, dw.fcb, acts_.dfch, a.ln2, w.fcw, BT, C, 4 * C);
  layernorm_backward(dres, dw.ln2w, dw.ln2b, acts_.dln, a.res2, w.ln2w, a.ln2_mean, a.ln2_rstd, BT, C);
  linear_backward(acts_.dln, dw.attprojw, dw.attprojb, dres, a.atty, w.attprojw, BT, C, C);
  attention_backward(acts_.dqkv, acts_.dln, a.qkv, a.att, B_, T_, C, NH);
  linear_backward(acts_.dln, dw.qkvw, dw.qkvb, acts_.dqkv, a.ln1, w.qkvw, BT, C, 3 * C);
  layernorm_backward(dres, dw.ln1w, dw.ln1b, acts_.dln, block_input(l), w.ln1w, a.ln1_mean, a.ln1_rstd, BT, C);
}

void GptModel::backward_embedding(const int32_t* tokens) {
  encoder_backward(dw_.wte, dw_.wpe, acts_.dresidual, tokens, B_, T_, config_.n_embd);
}

}  // namespace zt

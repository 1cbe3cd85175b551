// GptConfig: the family presets, validation and parameter counting.
#include "nn/gpt_config.h"

#include <cmath>
#include <cstdio>
#include <numbers>

namespace zt {

Status GptConfig::validate() const {
  auto positive = [](const char* name, int v) -> Status {
    if (v > 0) return Status::OK();
    return Status::InvalidArgument(std::string("model.") + name + ": expected a positive integer, got " +
                                   std::to_string(v));
  };
  ZT_RETURN_IF_ERROR(positive("n_layer", n_layer));
  ZT_RETURN_IF_ERROR(positive("n_head", n_head));
  ZT_RETURN_IF_ERROR(positive("n_embd", n_embd));
  ZT_RETURN_IF_ERROR(positive("vocab_size", vocab_size));
  ZT_RETURN_IF_ERROR(positive("n_positions", n_positions));
  if (n_embd % n_head != 0) {
    return Status::InvalidArgument("model.n_embd: " + std::to_string(n_embd) + " is not divisible by n_head=" +
                                   std::to_string(n_head));
  }
  if (padded_vocab_size != 0 && padded_vocab_size < vocab_size) {
    return Status::InvalidArgument("model.padded_vocab_size: " + std::to_string(padded_vocab_size) +
                                   " is smaller than vocab_size=" + std::to_string(vocab_size));
  }
  if (vocab_size > 2147483647 / 2) {
    return Status::InvalidArgument("model.vocab_size: too large");
  }
  if (intermediate_size < 0 || (swiglu() && intermediate_size == 0)) {
    ZT_RETURN_IF_ERROR(positive("intermediate_size", intermediate_size));
  }
  if (n_kv_head < 0 || n_head % kv_heads() != 0) {
    return Status::InvalidArgument("model.num_key_value_heads: " + std::to_string(n_kv_head) +
                                   " does not divide num_attention_heads=" + std::to_string(n_head));
  }
  if (fused_qkv && (kv_heads() != n_head || rotary())) {
    return Status::InvalidArgument(std::string("model.") + (rotary() ? "positions" : "num_key_value_heads") +
                                   ": a fused qkv projection computes neither rotary positions nor grouped-query "
                                   "attention; use separate q, k, v projections");
  }
  if (rms_norm() && !(rms_norm_eps > 0.0f)) {
    return Status::InvalidArgument("model.rms_norm_eps: expected a positive number, got " + std::to_string(rms_norm_eps));
  }
  ZT_RETURN_IF_ERROR(moe.validate(n_layer));
  if (moe.enabled() && swiglu() && mlp_bias) {
    return Status::InvalidArgument("model.mlp_bias: SwiGLU experts have no biases (as Mixtral's and Qwen2-MoE's)");
  }
  return validate_rotary();
}

Status GptConfig::validate_rotary() const {
  if (!rotary()) return Status::OK();
  if (head_size() % 2 != 0) {
    return Status::InvalidArgument("model.hidden_size: the head dimension " + std::to_string(head_size()) +
                                   " (hidden_size / num_attention_heads) must be even for rotary embeddings");
  }
  if (!(rope_theta > 0.0)) {
    return Status::InvalidArgument("model.rope_theta: expected a positive number, got " + std::to_string(rope_theta));
  }
  const RopeScaling& r = rope_scaling;
  if (!r.type.empty() && r.type != "linear" && r.type != "llama3") {
    return Status::InvalidArgument("model.rope_scaling.rope_type: \"" + r.type + "\" is not one of \"linear\", \"llama3\"");
  }
  if (!r.type.empty() && !(r.factor >= 1.0)) {
    return Status::InvalidArgument("model.rope_scaling.factor: expected >= 1, got " + std::to_string(r.factor));
  }
  if (r.type == "llama3" && !(r.high_freq_factor > r.low_freq_factor && r.low_freq_factor > 0.0 &&
                              r.original_max_position_embeddings > 0)) {
    return Status::InvalidArgument("model.rope_scaling: llama3 needs high_freq_factor > low_freq_factor > 0 and a "
                                   "positive original_max_position_embeddings");
  }
  return Status::OK();
}

std::vector<double> GptConfig::rope_inv_freq() const {
  const int HD = head_size();
  std::vector<double> inv(static_cast<size_t>(HD / 2));
  const RopeScaling& r = rope_scaling;
  const double old_ctx = r.original_max_position_embeddings;
  for (int i = 0; i < HD / 2; ++i) {
    double f = std::pow(rope_theta, -2.0 * i / HD);
    if (r.type == "linear") {
      f /= r.factor;
    } else if (r.type == "llama3") {  // HF _compute_llama3_parameters
      const double wavelen = 2.0 * std::numbers::pi / f;
      if (wavelen > old_ctx / r.low_freq_factor) {
        f /= r.factor;
      } else if (wavelen >= old_ctx / r.high_freq_factor) {
        const double smooth = (old_ctx / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
        f = (1.0 - smooth) * f / r.factor + smooth * f;
      }
    }
    inv[static_cast<size_t>(i)] = f;
  }
  return inv;
}

const char* family_name(ModelFamily f) {
  return f == ModelFamily::kLlama ? "llama" : f == ModelFamily::kQwen2 ? "qwen2" : "gpt2";
}

ModelFamily family_of_name(const std::string& name) {
  return name == "llama" ? ModelFamily::kLlama : name == "qwen2" ? ModelFamily::kQwen2 : ModelFamily::kGpt2;
}

void GptConfig::set_family(ModelFamily f) {
  family_ = f;
  const bool llama = f != ModelFamily::kGpt2;
  norm = llama ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  mlp = llama ? MlpKind::kSwiGlu : MlpKind::kGelu;
  positions = llama ? PositionKind::kRotary : PositionKind::kLearned;
  fused_qkv = qkv_bias = out_bias = mlp_bias = tie_word_embeddings = scaled_residual_init = !llama;
  qkv_bias = !llama || f == ModelFamily::kQwen2;
}

int64_t GptConfig::attention_parameters() const {
  const int64_t C = n_embd, KV = kv_dim();
  const int64_t norms = (rms_norm() ? 2 : 4) * C;
  const int64_t qkv_biases = qkv_bias ? C + 2 * KV : 0;
  return norms + 2 * C * C + 2 * KV * C + qkv_biases + (out_bias ? C : 0);
}

// One MLP of width I: (2 or 3) C I weights, plus biases.
static int64_t mlp_parameters(int64_t C, int64_t I, bool swiglu, bool bias) {
  return (swiglu ? 3 : 2) * C * I + (bias ? I * (swiglu ? 2 : 1) + C : 0);
}

int64_t GptConfig::expert_parameters() const { return mlp_parameters(n_embd, expert_width(), swiglu(), mlp_bias); }

int64_t GptConfig::shared_parameters() const {
  if (!moe.has_shared()) return 0;
  const int64_t gate = moe.mix() == MoeMix::kResidual ? 2 * n_embd + 2 : moe.mix() == MoeMix::kGatedShared ? n_embd : 0;
  return mlp_parameters(n_embd, shared_width(), swiglu(), mlp_bias) + gate;
}

int64_t GptConfig::block_matmul_weights(int l) const {
  const int64_t C = n_embd, KV = kv_dim();
  const int64_t attention = 2 * C * C + 2 * KV * C;
  if (!moe_block(l)) return attention + (swiglu() ? 3 : 2) * C * mlp_width();
  const int64_t shared = moe.has_shared() ? (swiglu() ? 3 : 2) * C * shared_width() + moe_mix_logits(moe.mix()) * C : 0;
  return attention + moe.num_experts * C + moe.k() * (swiglu() ? 3 : 2) * C * expert_width() + shared;
}

int64_t GptConfig::block_parameters(int l) const {
  if (!moe_block(l)) return attention_parameters() + mlp_parameters(n_embd, mlp_width(), swiglu(), mlp_bias);
  return attention_parameters() + static_cast<int64_t>(moe.num_experts) * (n_embd + expert_parameters()) +
         shared_parameters();
}

int64_t GptConfig::position_parameters() const {
  return rotary() ? 0 : static_cast<int64_t>(n_positions) * n_embd;
}

int64_t GptConfig::num_parameters() const {
  const int64_t C = n_embd, V = vocab_size;
  const int64_t final_norm = (rms_norm() ? 1 : 2) * C;
  int64_t blocks = 0;
  for (int l = 0; l < n_layer; ++l) blocks += block_parameters(l);
  return V * C * (tie_word_embeddings ? 1 : 2) + position_parameters() + blocks + final_norm;
}

int64_t GptConfig::block_active_parameters(int l) const {
  return block_parameters(l) - (moe_block(l) ? (moe.num_experts - moe.k()) * expert_parameters() : 0);
}

int64_t GptConfig::active_parameters() const {
  int64_t idle = 0;
  for (int l = 0; l < n_layer; ++l) idle += block_parameters(l) - block_active_parameters(l);
  return num_parameters() - idle;
}

double GptConfig::flops_per_token(int T) const {
  const double L = n_layer, C = n_embd, V = vocab_size;
  double blocks = 0.0;
  for (int l = 0; l < n_layer; ++l) blocks += static_cast<double>(block_matmul_weights(l));
  return 6.0 * (blocks + V * C) + 12.0 * L * C * T;
}

std::string GptConfig::to_string() const {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "n_layer=%d n_head=%d n_embd=%d vocab_size=%d (padded %d) n_positions=%d",
                n_layer, n_head, n_embd, vocab_size, padded_vocab(), n_positions);
  if (family_ == ModelFamily::kGpt2) return buf + moe.to_string(expert_width(), active_parameters(), num_parameters());
  char llama[220];
  std::snprintf(llama, sizeof(llama), " family=%s intermediate_size=%d num_key_value_heads=%d rms_norm_eps=%g "
                "rope_theta=%g tie_word_embeddings=%s", family_name(family_), intermediate_size, kv_heads(), static_cast<double>(rms_norm_eps),
                rope_theta, tie_word_embeddings ? "true" : "false");
  return std::string(buf) + llama + moe.to_string(expert_width(), active_parameters(), num_parameters());
}

bool GptConfig::same_model(const GptConfig& o) const {
  const bool shape = n_layer == o.n_layer && n_head == o.n_head && n_embd == o.n_embd && vocab_size == o.vocab_size &&
                     n_positions == o.n_positions && family_ == o.family_ && mlp_width() == o.mlp_width() &&
                     kv_heads() == o.kv_heads() && moe == o.moe;
  const bool knobs = norm == o.norm && mlp == o.mlp && positions == o.positions && fused_qkv == o.fused_qkv &&
                     qkv_bias == o.qkv_bias && out_bias == o.out_bias && mlp_bias == o.mlp_bias &&
                     tie_word_embeddings == o.tie_word_embeddings && scaled_residual_init == o.scaled_residual_init;
  const bool norm_eps = !rms_norm() || rms_norm_eps == o.rms_norm_eps;
  const bool rope = !rotary() || (rope_theta == o.rope_theta && rope_scaling == o.rope_scaling);
  return shape && knobs && norm_eps && rope;
}

GptConfig GptConfig::gpt2_small() { return GptConfig{}; }

}  // namespace zt

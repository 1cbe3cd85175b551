// GptConfig validation and parameter counting.
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
  if (!is_llama()) return Status::OK();
  ZT_RETURN_IF_ERROR(positive("intermediate_size", intermediate_size));
  if (n_kv_head < 0 || n_head % kv_heads() != 0) {
    return Status::InvalidArgument("model.num_key_value_heads: " + std::to_string(n_kv_head) +
                                   " does not divide num_attention_heads=" + std::to_string(n_head));
  }
  if (head_size() % 2 != 0) {
    return Status::InvalidArgument("model.hidden_size: the head dimension " + std::to_string(head_size()) +
                                   " (hidden_size / num_attention_heads) must be even for rotary embeddings");
  }
  if (!(rms_norm_eps > 0.0f)) {
    return Status::InvalidArgument("model.rms_norm_eps: expected a positive number, got " + std::to_string(rms_norm_eps));
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

int64_t GptConfig::num_parameters() const {
  const int64_t C = n_embd, L = n_layer;
  if (is_llama()) {
    const int64_t I = intermediate_size, KV = kv_dim(), V = vocab_size;
    const int64_t per_block = 2 * C + 2 * C * C + 2 * KV * C + 3 * C * I;
    return V * C * (tie_word_embeddings ? 1 : 2) + L * per_block + C;
  }
  const int64_t per_block = 2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (4 * C * C + 4 * C) + (4 * C * C + C);
  return static_cast<int64_t>(vocab_size) * C + static_cast<int64_t>(n_positions) * C + L * per_block + 2 * C;
}

double GptConfig::flops_per_token(int T) const {
  const double L = n_layer, C = n_embd, V = vocab_size;
  if (is_llama()) {  // the LM head is a matmul whether tied or not; embedding lookups are not
    const double I = intermediate_size, KV = kv_dim();
    return 6.0 * (L * (2.0 * C * C + 2.0 * KV * C + 3.0 * C * I) + V * C) + 12.0 * L * C * T;
  }
  return 6.0 * (12.0 * L * C * C + V * C) + 12.0 * L * C * T;
}

std::string GptConfig::to_string() const {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "n_layer=%d n_head=%d n_embd=%d vocab_size=%d (padded %d) n_positions=%d",
                n_layer, n_head, n_embd, vocab_size, padded_vocab(), n_positions);
  if (!is_llama()) return buf;
  char llama[200];
  std::snprintf(llama, sizeof(llama), " family=llama intermediate_size=%d num_key_value_heads=%d rms_norm_eps=%g "
                "rope_theta=%g tie_word_embeddings=%s", intermediate_size, kv_heads(), static_cast<double>(rms_norm_eps),
                rope_theta, tie_word_embeddings ? "true" : "false");
  return std::string(buf) + llama;
}

GptConfig GptConfig::gpt2_small() { return GptConfig{}; }

}  // namespace zt

// GptConfig validation and parameter counting.
#include "nn/gpt_config.h"

#include <cstdio>

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
  return Status::OK();
}

int64_t GptConfig::num_parameters() const {
  const int64_t C = n_embd, L = n_layer;
  const int64_t per_block = 2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (4 * C * C + 4 * C) + (4 * C * C + C);
  return static_cast<int64_t>(vocab_size) * C + static_cast<int64_t>(n_positions) * C + L * per_block + 2 * C;
}

double GptConfig::flops_per_token(int T) const {
  const double L = n_layer, C = n_embd, V = vocab_size;
  return 6.0 * (12.0 * L * C * C + V * C) + 12.0 * L * C * T;
}

std::string GptConfig::to_string() const {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "n_layer=%d n_head=%d n_embd=%d vocab_size=%d (padded %d) n_positions=%d",
                n_layer, n_head, n_embd, vocab_size, padded_vocab(), n_positions);
  return buf;
}

GptConfig GptConfig::gpt2_small() { return GptConfig{}; }

}  // namespace zt

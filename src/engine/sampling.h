// Autoregressive text generation from a GptModel: temperature and top-k sampling with a
// seeded Rng (same seed, same text). The context is the last max_seq() tokens; every
// new token re-runs the forward over that window (no KV cache: sampling is a demo and
// evaluation tool here, not a serving path).
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "nn/gpt_model.h"

namespace zt {

struct SampleOptions {
  int64_t max_tokens = 200;
  double temperature = 0.8;  // 0: greedy
  int top_k = 40;            // 0: the whole vocabulary
  uint64_t seed = 1;
  int32_t stop_token = -1;   // stop when this token is produced (e.g. end-of-text); -1: never
};

// Returns only the generated tokens (the prompt excluded). The prompt must be non-empty
// and its tokens valid for the model. Uses row 0 of the model's activations (B = 1).
std::vector<int32_t> generate(GptModel& model, const std::vector<int32_t>& prompt, const SampleOptions& options);

// Picks one token from a logits row (V entries): top-k filter, temperature, softmax, draw.
int32_t sample_from_logits(const float* logits, int V, double temperature, int top_k, Rng& rng);

}  // namespace zt

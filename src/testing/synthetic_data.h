// Deterministic synthetic token streams for distributed tests: sample s is T+1 tokens
// from its own RNG stream, so any rank can build any part of a global batch, and the
// global batch is the same whatever the layout (the BatchSampler convention: rank r's
// micro-batch m, row j of step k is sample k*G + r*A*M + m*M + j). Every 11th target is
// the ignore index, to exercise the global token count.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "nn/gpt_training.h"

namespace zt::testing {

// A config of `family`'s preset knobs with the given shape.
inline GptConfig shaped_config(int n_layer, int n_head, int n_embd, int vocab, int positions,
                               ModelFamily family = ModelFamily::kGpt2) {
  GptConfig c;
  c.set_family(family);
  c.n_layer = n_layer;
  c.n_head = n_head;
  c.n_embd = n_embd;
  c.vocab_size = vocab;
  c.n_positions = positions;
  return c;
}

// The tiny GPT the unit tests train: 2 layers, 2 heads, 16 channels, 23 tokens, 8 positions.
inline GptConfig tiny_gpt_config() { return shaped_config(2, 2, 16, 23, 8); }

// A tiny model of either family: GPT-2, or a grouped-query Llama (2 kv heads, the given
// intermediate size, untied head) of the same width.
inline GptConfig tiny_config(bool llama, int n_layer, int n_embd, int vocab, int positions, int intermediate) {
  GptConfig c = shaped_config(n_layer, 4, n_embd, vocab, positions, llama ? ModelFamily::kLlama : ModelFamily::kGpt2);
  if (llama) {
    c.n_kv_head = 2;
    c.intermediate_size = intermediate;
  }
  return c;
}

// n tokens drawn uniformly from [0, vocab) by Rng(seed).
inline std::vector<int32_t> random_tokens(int n, int vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& x : t) x = static_cast<int32_t>(rng.below(vocab));
  return t;
}

struct SyntheticBatch {
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;
};

inline SyntheticBatch synthetic_micro_batch(int vocab, int seq, int micro, int accum, int world_rank_in_dp, int dp,
                                            int64_t step, int m, uint64_t seed) {
  SyntheticBatch b;
  const int64_t G = static_cast<int64_t>(micro) * accum * dp;
  for (int j = 0; j < micro; ++j) {
    const int64_t sample = step * G + static_cast<int64_t>(world_rank_in_dp) * accum * micro +
                           static_cast<int64_t>(m) * micro + j;
    Rng rng(seed * 1000003ull + static_cast<uint64_t>(sample));
    std::vector<int32_t> x(static_cast<size_t>(seq) + 1);
    for (int32_t& t : x) t = static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab)));
    for (int t = 0; t < seq; ++t) {
      b.tokens.push_back(x[static_cast<size_t>(t)]);
      const int64_t pos = sample * seq + t;
      b.targets.push_back(pos % 11 == 3 ? -1 : x[static_cast<size_t>(t) + 1]);
    }
  }
  return b;
}

// A rank's `accum` micro-batches of one step, with views of them for Trainer::step and the
// parameter-server worker (valid while this SyntheticStep lives unchanged).
struct SyntheticStep {
  std::vector<SyntheticBatch> data;
  std::vector<MicroBatch> micro_batches() const {
    std::vector<MicroBatch> out;
    for (const SyntheticBatch& d : data) out.push_back({d.tokens.data(), d.targets.data()});
    return out;
  }
};

inline SyntheticStep synthetic_step(int vocab, int seq, int micro, int accum, int world_rank_in_dp, int dp, int64_t step,
                                    uint64_t seed) {
  SyntheticStep s;
  for (int m = 0; m < accum; ++m) {
    s.data.push_back(synthetic_micro_batch(vocab, seq, micro, accum, world_rank_in_dp, dp, step, m, seed));
  }
  return s;
}

}  // namespace zt::testing

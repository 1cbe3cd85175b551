// TokenDataset: one split (train or val) of one or more token files, cut into windows of
// seq_len + 1 tokens at stride seq_len inside each shard (inputs are the first seq_len
// tokens, targets the last seq_len: the next token at every position).
//
// BatchSampler: which windows make up each global batch. Sample index s (0, 1, 2, ... over
// the whole run) maps to window perm_e[s mod W] with e = s / W and perm_e a seeded
// permutation of the W windows (reshuffled every epoch). Global batch k is samples
// [k*G, (k+1)*G); data-parallel rank r's micro-batch m, row j is sample
// k*G + r*(A*M) + m*M + j (G = global batch, A = accumulation steps, M = micro batch),
// so the global batch is the same for every layout and resuming needs only k.
// Thread-safety: const methods are safe to call concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/token_file.h"

namespace zt {

class TokenDataset {
 public:
  // patterns: files or shell globs (sorted per pattern); format: "auto", "llmc" or
  // "raw_uint16". Every token must be < vocab_size; every shard must hold at least one
  // window. Errors name the file.
  static StatusOr<TokenDataset> open(const std::vector<std::string>& patterns, const std::string& format,
                                     int vocab_size, int seq_len);

  int64_t num_windows() const { return total_windows_; }
  int64_t num_tokens() const;
  int seq_len() const { return seq_len_; }
  const std::vector<TokenFile>& shards() const { return shards_; }
  // Copies window w: tokens[t] = x[t], targets[t] = x[t + 1], t < seq_len.
  void window(int64_t w, int32_t* tokens, int32_t* targets) const;

 private:
  std::vector<TokenFile> shards_;
  std::vector<int64_t> first_window_;  // shard i's windows start at this global window index
  int64_t total_windows_ = 0;
  int seq_len_ = 0;
};

// One micro-batch worth of inputs and targets (rows x seq_len).
struct Batch {
  int rows = 0;
  int seq_len = 0;
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;
};

class BatchSampler {
 public:
  BatchSampler(const TokenDataset* dataset, uint64_t seed, int64_t global_batch, int micro_batch, int grad_accum);
  // Micro-batch `micro` of data-parallel rank `rank` in global batch `step`.
  Batch micro_batch(int64_t step, int rank, int micro);

 private:
  int64_t window_of_sample(int64_t sample);

  const TokenDataset* dataset_;
  uint64_t seed_;
  int64_t global_batch_;
  int micro_batch_;
  int grad_accum_;
  int64_t epoch_ = -1;
  std::vector<int64_t> perm_;
};

// Validation batches: `count` micro-batches of `rows` windows spread evenly over the
// split, the same every time (so validation losses are comparable across steps).
std::vector<Batch> validation_batches(const TokenDataset& dataset, int rows, int64_t count);

// Expands one pattern with glob(3); a pattern without wildcards is returned as is.
std::vector<std::string> expand_glob(const std::string& pattern);

}  // namespace zt

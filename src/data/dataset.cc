// Windows over token shards, seeded epoch permutations, evenly spread validation.
#include "data/dataset.h"

#include <glob.h>

#include <algorithm>

#include "core/rng.h"

namespace zt {

std::vector<std::string> expand_glob(const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) return {pattern};
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

StatusOr<TokenDataset> TokenDataset::open(const std::vector<std::string>& patterns, const std::string& format,
                                          int vocab_size, int seq_len) {
  TokenDataset d;
  d.seq_len_ = seq_len;
  for (const std::string& pattern : patterns) {
    const std::vector<std::string> files = expand_glob(pattern);
    if (files.empty()) return Status::NotFound("no token files match " + pattern);
    for (const std::string& path : files) {
      TokenFileFormat fmt = TokenFileFormat::kLlmc;
      if (format == "raw_uint16") {
        fmt = TokenFileFormat::kRawUint16;
      } else if (format == "auto") {
        ZT_ASSIGN_OR_RETURN(fmt, TokenFile::detect(path));
      }
      ZT_ASSIGN_OR_RETURN(TokenFile f, TokenFile::open(path, fmt));
      ZT_RETURN_IF_ERROR(f.check_tokens_below(static_cast<uint32_t>(vocab_size)));
      const int64_t windows = (static_cast<int64_t>(f.size()) - 1) / seq_len;
      if (windows < 1) {
        return Status::InvalidArgument(path + ": " + std::to_string(f.size()) + " tokens are too few for one sequence of " +
                                       std::to_string(seq_len) + " (+1) tokens");
      }
      d.first_window_.push_back(d.total_windows_);
      d.total_windows_ += windows;
      d.shards_.push_back(std::move(f));
    }
  }
  if (d.shards_.empty()) return Status::InvalidArgument("no token files given");
  return d;
}

int64_t TokenDataset::num_tokens() const {
  int64_t n = 0;
  for (const TokenFile& f : shards_) n += static_cast<int64_t>(f.size());
  return n;
}

void TokenDataset::window(int64_t w, int32_t* tokens, int32_t* targets) const {
  const auto it = std::upper_bound(first_window_.begin(), first_window_.end(), w);
  const size_t shard = static_cast<size_t>(it - first_window_.begin()) - 1;
  const TokenFile& f = shards_[shard];
  const size_t start = static_cast<size_t>(w - first_window_[shard]) * static_cast<size_t>(seq_len_);
  for (int t = 0; t < seq_len_; ++t) {
    tokens[t] = f[start + t];
    targets[t] = f[start + t + 1];
  }
}

BatchSampler::BatchSampler(const TokenDataset* dataset, uint64_t seed, int64_t global_batch, int micro_batch,
                           int grad_accum)
    : dataset_(dataset), seed_(seed), global_batch_(global_batch), micro_batch_(micro_batch), grad_accum_(grad_accum) {}

int64_t BatchSampler::window_of_sample(int64_t sample) {
  const int64_t W = dataset_->num_windows();
  const int64_t epoch = sample / W;
  if (epoch != epoch_) {  // Fisher-Yates with the run's seed and the epoch number
    perm_.resize(static_cast<size_t>(W));
    for (int64_t i = 0; i < W; ++i) perm_[static_cast<size_t>(i)] = i;
    Rng rng(seed_ ^ (0x5851f42d4c957f2dull * static_cast<uint64_t>(epoch + 1)));
    for (int64_t i = W - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i + 1)));
      std::swap(perm_[static_cast<size_t>(i)], perm_[static_cast<size_t>(j)]);
    }
    epoch_ = epoch;
  }
  return perm_[static_cast<size_t>(sample % W)];
}

Batch BatchSampler::micro_batch(int64_t step, int rank, int micro) {
  Batch b;
  b.rows = micro_batch_;
  b.seq_len = dataset_->seq_len();
  b.tokens.resize(static_cast<size_t>(b.rows) * b.seq_len);
  b.targets.resize(b.tokens.size());
  const int64_t first = step * global_batch_ + static_cast<int64_t>(rank) * grad_accum_ * micro_batch_ +
                        static_cast<int64_t>(micro) * micro_batch_;
  for (int j = 0; j < b.rows; ++j) {
    const size_t off = static_cast<size_t>(j) * b.seq_len;
    dataset_->window(window_of_sample(first + j), b.tokens.data() + off, b.targets.data() + off);
  }
  return b;
}

std::vector<Batch> validation_batches(const TokenDataset& dataset, int rows, int64_t count) {
  const int64_t W = dataset.num_windows();
  const int64_t needed = std::min<int64_t>(W, static_cast<int64_t>(rows) * count);
  std::vector<Batch> out;
  for (int64_t i = 0; i + rows <= needed; i += rows) {
    Batch b;
    b.rows = rows;
    b.seq_len = dataset.seq_len();
    b.tokens.resize(static_cast<size_t>(rows) * b.seq_len);
    b.targets.resize(b.tokens.size());
    for (int j = 0; j < rows; ++j) {
      const int64_t w = (i + j) * W / needed;
      const size_t off = static_cast<size_t>(j) * b.seq_len;
      dataset.window(w, b.tokens.data() + off, b.targets.data() + off);
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace zt

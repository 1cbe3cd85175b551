// The compressed all-reduce (onebit_compressor.h). Sums of squares in double.
#include "parallel/data/onebit_compressor.h"

#include <cmath>
#include <cstring>

namespace zt {

namespace {

constexpr int kTag = 0x0B17;  // the exchange's point-to-point messages

inline bool bit(const uint32_t* words, size_t e) { return (words[e >> 5] >> (e & 31)) & 1u; }
inline float sign_of(bool positive) { return positive ? 1.0f : -1.0f; }

}  // namespace

OneBitCompressor::OneBitCompressor(ProcessGroup* group, std::vector<size_t> segments)
    : group_(group), n_(std::move(segments)) {
  if (group_ != nullptr) {
    p_ = group_->size();
    me_ = group_->rank();
  }
  const size_t unit = 32 * static_cast<size_t>(p_);
  size_t padded_total = 0;
  for (size_t n : n_) {
    offset_.push_back(total_);
    poffset_.push_back(padded_total);
    word_.push_back(words_);
    const size_t pad = (n + unit - 1) / unit * unit;
    padded_.push_back(pad);
    total_ += n;
    padded_total += pad;
    words_ += pad / unit;
  }
  if (p_ > 1) {
    worker_error_.assign(padded_total, 0.0f);
    server_error_.assign(padded_total / static_cast<size_t>(p_), 0.0f);
    const size_t all = words_ * static_cast<size_t>(p_);
    send_.assign(all, 0);
    recv_.assign(all, 0);
    gathered_.assign(all, 0);
    worker_scales_.assign(n_.size() * static_cast<size_t>(p_), 0.0f);
    server_scales_.assign(n_.size() * static_cast<size_t>(p_), 0.0f);
  }
}

void OneBitCompressor::reset_errors() {
  std::fill(worker_error_.begin(), worker_error_.end(), 0.0f);
  std::fill(server_error_.begin(), server_error_.end(), 0.0f);
}

Status OneBitCompressor::all_reduce(float* data) {
  if (p_ == 1) return Status::OK();
  compress_worker(data);
  ZT_RETURN_IF_ERROR(exchange());
  compress_server();
  const std::vector<size_t> gather_words(static_cast<size_t>(p_), words_);
  const std::vector<size_t> gather_scales(static_cast<size_t>(p_), n_.size());
  // The bits travel as floats' bytes: the gather only copies them.
  ZT_RETURN_IF_ERROR(group_->all_gather(reinterpret_cast<float*>(gathered_.data()), gather_words)->wait());
  ZT_RETURN_IF_ERROR(group_->all_gather(server_scales_.data(), gather_scales)->wait());
  decode(data);
  return Status::OK();
}

void OneBitCompressor::compress_worker(const float* data) {
  std::fill(send_.begin(), send_.end(), 0u);
  const size_t S = n_.size(), P = static_cast<size_t>(p_);
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t s = 0; s < S; ++s) {
    float* err = worker_error_.data() + poffset_[s];
    const float* x = data + offset_[s];
    double sq = 0.0;
    for (size_t e = 0; e < padded_[s]; ++e) {
      err[e] += e < n_[s] ? x[e] : 0.0f;  // err now holds b = x + worker_error
      sq += static_cast<double>(err[e]) * err[e];
    }
    const float scale = static_cast<float>(std::sqrt(sq / static_cast<double>(padded_[s])));
    worker_scales_[static_cast<size_t>(me_) * S + s] = scale;
    const size_t chunk = padded_[s] / P;
    for (size_t e = 0; e < padded_[s]; ++e) {
      const bool pos = err[e] >= 0.0f;
      err[e] -= scale * sign_of(pos);
      if (pos) {
        const size_t j = e / chunk, local = e % chunk;
        send_[j * words_ + word_[s] + (local >> 5)] |= 1u << (local & 31);
      }
    }
  }
}

// Rank i's signs of my chunk into recv_ block i (pairwise rounds), then every rank's
// worker scales.
Status OneBitCompressor::exchange() {
  const size_t W = words_, bytes = W * sizeof(uint32_t);
  std::memcpy(recv_.data() + static_cast<size_t>(me_) * W, send_.data() + static_cast<size_t>(me_) * W, bytes);
  for (int k = 1; k < p_; ++k) {
    const int dst = (me_ + k) % p_, src = (me_ - k + p_) % p_;
    WorkHandle out = group_->send(send_.data() + static_cast<size_t>(dst) * W, bytes, dst, kTag);
    WorkHandle in = group_->recv(recv_.data() + static_cast<size_t>(src) * W, bytes, src, kTag);
    ZT_RETURN_IF_ERROR(out->wait());
    ZT_RETURN_IF_ERROR(in->wait());
  }
  const std::vector<size_t> counts(static_cast<size_t>(p_), n_.size());
  return group_->all_gather(worker_scales_.data(), counts)->wait();
}

void OneBitCompressor::compress_server() {
  const size_t S = n_.size(), P = static_cast<size_t>(p_);
  uint32_t* mine = gathered_.data() + static_cast<size_t>(me_) * words_;
  std::fill(mine, mine + words_, 0u);
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t s = 0; s < S; ++s) {
    const size_t chunk = padded_[s] / P;
    float* err = server_error_.data() + poffset_[s] / P;
    double sq = 0.0;
    for (size_t e = 0; e < chunk; ++e) {
      float m = 0.0f;
      for (size_t i = 0; i < P; ++i) {
        m += worker_scales_[i * S + s] * sign_of(bit(recv_.data() + i * words_ + word_[s], e));
      }
      err[e] += m / static_cast<float>(P);  // err now holds the server's m
      sq += static_cast<double>(err[e]) * err[e];
    }
    const float scale = static_cast<float>(std::sqrt(sq / static_cast<double>(chunk)));
    server_scales_[static_cast<size_t>(me_) * S + s] = scale;
    for (size_t e = 0; e < chunk; ++e) {
      const bool pos = err[e] >= 0.0f;
      err[e] -= scale * sign_of(pos);
      if (pos) mine[word_[s] + (e >> 5)] |= 1u << (e & 31);
    }
  }
}

void OneBitCompressor::decode(float* data) const {
  const size_t S = n_.size(), P = static_cast<size_t>(p_);
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t s = 0; s < S; ++s) {
    const size_t chunk = padded_[s] / P;
    float* x = data + offset_[s];
    for (size_t j = 0; j < P; ++j) {
      const float scale = server_scales_[j * S + s];
      const uint32_t* w = gathered_.data() + j * words_ + word_[s];
      for (size_t e = 0; e < chunk && j * chunk + e < n_[s]; ++e) x[j * chunk + e] = scale * sign_of(bit(w, e));
    }
  }
}

}  // namespace zt

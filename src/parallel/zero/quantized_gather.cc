// qwZ: quantize this rank's part, all-gather the words, dequantize every part on wait.
#include "parallel/zero/quantized_gather.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/half_bits.h"

namespace zt {

namespace {

constexpr size_t kTarget = 8000;  // DeepSpeed's target_group_size

// DeepSpeed's CUDAQuantizer grouping (partition_parameters.py), for n % 8 == 0.
size_t deepspeed_groups(size_t n) {
  size_t groups = (n + kTarget - 1) / kTarget;
  while (groups < n && n % (8 * groups) != 0) ++groups;
  while (n % (16 * groups) == 0 && n / groups > kTarget) groups *= 2;
  return groups;
}

size_t words_of(size_t n) { return (n + 3) / 4 + qwz_block_starts(n).size(); }

float widen(const void* p, size_t i, DType d) {
  if (d == DType::kF32) return static_cast<const float*>(p)[i];
  const uint16_t h = static_cast<const uint16_t*>(p)[i];
  return d == DType::kBF16 ? bf16_bits_to_f32(h) : f16_bits_to_f32(h);
}

void narrow(void* p, size_t i, float x, DType d) {
  if (d == DType::kF32) {
    static_cast<float*>(p)[i] = x;
  } else {
    static_cast<uint16_t*>(p)[i] = d == DType::kBF16 ? f32_to_bf16_bits(x) : f32_to_f16_bits(x);
  }
}

// The wire words of every part, and dequantization into dst on wait.
class QuantizedGather final : public Work {
 public:
  QuantizedGather(std::vector<float> words, std::vector<size_t> counts, std::vector<size_t> word_counts, void* dst,
                  DType dtype)
      : words_(std::move(words)), counts_(std::move(counts)), word_counts_(std::move(word_counts)), dst_(dst),
        dtype_(dtype) {}
  void start(WorkHandle inner) { inner_ = std::move(inner); }
  float* words() { return words_.data(); }
  Status wait() override {
    if (inner_ == nullptr) return Status::OK();
    ZT_RETURN_IF_ERROR(inner_->wait());
    inner_ = nullptr;
    size_t elem = 0, word = 0;
    std::vector<float> x;
    for (size_t r = 0; r < counts_.size(); ++r) {
      const size_t n = counts_[r];
      x.resize(n);
      const auto* q = reinterpret_cast<const int8_t*>(words_.data() + word);
      qwz_dequantize(q, words_.data() + word + (n + 3) / 4, n, x.data());
      for (size_t i = 0; i < n; ++i) narrow(dst_, elem + i, x[i], dtype_);
      elem += n;
      word += word_counts_[r];
    }
    return Status::OK();
  }
  bool completed() const override { return inner_ == nullptr || inner_->completed(); }

 private:
  std::vector<float> words_;
  std::vector<size_t> counts_, word_counts_;
  void* dst_;
  DType dtype_;
  WorkHandle inner_;
};

}  // namespace

std::vector<size_t> qwz_block_starts(size_t n) {
  std::vector<size_t> starts;
  if (n == 0) return starts;
  const size_t groups = n % 8 == 0 ? deepspeed_groups(n) : (n + kTarget - 1) / kTarget;
  for (size_t g = 0; g < groups; ++g) starts.push_back(n * g / groups);
  return starts;
}

void qwz_quantize(const float* x, size_t n, int8_t* q, float* inv_scales) {
  const std::vector<size_t> starts = qwz_block_starts(n);
  for (size_t g = 0; g < starts.size(); ++g) {
    const size_t lo = starts[g], hi = g + 1 < starts.size() ? starts[g + 1] : n;
    float absmax = 0.0f;
    for (size_t i = lo; i < hi; ++i) absmax = std::max(absmax, std::fabs(x[i]));
    const float scale = absmax == 0.0f ? 1.0f : 256.0f / (2.0f * absmax);
    for (size_t i = lo; i < hi; ++i) {
      const float v = std::nearbyint(x[i] * scale);  // round half to even (the default mode)
      q[i] = static_cast<int8_t>(std::min(127.0f, std::max(-128.0f, v)));
    }
    inv_scales[g] = 1.0f / scale;
  }
}

void qwz_dequantize(const int8_t* q, const float* inv_scales, size_t n, float* x) {
  const std::vector<size_t> starts = qwz_block_starts(n);
  for (size_t g = 0; g < starts.size(); ++g) {
    const size_t lo = starts[g], hi = g + 1 < starts.size() ? starts[g + 1] : n;
    for (size_t i = lo; i < hi; ++i) x[i] = static_cast<float>(q[i]) * inv_scales[g];
  }
}

StatusOr<WorkHandle> quantized_all_gather(ProcessGroup* group, void* dst, const std::vector<size_t>& counts, DType dtype) {
  const int me = group->rank();
  std::vector<size_t> word_counts;
  size_t total = 0, first = 0, my_word = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    if (static_cast<int>(r) < me) first += counts[r];
    if (static_cast<int>(r) == me) my_word = total;
    word_counts.push_back(words_of(counts[r]));
    total += word_counts.back();
  }
  auto work = std::make_shared<QuantizedGather>(std::vector<float>(total, 0.0f), counts, word_counts, dst, dtype);
  const size_t n = counts[static_cast<size_t>(me)];
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = widen(dst, first + i, dtype);
  float* mine = work->words() + my_word;
  qwz_quantize(x.data(), n, reinterpret_cast<int8_t*>(mine), mine + (n + 3) / 4);
  work->start(group->all_gather(work->words(), word_counts));
  return WorkHandle(work);
}

}  // namespace zt

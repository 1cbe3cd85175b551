// qwZ's quantizer and gather: DeepSpeed's block grouping by value, its rounding (half to
// even, the clamp at +127), the written error bound on random blocks, and the gather on
// thread-ranks with uneven parts (one empty) in fp32 and bf16: every rank ends with every
// part's dequantized values, its own included.
#include "parallel/zero/quantized_gather.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "comm/thread_world.h"
#include "core/half_bits.h"

namespace zt {
namespace {

TEST(Qwz, DeepSpeedGrouping) {
  EXPECT_EQ(qwz_block_starts(0).size(), 0u);
  EXPECT_EQ(qwz_block_starts(16384), (std::vector<size_t>{0, 4096, 8192, 12288}));  // 3 groups do not divide by 8
  const std::vector<size_t> sq = qwz_block_starts(768 * 768);  // 96 groups of 6144 (8 x 96 divides 589824)
  ASSERT_EQ(sq.size(), 96u);
  EXPECT_EQ(sq[1], 6144u);
  EXPECT_EQ(qwz_block_starts(10), (std::vector<size_t>{0}));             // not a multiple of 8: ceil(n / 8000) blocks
  EXPECT_EQ(qwz_block_starts(8003).size(), 2u);
}

TEST(Qwz, RoundsHalfToEvenAndClampsTheTop) {
  const std::vector<float> x = {2.0f, -2.0f, 0.5f / 64, 1.5f / 64, -2.5f / 64};  // absmax 2: scale 64
  std::vector<int8_t> q(x.size());
  float inv = 0.0f;
  qwz_quantize(x.data(), x.size(), q.data(), &inv);
  EXPECT_EQ(inv, 1.0f / 64);
  EXPECT_EQ(q, (std::vector<int8_t>{127, -128, 0, 2, -2}));
  std::vector<float> back(x.size());
  qwz_dequantize(q.data(), &inv, x.size(), back.data());
  EXPECT_EQ(back[0], 127.0f / 64);  // the clamp: absmax / 128 off
  EXPECT_EQ(back[1], -2.0f);
  const std::vector<float> zeros(8, 0.0f);
  std::vector<int8_t> qz(8);
  qwz_quantize(zeros.data(), 8, qz.data(), &inv);
  EXPECT_EQ(inv, 1.0f);
}

TEST(Qwz, ErrorWithinTheBlockBound) {
  std::mt19937 g(5);
  std::normal_distribution<float> d(0.0f, 0.02f);
  const size_t n = 3 * 8192 + 40;
  std::vector<float> x(n), back(n);
  for (float& v : x) v = d(g);
  const std::vector<size_t> starts = qwz_block_starts(n);
  std::vector<int8_t> q(n);
  std::vector<float> inv(starts.size());
  qwz_quantize(x.data(), n, q.data(), inv.data());
  qwz_dequantize(q.data(), inv.data(), n, back.data());
  double worst = 0.0;
  for (size_t b = 0; b < starts.size(); ++b) {
    const size_t lo = starts[b], hi = b + 1 < starts.size() ? starts[b + 1] : n;
    float absmax = 0.0f;
    for (size_t i = lo; i < hi; ++i) absmax = std::max(absmax, std::fabs(x[i]));
    for (size_t i = lo; i < hi; ++i) {
      const double err = std::fabs(static_cast<double>(x[i]) - back[i]);
      const bool top = x[i] * 128.0f / absmax > 127.5f;
      const double bound = absmax / (top ? 128.0 : 256.0) + 4 * std::ldexp(absmax, -24);  // + the fp32 roundings
      ASSERT_LE(err, bound) << "element " << i;
      worst = std::max(worst, err / (absmax / 256.0));
    }
  }
  std::printf("  worst error %.3f of absmax/256\n", worst);
}

TEST(Qwz, GatherGivesEveryRankEveryDequantizedPart) {
  const std::vector<size_t> counts = {8200, 0, 37};
  const size_t total = 8237;
  for (DType t : {DType::kF32, DType::kBF16}) {
    std::mt19937 g(9);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(total);
    for (float& v : x) v = t == DType::kF32 ? d(g) : bf16_bits_to_f32(f32_to_bf16_bits(d(g)));
    std::vector<float> want(total);
    for (size_t r = 0, at = 0; r < counts.size(); at += counts[r], ++r) {
      std::vector<int8_t> q(counts[r]);
      std::vector<float> inv(qwz_block_starts(counts[r]).size());
      qwz_quantize(x.data() + at, counts[r], q.data(), inv.data());
      qwz_dequantize(q.data(), inv.data(), counts[r], want.data() + at);
    }
    ThreadWorld world(3, CommOptions{});
    std::vector<std::vector<float>> got(3);
    const Status s = run_ranks(3, [&](int rank) -> Status {
      auto group = world.group(rank);
      const size_t eb = dtype_size(t);
      std::vector<unsigned char> buf(total * eb, 0);
      size_t at = 0;
      for (int r = 0; r < rank; ++r) at += counts[static_cast<size_t>(r)];
      for (size_t i = 0; i < counts[static_cast<size_t>(rank)]; ++i) {  // this rank's part in place
        if (t == DType::kF32) {
          reinterpret_cast<float*>(buf.data())[at + i] = x[at + i];
        } else {
          reinterpret_cast<uint16_t*>(buf.data())[at + i] = f32_to_bf16_bits(x[at + i]);
        }
      }
      ZT_ASSIGN_OR_RETURN(WorkHandle w, quantized_all_gather(group.get(), buf.data(), counts, t));
      ZT_RETURN_IF_ERROR(w->wait());
      for (size_t i = 0; i < total; ++i) {
        got[static_cast<size_t>(rank)].push_back(
            t == DType::kF32 ? reinterpret_cast<float*>(buf.data())[i]
                             : bf16_bits_to_f32(reinterpret_cast<uint16_t*>(buf.data())[i]));
      }
      return Status::OK();
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
    for (size_t i = 0; i < total; ++i) {
      const float w = t == DType::kF32 ? want[i] : bf16_bits_to_f32(f32_to_bf16_bits(want[i]));
      for (int r = 0; r < 3; ++r) ASSERT_EQ(got[static_cast<size_t>(r)][i], w) << dtype_name(t) << " rank " << r << " element " << i;
    }
  }
}

}  // namespace
}  // namespace zt

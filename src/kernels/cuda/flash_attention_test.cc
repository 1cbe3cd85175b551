// Flash attention on the GPU against the double reference (attention_reference.h), within
// the bound that testing/flash_case.h argues, over its shapes, each way of the backward's dQ
// (recomputing dS, or reading the dS the dK/dV kernel stored); two runs give the same bits
// (no atomics).
#include "kernels/cuda/flash_attention.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "testing/attention_reference.h"
#include "testing/cuda_test.h"
#include "testing/flash_case.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;
using testing::FlashShape;

struct FlashRun {
  std::vector<float> y, dqkv;
};

FlashRun run_flash(DType t, DeviceValues& in, DeviceValues& dout, const FlashShape& s, bool store_ds) {
  DeviceValues y(t, std::vector<float>(static_cast<size_t>(s.B) * s.T * s.C));
  DeviceValues att(t, std::vector<float>(static_cast<size_t>(s.B) * s.NH * s.T * s.T));
  DeviceValues dqkv(t, std::vector<float>(in.host().size()));
  DeviceArray<char> ws(cuda::flash_attention_workspace_bytes(s.B, s.T, s.NH));
  EXPECT_TRUE(cuda::flash_attention_forward(t, y.get(), att.get(), in.get(), s.B, s.T, s.C, s.NH, nullptr).ok());
  EXPECT_TRUE(cuda::flash_attention_backward(t, dqkv.get(), dout.get(), in.get(), att.get(), s.B, s.T, s.C, s.NH,
                                             ws.get(), nullptr, store_ds)
                  .ok());
  return {y.download(), dqkv.download()};
}

size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

// The shapes' forward and backward against the double reference, and two runs the same
// bits. store_ds: the shapes where dS fits in att, with dQ reading it (and, printed, how
// many dqkv elements differ from the recomputing dQ: none where the tensor cores sum S^T's
// products as they sum S's); else every shape with dQ recomputing dS. The two ways are
// separate tests so that a device check can tell which one failed.
void expect_flash_within_bound(bool store_ds) {
  for (const FlashShape& s : testing::flash_shapes()) {
    if (store_ds && !cuda::flash_attention_stores_ds(s.B, s.T, s.C, s.NH)) continue;
    const testing::FlashInputs inputs = testing::flash_inputs(s);
    for (DType t : {DType::kBF16, DType::kF16}) {
      ASSERT_TRUE(cuda::flash_attention_serves(t, s.T, s.C, s.NH));
      DeviceValues in(t, inputs.qkv), dout(t, inputs.dy);
      const FlashRun a = run_flash(t, in, dout, s, store_ds), b = run_flash(t, in, dout, s, store_ds);
      const testing::AttentionReference r = testing::attention_reference(in.host(), dout.host(), s.B, s.T, s.C, s.NH);
      const testing::FlashBound bound = testing::flash_bound(t, s, in.host(), dout.host());
      const std::string what = testing::flash_case_name(t, s) + (store_ds ? " dQ from stored dS" : " dQ recomputing dS");
      testing::expect_bounded(a.y, r.y, r.ym, bound.eps, "flash y " + what, bound.floor);
      testing::expect_bounded(a.dqkv, r.dqkv, r.dqkvm, bound.eps, "flash dqkv " + what, bound.floor);
      EXPECT_TRUE(testing::same_bits(a.y, b.y)) << what;
      EXPECT_TRUE(testing::same_bits(a.dqkv, b.dqkv)) << what;
      if (store_ds) {
        const FlashRun c = run_flash(t, in, dout, s, false);
        std::printf("  %s: %zu of %zu dqkv elements differ from the recomputing dQ's\n", what.c_str(),
                    differing(a.dqkv, c.dqkv), a.dqkv.size());
      }
    }
  }
}

TEST(CudaFlashAttention, RecomputingDqWithinTheRoundingBoundAndDeterministic) {
  ZT_REQUIRE_CUDA();
  expect_flash_within_bound(false);
}

TEST(CudaFlashAttention, StoredDsWithinTheRoundingBoundAndDeterministic) {
  ZT_REQUIRE_CUDA();
  expect_flash_within_bound(true);
}

TEST(CudaFlashAttention, ServesSixteenBitHeadSizesUpTo64WhenTheStateFits) {
  EXPECT_TRUE(cuda::flash_attention_serves(DType::kBF16, 1024, 768, 12));  // GPT-2 124M
  EXPECT_TRUE(cuda::flash_attention_serves(DType::kF16, 1024, 768, 12));
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kF32, 1024, 768, 12));    // fp32: materialized
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kBF16, 1024, 4096, 32));  // head size 128
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kBF16, 16, 64, 4));       // O's copy does not fit in att
}

// Refused before any launch, so this runs without a GPU: the kernels' 16-byte copies of a
// misaligned view would fault on one.
TEST(CudaFlashAttention, RefusesBuffersOffSixteenByteBoundaries) {
  alignas(16) static uint16_t buf[4][64];
  void *a = buf[0], *b = buf[1], *c = buf[2], *d = buf[3], *off = buf[3] + 1;
  const int B = 1, T = 64, C = 64, NH = 4;
  ASSERT_TRUE(cuda::flash_attention_serves(DType::kBF16, T, C, NH));
  for (const Status& s : {cuda::flash_attention_forward(DType::kBF16, a, b, off, B, T, C, NH, nullptr),
                          cuda::flash_attention_forward(DType::kBF16, a, off, c, B, T, C, NH, nullptr),
                          cuda::flash_attention_backward(DType::kBF16, a, b, c, off, B, T, C, NH, d, nullptr),
                          cuda::flash_attention_backward(DType::kBF16, off, b, c, d, B, T, C, NH, a, nullptr)}) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("16-byte aligned"), std::string::npos) << s.message();
  }
}

TEST(CudaFlashAttention, TheShapesTakeBothWaysOfTheBackwardsDq) {
  bool stored = false, recomputed = false;
  for (const FlashShape& s : testing::flash_shapes()) {
    (cuda::flash_attention_stores_ds(s.B, s.T, s.C, s.NH) ? stored : recomputed) = true;
  }
  EXPECT_TRUE(stored && recomputed);
  EXPECT_TRUE(cuda::flash_attention_stores_ds(16, 1024, 768, 12));  // GPT-2 124M at B=16
}

}  // namespace
}  // namespace zt

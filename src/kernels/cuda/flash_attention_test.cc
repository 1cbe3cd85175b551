// Flash attention on the GPU against the double reference (attention_reference.h), within
// the bound that testing/flash_case.h argues, over its shapes; two runs give the same bits
// (no atomics).
#include "kernels/cuda/flash_attention.h"

#include <gtest/gtest.h>

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

FlashRun run_flash(DType t, DeviceValues& in, DeviceValues& dout, const FlashShape& s) {
  DeviceValues y(t, std::vector<float>(static_cast<size_t>(s.B) * s.T * s.C));
  DeviceValues att(t, std::vector<float>(static_cast<size_t>(s.B) * s.NH * s.T * s.T));
  DeviceValues dqkv(t, std::vector<float>(in.host().size()));
  DeviceArray<char> ws(cuda::flash_attention_workspace_bytes(s.B, s.T, s.NH));
  EXPECT_TRUE(cuda::flash_attention_forward(t, y.get(), att.get(), in.get(), s.B, s.T, s.C, s.NH, nullptr).ok());
  EXPECT_TRUE(cuda::flash_attention_backward(t, dqkv.get(), dout.get(), in.get(), att.get(), s.B, s.T, s.C, s.NH,
                                             ws.get(), nullptr)
                  .ok());
  return {y.download(), dqkv.download()};
}

TEST(CudaFlashAttention, ForwardAndBackwardWithinTheRoundingBoundAndDeterministic) {
  ZT_REQUIRE_CUDA();
  for (const FlashShape& s : testing::flash_shapes()) {
    const testing::FlashInputs inputs = testing::flash_inputs(s);
    for (DType t : {DType::kBF16, DType::kF16}) {
      ASSERT_TRUE(cuda::flash_attention_serves(t, s.T, s.C, s.NH));
      DeviceValues in(t, inputs.qkv), dout(t, inputs.dy);
      const FlashRun a = run_flash(t, in, dout, s), b = run_flash(t, in, dout, s);
      const testing::AttentionReference r = testing::attention_reference(in.host(), dout.host(), s.B, s.T, s.C, s.NH);
      const testing::FlashBound bound = testing::flash_bound(t, s, in.host(), dout.host());
      const std::string what = testing::flash_case_name(t, s);
      testing::expect_bounded(a.y, r.y, r.ym, bound.eps, "flash y " + what, bound.floor);
      testing::expect_bounded(a.dqkv, r.dqkv, r.dqkvm, bound.eps, "flash dqkv " + what, bound.floor);
      EXPECT_TRUE(testing::same_bits(a.y, b.y)) << what;
      EXPECT_TRUE(testing::same_bits(a.dqkv, b.dqkv)) << what;
    }
  }
}

TEST(CudaFlashAttention, ServesSixteenBitHeadSizesUpTo64WhenTheStateFits) {
  EXPECT_TRUE(cuda::flash_attention_serves(DType::kBF16, 1024, 768, 12));  // GPT-2 124M
  EXPECT_TRUE(cuda::flash_attention_serves(DType::kF16, 1024, 768, 12));
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kF32, 1024, 768, 12));    // fp32: materialized
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kBF16, 1024, 4096, 32));  // head size 128
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kBF16, 16, 64, 4));       // O's copy does not fit in att
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

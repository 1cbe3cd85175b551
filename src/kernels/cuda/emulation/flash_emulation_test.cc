// Flash attention's kernels (flash_forward.cu, flash_backward.cu) on the CPU through the
// emulated grid (lanes.h): the same source as the GPU's, against the double reference within
// the bound of testing/flash_case.h, so a change to the kernels' fragment layouts, masks or
// tile loads, copy groups or barriers is checked on every machine, GPU or not. What the
// emulation cannot check: speed, and the tensor cores' own summation order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu/half_convert.h"
#include "kernels/cuda/emulation/emulated_kernels.h"
#include "testing/attention_reference.h"
#include "testing/cuda_test.h"
#include "testing/flash_case.h"

namespace zt {
namespace {

using testing::FlashShape;

// values rounded to t, as 16-bit patterns, and as the floats they hold.
struct Rounded {
  std::vector<half_t> bits;
  std::vector<float> values;
};
Rounded rounded(DType t, const std::vector<float>& x) {
  Rounded r{std::vector<half_t>(x.size()), std::vector<float>(x.size())};
  f32_to_half(t, r.bits.data(), x.data(), static_cast<int64_t>(x.size()));
  half_to_f32(t, r.values.data(), r.bits.data(), static_cast<int64_t>(x.size()));
  return r;
}

std::vector<float> widened(DType t, const std::vector<half_t>& h) {
  std::vector<float> out(h.size());
  half_to_f32(t, out.data(), h.data(), static_cast<int64_t>(h.size()));
  return out;
}

struct FlashRun {
  std::vector<float> y, dqkv;
};

// The forward, then the backward with or without the stored dS, widened to floats.
FlashRun run_flash(DType t, const Rounded& qkv, const Rounded& dy, const FlashShape& s, bool store_ds) {
  std::vector<half_t> y(dy.bits.size()), att(static_cast<size_t>(s.B) * s.NH * s.T * s.T), dqkv(qkv.bits.size());
  std::vector<char> ws(emu::flash_attention_workspace_bytes(s.B, s.T, s.NH));
  EXPECT_TRUE(emu::flash_attention_forward(t, y.data(), att.data(), qkv.bits.data(), s.B, s.T, s.C, s.NH).ok());
  EXPECT_TRUE(emu::flash_attention_backward(t, dqkv.data(), dy.bits.data(), qkv.bits.data(), att.data(), s.B, s.T,
                                            s.C, s.NH, ws.data(), store_ds)
                  .ok());
  return {widened(t, y), widened(t, dqkv)};
}

// Where the backward stores dS, the dQ kernel that reads it and the one that recomputes it sum
// the same rounded values in the same order: in the emulation, whose products do not depend
// on the operands' orientation, the same bits.
TEST(EmulatedFlashAttention, ForwardAndBackwardWithinTheRoundingBound) {
  for (const FlashShape& s : testing::flash_shapes()) {
    const testing::FlashInputs inputs = testing::flash_inputs(s);
    for (DType t : {DType::kBF16, DType::kF16}) {
      ASSERT_TRUE(emu::flash_attention_serves(t, s.T, s.C, s.NH));
      const Rounded qkv = rounded(t, inputs.qkv), dy = rounded(t, inputs.dy);
      const FlashRun a = run_flash(t, qkv, dy, s, true);
      const testing::AttentionReference r = testing::attention_reference(qkv.values, dy.values, s.B, s.T, s.C, s.NH);
      const testing::FlashBound bound = testing::flash_bound(t, s, qkv.values, dy.values);
      const std::string what = testing::flash_case_name(t, s);
      testing::expect_bounded(a.y, r.y, r.ym, bound.eps, "emulated flash y " + what, bound.floor);
      testing::expect_bounded(a.dqkv, r.dqkv, r.dqkvm, bound.eps, "emulated flash dqkv " + what, bound.floor);
      if (emu::flash_attention_stores_ds(s.B, s.T, s.C, s.NH)) {
        EXPECT_TRUE(testing::same_bits(run_flash(t, qkv, dy, s, false).dqkv, a.dqkv)) << what;
      }
    }
  }
}

}  // namespace
}  // namespace zt

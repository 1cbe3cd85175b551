// The bf16 and f16 Llama kernels (half_ops_llama.cc) against their definition: every
// 16-bit output is bit for bit round(fp32 kernel on the widened inputs), the fp32
// reference computed on the whole tensor at once. That is "within one rounding" of fp32
// in the strongest form: the same fp32 values, then one round to nearest even. Sizes cross
// the chunk boundaries (130 rows: two full 64-row chunks and a short one; 70 positions per
// sequence; 2^18 + 1000 elements), so chunking may change no bit. RMSNorm's dinp and
// dweight accumulate onto random starting values; RoPE and SwiGLU also run in place.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/half_ops.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/rope.h"
#include "testing/gradcheck.h"
#include "testing/half_values.h"

namespace zt {
namespace {

using testing::expect_same_bits;
using testing::Floats;
using testing::Halves;
using testing::HalfValues;

class HalfLlamaOps : public ::testing::TestWithParam<DType> {
 protected:
  const ActivationOps<half_t>& ops() const { return cpu_half_ops(GetParam()); }
  const KernelTable& fp32() const { return cpu_kernels(); }
  Halves narrow(const Floats& f) const { return testing::narrow(GetParam(), f); }
  HalfValues random(size_t n, uint64_t seed, float scale = 1.0f) const {
    return testing::random_half(GetParam(), n, seed, scale);
  }
};

constexpr int64_t kRows = 130;  // 2 full chunks of kHalfChunkRows and a short one

TEST_P(HalfLlamaOps, RmsNormForwardIsRoundedFp32) {
  const int C = 67;
  const HalfValues x = random(kRows * C, 1, 3.0f), w = random(C, 2);
  Halves out(kRows * C);
  Floats rstd(kRows), y(kRows * C), rstd_ref(kRows);
  ops().rmsnorm_forward(out.data(), rstd.data(), x.h.data(), w.h.data(), kRows, C, 1e-5f);
  fp32().rmsnorm_forward(y.data(), rstd_ref.data(), x.f.data(), w.f.data(), kRows, C, 1e-5f);
  expect_same_bits(out, narrow(y), "out");
  expect_same_bits(rstd, rstd_ref, "rstd");
}

TEST_P(HalfLlamaOps, RmsNormBackwardAccumulatesEveryGradient) {
  const int C = 67;
  const HalfValues x = random(kRows * C, 3, 2.0f), w = random(C, 4);
  const HalfValues dy = random(kRows * C, 5), dx0 = random(kRows * C, 6);
  const Floats dw0 = testing::random_vector(C, 7);
  Floats y(kRows * C), rstd(kRows);
  fp32().rmsnorm_forward(y.data(), rstd.data(), x.f.data(), w.f.data(), kRows, C, 1e-6f);
  Halves dx = dx0.h;
  Floats dw = dw0, dx_ref = dx0.f, dw_ref = dw0;
  ops().rmsnorm_backward(dx.data(), dw.data(), dy.h.data(), x.h.data(), w.h.data(), rstd.data(), kRows, C);
  fp32().rmsnorm_backward(dx_ref.data(), dw_ref.data(), dy.f.data(), x.f.data(), w.f.data(), rstd.data(), kRows, C);
  expect_same_bits(dx, narrow(dx_ref), "dinp");
  expect_same_bits(dw, dw_ref, "dweight");
}

TEST_P(HalfLlamaOps, RopeForwardAndBackwardAreRoundedFp32) {
  const int B = 2, T = 70, NH = 3, HD = 8, pos0 = 7;  // 70 positions: a full chunk and a short one
  const int64_t n = int64_t{B} * T * NH * HD;
  Floats f(static_cast<size_t>(pos0 + T) * HD);
  std::vector<double> inv(HD / 2);
  for (int i = 0; i < HD / 2; ++i) inv[static_cast<size_t>(i)] = std::pow(500000.0, -2.0 * i / HD);
  rope_table(f.data(), pos0 + T, HD, inv.data());
  const HalfValues x = random(n, 8, 2.0f), dy = random(n, 9);
  Halves out(n), in_place = x.h, dx(n), dx_in_place = dy.h;
  Floats y(n), dx_ref(n);
  ops().rope_forward(out.data(), x.h.data(), f.data(), B, T, NH, HD, pos0);
  ops().rope_forward(in_place.data(), in_place.data(), f.data(), B, T, NH, HD, pos0);
  rope_forward(y.data(), x.f.data(), f.data(), B, T, NH, HD, pos0);
  expect_same_bits(out, narrow(y), "rope forward");
  expect_same_bits(in_place, out, "rope forward in place");
  ops().rope_backward(dx.data(), dy.h.data(), f.data(), B, T, NH, HD, pos0);
  ops().rope_backward(dx_in_place.data(), dx_in_place.data(), f.data(), B, T, NH, HD, pos0);
  rope_backward(dx_ref.data(), dy.f.data(), f.data(), B, T, NH, HD, pos0);
  expect_same_bits(dx, narrow(dx_ref), "rope backward");
  expect_same_bits(dx_in_place, dx, "rope backward in place");
}

TEST_P(HalfLlamaOps, SwiGluForwardAndBackwardAreRoundedFp32) {
  const int64_t n = half_cache_floats() + 1000;  // two whole elementwise chunks (half the L2 each) and a short one
  const HalfValues g = random(n, 10, 3.0f), u = random(n, 11), dy = random(n, 12);
  Halves out(n), dg(n), du(n), g_in_place = g.h, u_in_place = u.h;
  Floats y(n), dg_ref(n), du_ref(n);
  ops().swiglu_forward(out.data(), g.h.data(), u.h.data(), n);
  fp32().swiglu_forward(y.data(), g.f.data(), u.f.data(), n);
  expect_same_bits(out, narrow(y), "swiglu");
  ops().swiglu_backward(dg.data(), du.data(), dy.h.data(), g.h.data(), u.h.data(), n);
  fp32().swiglu_backward(dg_ref.data(), du_ref.data(), dy.f.data(), g.f.data(), u.f.data(), n);
  expect_same_bits(dg, narrow(dg_ref), "dgate");
  expect_same_bits(du, narrow(du_ref), "dup");
  ops().swiglu_backward(g_in_place.data(), u_in_place.data(), dy.h.data(), g_in_place.data(), u_in_place.data(), n);
  expect_same_bits(g_in_place, dg, "dgate over gate");
  expect_same_bits(u_in_place, du, "dup over up");
}

INSTANTIATE_TEST_SUITE_P(Bf16AndF16, HalfLlamaOps, ::testing::Values(DType::kBF16, DType::kF16),
                         [](const ::testing::TestParamInfo<DType>& p) { return std::string(dtype_name(p.param)); });

}  // namespace
}  // namespace zt

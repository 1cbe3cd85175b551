// The embedding and the rotary rotation on the GPU against the CPU kernels, bit for bit,
// in fp32, bf16 and f16 storage: the forward with and without a position table, the
// backward's dwte and dwpe (tokens repeat, so rows of one token accumulate in row order),
// and RoPE forward and backward (also in place) from the CPU's own table.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/encoder.h"
#include "kernels/cpu/rope.h"
#include "kernels/cuda/encoder.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;
using testing::same_bits;

std::vector<float> normal(size_t n, uint32_t seed) { return testing::normal_values(n, seed); }


TEST(CudaEncoder, ForwardAndBackwardMatchTheCpuBitForBit) {
  ZT_REQUIRE_CUDA();
  const int B = 3, T = 17, C = 70, Vocab = 11;
  std::vector<int32_t> tokens(B * T);
  std::mt19937 rng(3);
  for (int32_t& x : tokens) x = static_cast<int32_t>(rng() % Vocab);
  DeviceArray<int32_t> dtok(tokens);
  DeviceArray<char> ws(cuda::encoder_backward_workspace_bytes(B * T));
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (bool with_wpe : {true, false}) {
      DeviceValues wte(t, normal(Vocab * C, 1)), wpe(t, normal(T * C, 2)), out(t, std::vector<float>(B * T * C));
      DeviceValues dout(t, normal(B * T * C, 3));
      DeviceArray<float> dwte(normal(Vocab * C, 4)), dwpe(normal(T * C, 5));
      cuda::encoder_forward(t, out.get(), dtok.get(), wte.get(), with_wpe ? wpe.get() : nullptr, B, T, C, nullptr);
      cuda::encoder_backward(t, dwte.get(), with_wpe ? dwpe.get() : nullptr, dout.get(), dtok.get(), B, T, C, ws.get(),
                             nullptr);
      std::vector<float> ro(B * T * C), rwte = normal(Vocab * C, 4), rwpe = normal(T * C, 5);
      encoder_forward(ro.data(), tokens.data(), wte.host().data(), with_wpe ? wpe.host().data() : nullptr, B, T, C);
      encoder_backward(rwte.data(), with_wpe ? rwpe.data() : nullptr, dout.host().data(), tokens.data(), B, T, C);
      const std::string what = std::string(dtype_name(t)) + (with_wpe ? " with wpe" : " without wpe");
      EXPECT_TRUE(same_bits(out.download(), testing::representable(t, ro))) << "out " << what;
      EXPECT_TRUE(same_bits(dwte.download(), rwte)) << "dwte " << what;
      if (with_wpe) EXPECT_TRUE(same_bits(dwpe.download(), rwpe)) << "dwpe " << what;
    }
  }
}

TEST(CudaEncoder, RopeMatchesTheCpuBitForBit) {
  ZT_REQUIRE_CUDA();
  const int B = 2, T = 9, NH = 3, HD = 16, max_T = 32, pos0 = 5;
  std::vector<double> inv(HD / 2);
  for (int i = 0; i < HD / 2; ++i) inv[i] = std::pow(10000.0, -2.0 * i / HD);
  std::vector<float> freqs(static_cast<size_t>(max_T) * HD);
  rope_table(freqs.data(), max_T, HD, inv.data());
  DeviceArray<float> df(freqs);
  const size_t n = static_cast<size_t>(B) * T * NH * HD;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    DeviceValues x(t, normal(n, 7)), y(t, std::vector<float>(n)), dx(t, std::vector<float>(n));
    cuda::rope_rotate(t, y.get(), x.get(), df.get(), B, T, NH, HD, pos0, 1.0f, nullptr);
    cuda::rope_rotate(t, dx.get(), x.get(), df.get(), B, T, NH, HD, pos0, -1.0f, nullptr);
    std::vector<float> ry(n), rdx(n);
    rope_forward(ry.data(), x.host().data(), freqs.data(), B, T, NH, HD, pos0);
    rope_backward(rdx.data(), x.host().data(), freqs.data(), B, T, NH, HD, pos0);
    EXPECT_TRUE(same_bits(y.download(), testing::representable(t, ry))) << "forward " << dtype_name(t);
    EXPECT_TRUE(same_bits(dx.download(), testing::representable(t, rdx))) << "backward " << dtype_name(t);
    cuda::rope_rotate(t, x.get(), x.get(), df.get(), B, T, NH, HD, pos0, 1.0f, nullptr);  // in place
    EXPECT_TRUE(same_bits(x.download(), testing::representable(t, ry))) << "in place " << dtype_name(t);
  }
}

}  // namespace
}  // namespace zt

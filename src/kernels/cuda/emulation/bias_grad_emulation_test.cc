// The bias gradient's kernels (bias_grad.cu, column_reduce.cuh) on the CPU through the emulated
// grid (lanes.h), against the documented summation order bit for bit, as the GPU test
// (CudaGemm.BiasGradientGivesTheSameBitsPackedOrNot) does: rows that start 16-byte aligned
// take the packed chunk pass, others the one-column pass, over a partial last chunk and a
// partial column tile.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/cpu/half_convert.h"
#include "kernels/cuda/emulation/emulated_kernels.h"
#include "testing/column_order.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

// The column sums of dout (N, OC) in storage t, starting `offset` elements into it, added to dbias.
std::vector<float> emulated_bias_grad(DType t, const std::vector<float>& values, size_t offset,
                                      std::vector<float> dbias, int64_t N, int OC) {
  const size_t elem = t == DType::kF32 ? 4 : 2;
  std::vector<char> dout(values.size() * elem);
  if (t == DType::kF32) {
    std::memcpy(dout.data(), values.data(), dout.size());
  } else {
    f32_to_half(t, reinterpret_cast<half_t*>(dout.data()), values.data(), static_cast<int64_t>(values.size()));
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dout.data()) % 16, 0u);  // offset 0: the packed pass's rows
  std::vector<float> ws(static_cast<size_t>(emu::bias_grad_workspace_floats(N, OC)));
  emu::bias_grad(t, dbias.data(), dout.data() + offset * elem, N, OC, ws.data());
  return dbias;
}

TEST(EmulatedBiasGrad, GivesTheDocumentedOrdersBitsPackedOrNot) {
  const int64_t N = 1000;
  const int OC = 392;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    const std::vector<float> values =
        testing::representable(t, testing::normal_values(static_cast<size_t>(N * OC) + 8, 21, 0.0f, 1.0f));
    const std::vector<float> dbias = testing::normal_values(OC, 22, 0.0f, 0.01f);
    for (size_t offset : {size_t{0}, size_t{1}}) {  // packed (aligned rows), then one column a thread
      const std::vector<float> rows(values.begin() + offset, values.begin() + offset + N * OC);
      EXPECT_TRUE(testing::same_bits(emulated_bias_grad(t, values, offset, dbias, N, OC),
                                     testing::bias_grad_in_order(rows, dbias, N, OC)))
          << dtype_name(t) << (offset == 0 ? " packed" : " one column a thread");
    }
  }
}

}  // namespace
}  // namespace zt

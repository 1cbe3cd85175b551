// Cross-entropy on the GPU against the CPU kernel, bit for bit, in each CPU ISA's order
// this host has and in fp32, bf16 and f16 storage (the 16-bit CPU table widens, runs the
// fp32 kernel and rounds the gradient once; done here by hand): losses, [max, log-sum-exp]
// and the gradient, with ignored targets, a vocabulary that is no multiple of any lane
// width and padded columns that must come out zero. The backward also runs in place.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/kernel_args.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cuda/crossentropy.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;
using testing::same_bits;

TEST(CudaCrossEntropy, MatchesTheCpuBitForBit) {
  ZT_REQUIRE_CUDA();
  const int64_t N = 97;
  const int V = 1003, Vp = 1024;
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 4.0f);
  std::vector<float> logits(N * Vp);
  for (float& x : logits) x = d(rng);
  std::vector<int32_t> targets(N);
  for (int64_t r = 0; r < N; ++r) targets[r] = r % 7 == 3 ? -1 : static_cast<int32_t>(rng() % V);
  DeviceArray<int32_t> dt(targets);
  const float dloss = 1.0f / 83.0f;
  for (const auto& [isa, order] : testing::cpu_orders()) {
    const KernelTable& k = cpu_kernels_for(isa);
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      DeviceValues l(t, logits), dl(t, std::vector<float>(N * Vp));
      DeviceArray<float> losses(N), stats(2 * N);
      cuda::crossentropy_forward(t, order, losses.get(), stats.get(), l.get(), dt.get(), N, V, Vp, nullptr);
      cuda::crossentropy_backward(t, order, dl.get(), l.get(), stats.get(), dt.get(), dloss, N, V, Vp, nullptr);
      std::vector<float> rl(N), rs(2 * N), rd(N * Vp);
      k.crossentropy_forward(rl.data(), rs.data(), l.host().data(), targets.data(), N, V, Vp);
      k.crossentropy_backward(rd.data(), l.host().data(), rs.data(), targets.data(), dloss, N, V, Vp);
      const std::string what = std::string(isa_name(isa)) + " " + dtype_name(t);
      EXPECT_TRUE(same_bits(losses.download(), rl)) << "losses " << what;
      EXPECT_TRUE(same_bits(stats.download(), rs)) << "stats " << what;
      EXPECT_TRUE(same_bits(dl.download(), testing::representable(t, rd))) << "dlogits " << what;
      cuda::crossentropy_backward(t, order, l.get(), l.get(), stats.get(), dt.get(), dloss, N, V, Vp, nullptr);
      EXPECT_TRUE(same_bits(l.download(), testing::representable(t, rd))) << "dlogits in place " << what;
    }
  }
}

// A micro-batch's loss sum: the CPU's double sum in index order, bit for bit, and the count
// of targets that are not ignored.
TEST(CudaCrossEntropy, LossSumMatchesTheCpuBitForBit) {
  ZT_REQUIRE_CUDA();
  const int64_t N = 4099;
  std::mt19937 rng(9);
  std::exponential_distribution<float> d(0.3f);
  std::vector<float> losses(N);
  std::vector<int32_t> targets(N);
  for (int64_t i = 0; i < N; ++i) {
    losses[i] = d(rng);
    targets[i] = i % 5 == 2 ? -1 : static_cast<int32_t>(rng() % 1000);
  }
  DeviceArray<float> dl(losses);
  DeviceArray<int32_t> dt(targets);
  DeviceArray<double> out(2);
  cuda::loss_sum(out.get(), dl.get(), dt.get(), N, nullptr);
  double want[2];
  masked_loss_sum(want, losses.data(), targets.data(), N);
  const std::vector<double> got = out.download();
  EXPECT_EQ(got[0], want[0]);
  EXPECT_EQ(got[1], want[1]);
  EXPECT_EQ(want[1], static_cast<double>(N - (N + 2) / 5));
}

}  // namespace
}  // namespace zt

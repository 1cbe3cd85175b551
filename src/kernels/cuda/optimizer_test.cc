// The optimizer kernels on the GPU against the CPU kernels on the same inputs, bit for
// bit: 20 AdamW steps (parameters and both moments after every step), SGD in each of its
// forms, LAMB's moments, its two sums and its update; and the sum of squares in each CPU
// ISA's order, against that ISA's kernel where this CPU has it. Sizes are not multiples
// of any vector width or chunk, so every tail path runs.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cuda/optimizer.h"
#include "testing/cuda_test.h"
#include "testing/isa_compare.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::same_bits;

std::vector<float> normal(size_t n, uint32_t seed, float sd) { return testing::normal_values(n, seed, 0.0f, sd); }


AdamWArgs adamw_args(int t) {
  const double lr = 1e-3, b1 = 0.9, b2 = 0.95, wd = 0.1;
  AdamWArgs a;
  a.grad_scale = static_cast<float>(0.7);
  a.decay_factor = static_cast<float>(1.0 - lr * wd);
  a.beta1 = static_cast<float>(b1);
  a.one_minus_beta1 = static_cast<float>(1.0 - b1);
  a.beta2 = static_cast<float>(b2);
  a.one_minus_beta2 = static_cast<float>(1.0 - b2);
  a.bias_correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(b2, t)));
  a.eps = 1e-8f;
  a.neg_step_size = static_cast<float>(-lr / (1.0 - std::pow(b1, t)));
  return a;
}

TEST(CudaOptimizer, TwentyAdamWStepsAreBitIdenticalToTheCpu) {
  ZT_REQUIRE_CUDA();
  const size_t n = 3 * (1 << 20) + 77;
  std::vector<float> p = normal(n, 1, 0.02f), m(n, 0.0f), v(n, 0.0f);
  DeviceArray<float> dp(p), dm(m), dv(v), dg(n);
  for (int t = 1; t <= 20; ++t) {
    const std::vector<float> g = normal(n, 100 + t, t % 5 == 0 ? 10.0f : 0.01f);
    dg.upload(g);
    const AdamWArgs a = adamw_args(t);
    cuda::adamw_step(dp.get(), dg.get(), dm.get(), dv.get(), static_cast<int64_t>(n), a, nullptr);
    cpu_kernels().adamw_step(p.data(), g.data(), m.data(), v.data(), static_cast<int64_t>(n), a);
    ASSERT_TRUE(same_bits(dp.download(), p)) << "parameters after step " << t;
    ASSERT_TRUE(same_bits(dm.download(), m)) << "exp_avg after step " << t;
    ASSERT_TRUE(same_bits(dv.download(), v)) << "exp_avg_sq after step " << t;
  }
}

TEST(CudaOptimizer, SgdInEveryFormIsBitIdenticalToTheCpu) {
  ZT_REQUIRE_CUDA();
  const size_t n = (1 << 20) + 13;
  for (int form = 0; form < 6; ++form) {
    SgdArgs a;
    a.lr = 0.05f;
    a.grad_scale = 0.9f;
    a.weight_decay = form % 2 == 1 ? 1e-2f : 0.0f;
    a.use_momentum = form >= 2;
    a.momentum = 0.9f;
    a.dampening_factor = 0.75f;
    a.first = form == 2 || form == 3;
    a.nesterov = form >= 4;
    std::vector<float> p = normal(n, 2, 1.0f), buf = normal(n, 3, 1.0f);
    const std::vector<float> g = normal(n, 4, 1.0f);
    DeviceArray<float> dp(p), db(buf), dg(g);
    cuda::sgd_step(dp.get(), dg.get(), db.get(), static_cast<int64_t>(n), a, nullptr);
    sgd_step(p.data(), g.data(), buf.data(), static_cast<int64_t>(n), a);
    EXPECT_TRUE(same_bits(dp.download(), p)) << "form " << form;
    if (a.use_momentum) EXPECT_TRUE(same_bits(db.download(), buf)) << "form " << form;
  }
}

TEST(CudaOptimizer, LambMomentsSumsAndUpdateAreBitIdenticalToTheCpu) {
  ZT_REQUIRE_CUDA();
  const size_t n = 5 * (1 << 14) + 9;
  for (bool inside : {false, true}) {
    LambArgs a;
    a.grad_scale = 0.5f;
    a.eps_inside_sqrt = inside;
    a.decay = 0.01f;
    a.eps = 1e-6f;
    std::vector<float> p = normal(n, 5, 0.1f), m = normal(n, 6, 0.01f), v = normal(n, 7, 0.01f);
    for (float& x : v) x = x * x;
    const std::vector<float> g = normal(n, 8, 1.0f);
    DeviceArray<float> dp(p), dm(m), dv(v), dg(g);
    DeviceArray<double> ws(static_cast<size_t>(cuda::lamb_workspace_doubles(n)));
    DeviceArray<LambSums> dsums(std::vector<LambSums>{LambSums{1.5, 2.5}});
    cuda::lamb_moments(dp.get(), dg.get(), dm.get(), dv.get(), static_cast<int64_t>(n), a, dsums.get(),
                       ws.get(), nullptr);
    LambSums sums{1.5, 2.5};
    cpu_kernels().lamb_moments(p.data(), g.data(), m.data(), v.data(), static_cast<int64_t>(n), a, &sums);
    const LambSums got = dsums.download()[0];
    EXPECT_EQ(got.param_sq, sums.param_sq) << "sum p^2, eps inside " << inside;
    EXPECT_EQ(got.update_sq, sums.update_sq) << "sum u^2, eps inside " << inside;
    EXPECT_TRUE(same_bits(dm.download(), m));
    EXPECT_TRUE(same_bits(dv.download(), v));
    a.step_size = 1e-3;  // the trust ratio from the sums, as the device read them
    a.min_coeff = 0.01;
    a.max_coeff = 10.0;
    cuda::lamb_apply(dp.get(), dm.get(), dv.get(), static_cast<int64_t>(n), a, dsums.get(), nullptr);
    cpu_kernels().lamb_apply(p.data(), m.data(), v.data(), static_cast<int64_t>(n), a, &sums);
    EXPECT_TRUE(same_bits(dp.download(), p)) << "eps inside " << inside;
  }
}

// Each CPU ISA's order on the GPU, against that ISA's kernel (the ones this CPU runs).
TEST(CudaOptimizer, SumOfSquaresFollowsEachCpuIsaBitForBit) {
  ZT_REQUIRE_CUDA();
  struct Order {
    Isa isa;
    cuda::CpuOrder order;
  };
  const Order orders[] = {{Isa::kScalar, {8, false}}, {Isa::kAvx2, {8, true}}, {Isa::kAvx512, {16, true}}};
  for (size_t n : {size_t{1}, size_t{15}, size_t{31}, size_t{65536 + 17}, size_t{3} * 65536 + 40 + 7}) {
    const std::vector<float> x = normal(n, static_cast<uint32_t>(n), 3.0f);
    DeviceArray<float> dx(x);
    DeviceArray<double> out(1), ws(static_cast<size_t>(cuda::sum_squares_workspace_doubles(static_cast<int64_t>(n))));
    int compared = 0;
    for (const Order& o : orders) {
      if (detect_isa() < o.isa) continue;
      cuda::sum_squares(out.get(), dx.get(), static_cast<int64_t>(n), o.order, ws.get(), nullptr);
      EXPECT_EQ(out.download()[0], cpu_kernels_for(o.isa).sum_squares(x.data(), static_cast<int64_t>(n)))
          << isa_name(o.isa) << " n=" << n;
      ++compared;
    }
    EXPECT_GE(compared, 1);
  }
}

}  // namespace
}  // namespace zt

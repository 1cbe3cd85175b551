// The CPU backend: arenas (allocation, zeroing, moves, dtype checks), the refusal of
// backends that do not exist, and the kernels the table added beyond the model layers
// (bias_residual, accumulate, bf16 casts, SGD, the vocabulary-parallel halves against the
// whole-vocabulary cross-entropy at tp = 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/guarded_backend.h"
#include "core/huge_pages.h"
#include "tensor/buffer.h"
#include "testing/smaps.h"
#include "testing/gradcheck.h"

namespace zt {
namespace {

const KernelOps& ops() { return cpu_backend().ops(); }

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(CpuBackend, ArenasAreZeroedAlignedTypedAndMovable) {
  StatusOr<Arena> a = cpu_backend().allocate(1000, DType::kF32, "a test arena");
  ASSERT_TRUE(a.ok());
  Arena arena = std::move(a).value();
  EXPECT_EQ(arena.size(), 1000u);
  EXPECT_EQ(arena.bytes(), 4000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena.data()) % 64, 0u);
  for (size_t i = 0; i < arena.size(); ++i) ASSERT_EQ(arena[i], 0.0f);
  arena[7] = 3.0f;
  Arena moved = std::move(arena);
  EXPECT_TRUE(arena.empty());
  EXPECT_EQ(moved[7], 3.0f);
  moved.zero();
  EXPECT_EQ(moved[7], 0.0f);
  StatusOr<Arena> h = cpu_backend().allocate(10, DType::kBF16, "a bf16 arena");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->bytes(), 20u);
  EXPECT_DEATH(h->data(), "bf16 arena read as f32");
}

TEST(CpuBackend, HugeAllocationIsAStatusNamingWhat) {
  StatusOr<Arena> a = cpu_backend().allocate(size_t{1} << 60, DType::kF32, "the impossible moments");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("the impossible moments"), std::string::npos) << a.status().to_string();
}

// Parameters, gradients, optimizer state and activations stream through huge pages: their
// blocks are advised before the zeroing touches them (core/huge_pages.h).
TEST(CpuBackend, LargeArenasAndBuffersAreHugePageEligible) {
  if (guarded_backend_requested()) GTEST_SKIP() << "the guarded backend's arenas are its own mappings";
  if (thp_mode() != "madvise") GTEST_SKIP() << "THP mode is " << thp_mode() << ", not madvise: advice changes nothing";
  const size_t n = (kHugePageAdviceMinBytes + (size_t{4} << 20)) / sizeof(float);
  StatusOr<Arena> a = cpu_backend().allocate(n, DType::kF32, "a large arena");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(testing::thp_eligible(a->data() + n / 2), 1);
  StatusOr<FloatBuffer> b = FloatBuffer::allocate(n, "a large buffer");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(testing::thp_eligible(b->data() + n / 2), 1);
  FloatBuffer c(n);
  EXPECT_EQ(testing::thp_eligible(c.data() + n / 2), 1);
}

TEST(CpuBackend, F32Bf16AndF16Backends) {
  StatusOr<const Backend*> f32 = backend_for(Device::kCpu, DType::kF32);
  ASSERT_TRUE(f32.ok());
  EXPECT_EQ(f32.value(), &cpu_backend());
  EXPECT_EQ(cpu_backend().half_ops(), nullptr);
  EXPECT_NE(cpu_backend().describe().find("gemm: "), std::string::npos);
  for (DType t : {DType::kBF16, DType::kF16}) {
    StatusOr<const Backend*> b = backend_for(Device::kCpu, t);
    ASSERT_TRUE(b.ok()) << dtype_name(t);
    EXPECT_EQ(b.value()->compute_dtype(), t);
    ASSERT_NE(b.value()->half_ops(), nullptr);
    EXPECT_EQ(b.value()->half_ops()->compute, t);
    EXPECT_EQ(b.value()->ops().compute, DType::kF32);  // the optimizer's table stays fp32
    const std::string d = b.value()->describe();
    EXPECT_NE(d.find(std::string("cpu ") + dtype_name(t)), std::string::npos) << d;
    EXPECT_NE(d.find("master"), std::string::npos) << d;
  }
}

TEST(CpuBackend, CopyAndZeroLargeBuffers) {
  const size_t n = (size_t{1} << 22) + 13;  // above the threaded threshold, odd tail
  std::vector<float> a = testing::random_vector(n, 1), b(n, 5.0f);
  cpu_backend().copy(b.data(), a.data(), n * sizeof(float));
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), n * sizeof(float)));
  cpu_backend().zero(b.data(), n * sizeof(float));
  for (size_t i = 0; i < n; i += 4097) ASSERT_EQ(b[i], 0.0f);
  EXPECT_EQ(b[n - 1], 0.0f);
}

TEST(CpuBackend, BiasResidualAndAccumulate) {
  const int N = 3, C = 5;
  std::vector<float> x = testing::random_vector(N * C, 2), p = testing::random_vector(N * C, 3),
                     b = testing::random_vector(C, 4), out(N * C);
  ops().bias_residual(out.data(), x.data(), p.data(), b.data(), N, C);
  for (int i = 0; i < N * C; ++i) EXPECT_EQ(out[i], (x[i] + p[i]) + b[i % C]);
  std::vector<float> acc = x;
  ops().accumulate(acc.data(), p.data(), N * C);
  for (int i = 0; i < N * C; ++i) EXPECT_EQ(acc[i], x[i] + p[i]);
}

TEST(CpuBackend, Bf16CastRoundsToNearestEven) {
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties go to the even (1).
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties go to 1 + 2^-6.
  const std::vector<float> in = {1.0f,
                                 1.0f + std::ldexp(1.0f, -8),
                                 1.0f + 3 * std::ldexp(1.0f, -8),
                                 1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20),
                                 -2.5f,
                                 std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(),
                                 from_bits(0x7f800001u),  // signalling NaN: must stay a NaN
                                 std::numeric_limits<float>::max()};
  std::vector<bf16_t> h(in.size());
  ops().cast_f32_to_bf16(h.data(), in.data(), static_cast<int64_t>(in.size()));
  std::vector<float> back(in.size());
  ops().cast_bf16_to_f32(back.data(), h.data(), static_cast<int64_t>(in.size()));
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], 1.0f);
  EXPECT_EQ(back[2], 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(back[3], 1.0f + std::ldexp(1.0f, -7));  // just above the tie: rounds up
  EXPECT_EQ(back[4], -2.5f);
  EXPECT_EQ(back[5], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(back[6]));
  EXPECT_TRUE(std::isnan(back[7]));
  EXPECT_EQ(back[8], std::numeric_limits<float>::infinity());  // max float rounds up to bf16 inf
}

TEST(CpuBackend, SgdMatchesTorchFormula) {
  const int n = 9;
  std::vector<float> p = testing::random_vector(n, 5), g = testing::random_vector(n, 6), buf(n, 0.0f);
  std::vector<float> p_ref = p, buf_ref(n);
  SgdArgs a;
  a.lr = 0.1f;
  a.grad_scale = 0.5f;
  a.weight_decay = 0.01f;
  a.momentum = 0.9f;
  a.dampening_factor = 1.0f;
  a.use_momentum = true;
  for (int step = 0; step < 2; ++step) {
    a.first = step == 0;
    ops().sgd_step(p.data(), g.data(), buf.data(), n, a);
    for (int i = 0; i < n; ++i) {
      float gi = g[i] * a.grad_scale + a.weight_decay * p_ref[i];
      buf_ref[i] = a.first ? gi : a.momentum * buf_ref[i] + a.dampening_factor * gi;
      p_ref[i] = p_ref[i] - a.lr * buf_ref[i];
    }
  }
  for (int i = 0; i < n; ++i) EXPECT_EQ(p[i], p_ref[i]) << i;
}

TEST(CpuBackend, VocabParallelHalvesAtOneRankMatchTheWholeCrossEntropy) {
  const int N = 4, V = 11, Vp = 16;
  std::vector<float> logits = testing::random_vector(N * Vp, 7);
  const std::vector<int32_t> targets = {3, kIgnoreIndex, 10, 0};
  std::vector<float> losses(N), stats(2 * N), row_max(N), sums(2 * N), l2(N), s2(2 * N);
  ops().crossentropy_forward(losses.data(), stats.data(), logits.data(), targets.data(), N, V, Vp);
  const VocabSlice whole{0, Vp, V};
  ops().vocab_xent_row_max(row_max.data(), logits.data(), N, whole);
  ops().vocab_xent_partials(s2.data(), sums.data(), row_max.data(), 1, logits.data(), targets.data(), N, whole);
  ops().vocab_xent_finish(l2.data(), s2.data(), sums.data(), targets.data(), N);
  for (int i = 0; i < N; ++i) EXPECT_NEAR(l2[i], losses[i], 1e-6f * std::fabs(losses[i]) + 1e-7f) << i;
  std::vector<float> d1 = logits, d2 = logits;
  ops().crossentropy_backward(d1.data(), d1.data(), stats.data(), targets.data(), 0.25f, N, V, Vp);
  ops().vocab_xent_backward(d2.data(), d2.data(), s2.data(), targets.data(), 0.25f, N, whole);
  for (int i = 0; i < N * Vp; ++i) EXPECT_NEAR(d1[i], d2[i], 1e-7f) << i;
}

}  // namespace
}  // namespace zt

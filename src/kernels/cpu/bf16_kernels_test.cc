// The kernel table's bf16 forms on every ISA (scalar, and each SIMD path this CPU has),
// each against its definition: bit for bit the same ISA's fp32 kernel on the widened
// inputs, every output rounded once (core/half_bits.h's f32_to_bf16_bits). LayerNorm at a
// ragged width and GPT-2's 768, accumulating onto random gradients, and RMSNorm likewise; GELU over special
// values (NaN, infinities, subnormals, signed zeros) as well as random ones, with its
// backward also in place; cross-entropy with padding and an ignored row, forward and
// backward (also in place); the AdamW copy on bit patterns that test the narrowing itself
// (ties both ways, subnormals, overflow to inf, NaN), which a zero step leaves unchanged.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/cpu_features.h"
#include "core/half_bits.h"
#include "kernels/cpu/kernel_table.h"
#include "testing/gradcheck.h"
#include "testing/isa_compare.h"

namespace zt {
namespace {

using testing::random_vector;
using Bits = std::vector<uint16_t>;
using Floats = std::vector<float>;

std::vector<Isa> every_isa() {
  std::vector<Isa> isas = testing::simd_isas();
  isas.push_back(Isa::kScalar);
  return isas;
}

Bits narrow(const Floats& f) {
  Bits b(f.size());
  for (size_t i = 0; i < f.size(); ++i) b[i] = f32_to_bf16_bits(f[i]);
  return b;
}

Floats widen(const Bits& b) {
  Floats f(b.size());
  for (size_t i = 0; i < b.size(); ++i) f[i] = bf16_bits_to_f32(b[i]);
  return f;
}

// Random values rounded to bf16 (scale as random_vector's).
Bits random_bf16(size_t n, uint64_t seed, float scale = 1.0f) { return narrow(random_vector(n, seed, scale)); }

void expect_same(const Bits& got, const Bits& want, const char* what, Isa isa) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << what << "[" << i << "] on " << isa_name(isa);
  }
}

void expect_same(const Floats& got, const Floats& want, const char* what, Isa isa) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << what << " on " << isa_name(isa);
}

TEST(Bf16Kernels, LayerNormIsTheRoundedFp32KernelOnEveryIsa) {
  const int N = 37;
  for (int C : {67, 768}) {
    const Bits x = random_bf16(N * C, 1, 3.0f), w = random_bf16(C, 2), b = random_bf16(C, 3);
    const Bits dy = random_bf16(N * C, 4), dx0 = random_bf16(N * C, 5);
    const Floats dw0 = random_vector(C, 6), db0 = random_vector(C, 7);
    for (Isa isa : every_isa()) {
      const KernelTable& k = cpu_kernels_for(isa);
      Bits out(N * C), dx = dx0;
      Floats y(N * C), mean(N), rstd(N), mean_ref(N), rstd_ref(N), dw = dw0, db = db0;
      k.layernorm_forward_bf16(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
      k.layernorm_forward(y.data(), mean_ref.data(), rstd_ref.data(), widen(x).data(), widen(w).data(),
                          widen(b).data(), N, C);
      expect_same(out, narrow(y), "out", isa);
      expect_same(mean, mean_ref, "mean", isa);
      expect_same(rstd, rstd_ref, "rstd", isa);
      Floats dx_ref = widen(dx0), dw_ref = dw0, db_ref = db0;
      k.layernorm_backward_bf16(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), mean.data(),
                                rstd.data(), N, C);
      k.layernorm_backward(dx_ref.data(), dw_ref.data(), db_ref.data(), widen(dy).data(), widen(x).data(),
                           widen(w).data(), mean.data(), rstd.data(), N, C);
      expect_same(dx, narrow(dx_ref), "dinp", isa);
      expect_same(dw, dw_ref, "dweight", isa);
      expect_same(db, db_ref, "dbias", isa);
    }
  }
}

TEST(Bf16Kernels, RmsNormIsTheRoundedFp32KernelOnEveryIsa) {
  const int N = 37;
  for (int C : {67, 768}) {
    const Bits x = random_bf16(N * C, 11, 3.0f), w = random_bf16(C, 12);
    const Bits dy = random_bf16(N * C, 13), dx0 = random_bf16(N * C, 14);
    const Floats dw0 = random_vector(C, 15);
    for (Isa isa : every_isa()) {
      const KernelTable& k = cpu_kernels_for(isa);
      Bits out(N * C), dx = dx0;
      Floats y(N * C), rstd(N), rstd_ref(N), dw = dw0;
      k.rmsnorm_forward_bf16(out.data(), rstd.data(), x.data(), w.data(), N, C, 1e-5f);
      k.rmsnorm_forward(y.data(), rstd_ref.data(), widen(x).data(), widen(w).data(), N, C, 1e-5f);
      expect_same(out, narrow(y), "out", isa);
      expect_same(rstd, rstd_ref, "rstd", isa);
      Floats dx_ref = widen(dx0), dw_ref = dw0;
      k.rmsnorm_backward_bf16(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), N, C);
      k.rmsnorm_backward(dx_ref.data(), dw_ref.data(), widen(dy).data(), widen(x).data(), widen(w).data(),
                         rstd.data(), N, C);
      expect_same(dx, narrow(dx_ref), "dinp", isa);
      expect_same(dw, dw_ref, "dweight", isa);
    }
  }
}

TEST(Bf16Kernels, GeluIsTheRoundedFp32KernelOnEveryIsaWithSpecialValues) {
  const int64_t n = 3 * 1024 + 13;  // several of the bf16 form's chunks and a ragged tail
  Bits x = random_bf16(n, 8, 4.0f);
  const Bits dy = random_bf16(n, 9);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float special[] = {nan, -nan, inf, -inf, 0.0f, -0.0f, 1e-39f, -1e-39f, 3e-38f, -20.0f, 20.0f};
  for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); ++i) x[i * 97] = f32_to_bf16_bits(special[i]);
  for (Isa isa : every_isa()) {
    const KernelTable& k = cpu_kernels_for(isa);
    Bits out(n), dx(n), in_place = dy;
    Floats y(n), dx_ref(n);
    k.gelu_forward_bf16(out.data(), x.data(), n);
    k.gelu_forward(y.data(), widen(x).data(), n);
    expect_same(out, narrow(y), "gelu", isa);
    k.gelu_backward_bf16(dx.data(), x.data(), dy.data(), n);
    k.gelu_backward_bf16(in_place.data(), x.data(), in_place.data(), n);
    k.gelu_backward(dx_ref.data(), widen(x).data(), widen(dy).data(), n);
    expect_same(dx, narrow(dx_ref), "dinp", isa);
    expect_same(in_place, narrow(dx_ref), "dinp in place", isa);
  }
}

TEST(Bf16Kernels, CrossEntropyIsTheRoundedFp32KernelOnEveryIsa) {
  const int N = 9;
  for (auto [V, Vp] : {std::pair{50, 56}, std::pair{1003, 1024}}) {
    const Bits logits = random_bf16(static_cast<size_t>(N) * Vp, 10, 4.0f);
    std::vector<int32_t> targets(N);
    for (int r = 0; r < N; ++r) targets[r] = r == 3 ? -1 : (r * 37) % V;  // one ignored row
    targets[N - 1] = V - 1;                                                // the last real class
    for (Isa isa : every_isa()) {
      const KernelTable& k = cpu_kernels_for(isa);
      Floats losses(N), stats(2 * N), losses_ref(N), stats_ref(2 * N), d_ref(static_cast<size_t>(N) * Vp);
      k.crossentropy_forward_bf16(losses.data(), stats.data(), logits.data(), targets.data(), N, V, Vp);
      k.crossentropy_forward(losses_ref.data(), stats_ref.data(), widen(logits).data(), targets.data(), N, V, Vp);
      expect_same(losses, losses_ref, "losses", isa);
      expect_same(stats, stats_ref, "stats", isa);
      Bits d(logits.size(), 0x7fff), in_place = logits;
      k.crossentropy_backward_bf16(d.data(), logits.data(), stats.data(), targets.data(), 0.125f, N, V, Vp);
      k.crossentropy_backward_bf16(in_place.data(), in_place.data(), stats.data(), targets.data(), 0.125f, N, V, Vp);
      k.crossentropy_backward(d_ref.data(), widen(logits).data(), stats.data(), targets.data(), 0.125f, N, V, Vp);
      expect_same(d, narrow(d_ref), "dlogits", isa);
      expect_same(in_place, narrow(d_ref), "dlogits in place", isa);
    }
  }
}

// A step of zero (g = m = v = 0, lr = 0) leaves p's bits as they are, so the copy is the
// narrowing of the chosen patterns, in whole vectors and in the tail.
TEST(Bf16Kernels, AdamWCopyNarrowsEveryPatternLikeTheScalarConversion) {
  const uint32_t patterns[] = {
      0x3f808000u,  // a tie, kept bit even: rounds down
      0x3f818000u,  // a tie, kept bit odd: rounds up
      0x3f808001u, 0x3f807fffu, 0x00008000u, 0x00018000u, 0x807fffffu,  // around ties; subnormals
      0x7f7fffffu,  // the largest float: overflows to inf
      0x7f800000u, 0xff800000u, 0x7fc00001u, 0xff812345u, 0x7f800001u,  // infinities; NaNs
      0x00000000u, 0x80000000u};
  const int n = 16 * 64 + 7;
  Floats p(n);
  for (int i = 0; i < n; ++i) p[i] = bits_float(i % 3 == 0 ? patterns[(i / 3) % 15] : float_bits(random_vector(1, i)[0]));
  AdamWArgs a;
  a.neg_step_size = -0.0f;  // p + (-0) is p, -0 included
  for (Isa isa : every_isa()) {
    Floats q = p, g(n, 0.0f), m(n, 0.0f), v(n, 0.0f);
    Bits out(n, 0xffff);
    cpu_kernels_for(isa).adamw_step_bf16(q.data(), g.data(), m.data(), v.data(), n, a, out.data());
    Bits want(n);
    for (int i = 0; i < n; ++i) want[i] = f32_to_bf16_bits(q[i]);
    expect_same(out, want, "copy", isa);
    for (int i = 0; i < n; ++i) {
      if (q[i] == q[i]) ASSERT_EQ(float_bits(q[i]), float_bits(p[i])) << i << " on " << isa_name(isa);  // NaNs stay NaN
    }
  }
}

}  // namespace
}  // namespace zt

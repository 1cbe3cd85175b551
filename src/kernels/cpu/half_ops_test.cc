// The bf16 and f16 activation tables against their definition: every non-GEMM output is
// bit for bit round(fp32 kernel on the widened inputs), the reference computed on the
// whole tensor at once, so chunking (130 rows: two full 64-row chunks and a short one;
// 70 positions per sequence; 2^18 + 1000 elements) may change no bit. Parameter
// gradients and LayerNorm's dinp accumulate (+=) onto random starting values; the
// in-place forms (gelu_backward, crossentropy_backward) run in place. The linear layers:
// f16 equals the fp32 linear run on the same row chunks; bf16 is linear_bf16.h (its
// accumulation bound is checked in linear_bf16_test.cc).
#include "kernels/cpu/half_ops.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/encoder.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/linear_bf16.h"
#include "kernels/cpu/vocab_parallel_kernels.h"
#include "testing/gradcheck.h"
#include "testing/half_values.h"

namespace zt {
namespace {

using testing::expect_same_bits;
using testing::Floats;
using testing::Halves;
using testing::HalfValues;
using testing::narrow;
using testing::random_half;
using testing::widen;

class HalfOps : public ::testing::TestWithParam<DType> {
 protected:
  const ActivationOps<half_t>& ops() const { return cpu_half_ops(GetParam()); }
  const KernelTable& fp32() const { return cpu_kernels(); }
  HalfValues random(size_t n, uint64_t seed, float scale = 1.0f) const {
    return random_half(GetParam(), n, seed, scale);
  }
  Halves narrow(const Floats& f) const { return testing::narrow(GetParam(), f); }
  Floats widen(const Halves& h) const { return testing::widen(GetParam(), h); }
};

constexpr int64_t kRows = 130;  // 2 full chunks of kHalfChunkRows and a short one

TEST_P(HalfOps, TableNamesItsComputeType) { EXPECT_EQ(ops().compute, GetParam()); }

TEST_P(HalfOps, LayerNormForwardIsRoundedFp32) {
  const int C = 67;
  const HalfValues x = random(kRows * C, 1, 3.0f), w = random(C, 2), b = random(C, 3);
  Halves out(kRows * C);
  Floats mean(kRows), rstd(kRows), y(kRows * C), mean_ref(kRows), rstd_ref(kRows);
  ops().layernorm_forward(out.data(), mean.data(), rstd.data(), x.h.data(), w.h.data(), b.h.data(), kRows, C);
  fp32().layernorm_forward(y.data(), mean_ref.data(), rstd_ref.data(), x.f.data(), w.f.data(), b.f.data(), kRows, C);
  expect_same_bits(out, narrow(y), "out");
  expect_same_bits(mean, mean_ref, "mean");
  expect_same_bits(rstd, rstd_ref, "rstd");
}

TEST_P(HalfOps, LayerNormBackwardAccumulatesEveryGradient) {
  const int C = 67;
  const HalfValues x = random(kRows * C, 4, 2.0f), w = random(C, 5);
  const HalfValues dy = random(kRows * C, 6), dx0 = random(kRows * C, 7);
  const Floats dw0 = testing::random_vector(C, 8), db0 = testing::random_vector(C, 9);
  Floats y(kRows * C), mean(kRows), rstd(kRows);
  fp32().layernorm_forward(y.data(), mean.data(), rstd.data(), x.f.data(), w.f.data(), w.f.data(), kRows, C);
  Halves dx = dx0.h;
  Floats dw = dw0, db = db0, dx_ref = dx0.f, dw_ref = dw0, db_ref = db0;
  ops().layernorm_backward(dx.data(), dw.data(), db.data(), dy.h.data(), x.h.data(), w.h.data(), mean.data(),
                           rstd.data(), kRows, C);
  fp32().layernorm_backward(dx_ref.data(), dw_ref.data(), db_ref.data(), dy.f.data(), x.f.data(), w.f.data(),
                            mean.data(), rstd.data(), kRows, C);
  expect_same_bits(dx, narrow(dx_ref), "dinp");
  expect_same_bits(dw, dw_ref, "dweight");
  expect_same_bits(db, db_ref, "dbias");
}

TEST_P(HalfOps, GeluForwardAndBackwardInPlaceAreRoundedFp32) {
  const int64_t n = half_cache_floats() + 1000;  // two whole elementwise chunks (half the L2 each) and a short one
  const HalfValues x = random(n, 10, 3.0f), dy = random(n, 11);
  Halves out(n), dx(n), in_place = dy.h;
  Floats y(n), dx_ref(n);
  ops().gelu_forward(out.data(), x.h.data(), n);
  fp32().gelu_forward(y.data(), x.f.data(), n);
  expect_same_bits(out, narrow(y), "gelu");
  ops().gelu_backward(dx.data(), x.h.data(), dy.h.data(), n);
  ops().gelu_backward(in_place.data(), x.h.data(), in_place.data(), n);  // dinp aliases dout
  fp32().gelu_backward(dx_ref.data(), x.f.data(), dy.f.data(), n);
  expect_same_bits(dx, narrow(dx_ref), "dinp");
  expect_same_bits(in_place, narrow(dx_ref), "dinp in place");
}

TEST_P(HalfOps, CrossEntropyWithPaddingAndIgnoredTargetsIsRoundedFp32) {
  const int V = 50, Vp = 56;
  HalfValues logits = random(kRows * Vp, 12, 2.0f);
  std::vector<int32_t> targets(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    targets[r] = r % 7 == 3 ? kIgnoreIndex : static_cast<int32_t>((r * 13) % V);
    for (int j = V; j < Vp; ++j) logits.f[r * Vp + j] = 30.0f;  // padding: never part of the loss
  }
  logits.h = narrow(logits.f);
  Floats losses(kRows), stats(2 * kRows), losses_ref(kRows), stats_ref(2 * kRows);
  ops().crossentropy_forward(losses.data(), stats.data(), logits.h.data(), targets.data(), kRows, V, Vp);
  fp32().crossentropy_forward(losses_ref.data(), stats_ref.data(), logits.f.data(), targets.data(), kRows, V, Vp);
  expect_same_bits(losses, losses_ref, "losses");
  expect_same_bits(stats, stats_ref, "stats");

  const float dloss = 1.0f / kRows;
  Halves d = logits.h;  // dlogits overwrites logits, as the model does
  Floats d_ref(kRows * Vp);
  ops().crossentropy_backward(d.data(), d.data(), stats.data(), targets.data(), dloss, kRows, V, Vp);
  fp32().crossentropy_backward(d_ref.data(), logits.f.data(), stats.data(), targets.data(), dloss, kRows, V, Vp);
  expect_same_bits(d, narrow(d_ref), "dlogits in place");
}

TEST_P(HalfOps, AttentionIsRoundedFp32OverTheWholeBatch) {
  const int B = 3, T = 9, C = 16, NH = 4;
  const int64_t n_qkv = int64_t{B} * T * 3 * C, n_y = int64_t{B} * T * C, n_att = int64_t{B} * NH * T * T;
  const HalfValues qkv = random(n_qkv, 13, 2.0f), dy = random(n_y, 14);
  Halves y(n_y), att(n_att), dqkv(n_qkv);
  Floats y_ref(n_y), att_ref(n_att), dqkv_ref(n_qkv);
  ops().attention_forward(y.data(), att.data(), qkv.h.data(), B, T, C, NH);
  attention_forward(y_ref.data(), att_ref.data(), qkv.f.data(), B, T, C, NH);
  expect_same_bits(y, narrow(y_ref), "atty");
  expect_same_bits(att, narrow(att_ref), "att");
  ops().attention_backward(dqkv.data(), dy.h.data(), qkv.h.data(), att.data(), B, T, C, NH);
  attention_backward(dqkv_ref.data(), dy.f.data(), qkv.f.data(), widen(att).data(), B, T, C, NH);
  expect_same_bits(dqkv, narrow(dqkv_ref), "dqkv");
}

TEST_P(HalfOps, EncoderIsRoundedFp32AndAccumulatesInOrder) {
  const int B = 2, T = 70, C = 20, vocab = 30;  // 70 positions: a full chunk and a short one
  const HalfValues wte = random(vocab * C, 15), wpe = random(T * C, 16), dy = random(int64_t{B} * T * C, 17);
  std::vector<int32_t> tokens(B * T);
  for (int i = 0; i < B * T; ++i) tokens[i] = (i * 7 + i / 5) % vocab;  // repeats: scatter-adds collide
  Halves out(int64_t{B} * T * C);
  Floats out_ref(out.size());
  ops().encoder_forward(out.data(), tokens.data(), wte.h.data(), wpe.h.data(), B, T, C);
  encoder_forward(out_ref.data(), tokens.data(), wte.f.data(), wpe.f.data(), B, T, C);
  expect_same_bits(out, narrow(out_ref), "out");
  Floats dwte = testing::random_vector(vocab * C, 18), dwpe = testing::random_vector(T * C, 19);
  Floats dwte_ref = dwte, dwpe_ref = dwpe;
  ops().encoder_backward(dwte.data(), dwpe.data(), dy.h.data(), tokens.data(), B, T, C);
  encoder_backward(dwte_ref.data(), dwpe_ref.data(), dy.f.data(), tokens.data(), B, T, C);
  expect_same_bits(dwte, dwte_ref, "dwte");
  expect_same_bits(dwpe, dwpe_ref, "dwpe");
}

TEST_P(HalfOps, CastsAreTheHalfConversions) {
  Floats x = testing::random_vector(1000, 20, 1e3f);
  x[0] = INFINITY;
  x[1] = -1e30f;
  x[2] = 1e-30f;
  Halves h(x.size());
  Floats back(x.size());
  ops().from_f32(h.data(), x.data(), static_cast<int64_t>(x.size()));
  ops().to_f32(back.data(), h.data(), static_cast<int64_t>(h.size()));
  expect_same_bits(h, narrow(x), "from_f32");
  expect_same_bits(back, widen(h), "to_f32");
}

// AdamW with the compute copy: the fp32 step's p, m, v, and the copy is from_f32 of the
// updated p (several of the kernel's chunks, a ragged tail, two threads when there are).
TEST_P(HalfOps, AdamWStepCopyIsTheStepThenFromF32) {
  const int64_t n = 2 * 16384 + 9;
  Floats p = testing::random_vector(n, 31), g = testing::random_vector(n, 32), m = testing::random_vector(n, 33, 0.1f);
  Floats v = testing::random_vector(n, 34, 0.1f);
  for (float& x : v) x *= x;
  AdamWArgs a;  // beta1, beta2 and eps of the defaults
  a.decay_factor = 0.999f;
  a.neg_step_size = -0.01f;
  Floats p_ref = p, m_ref = m, v_ref = v;
  cpu_kernels().adamw_step(p_ref.data(), g.data(), m_ref.data(), v_ref.data(), n, a);
  Halves copy(static_cast<size_t>(n));
  ops().adamw_step_copy(copy.data(), p.data(), g.data(), m.data(), v.data(), n, a);
  expect_same_bits(p, p_ref, "p");
  expect_same_bits(m, m_ref, "m");
  expect_same_bits(v, v_ref, "v");
  expect_same_bits(copy, narrow(p_ref), "copy");
}

// The tensor-parallel halves: the vocabulary-parallel embedding and cross-entropy of a
// slice (rows 16..31 of a 40-token vocabulary, padded to 48), and the row-parallel epilogue.
TEST_P(HalfOps, VocabParallelHalvesAreRoundedFp32) {
  const int B = 2, T = 70, C = 20, Vl = 16;
  const int64_t N = int64_t{B} * T;
  const VocabSlice v{16, Vl, 40};
  const HalfValues wte = random(Vl * C, 21), wpe = random(T * C, 22), dy = random(N * C, 23);
  std::vector<int32_t> tokens(N), targets(N);
  for (int64_t i = 0; i < N; ++i) tokens[i] = static_cast<int32_t>((i * 7 + i / 5) % 40);
  for (int64_t i = 0; i < N; ++i) targets[i] = i % 9 == 4 ? -1 : static_cast<int32_t>((i * 3) % 40);
  Floats partial(N * C), partial_ref(N * C), summed = testing::random_vector(N * C, 24), y_ref(N * C);
  ops().vocab_embedding_rows(partial.data(), tokens.data(), wte.h.data(), N, C, v);
  vocab_embedding_rows(partial_ref.data(), tokens.data(), wte.f.data(), N, C, v);
  expect_same_bits(partial, partial_ref, "vocab_embedding_rows");
  Halves out(N * C);
  ops().embedding_finish(out.data(), summed.data(), wpe.h.data(), N, T, C);
  embedding_finish(y_ref.data(), summed.data(), wpe.f.data(), N, T, C);
  expect_same_bits(out, narrow(y_ref), "embedding_finish");
  Floats dwte = testing::random_vector(Vl * C, 25), dwpe = testing::random_vector(T * C, 26);
  Floats dwte_ref = dwte, dwpe_ref = dwpe;
  ops().vocab_embedding_backward(dwte.data(), dwpe.data(), dy.h.data(), tokens.data(), B, T, C, v);
  vocab_embedding_backward(dwte_ref.data(), dwpe_ref.data(), dy.f.data(), tokens.data(), B, T, C, v);
  expect_same_bits(dwte, dwte_ref, "dwte");
  expect_same_bits(dwpe, dwpe_ref, "dwpe");
  // Cross-entropy: row maxima, partial sums with two ranks' maxima, backward in place.
  const HalfValues logits = random(N * Vl, 27, 4.0f);
  Floats row_max(2 * N), row_max_ref(2 * N);
  ops().vocab_xent_row_max(row_max.data() + N, logits.h.data(), N, v);
  vocab_xent_row_max(row_max_ref.data() + N, logits.f.data(), N, v);
  for (int64_t i = 0; i < N; ++i) row_max[i] = row_max_ref[i] = 0.5f;  // the other rank's
  expect_same_bits(row_max, row_max_ref, "row_max");
  Floats stats(2 * N), sums(2 * N), stats_ref(2 * N), sums_ref(2 * N);
  ops().vocab_xent_partials(stats.data(), sums.data(), row_max.data(), 2, logits.h.data(), targets.data(), N, v);
  vocab_xent_partials(stats_ref.data(), sums_ref.data(), row_max_ref.data(), 2, logits.f.data(), targets.data(), N, v);
  expect_same_bits(stats, stats_ref, "stats");
  expect_same_bits(sums, sums_ref, "row_sums");
  for (int64_t i = 0; i < N; ++i) stats[2 * i + 1] = stats_ref[2 * i + 1] = 3.0f;  // a log-sum
  Halves dl = logits.h;
  Floats dl_ref = logits.f;
  ops().vocab_xent_backward(dl.data(), dl.data(), stats.data(), targets.data(), 0.01f, N, v);
  vocab_xent_backward(dl_ref.data(), dl_ref.data(), stats_ref.data(), targets.data(), 0.01f, N, v);
  expect_same_bits(dl, narrow(dl_ref), "vocab_xent_backward");
}

TEST_P(HalfOps, RowParallelEpilogueIsRoundedFp32) {
  const int C = 20;
  const HalfValues residual = random(kRows * C, 28), bias = random(C, 29);
  const Floats partial = testing::random_vector(kRows * C, 30);
  Halves out(kRows * C);
  Floats ref(kRows * C);
  ops().bias_residual(out.data(), residual.h.data(), partial.data(), bias.h.data(), kRows, C);
  bias_residual(ref.data(), residual.f.data(), partial.data(), bias.f.data(), kRows, C);
  expect_same_bits(out, narrow(ref), "bias_residual");
  if (GetParam() == DType::kF16) {  // one chunk; bf16's partial is the bf16 GEMM (its bound: gemm_bf16_test.cc)
    const int OC = 24;
    const HalfValues x = random(kRows * C, 31), w = random(OC * C, 32);
    Floats p(kRows * OC), p_ref(kRows * OC);
    ops().linear_partial(p.data(), x.h.data(), w.h.data(), kRows, C, OC);
    linear_partial(p_ref.data(), x.f.data(), w.f.data(), kRows, C, OC);
    expect_same_bits(p, p_ref, "linear_partial");
  }
}

INSTANTIATE_TEST_SUITE_P(Bf16AndF16, HalfOps, ::testing::Values(DType::kBF16, DType::kF16),
                         [](const ::testing::TestParamInfo<DType>& p) { return std::string(dtype_name(p.param)); });

// The bf16 table's linear is the bf16 GEMM layer (linear_bf16.h) over the table's storage.
TEST(HalfOpsTable, Bf16LinearIsTheBf16GemmLayer) {
  const int64_t N = 37;
  const int C = 24, OC = 40;
  const HalfValues x = random_half(DType::kBF16, N * C, 21), w = random_half(DType::kBF16, int64_t{OC} * C, 22);
  const HalfValues b = random_half(DType::kBF16, OC, 23);
  Halves out(N * OC);
  std::vector<bf16_t> want(N * OC);
  cpu_half_ops(DType::kBF16).linear_forward(out.data(), x.h.data(), w.h.data(), b.h.data(), nullptr, N, C, OC);
  linear_forward_bf16(want.data(), as_format<DType::kBF16>(x.h.data()), as_format<DType::kBF16>(w.h.data()),
                      as_format<DType::kBF16>(b.h.data()), nullptr, N, C, OC);
  ASSERT_EQ(std::memcmp(out.data(), want.data(), out.size() * 2), 0);
}

TEST(HalfOpsTable, F32HasNoHalfTable) { EXPECT_DEATH(cpu_half_ops(DType::kF32), "no 16-bit table"); }

TEST(HalfOpsTable, ChunksStayWithinTheScratchBudget) {
  EXPECT_EQ(half_chunk_rows(768), 64);
  EXPECT_EQ(half_chunk_rows(50304), 64);  // the LM head's logits: 12.9 MB
  EXPECT_EQ(half_chunk_rows(50304 + 2 * 768, kHalfGemmChunkRows), 80);
  EXPECT_EQ(half_chunk_rows(kHalfScratchFloats / 2), 2);
  EXPECT_EQ(half_chunk_rows(kHalfScratchFloats * 3), 1);
}

// The widened weight's buffer is kept: the same memory for every call that fits it.
TEST(HalfOpsTable, WeightScratchIsKeptBetweenCalls) {
  float* first = half_weight_scratch(1000);
  EXPECT_EQ(half_weight_scratch(10), first);
  EXPECT_EQ(half_weight_scratch(1000), first);
  float* grown = half_weight_scratch(size_t{1} << 22);
  EXPECT_EQ(half_weight_scratch(1000), grown);
}

// The f16 linear against the fp32 linear on the widened values, run on the same chunks.
class HalfOpsF16Linear : public ::testing::Test {
 protected:
  static constexpr int64_t N = kHalfGemmChunkRows + 6;
  static constexpr int C = 24, OC = 20;
  const ActivationOps<half_t>& ops = cpu_half_ops(DType::kF16);

  static HalfValues random(size_t n, uint64_t seed) { return random_half(DType::kF16, n, seed); }
  static Halves narrow(const Floats& f) { return zt::narrow(DType::kF16, f); }
  template <typename F>
  static void chunks(int64_t rows, F&& f) {
    for (int64_t r0 = 0; r0 < N; r0 += rows) f(r0, N - r0 < rows ? N - r0 : rows);
  }
  HalfValues x = random(N * C, 21), w = random(int64_t{OC} * C, 22), b = random(OC, 23);
};

TEST_F(HalfOpsF16Linear, ForwardIsTheChunkedFp32Linear) {
  const HalfValues res = random(N * OC, 24);
  Halves out = res.h;  // residual aliased with the output, as the blocks do
  Floats y(N * OC);
  ops.linear_forward(out.data(), x.h.data(), w.h.data(), b.h.data(), out.data(), N, C, OC);
  chunks(half_chunk_rows(C + OC, kHalfGemmChunkRows), [&](int64_t r0, int64_t n) {
    linear_forward(y.data() + r0 * OC, x.f.data() + r0 * C, w.f.data(), b.f.data(), res.f.data() + r0 * OC, n, C, OC);
  });
  expect_same_bits(out, narrow(y), "out");
  Halves plain(N * OC);  // no bias, no residual
  ops.linear_forward(plain.data(), x.h.data(), w.h.data(), nullptr, nullptr, N, C, OC);
  chunks(half_chunk_rows(C + OC, kHalfGemmChunkRows), [&](int64_t r0, int64_t n) {
    linear_forward(y.data() + r0 * OC, x.f.data() + r0 * C, w.f.data(), nullptr, nullptr, n, C, OC);
  });
  expect_same_bits(plain, narrow(y), "out without bias and residual");
}

TEST_F(HalfOpsF16Linear, BackwardIsTheChunkedFp32LinearAndAccumulates) {
  const HalfValues dy = random(N * OC, 25);
  const Floats dw0 = testing::random_vector(int64_t{OC} * C, 26), db0 = testing::random_vector(OC, 27);
  Halves dx(N * C);
  Floats dw = dw0, db = db0, dx_ref(N * C), dw_ref = dw0, db_ref = db0;
  ops.linear_backward(dx.data(), dw.data(), db.data(), dy.h.data(), x.h.data(), w.h.data(), N, C, OC);
  ops.linear_backward(nullptr, dw.data(), db.data(), dy.h.data(), x.h.data(), w.h.data(), N, C, OC);
  for (int pass = 0; pass < 2; ++pass) {
    chunks(half_chunk_rows(OC + 2 * C, kHalfGemmChunkRows), [&](int64_t r0, int64_t n) {
      linear_backward(pass == 0 ? dx_ref.data() + r0 * C : nullptr, dw_ref.data(), db_ref.data(),
                      dy.f.data() + r0 * OC, x.f.data() + r0 * C, w.f.data(), n, C, OC);
    });
  }
  expect_same_bits(dx, narrow(dx_ref), "dinp");
  expect_same_bits(dw, dw_ref, "dweight (two accumulations)");
  expect_same_bits(db, db_ref, "dbias (two accumulations)");
}

}  // namespace
}  // namespace zt

// Parameter initialisation across layouts and chunkings: every tensor-parallel rank's slice
// holds the whole model's values at its global indices (qkv in Q, K, V blocks, rows and
// columns, the padded vocabulary), and initialising into a backend that is not host memory
// (the guarded backend, through host chunks far smaller than the tensors, so every stream is
// resumed many times) gives the same bits as filling host memory at once, over the whole
// arena and over a shard that starts and ends inside tensors; and one ParamInitializer over
// consecutive ranges, then a range behind them, on both backends.
#include "nn/param_init.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/cpu/guarded_backend.h"
#include "nn/gpt_params.h"

namespace zt {
namespace {

GptConfig tiny() {
  GptConfig c;
  c.n_layer = 2;
  c.n_embd = 64;
  c.n_head = 4;
  c.vocab_size = 100;
  c.n_positions = 32;
  return c;
}

ParamTable table_of(const GptConfig& c, int tp_rank, int tp_size) {
  GptLayout layout;
  layout.tp_rank = tp_rank;
  layout.tp_size = tp_size;
  return build_gpt_param_table(c, layout);
}

std::vector<float> on_host(const ParamTable& t, ElementRange r) {
  std::vector<float> v(r.size());
  init_params_range(t, r, v.data(), 11);
  return v;
}

// Through the guarded backend's arena, in host chunks of `chunk` floats.
std::vector<float> through_device(const ParamTable& t, ElementRange r, size_t chunk) {
  const Backend& b = guarded_cpu_backend(DType::kF32);
  EXPECT_FALSE(b.host());
  StatusOr<Arena> a = b.allocate(r.size(), DType::kF32, "the initialised range");
  EXPECT_TRUE(a.ok());
  init_params_into(b, t, r, a->data(), 11, chunk);
  std::vector<float> v(r.size());
  b.copy_to_host(v.data(), a->data(), v.size() * sizeof(float));
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ParamInit, EveryTensorParallelSliceHoldsTheWholeModelsValues) {
  const GptConfig c = tiny();
  const ParamTable whole = table_of(c, 0, 1);
  const std::vector<float> all = on_host(whole, {0, whole.numel()});
  for (int rank = 0; rank < 2; ++rank) {
    const ParamTable t = table_of(c, rank, 2);
    const std::vector<float> mine = on_host(t, {0, t.numel()});
    int sliced = 0;
    for (const TensorSpec& s : t.specs()) {
      const TensorSpec& g = whole.at(whole.find(s.name));
      sliced += s.tp_dim >= 0;
      for (size_t k = 0; k < s.numel; ++k) {
        ASSERT_EQ(mine[s.offset + k], all[g.offset + tp_global_index(s, rank, 2, k)]) << s.name << " " << k;
      }
    }
    EXPECT_GE(sliced, 6) << "qkv, attn_out, mlp_in and mlp_out of two blocks, and the embedding";
  }
}

TEST(ParamInit, ChunkedIntoAnotherBackendsMemoryGivesTheSameBits) {
  const GptConfig c = tiny();
  for (int rank = 0; rank < 2; ++rank) {
    const ParamTable t = table_of(c, rank, 2);
    const ElementRange all{0, t.numel()}, shard{t.numel() / 3 + 7, 2 * t.numel() / 3 + 5};
    for (size_t chunk : {size_t{97}, size_t{1000}, t.numel()}) {
      EXPECT_TRUE(same_bits(through_device(t, all, chunk), on_host(t, all))) << "rank " << rank << " chunk " << chunk;
      EXPECT_TRUE(same_bits(through_device(t, shard, chunk), on_host(t, shard))) << "rank " << rank << " chunk " << chunk;
    }
  }
  const ParamTable whole = table_of(c, 0, 1);
  std::vector<float> reference(whole.numel());
  init_params(whole, reference.data(), 11);
  EXPECT_TRUE(same_bits(through_device(whole, {0, whole.numel()}, 97), reference));
}

// A store streamed chunk by chunk: consecutive ranges resume each tensor's stream; a range
// behind them starts the streams again and still gives the same values.
TEST(ParamInit, OneInitializerOverIncreasingRangesAndBackAgain) {
  const ParamTable t = table_of(tiny(), 1, 2);
  const std::vector<float> reference = on_host(t, {0, t.numel()});
  const Backend& guarded = guarded_cpu_backend(DType::kF32);
  for (const Backend* b : {&cpu_backend(), &guarded}) {
    StatusOr<Arena> a = b->allocate(t.numel(), DType::kF32, "the parameters");
    ASSERT_TRUE(a.ok());
    ParamInitializer init(t, 11);
    const size_t cuts[] = {0, 1500, 1501, 4000, t.numel()};
    for (int i = 0; i + 1 < 5; ++i) init.into(*b, {cuts[i], cuts[i + 1]}, a->data() + cuts[i], 300);
    init.into(*b, {1000, 2000}, a->data() + 1000, 300);
    std::vector<float> got(t.numel());
    b->copy_to_host(got.data(), a->data(), got.size() * sizeof(float));
    EXPECT_TRUE(same_bits(got, reference)) << b->describe();
  }
}

}  // namespace
}  // namespace zt

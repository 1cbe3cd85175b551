// qgZ (qgz_codec.h, quantized_reduce.h): DeepSpeed's group count and int4 rounding (half to
// even, the clamp at +7), the written group bound on random values, the wire of segments cut
// anywhere (1-D tensors exact, groups aligned on the tensor), and the reduce-scatter on 4
// thread-ranks in one and two levels: each rank's segment has the bits of the written
// arithmetic (quantize each rank's values, add the dequantized copies in rank order; two
// levels: the node's sums requantized and added in node order), within the error bound of
// the exact sum, and the two levels move fewer bytes over dp.
#include "parallel/zero/quantized_reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "comm/thread_world.h"
#include "parallel/zero/partition.h"

namespace zt {
namespace {

TensorSpec spec(std::vector<int64_t> shape) {
  TensorSpec s;
  s.shape = shape;
  s.numel = 1;
  for (int64_t d : shape) s.numel *= static_cast<size_t>(d);
  return s;
}

TEST(Qgz, DeepSpeedGroupCount) {
  EXPECT_EQ(qgz_group_size(spec({2304, 768}), 8), 768u);  // max(rows, cols, world) = 2304 groups
  EXPECT_EQ(qgz_group_size(spec({768, 3072}), 8), 768u);
  EXPECT_EQ(qgz_group_size(spec({3, 5}), 8), 2u);          // 8 groups of ceil(15 / 8)
  EXPECT_EQ(qgz_group_size(spec({768}), 8), 0u);           // 1-D: exact
  EXPECT_EQ(qgz_groups_in(5, 6, 4), 2u);                   // elements 5..10 touch groups 1, 2
  EXPECT_EQ(qgz_groups_in(4, 4, 4), 1u);
}

TEST(Qgz, RoundsHalfToEvenAndClampsTheTop) {
  const std::vector<float> x = {8.0f, -8.0f, 2.5f, 3.5f, -0.5f, 7.4f};  // absmax 8: scale 1
  std::vector<uint8_t> q(3);
  float inv = 0.0f;
  qgz_quantize(x.data(), x.size(), 0, 6, q.data(), &inv);
  EXPECT_EQ(inv, 1.0f);
  std::vector<float> back(x.size());
  qgz_dequantize(q.data(), &inv, x.size(), 0, 6, back.data(), false);
  EXPECT_EQ(back, (std::vector<float>{7.0f, -8.0f, 2.0f, 4.0f, 0.0f, 7.0f}));  // the clamp: absmax / 8 off
  EXPECT_EQ(q[0], 0x87);  // 7 in the low nibble, -8 in the high one
  const std::vector<float> zeros(4, 0.0f);
  qgz_quantize(zeros.data(), 4, 0, 4, q.data(), &inv);
  EXPECT_EQ(inv, 1.0f);
}

TEST(Qgz, ErrorWithinTheGroupBound) {
  std::mt19937 gen(7);
  std::normal_distribution<float> d(0.0f, 0.01f);
  const size_t n = 1000, G = 64, first = 37;  // groups clipped at both ends
  std::vector<float> x(n), back(n);
  for (float& v : x) v = d(gen);
  std::vector<uint8_t> q((n + 1) / 2);
  std::vector<float> inv(qgz_groups_in(first, n, G));
  qgz_quantize(x.data(), n, first, G, q.data(), inv.data());
  qgz_dequantize(q.data(), inv.data(), n, first, G, back.data(), false);
  for (size_t lo = 0; lo < n;) {
    const size_t hi = std::min(n, ((first + lo) / G + 1) * G - first);
    float absmax = 0.0f;
    for (size_t i = lo; i < hi; ++i) absmax = std::max(absmax, std::fabs(x[i]));
    for (size_t i = lo; i < hi; ++i) {
      const bool top = x[i] * 8.0f / absmax > 7.5f;
      EXPECT_LE(std::fabs(x[i] - back[i]), absmax * ((top ? 0.125f : 0.0625f) + 4 * 0x1p-24f)) << i;
    }
    lo = hi;
  }
}

// A table of a 2-D weight (6 x 10), a 1-D bias (10) and a 2-D weight (4 x 7).
ParamTable small_table() {
  ParamTable t;
  for (auto shape : {std::vector<int64_t>{6, 10}, std::vector<int64_t>{10}, std::vector<int64_t>{4, 7}}) {
    TensorSpec s = spec(shape);
    s.name = "t" + std::to_string(t.specs().size());
    s.layer = 0;
    t.add(s);
  }
  return t;
}

TEST(Qgz, CodecCarriesAnyCutExactOrByTensorGroups) {
  const ParamTable t = small_table();  // 60 + 10 + 28 = 98 elements; groups of 6 and 4 (world 4)
  const ElementRange range{5, 95};
  const QgzCodec codec(t, range, 4);
  std::vector<float> bucket(range.size());
  for (size_t i = 0; i < bucket.size(); ++i) bucket[i] = std::sin(static_cast<float>(i)) * static_cast<float>(i % 7);
  for (ElementRange seg : {ElementRange{5, 95}, ElementRange{13, 64}, ElementRange{64, 71}, ElementRange{70, 70}}) {
    std::vector<uint8_t> wire(codec.wire_bytes(seg));
    codec.encode(bucket.data(), seg, wire.data());
    std::vector<float> back(bucket.size(), 1.0f);
    codec.decode(wire.data(), seg, back.data(), false);
    for (size_t e = seg.begin; e < seg.end; ++e) {
      const float x = bucket[e - range.begin], y = back[e - range.begin];
      if (e >= 60 && e < 70) {
        EXPECT_EQ(x, y) << "the bias travels exact, element " << e;
      } else {
        EXPECT_LE(std::fabs(x - y), 6.0f / 8) << e;  // |x| < 6: within absmax / 8
      }
    }
    if (seg.begin > range.begin) EXPECT_EQ(back[0], 1.0f);  // outside the segment: untouched
  }
  // 13..64: 47 weight elements touching groups 2..9 of 6 (the first clipped), 4 bias floats.
  EXPECT_EQ(codec.wire_bytes(ElementRange{13, 64}), 8 * 4 + 24 + 4 * 4u);
}

// The exchange on 4 thread-ranks of gradients g_r (rank r's): every rank's segment against
// the written arithmetic, run here from the codec alone.
struct Exchange {
  std::vector<std::vector<float>> out;  // each rank's bucket after the reduction
  int64_t dp_bytes = 0;                 // rank 0's bytes over dp
};

Exchange exchange(const ParamTable& t, ElementRange range, const std::vector<std::vector<float>>& g, int hpz) {
  const int N = 4;
  ThreadWorld world(N, CommOptions{});
  const Partition part(t.numel(), N);
  Exchange ex;
  ex.out = g;
  const Status s = run_ranks(N, [&](int rank) -> Status {
    auto dp = world.group(rank);
    const int first = rank / hpz * hpz;
    std::unique_ptr<ProcessGroup> node = hpz > 1 ? world.subgroup({first, first + 1}, rank) : nullptr;
    QgzReduceScatter q(t, range, part.counts(range), dp.get(), node.get());
    ZT_RETURN_IF_ERROR(q.start(ex.out[static_cast<size_t>(rank)].data())->wait());
    if (rank == 0) ex.dp_bytes = dp->stats().total_logical_bytes();
    return Status::OK();
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  return ex;
}

// deq(q(x)) over seg, added into acc (or assigned).
void through_wire(const QgzCodec& c, ElementRange seg, const std::vector<float>& x, std::vector<float>* acc, bool add) {
  std::vector<uint8_t> w(c.wire_bytes(seg));
  c.encode(x.data(), seg, w.data());
  c.decode(w.data(), seg, acc->data(), add);
}

TEST(QgzReduceScatter, WrittenArithmeticBitForBitInOneAndTwoLevels) {
  ParamTable t = small_table();
  const ElementRange range{0, t.numel()};
  const Partition part(t.numel(), 4);
  const QgzCodec codec(t, range, 4);
  std::mt19937 gen(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<std::vector<float>> g(4, std::vector<float>(range.size()));
  double bound = 0.0;  // sum over ranks of absmax / 8, the largest |g| standing in for each group's absmax
  for (auto& v : g) {
    float absmax = 0.0f;
    for (float& x : v) absmax = std::max(absmax, std::fabs(x = d(gen)));
    bound += absmax / 8.0 * (1 + 1e-5);
  }
  const Exchange one = exchange(t, range, g, 1), two = exchange(t, range, g, 2);
  for (int r = 0; r < 4; ++r) {
    const ElementRange seg = part.shard(r);
    std::vector<float> want1(range.size()), node0(range.size()), node1(range.size()), want2(range.size());
    for (int s = 0; s < 4; ++s) through_wire(codec, seg, g[static_cast<size_t>(s)], &want1, s > 0);
    for (int s = 0; s < 2; ++s) through_wire(codec, seg, g[static_cast<size_t>(s)], &node0, s > 0);
    for (int s = 2; s < 4; ++s) through_wire(codec, seg, g[static_cast<size_t>(s)], &node1, s > 2);
    through_wire(codec, seg, node0, &want2, false);
    through_wire(codec, seg, node1, &want2, true);
    for (size_t e = seg.begin; e < seg.end; ++e) {
      EXPECT_EQ(one.out[static_cast<size_t>(r)][e], want1[e]) << "one level, rank " << r << " element " << e;
      EXPECT_EQ(two.out[static_cast<size_t>(r)][e], want2[e]) << "two levels, rank " << r << " element " << e;
      double exact = 0.0;
      for (int s = 0; s < 4; ++s) exact += g[static_cast<size_t>(s)][e];
      EXPECT_LE(std::fabs(one.out[static_cast<size_t>(r)][e] - exact), bound) << e;
    }
  }
  EXPECT_LT(two.dp_bytes, one.dp_bytes);  // the node's ranks' sums cross once
  std::printf("  dp bytes of rank 0: one level %lld, two levels %lld\n", static_cast<long long>(one.dp_bytes),
              static_cast<long long>(two.dp_bytes));
}

}  // namespace
}  // namespace zt

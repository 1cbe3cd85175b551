// 16-bit collectives (CommDType kBF16 / kF16) on the thread backend at 1-4 ranks: all_reduce
// and reduce_scatter_16 give exactly comm/half_sum.h's rule applied in the backend's order
// (rank 0, 1, ..., n-1), with uneven and empty segments; the wire bytes are half the fp32
// ones. Inputs make every addition round (values with 8-11 significant bits at scales 2^0
// to 2^6), so a backend that summed in fp32 and rounded once would differ.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "comm/half_sum.h"
#include "comm/thread_world.h"

namespace zt {
namespace {

uint16_t value(CommDType d, int rank, size_t i) {
  const float x = std::ldexp(1.0f + static_cast<float>((i * 37 + rank * 11) % 255) / 256.0f,
                             static_cast<int>((i + rank) % 7)) * ((i + rank) % 3 == 0 ? -1.0f : 1.0f);
  return float_to_half(d, x);
}

// Rank-order sum of element i by the half rule.
uint16_t expected(CommDType d, int n, size_t i) {
  uint16_t acc = value(d, 0, i);
  for (int r = 1; r < n; ++r) {
    const uint16_t v = value(d, r, i);
    half_sum_into(d, &acc, &v, 1);
  }
  return acc;
}

void on_ranks(int n, const std::function<Status(ProcessGroup&)>& body) {
  CommOptions o;
  o.timeout_s = 30.0;
  ThreadWorld world(n, o);
  const Status s = run_ranks(n, [&](int rank) -> Status { return body(*world.group(rank)); });
  EXPECT_TRUE(s.ok()) << "n=" << n << ": " << s.to_string();
}

TEST(CommHalf, AllReduceSumsByTheHalfRuleInRankOrder) {
  for (CommDType d : {CommDType::kBF16, CommDType::kF16}) {
    for (int n : {1, 2, 3, 4}) {
      on_ranks(n, [&](ProcessGroup& g) -> Status {
        std::vector<uint16_t> x(1001);
        for (size_t i = 0; i < x.size(); ++i) x[i] = value(d, g.rank(), i);
        g.reset_stats();
        ZT_RETURN_IF_ERROR(g.all_reduce(x.data(), x.size(), d)->wait());
        size_t bad = 0;
        for (size_t i = 0; i < x.size(); ++i) bad += x[i] != expected(d, n, i);
        EXPECT_EQ(bad, 0u) << comm_dtype_name(d) << " n=" << n;
        EXPECT_EQ(g.stats().of(CommOp::kAllReduce).calls, 1);
        return Status::OK();
      });
    }
  }
}

TEST(CommHalf, ReduceScatterSixteenUnevenAndEmptySegments) {
  for (CommDType d : {CommDType::kBF16, CommDType::kF16}) {
    for (int n : {1, 2, 3, 4}) {
      on_ranks(n, [&](ProcessGroup& g) -> Status {
        std::vector<size_t> counts(static_cast<size_t>(n));
        for (int q = 0; q < n; ++q) counts[q] = q % 3 == 1 ? 0 : static_cast<size_t>(7 * q + 5);
        const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
        std::vector<uint16_t> x(total);
        for (size_t i = 0; i < total; ++i) x[i] = value(d, g.rank(), i);
        ZT_RETURN_IF_ERROR(g.reduce_scatter_16(x.data(), counts, d)->wait());
        const size_t off = std::accumulate(counts.begin(), counts.begin() + g.rank(), size_t{0});
        size_t bad = 0;
        for (size_t i = off; i < off + counts[g.rank()]; ++i) bad += x[i] != expected(d, n, i);
        EXPECT_EQ(bad, 0u) << comm_dtype_name(d) << " n=" << n << " rank " << g.rank();
        return Status::OK();
      });
    }
  }
}

// The rule rounds at every addition: three values whose fp32 sum rounds once to another
// bf16 than the stepwise sum.
TEST(CommHalf, TheRuleRoundsEveryAddition) {
  const CommDType d = CommDType::kBF16;
  const uint16_t a = float_to_half(d, 1.0f), b = float_to_half(d, 0.00390625f);  // 2^-8: half an ulp of 1
  uint16_t acc = a;
  half_sum_into(d, &acc, &b, 1);  // 1 + 2^-8 ties to even: 1
  half_sum_into(d, &acc, &b, 1);  // again 1
  EXPECT_EQ(half_to_float(d, acc), 1.0f);
  EXPECT_EQ(float_to_half(d, 1.0f + 2 * 0.00390625f), float_to_half(d, 1.0078125f));  // once: 1 + 2^-7
}

}  // namespace
}  // namespace zt

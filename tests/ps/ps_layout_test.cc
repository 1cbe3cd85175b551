// PsLayout: roles, shards balanced by bytes, push buckets in backward order that cover the
// arena, and each bucket's slices partitioning it among the servers.
#include <gtest/gtest.h>

#include "nn/gpt_params.h"
#include "parallel/param_server/ps_layout.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

GptConfig small() { return testing::shaped_config(3, 4, 32, 97, 16); }

TEST(PsLayout, RolesAndBalancedShards) {
  const ParamTable table = build_gpt_param_table(small());
  for (int S : {1, 2, 3, 5}) {
    const PsLayout l(table, 3, S, 4, 5000);
    EXPECT_EQ(l.world(), S + 4);
    EXPECT_TRUE(l.is_server(S - 1));
    EXPECT_FALSE(l.is_server(S));
    EXPECT_EQ(l.worker_index(S + 2), 2);
    EXPECT_EQ(l.worker_rank(3), S + 3);
    size_t covered = 0, largest = 0, smallest = table.numel();
    for (int s = 0; s < S; ++s) {
      const ElementRange r = l.shard(s);
      EXPECT_EQ(r.begin, covered) << "shards are contiguous";
      covered = r.end;
      largest = std::max(largest, r.size());
      smallest = std::min(smallest, r.size());
    }
    EXPECT_EQ(covered, table.numel());
    EXPECT_LE(largest - smallest, static_cast<size_t>(S)) << "balanced by bytes";
  }
}

TEST(PsLayout, BucketsFollowBackwardAndSlicesPartitionThem) {
  const ParamTable table = build_gpt_param_table(small());
  for (size_t bucket : {size_t{1}, size_t{5000}, size_t{20000}, size_t{1} << 30}) {
    const PsLayout l(table, 3, 3, 2, bucket);
    const auto& buckets = l.buckets();
    ASSERT_FALSE(buckets.empty());
    EXPECT_EQ(buckets.front().layers.front(), 3);   // ln_f completes first
    EXPECT_EQ(buckets.back().layers.back(), kEmbeddingLayer);  // the tied embeddings last
    size_t end = table.numel();
    for (size_t b = 0; b < buckets.size(); ++b) {
      EXPECT_EQ(buckets[b].range.end, end) << "bucket " << b << " adjoins the previous one";
      end = buckets[b].range.begin;
      size_t sliced = 0;
      for (int s = 0; s < 3; ++s) {
        const ElementRange r = l.slice(static_cast<int>(b), s);
        if (r.size() == 0) continue;
        EXPECT_GE(r.begin, l.shard(s).begin);
        EXPECT_LE(r.end, l.shard(s).end);
        sliced += r.size();
      }
      EXPECT_EQ(sliced, buckets[b].range.size());
      for (int layer : buckets[b].layers) EXPECT_EQ(l.bucket_of_layer(layer), static_cast<int>(b));
    }
    EXPECT_EQ(end, 0u);
    if (bucket == 1) {
      EXPECT_EQ(buckets.size(), 5u);  // one per layer
    }
    if (bucket == (size_t{1} << 30)) {
      EXPECT_EQ(buckets.size(), 1u);
    }
    for (int s = 0; s < 3; ++s) {  // reply slices: the shard cut at bucket boundaries, forward order
      size_t at = l.shard(s).begin;
      for (const ElementRange& r : l.reply_slices(s)) {
        EXPECT_EQ(r.begin, at);
        at = r.end;
      }
      EXPECT_EQ(at, l.shard(s).end);
    }
  }
}

TEST(PsLayout, ServersOfARange) {
  const ParamTable table = build_gpt_param_table(small());
  const PsLayout l(table, 3, 3, 1, 1000);
  int first = -1, last = -1;
  l.servers_of({0, table.numel()}, &first, &last);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(last, 2);
  const ElementRange s1 = l.shard(1);
  l.servers_of({s1.begin, s1.begin + 1}, &first, &last);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(last, 1);
  l.servers_of({s1.begin - 1, s1.end}, &first, &last);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(last, 1);
}

}  // namespace
}  // namespace zt

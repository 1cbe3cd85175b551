// The ProcessGroup contract on the thread backend at 1, 2, 3, 4 and 8 ranks, with
// hand-worked expected values (rank r contributes r+1 times a per-index pattern, so the
// sums are n(n+1)/2 times that pattern): every collective, uneven and zero segments,
// several operations in flight, send/recv in both orders, broadcast from a non-zero
// root, all-to-all with uneven segments, subgroups, determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "comm/thread_world.h"
#include "core/rng.h"

namespace zt {
namespace {

const int kSizes[] = {1, 2, 3, 4, 8};

CommOptions options(CommAlgorithm algorithm = CommAlgorithm::kMpi) {
  CommOptions o;
  o.timeout_s = 30.0;
  o.algorithm = algorithm;
  return o;
}

// Uneven segment counts with zeros: 0, 5, 1, 0, 9, 2, ...
std::vector<size_t> uneven_counts(int n) {
  std::vector<size_t> counts(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) counts[r] = (r % 3 == 0) ? 0 : static_cast<size_t>(4 * r + 1 + r % 2);
  if (n == 1) counts[0] = 6;
  return counts;
}

// Runs body(group) on every rank of an n-rank world and fails the test on any error.
void on_ranks(int n, const CommOptions& opts, const std::function<Status(ProcessGroup&)>& body) {
  ThreadWorld world(n, opts);
  const Status s = run_ranks(n, [&](int rank) -> Status {
    auto group = world.group(rank);
    EXPECT_EQ(group->rank(), rank);
    EXPECT_EQ(group->size(), n);
    EXPECT_STREQ(group->backend_name(), "thread");
    return body(*group);
  });
  EXPECT_TRUE(s.ok()) << "n=" << n << ": " << s.to_string();
}

TEST(CommThread, AllReduceEveryDtype) {
  for (CommAlgorithm algo : {CommAlgorithm::kMpi, CommAlgorithm::kRing}) {
    for (int n : kSizes) {
      on_ranks(n, options(algo), [n](ProcessGroup& g) -> Status {
        const int r = g.rank();
        const size_t count = 1001;
        std::vector<float> f(count);
        std::vector<double> d(count);
        std::vector<int64_t> i64(count);
        for (size_t i = 0; i < count; ++i) {
          f[i] = static_cast<float>((r + 1) * static_cast<int>(i % 7 + 1));
          d[i] = 0.5 * (r + 1) + static_cast<double>(i);
          i64[i] = (int64_t{r + 1} << 33) + static_cast<int64_t>(i);
        }
        auto wf = g.all_reduce(f.data(), count, CommDType::kF32);
        auto wd = g.all_reduce(d.data(), count, CommDType::kF64);
        auto wi = g.all_reduce(i64.data(), count, CommDType::kI64);
        auto w0 = g.all_reduce(nullptr, 0, CommDType::kF32);
        ZT_RETURN_IF_ERROR(wi->wait());
        ZT_RETURN_IF_ERROR(wd->wait());
        ZT_RETURN_IF_ERROR(wf->wait());
        ZT_RETURN_IF_ERROR(w0->wait());
        const int64_t tri = int64_t{n} * (n + 1) / 2;
        for (size_t i = 0; i < count; ++i) {
          EXPECT_EQ(f[i], static_cast<float>(tri * static_cast<int>(i % 7 + 1))) << "i=" << i;
          EXPECT_EQ(d[i], 0.5 * static_cast<double>(tri) + static_cast<double>(n) * static_cast<double>(i));
          EXPECT_EQ(i64[i], (tri << 33) + int64_t{n} * static_cast<int64_t>(i));
        }
        return Status::OK();
      });
    }
  }
}

TEST(CommThread, ReduceScatterUnevenAndZeroSegments) {
  for (int n : kSizes) {
    on_ranks(n, options(), [n](ProcessGroup& g) -> Status {
      const std::vector<size_t> counts = uneven_counts(n);
      const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
      std::vector<float> data(total);
      for (size_t j = 0; j < total; ++j) data[j] = static_cast<float>((g.rank() + 1) * static_cast<int>(j + 1));
      ZT_RETURN_IF_ERROR(g.reduce_scatter(data.data(), counts)->wait());
      size_t off = 0;
      for (int q = 0; q < g.rank(); ++q) off += counts[q];
      for (size_t j = off; j < off + counts[g.rank()]; ++j) {
        EXPECT_EQ(data[j], static_cast<float>(n * (n + 1) / 2 * static_cast<int>(j + 1))) << "j=" << j;
      }
      return Status::OK();
    });
  }
}

TEST(CommThread, AllGatherUnevenAndZeroSegments) {
  for (int n : kSizes) {
    on_ranks(n, options(), [n](ProcessGroup& g) -> Status {
      const std::vector<size_t> counts = uneven_counts(n);
      const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
      std::vector<float> data(total, -1.0f);
      size_t off = 0;
      for (int q = 0; q < g.rank(); ++q) off += counts[q];
      for (size_t j = 0; j < counts[g.rank()]; ++j) data[off + j] = static_cast<float>(1000 * g.rank() + j);
      ZT_RETURN_IF_ERROR(g.all_gather(data.data(), counts)->wait());
      off = 0;
      for (int q = 0; q < n; ++q) {
        for (size_t j = 0; j < counts[q]; ++j) EXPECT_EQ(data[off + j], static_cast<float>(1000 * q + j));
        off += counts[q];
      }
      return Status::OK();
    });
  }
}

TEST(CommThread, BroadcastFromLastRankAndBarrier) {
  for (int n : kSizes) {
    on_ranks(n, options(), [n](ProcessGroup& g) -> Status {
      const int root = n - 1;
      std::vector<unsigned char> bytes(777);
      for (size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<unsigned char>(g.rank() == root ? (i * 13 + 5) & 0xff : 0);
      }
      auto w = g.broadcast(bytes.data(), bytes.size(), root);
      ZT_RETURN_IF_ERROR(g.barrier()->wait());
      ZT_RETURN_IF_ERROR(w->wait());
      for (size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(bytes[i], static_cast<unsigned char>((i * 13 + 5) & 0xff));
      return Status::OK();
    });
  }
}

TEST(CommThread, SeveralOperationsInFlight) {
  for (int n : kSizes) {
    on_ranks(n, options(), [n](ProcessGroup& g) -> Status {
      const int r = g.rank();
      std::vector<float> a(300, static_cast<float>(r + 1));
      const std::vector<size_t> counts = uneven_counts(n);
      const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
      std::vector<float> rs(total, static_cast<float>(2 * (r + 1)));
      std::vector<float> ag(total, static_cast<float>(r));
      int64_t value = r == 0 ? 42 : 0;
      std::vector<WorkHandle> works = {g.all_reduce(a.data(), a.size(), CommDType::kF32),
                                       g.reduce_scatter(rs.data(), counts), g.all_gather(ag.data(), counts),
                                       g.broadcast(&value, sizeof(value), 0), g.barrier()};
      for (auto it = works.rbegin(); it != works.rend(); ++it) ZT_RETURN_IF_ERROR((*it)->wait());
      for (const WorkHandle& w : works) EXPECT_TRUE(w->completed());
      for (float x : a) EXPECT_EQ(x, static_cast<float>(n * (n + 1) / 2));
      size_t off = 0;
      for (int q = 0; q < n; ++q) {
        for (size_t j = 0; j < counts[q]; ++j) {
          if (q == r) {
            EXPECT_EQ(rs[off + j], static_cast<float>(n * (n + 1)));
          }
          EXPECT_EQ(ag[off + j], static_cast<float>(q));
        }
        off += counts[q];
      }
      EXPECT_EQ(value, 42);
      return Status::OK();
    });
  }
}

TEST(CommThread, SendRecvBothOrdersAndFifo) {
  for (int n : kSizes) {
    on_ranks(n, options(), [n](ProcessGroup& g) -> Status {
      const int r = g.rank(), right = (r + 1) % n, left = (r + n - 1) % n;
      // Order A: send first; order B: receive first. Neither may deadlock.
      std::vector<int> out(64, r), in(64, -1);
      WorkHandle s1 = g.send(out.data(), out.size() * sizeof(int), right, 7);
      WorkHandle r1 = g.recv(in.data(), in.size() * sizeof(int), left, 7);
      ZT_RETURN_IF_ERROR(r1->wait());
      ZT_RETURN_IF_ERROR(s1->wait());
      for (int x : in) EXPECT_EQ(x, left);
      std::vector<int> in2(3, -1);
      std::vector<int> out2 = {r * 10, r * 10 + 1, r * 10 + 2};
      std::vector<WorkHandle> recvs, sends;
      for (int k = 0; k < 3; ++k) recvs.push_back(g.recv(&in2[k], sizeof(int), left, 9));
      for (int k = 0; k < 3; ++k) sends.push_back(g.send(&out2[k], sizeof(int), right, 9));
      for (auto& w : recvs) ZT_RETURN_IF_ERROR(w->wait());
      for (auto& w : sends) ZT_RETURN_IF_ERROR(w->wait());
      for (int k = 0; k < 3; ++k) EXPECT_EQ(in2[k], left * 10 + k) << "messages overtook each other";
      return Status::OK();
    });
  }
}

// Rank a sends rank b (a + 1) * (b + 2) - 2 ints of value 1000 a + b (none where a + b is 4);
// two exchanges in flight at once, the second with every value negated.
TEST(CommThread, AllToAllUnevenSegmentsTwoInFlight) {
  auto ints = [](int a, int b) { return a + b == 4 ? 0 : static_cast<size_t>((a + 1) * (b + 2) - 2); };
  for (int n : kSizes) {
    on_ranks(n, options(), [&](ProcessGroup& g) -> Status {
      const int r = g.rank();
      std::vector<size_t> sb, rb;
      std::vector<int> out[2], in[2];
      for (int q = 0; q < n; ++q) {
        sb.push_back(ints(r, q) * sizeof(int));
        rb.push_back(ints(q, r) * sizeof(int));
        for (int k = 0; k < 2; ++k) out[k].insert(out[k].end(), ints(r, q), (k == 0 ? 1 : -1) * (1000 * r + q));
      }
      WorkHandle w[2];
      for (int k = 0; k < 2; ++k) {
        in[k].assign(std::accumulate(rb.begin(), rb.end(), size_t{0}) / sizeof(int), 0);
        w[k] = g.all_to_all(out[k].data(), sb, in[k].data(), rb);
      }
      for (int k = 0; k < 2; ++k) {
        ZT_RETURN_IF_ERROR(w[k]->wait());
        size_t at = 0;
        for (int q = 0; q < n; ++q) {
          for (size_t i = 0; i < ints(q, r); ++i) EXPECT_EQ(in[k][at + i], (k == 0 ? 1 : -1) * (1000 * q + r)) << n << " ranks";
          at += ints(q, r);
        }
      }
      return Status::OK();
    });
  }
}

TEST(CommThread, SubgroupsOfEvenAndOddRanks) {
  for (int n : kSizes) {
    ThreadWorld world(n, options());
    const Status s = run_ranks(n, [&](int rank) -> Status {
      std::vector<int> members;
      for (int q = rank % 2; q < n; q += 2) members.push_back(q);
      auto sub = world.subgroup(members, rank);
      auto all = world.group(rank);
      EXPECT_EQ(sub->size(), static_cast<int>(members.size()));
      EXPECT_EQ(sub->rank(), rank / 2);
      float x = static_cast<float>(rank), y = 1.0f;
      auto ws = sub->all_reduce(&x, 1, CommDType::kF32);
      auto wa = all->all_reduce(&y, 1, CommDType::kF32);
      ZT_RETURN_IF_ERROR(ws->wait());
      ZT_RETURN_IF_ERROR(wa->wait());
      float expect = 0;
      for (int q : members) expect += static_cast<float>(q);
      EXPECT_EQ(x, expect);
      EXPECT_EQ(y, static_cast<float>(n));
      return Status::OK();
    });
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
}

TEST(CommThread, SumsAreDeterministicAndInRankOrder) {
  const int n = 4;
  const size_t count = 4099;
  std::vector<std::vector<float>> inputs(n, std::vector<float>(count));
  for (int r = 0; r < n; ++r) {
    Rng rng(100 + r);
    for (float& v : inputs[r]) v = static_cast<float>(rng.normal() * std::pow(10.0, r % 3));
  }
  std::vector<float> expect(count);
  for (size_t i = 0; i < count; ++i) {
    float acc = inputs[0][i];
    for (int r = 1; r < n; ++r) acc += inputs[r][i];
    expect[i] = acc;
  }
  for (int round = 0; round < 2; ++round) {
    on_ranks(n, options(CommAlgorithm::kRing), [&](ProcessGroup& g) -> Status {
      std::vector<float> data = inputs[g.rank()];
      ZT_RETURN_IF_ERROR(g.all_reduce(data.data(), count, CommDType::kF32)->wait());
      EXPECT_EQ(std::memcmp(data.data(), expect.data(), count * sizeof(float)), 0) << "rank " << g.rank();
      return Status::OK();
    });
  }
}

}  // namespace
}  // namespace zt

// adopt_native_groups on thread-ranks with a test backend whose "own" groups are staged
// groups over the host ones (any group over the same ranks will do): dp, tp, ZeRO's and
// the tied group are replaced, pipeline and world are not; one rank that cannot use them
// keeps every rank on the host groups, with the reason in the banner line; host memory
// and one process change nothing.
#include "engine/native_groups.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "backend/staged_process_group.h"
#include "comm/thread_world.h"
#include "engine/parallel_setup.h"

namespace zt {
namespace {

// The plain CPU backend, reporting device memory and own groups (usable except on `refuse`).
class OwnGroupsBackend final : public Backend {
 public:
  explicit OwnGroupsBackend(int refuse) : cpu_(plain_cpu_backend(DType::kF32)), refuse_(refuse) {}
  Device device() const override { return Device::kCpu; }
  DType compute_dtype() const override { return DType::kF32; }
  bool host() const override { return false; }
  const KernelOps& ops() const override { return cpu_.ops(); }
  std::string describe() const override { return "own-groups test backend"; }
  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    return cpu_.allocate(count, dtype, what);
  }
  void copy(void* dst, const void* src, size_t bytes) const override { cpu_.copy(dst, src, bytes); }
  void zero(void* dst, size_t bytes) const override { cpu_.zero(dst, bytes); }
  Status native_groups_usable(ProcessGroup&) const override {
    return rank_ == refuse_ ? Status::FailedPrecondition("rank " + std::to_string(refuse_) + " has no such library")
                            : Status::OK();
  }
  StatusOr<std::unique_ptr<ProcessGroup>> native_group(ProcessGroup& host, const CommOptions&) const override {
    ++made_;
    return make_staged_process_group(host, cpu_);
  }
  void set_rank(int r) { rank_ = r; }
  int made() const { return made_; }

 protected:
  void release(void*, size_t) const override {}

 private:
  const Backend& cpu_;
  int refuse_;
  int rank_ = 0;
  mutable int made_ = 0;
};

struct Adopted {
  std::string note;
  bool dp_replaced = false, tp_replaced = false, pp_kept = false, world_kept = false;
  int made = 0;
};

// tp 2 x pp 2 x dp 1 on four thread-ranks.
std::vector<Adopted> adopt(int refuse) {
  ThreadWorld world(4, CommOptions{});
  const RankGrid grid = RankGrid::create(4, 2, 1, 2, 1).value();
  std::vector<Adopted> out(4);
  const Status st = run_ranks(4, [&](int rank) -> Status {
    ParallelGroups g = make_thread_groups(world, grid, rank);
    const ParallelGroups before{g.world, g.dp, g.pp, g.tp, g.tied, g.ep, g.edp, g.sp, g.hpz, {}};
    OwnGroupsBackend b(refuse);
    b.set_rank(rank);
    Adopted& a = out[static_cast<size_t>(rank)];
    ZT_ASSIGN_OR_RETURN(a.note, adopt_native_groups(&g, b, CommOptions{}));
    a.dp_replaced = g.dp != before.dp;
    a.tp_replaced = g.tp != before.tp;
    a.pp_kept = g.pp == before.pp;
    a.world_kept = g.world == before.world;
    a.made = b.made();
    return g.tp->barrier()->wait();  // the adopted groups work
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
  return out;
}

TEST(NativeGroups, DataAndTensorGroupsBecomeTheBackendsOwn) {
  for (const Adopted& a : adopt(-1)) {
    EXPECT_TRUE(a.dp_replaced && a.tp_replaced && a.pp_kept && a.world_kept) << a.note;
    EXPECT_GE(a.made, 2);  // dp and tp, and the tied group at the pipeline's ends
    EXPECT_NE(a.note.find("collectives over"), std::string::npos) << a.note;
    EXPECT_NE(a.note.find("pipeline hand-offs"), std::string::npos) << a.note;
  }
}

TEST(NativeGroups, OneRankThatCannotKeepsEveryRankOnTheHostGroups) {
  const std::vector<Adopted> all = adopt(2);
  for (size_t r = 0; r < all.size(); ++r) {
    EXPECT_FALSE(all[r].dp_replaced || all[r].tp_replaced) << "rank " << r;
    EXPECT_EQ(all[r].made, 0);
    EXPECT_NE(all[r].note.find("collectives over the host groups"), std::string::npos) << all[r].note;
  }
  EXPECT_NE(all[2].note.find("rank 2 has no such library"), std::string::npos) << all[2].note;
}

TEST(NativeGroups, HostMemoryAndOneProcessChangeNothing) {
  ThreadWorld world(2, CommOptions{});
  ParallelGroups g = make_thread_groups(world, RankGrid::create(2, 1, 2, 1, 1).value(), 0);
  ProcessGroup* dp = g.dp;
  EXPECT_EQ(adopt_native_groups(&g, plain_cpu_backend(DType::kF32), CommOptions{}).value(), "");
  EXPECT_EQ(g.dp, dp);
  ParallelGroups none;
  OwnGroupsBackend b(-1);
  EXPECT_EQ(adopt_native_groups(&none, b, CommOptions{}).value(), "");
}

}  // namespace
}  // namespace zt

// Several ranks on one GPU (issue 29): MPI ranks sharing the machine's one GPU, their
// collectives staged through host memory (NCCL 2.28 refuses two ranks on one GPU), at
// ZeRO stages 0-3 and dp 2, against the single GPU running every micro-batch of the
// same global batch. The per-micro-batch arithmetic is the single GPU's (the same
// kernels, shapes and card), so the bounds of tests/dp/dp_exactness_test.cc hold as on
// the CPU: only the order of the fp32 gradient sums changes (testing/dp_runs.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "testing/cuda_test.h"
#include "testing/dp_runs.h"

namespace zt {
namespace {

TEST(CudaDp, TwoRanksOnOneGpuMatchTheSingleGpuAtEveryZeroStage) {
  ZT_REQUIRE_CUDA();
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun on this machine";
  const std::string common = " --device cuda --micro 2 --bucket 3000 --prefetch 6000 --optimizer sgd --momentum 0.9";
  const testing::RunResult ref = testing::run_dp_train("", "--stage 0 --accum 2" + common, "cuda_ref");
  ASSERT_EQ(ref.losses.size(), static_cast<size_t>(testing::kSteps)) << ref.log;
  for (int stage = 0; stage <= 3; ++stage) {
    const std::string s = std::to_string(stage);
    const testing::RunResult got =
        testing::run_dp_train(testing::mpirun_prefix(2), "--stage " + s + " --accum 1" + common, "cuda_s" + s);
    EXPECT_NE(got.log.find("stage through host memory"), std::string::npos) << "the staged path was not taken";
    testing::expect_same(ref, got, "cuda, stage " + s + ", 2 ranks on one GPU", testing::Compare::kLossesAndParams);
  }
}

}  // namespace
}  // namespace zt

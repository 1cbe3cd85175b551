// Acceptance 2 of parameter-server training: on the demo corpus (Debian's fortunes,
// byte-level), asynchronous and bounded-staleness (bound 2) training reach a validation
// loss within 5 % of synchronous training after the same number of samples (150 global
// batches of 12 sequences), and the staleness the servers measured never exceeds the
// bound (0 in synchronous mode). Runs `zerotrain train`, which a parameter_server section
// routes to the parameter server, with 2 servers and 3 workers under mpirun, on a small model.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "io/json_strict.h"
#include "testing/launch.h"

namespace {

constexpr int kSteps = 150, kWorkers = 3;

struct PsRun {
  zt::Json summary;
  std::string log;
};

PsRun train(const std::string& mode_args) {
  const std::string dir = ::testing::TempDir() + "zt_ps_convergence";
  const std::string log = dir + ".log";
  const std::string sets =
      " --set training.output_dir=" + dir +
      " --set model.n_layer=2 --set model.n_head=2 --set model.n_embd=64 --set model.n_positions=64"
      " --set data.seq_len=64 --set train_micro_batch_size_per_gpu=4 --set training.steps=" + std::to_string(kSteps) +
      " --set scheduler.params.total_num_steps=" + std::to_string(kSteps) +
      " --set scheduler.params.warmup_num_steps=15 --set training.sample_tokens=0 --set training.save_at_end=false"
      " --set training.eval_batches=16 --set parameter_server.servers=2 " + mode_args;
  const std::string cmd = zt::testing::mpirun_prefix(2 + kWorkers) + zt::testing::binary_dir() + "/zerotrain train" + sets;
  std::string output;
  const int rc = zt::testing::run_logged(cmd, log, &output);
  PsRun r;
  r.log = cmd + "\n" + output;
  EXPECT_EQ(rc, 0) << r.log;
  const std::string tag = "summary (JSON): ";
  const size_t at = output.find(tag);
  if (at == std::string::npos) return r;
  const size_t end = output.find('\n', at);
  auto j = zt::parse_json_strict(output.substr(at + tag.size(), end - at - tag.size()), "summary");
  if (j.ok()) r.summary = j.value();
  return r;
}

TEST(PsConvergence, AsyncAndBoundedStalenessConvergeLikeSync) {
  const char* corpus = std::getenv("ZT_DEMO_CORPUS");
  struct stat st {};
  if (::stat(corpus != nullptr ? corpus : "/usr/share/games/fortunes", &st) != 0) {
    GTEST_SKIP() << "the demo corpus (Debian's fortunes package) is not installed";
  }
  const PsRun sync = train("--set parameter_server.mode=sync");
  const PsRun async = train("--set parameter_server.mode=async");
  const PsRun bounded = train("--set parameter_server.mode=bounded --set parameter_server.staleness=2");
  for (const PsRun* r : {&sync, &async, &bounded}) {
    ASSERT_TRUE(r->summary.contains("val_loss")) << r->log;
    EXPECT_EQ(r->summary["applied_pushes"].get<int64_t>(), kSteps * kWorkers * 2) << r->log;  // 2 servers
  }
  const double s = sync.summary["val_loss"].get<double>();
  const double a = async.summary["val_loss"].get<double>();
  const double b = bounded.summary["val_loss"].get<double>();
  std::printf("  validation loss after %d x 12 sequences: sync %.4f, async %.4f (%+.1f %%, staleness max %lld), "
              "bounded-2 %.4f (%+.1f %%, staleness max %lld)\n",
              kSteps, s, a, 100.0 * (a - s) / s, static_cast<long long>(async.summary["staleness_max"].get<int64_t>()),
              b, 100.0 * (b - s) / s, static_cast<long long>(bounded.summary["staleness_max"].get<int64_t>()));
  EXPECT_LE(std::fabs(a - s) / s, 0.05) << async.log;
  EXPECT_LE(std::fabs(b - s) / s, 0.05) << bounded.log;
  EXPECT_LT(s, 4.0) << "synchronous training did not learn (ln 257 = 5.55 untrained):\n" << sync.log;
  // The staleness the servers measured, per applied push.
  EXPECT_EQ(sync.summary["staleness_max"].get<int64_t>(), 0) << sync.log;
  EXPECT_EQ(sync.summary["missed_updates_max"].get<int64_t>(), 0) << sync.log;
  EXPECT_LE(bounded.summary["staleness_max"].get<int64_t>(), 2) << bounded.log;
  const zt::Json& hist = bounded.summary["staleness_hist"];
  for (size_t i = 3; i < hist.size(); ++i) EXPECT_EQ(hist[i].get<int64_t>(), 0) << "staleness " << i;
}

}  // namespace

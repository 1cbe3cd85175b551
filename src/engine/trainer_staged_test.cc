// Several ranks on a backend whose memory the process groups cannot reach (a GPU without
// NCCL; MPI ranks sharing one GPU): the guarded backend with its memory domain hidden, so
// that every collective, pipeline hand-off and tensor-parallel reduction stages through
// host buffers (backend/staged_process_group.h). The host group's arithmetic is the same,
// so ZeRO 0-3, tensor and pipeline parallelism give the bits of the same ranks working
// on the backend's memory directly, step for step.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend/cpu/guarded_backend.h"
#include "comm/thread_world.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"
#include "testing/delegating_backend.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

struct Shape {
  int tp = 1, dp = 1, pp = 1;
  ZeroStage stage = ZeroStage::kNone;
  DType dtype = DType::kF32;
};

struct Result {
  std::vector<double> losses, norms;
  std::vector<std::vector<float>> grads;  // every rank's gradient arena after the last step
  std::vector<float> params;              // gathered (pp 1)
  std::vector<std::string> notes;
};

Result train(const Shape& s, bool staged, int steps) {
  const int N = s.tp * s.dp * s.pp;
  testing::DelegatingBackend b(guarded_cpu_backend(s.dtype), plain_cpu_backend(s.dtype));
  if (staged) b.hide_memory_domain();
  ThreadWorld world(N, CommOptions{});
  const RankGrid grid = RankGrid::create(N, s.tp, s.dp, s.pp, 1).value();
  Result r;
  r.grads.resize(static_cast<size_t>(N));
  std::mutex mu;
  const Status st = run_ranks(N, [&](int rank) -> Status {
    ParallelGroups groups = make_thread_groups(world, grid, rank);
    TrainerOptions o;
    o.model = testing::tiny_config(false, 4, 32, 61, 8, 0);
    o.model.padded_vocab_size = 64;
    o.micro_batch = 2;
    o.seq_len = 8;
    o.schedule.base_lr = 1e-2;
    o.backend = &b;
    o.zero.stage = s.stage;
    o.zero.reduce.bucket_elems = 3000;
    o.zero.allgather_bucket_elems = 3000;
    o.zero.fetch.persistence_threshold = 0;
    o.micro_batches = 2;
    ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(o.model, grid, rank, StagePartition::kUniform));
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(o, &groups));
    const int dp_rank = grid.coord(rank).dp;
    for (int step = 0; step < steps; ++step) {
      const testing::SyntheticStep data = testing::synthetic_step(61, 8, 2, 2, dp_rank, s.dp, step, 5);
      ZT_ASSIGN_OR_RETURN(StepStats stats, t->step(data.micro_batches()));
      if (rank == 0) {
        r.losses.push_back(stats.loss);
        r.norms.push_back(stats.grad_norm);
      }
    }
    std::vector<float> g(t->grads().size());
    t->backend().copy_to_host(g.data(), t->grads().data(), g.size() * sizeof(float));
    std::vector<float> p(s.pp == 1 ? t->param_table().numel() : 0);
    if (s.pp == 1) ZT_RETURN_IF_ERROR(t->gather_params(p.data()));
    std::lock_guard<std::mutex> lock(mu);
    r.grads[static_cast<size_t>(rank)] = std::move(g);
    if (rank == 0) r.params = std::move(p), r.notes = t->notes();
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
  return r;
}

bool has_staging_note(const Result& r) {
  for (const std::string& n : r.notes) {
    if (n.find("stage through host memory") != std::string::npos) return true;
  }
  return false;
}

TEST(TrainerStaged, HostStagedCollectivesGiveTheSameBits) {
  const std::vector<Shape> shapes = {
      {1, 2, 1, ZeroStage::kNone},      {1, 2, 1, ZeroStage::kOptimizer},      {1, 2, 1, ZeroStage::kGradients},
      {1, 2, 1, ZeroStage::kParameters}, {1, 2, 1, ZeroStage::kGradients, DType::kBF16}, {2, 1, 2, ZeroStage::kNone},
  };
  for (const Shape& s : shapes) {
    const std::string what = "tp " + std::to_string(s.tp) + " dp " + std::to_string(s.dp) + " pp " + std::to_string(s.pp) +
                             " stage " + std::to_string(static_cast<int>(s.stage)) + " " + dtype_name(s.dtype);
    std::printf("  %s\n", what.c_str());
    std::fflush(stdout);
    const Result direct = train(s, false, 3), staged = train(s, true, 3);
    ASSERT_EQ(direct.losses.size(), 3u) << what;
    EXPECT_EQ(staged.losses, direct.losses) << what;
    EXPECT_EQ(staged.norms, direct.norms) << what;
    EXPECT_EQ(staged.params, direct.params) << what;
    for (size_t r = 0; r < direct.grads.size(); ++r) EXPECT_EQ(staged.grads[r], direct.grads[r]) << what << " rank " << r;
    EXPECT_TRUE(has_staging_note(staged)) << what;
    EXPECT_FALSE(has_staging_note(direct)) << what;
  }
}

}  // namespace
}  // namespace zt

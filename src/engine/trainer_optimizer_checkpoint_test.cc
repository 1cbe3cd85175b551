// Every optimizer's checkpoint, in fp32 and fp16, at ZeRO stage 0 and every stage the
// optimizer runs with, on 2 data-parallel thread-ranks:
// - the save succeeds and its manifest parses (0/1 Adam's sync_params and 1-bit LAMB's
//   exp_avg_sq_fresh were once refused by the manifest's list of kinds, which lost every
//   checkpoint of those two optimizers);
// - a fresh trainer that loads it holds every state array bit for bit as saved, and the
//   1-bit optimizers' rank state too (error feedback, schedules: checkpoint/rank_state.h);
// - a run killed after step k and resumed from its checkpoint gives the same losses and
//   the same final parameters, bit for bit, as the run that never stopped.
// The steps cross each 1-bit optimizer's warm-up into its compressed phase (freeze_step
// 2 of 5).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint/rank_state.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_load.h"
#include "comm/thread_world.h"
#include "engine/trainer.h"
#include "engine/trainer_checkpoint.h"
#include "testing/synthetic_data.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

constexpr int kRanks = 2, kSteps = 5, kKill = 3;

struct Case {
  std::string name;
  OptimizerKind kind;
  bool no_decay = false;  // DeepSpeed's "Adam": AdamW with FusedAdam's weight decay 0
};

std::vector<Case> optimizers() {
  return {{"AdamW", OptimizerKind::kAdamW},         {"Adam", OptimizerKind::kAdamW, true},
          {"SGD", OptimizerKind::kSgd},             {"Lamb", OptimizerKind::kLamb},
          {"OneBitAdam", OptimizerKind::kOneBitAdam}, {"ZeroOneAdam", OptimizerKind::kZeroOneAdam},
          {"OneBitLamb", OptimizerKind::kOneBitLamb}};
}

// The ZeRO stages each optimizer runs with (the others are refused, optimizer_factory.cc).
std::vector<ZeroStage> stages_of(OptimizerKind k) {
  if (k == OptimizerKind::kAdamW || k == OptimizerKind::kSgd) {
    return {ZeroStage::kNone, ZeroStage::kOptimizer, ZeroStage::kGradients, ZeroStage::kParameters};
  }
  return {ZeroStage::kNone};
}

TrainerOptions options(const Case& c, DType dtype, ZeroStage stage) {
  TrainerOptions o;
  o.model = testing::tiny_gpt_config();
  o.model.vocab_size = 61;
  o.micro_batch = 2;
  o.seq_len = 8;
  o.micro_batches = 2;
  o.optimizer = c.kind;
  if (c.no_decay) o.adamw.weight_decay = 0.0;
  o.sgd.momentum = 0.9;
  o.onebit.freeze_step = 2;  // 1-bit Adam / LAMB compress from step 3
  o.onebit.var_freeze_step = 4;  // 0/1 Adam: compressed gradients, then local steps from step 5
  o.onebit.var_update_scaler = 1;
  o.onebit.local_step_scaler = 1;
  o.onebit.local_step_clipper = 2;
  o.schedule.base_lr = 1e-3;
  o.zero.stage = stage;
  o.zero.reduce.bucket_elems = 3000;
  o.zero.allgather_bucket_elems = 3000;
  o.zero.fetch.persistence_threshold = 0;
  o.backend = backend_for(Device::kCpu, dtype).value();
  o.loss_scaler.initial_scale_power = 12;
  return o;
}

struct RunResult {
  std::vector<double> losses;        // rank 0, steps [from, to)
  std::vector<float> params;         // gathered after the last step
  std::vector<std::vector<float>> loaded;  // rank 0's state arrays right after the load
  std::vector<std::vector<float>> saved;   // ... and right before the save
  Status status;
};

// The rank's state arrays ("param" first, then the optimizer's, then its rank state as
// raw 4-byte words), into *out if not null.
Status copy_arrays(Trainer& t, std::vector<std::vector<float>>* out) {
  ZT_ASSIGN_OR_RETURN(const RankStateView view, t.checkpoint_view());
  for (const StateArray& a : view.arrays) {
    if (out != nullptr) out->emplace_back(a.data, a.data + a.held.size());
  }
  for (const RankArray& a : view.rank_arrays) {
    const float* words = static_cast<const float*>(a.data);
    if (out != nullptr) out->emplace_back(words, words + a.numel * (a.f64 ? 2 : 1));
  }
  return t.close_checkpoint_view(false);
}

// Steps [from, to) on kRanks thread-ranks, loading `resume` first and saving to `save`
// after the last step (either may be empty).
RunResult run(const TrainerOptions& o, int from, int to, const std::string& resume, const std::string& save,
              int ranks = kRanks) {
  ThreadWorld world(ranks, CommOptions{});
  RunResult out;
  out.status = run_ranks(ranks, [&](int rank) -> Status {
    auto group = world.group(rank);
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(o, group.get()));
    if (!resume.empty()) {
      ZT_ASSIGN_OR_RETURN(const CheckpointRef ckpt, open_checkpoint(resume));
      ZT_RETURN_IF_ERROR(load_trainer(*t, ckpt, false).status());
      ZT_RETURN_IF_ERROR(copy_arrays(*t, rank == 0 ? &out.loaded : nullptr));
    }
    for (int step = from; step < to; ++step) {
      const testing::SyntheticStep data = testing::synthetic_step(61, 8, 2, 2, rank, ranks, step, 7);
      ZT_ASSIGN_OR_RETURN(const StepStats st, t->step(data.micro_batches()));
      if (rank == 0) out.losses.push_back(st.loss);
    }
    std::vector<float> p(t->param_table().numel());
    ZT_RETURN_IF_ERROR(t->gather_params(p.data()));
    if (rank == 0) out.params = p;
    if (!save.empty()) ZT_RETURN_IF_ERROR(copy_arrays(*t, rank == 0 ? &out.saved : nullptr));
    return save.empty() ? Status::OK() : save_trainer(*t, {save, "", 0, Json::object(), nullptr});
  });
  return out;
}

// Bit for bit (the fp64 rank state seen as 4-byte words may hold NaN patterns).
bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) return false;
  }
  return true;
}

class OptimizerCheckpoint : public testing::TempDirTest {};

bool onebit(OptimizerKind k) {
  return k == OptimizerKind::kOneBitAdam || k == OptimizerKind::kZeroOneAdam || k == OptimizerKind::kOneBitLamb;
}

TEST_F(OptimizerCheckpoint, EveryOptimizerSavesLoadsAndResumesBitForBit) {
  int cases = 0;
  const bool host = cpu_backend().host();  // false on the guarded test backend
  for (const Case& c : optimizers()) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      for (ZeroStage stage : stages_of(c.kind)) {
        const TrainerOptions o = options(c, dtype, stage);
        const std::string what = c.name + " " + dtype_name(dtype) + " ZeRO " + std::to_string(static_cast<int>(stage));
        const std::string dir = dir_ + "/" + std::to_string(cases++);
        const RunResult whole = run(o, 0, kSteps, "", "");
        if (onebit(c.kind) && !host) {  // host-code compression: refused on memory host code may not touch
          EXPECT_NE(whole.status.message().find("the 1-bit optimizers compress in host code"), std::string::npos)
              << what << ": " << whole.status.to_string();
          continue;
        }
        ASSERT_TRUE(whole.status.ok()) << what << ": " << whole.status.to_string();
        const RunResult first = run(o, 0, kKill, "", dir);
        ASSERT_TRUE(first.status.ok()) << what << ": " << first.status.to_string();
        const RunResult second = run(o, kKill, kSteps, dir, "");
        ASSERT_TRUE(second.status.ok()) << what << ": " << second.status.to_string();
        EXPECT_TRUE(same_bits(second.loaded, first.saved)) << what << ": the load differs from what was saved";
        std::vector<double> resumed = first.losses;
        resumed.insert(resumed.end(), second.losses.begin(), second.losses.end());
        EXPECT_EQ(resumed, whole.losses) << what;
        EXPECT_TRUE(second.params == whole.params) << what << ": resumed parameters differ";
      }
    }
  }
  EXPECT_EQ(cases, 2 * (4 + 4 + 4 + 1 + 1 + 1 + 1));
}

// The error feedback belongs to its rank: another layout starts it afresh (the CLI says
// so), and damaged bytes of it are named, not loaded.
TEST_F(OptimizerCheckpoint, OneBitRankStateRestartsInAnotherLayoutAndIsVerified) {
  if (!cpu_backend().host()) GTEST_SKIP() << "the 1-bit optimizers need host memory (their refusal is tested above)";
  const TrainerOptions o = options({"ZeroOneAdam", OptimizerKind::kZeroOneAdam}, DType::kF32, ZeroStage::kNone);
  ASSERT_TRUE(run(o, 0, kKill, "", dir_).status.ok());
  auto ckpt = open_checkpoint(dir_);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().to_string();
  EXPECT_EQ(ckpt->manifest.rank_states.size(), 2u * 3u);  // worker and server error, schedule, per rank
  EXPECT_TRUE(rank_state_fits(ckpt->manifest, {2, 2, 1, 1, 0}));
  EXPECT_FALSE(rank_state_fits(ckpt->manifest, {1, 1, 1, 1, 0}));
  const RunResult alone = run(o, kKill, kSteps, dir_, "", 1);
  EXPECT_TRUE(alone.status.ok()) << alone.status.to_string();

  const ManifestRankState& server = ckpt->manifest.rank_states[1];
  ASSERT_EQ(server.name, "server_error");
  const std::string shard = ckpt->dir + "/" + server.file;
  auto file = SafetensorsFile::read(shard);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  std::string bytes;
  {
    std::ifstream in(shard, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), sizeof(header));
  bytes[8 + header + file->entries().at(server.entry()).begin] ^= 1;
  std::ofstream(shard, std::ios::binary | std::ios::trunc) << bytes;
  const RunResult damaged = run(o, kKill, kSteps, dir_, "");
  ASSERT_FALSE(damaged.status.ok());
  EXPECT_NE(damaged.status.message().find(server.file + ": rank_state/server_error: checksum mismatch"), std::string::npos)
      << damaged.status.message();
}

}  // namespace
}  // namespace zt

// Offload in one process (thread-ranks): offload_optimizer "cpu" (and offload_param "cpu"
// at stage 3) on a backend whose memory is not the host's; NVMe offload (on such a
// backend too, with the update on the host): offloaded runs (optimizer state; optimizer
// state and the ZeRO-3 parameter shard) are bit-identical, step by step, to the same run
// in memory, in fp32 and bf16, at dp 1 and 2 and ZeRO stages 0-3 where DeepSpeed allows
// them; checkpoints cross between offloaded and in-memory layouts; a swap chunk changed
// on disk is refused on every rank.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "backend/cpu/guarded_backend.h"
#include "comm/thread_world.h"
#include "checkpoint/sharded_load.h"
#include "engine/trainer.h"
#include "engine/memory_estimate.h"
#include "engine/trainer_checkpoint.h"
#include "testing/delegating_backend.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

// kHost: offload_optimizer "cpu"; kHostParams: + offload_param "cpu" (stage 3);
// kHostActivations: cpu_checkpointing without a disk (the others are NVMe).
enum class Off { kNone, kOptimizer, kParams, kActivations, kHost, kHostParams, kHostActivations };

struct Case {
  DType dtype;
  int dp;
  ZeroStage stage;
};

class TrainerOffload : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("zt_offload_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "swap");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  TrainerOptions options(const Case& c, Off off) const {
    TrainerOptions o;
    o.model.n_layer = checkpoint_ ? 6 : 3;
    o.model.n_head = 4;
    o.model.n_embd = 64;
    o.model.vocab_size = 64;
    o.model.n_positions = 8;
    o.micro_batch = 2;
    o.seq_len = 8;
    o.schedule.base_lr = 1e-2;
    o.backend = backend_for(Device::kCpu, c.dtype).value();
    o.zero.stage = c.stage;
    o.zero.reduce.bucket_elems = 20000;
    o.zero.allgather_bucket_elems = 20000;
    o.zero.fetch.prefetch_elems = 40000;
    o.zero.fetch.persistence_threshold = 0;
    OffloadOptions& f = o.zero.offload;
    f.optimizer_device = off == Off::kHost || off == Off::kHostParams        ? OffloadDevice::kCpu
                         : off == Off::kNone || off == Off::kHostActivations ? OffloadDevice::kNone
                                                                             : OffloadDevice::kNvme;
    f.param_device = off == Off::kParams       ? OffloadDevice::kNvme
                     : off == Off::kHostParams ? OffloadDevice::kCpu
                                               : OffloadDevice::kNone;
    f.optimizer_path = f.param_path = (dir_ / "swap").string();
    f.sub_group_size = kChunkAlignElems;  // several chunks: the pipelined swapper at work
    f.max_in_cpu = 10000;                 // some of the shard in memory, the rest read from disk
    f.param_buffer_count = 3;
    f.aio.block_size = 16384;
    o.checkpoint = !checkpoint_ ? std::vector<bool>{} : !pattern_.empty() ? pattern_ : std::vector<bool>(6, true);
    o.activation_host_stash = off == Off::kHostActivations;
    if (off == Off::kActivations) {
      f.param_device = c.stage == ZeroStage::kParameters ? OffloadDevice::kNvme : OffloadDevice::kNone;
      o.activation_swap_dir = (dir_ / "swap").string();
    }
    return o;
  }

  struct Run {
    std::vector<std::vector<float>> params;  // after every step
    std::vector<double> losses;
    MemoryReport memory;
    std::string offload;  // rank 0's offload_description()
  };

  // Trains `steps` steps on c.dp thread-ranks (rank 0's view); optional resume and save.
  Run train(const Case& c, Off off, int steps, const std::string& load = "", const std::string& save = "") {
    ThreadWorld world(c.dp, CommOptions{});
    Run run;
    const Status s = run_ranks(c.dp, [&](int rank) -> Status {
      auto group = world.group(rank);
      ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(options(c, off), group.get()));
      if (!load.empty()) {
        ZT_ASSIGN_OR_RETURN(const CheckpointRef ckpt, open_checkpoint(load));
        ZT_RETURN_IF_ERROR(load_trainer(*t, ckpt, false).status());
      }
      const int first = static_cast<int>(t->global_step());
      for (int step = first; step < first + steps; ++step) {
        const testing::SyntheticStep data = testing::synthetic_step(64, 8, 2, 2, rank, c.dp, step, 3);
        ZT_ASSIGN_OR_RETURN(StepStats st, t->step(data.micro_batches()));
        std::vector<float> p(t->param_table().numel());
        ZT_RETURN_IF_ERROR(t->gather_params(p.data()));
        if (rank == 0) {
          run.losses.push_back(st.loss);
          run.params.push_back(std::move(p));
        }
      }
      if (!save.empty()) ZT_RETURN_IF_ERROR(save_trainer(*t, {save, "", 0, Json::object()}));
      if (rank == 0) run.memory = t->memory();
      if (rank == 0) run.offload = t->offload_description();
      return Status::OK();
    });
    EXPECT_TRUE(s.ok()) << s.to_string();
    return run;
  }

  // Losses and parameters equal, bit for bit, after every step.
  static void expect_same_steps(const Run& got, const Run& ref, const std::string& what) {
    ASSERT_EQ(got.params.size(), ref.params.size()) << what;
    for (size_t s = 0; s < ref.params.size(); ++s) {
      EXPECT_EQ(got.losses[s], ref.losses[s]) << what << " step " << s;
      EXPECT_EQ(std::memcmp(got.params[s].data(), ref.params[s].data(), ref.params[s].size() * sizeof(float)), 0)
          << what << " step " << s;
    }
  }

  std::filesystem::path dir_;
  bool checkpoint_ = false;  // 6 blocks, every one checkpointed (3 without)
  std::vector<bool> pattern_;  // with checkpoint_: which of the 6 (empty: all)
};

std::string name(const Case& c, Off off) {
  return std::string(dtype_name(c.dtype)) + " dp" + std::to_string(c.dp) + " stage " +
         std::to_string(static_cast<int>(c.stage)) + (off == Off::kParams ? " +params" : "") +
         (off == Off::kActivations ? " +activations" : "") + (off == Off::kHost ? " host optimizer" : "") +
         (off == Off::kHostParams ? " host optimizer and parameters" : "") +
         (off == Off::kHostActivations ? " host activations" : "");
}

TEST_F(TrainerOffload, OffloadedRunsAreBitIdenticalToInMemoryRuns) {
  const int steps = 3;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const Case& c : {Case{dt, 1, ZeroStage::kNone}, Case{dt, 2, ZeroStage::kOptimizer},
                          Case{dt, 2, ZeroStage::kGradients}, Case{dt, 1, ZeroStage::kParameters},
                          Case{dt, 2, ZeroStage::kParameters}}) {
      const Run ref = train(c, Off::kNone, steps);
      for (Off off : {Off::kOptimizer, Off::kParams}) {
        if (off == Off::kParams && c.stage != ZeroStage::kParameters) continue;
        const Run got = train(c, off, steps);
        expect_same_steps(got, ref, name(c, off));
        EXPECT_EQ(got.memory.optimizer_bytes, 0u) << name(c, off);
        EXPECT_GT(got.memory.disk_bytes, 0u);
        EXPECT_GT(got.memory.disk_read_bytes, 0u);
      }
    }
  }
}

// With every block checkpointed, the saved inputs on disk as well (and the optimizer
// state, and at stage 3 the parameter shard): the same bits as checkpointing in memory,
// with the per-block inputs out of the activation arena.
TEST_F(TrainerOffload, ActivationOffloadIsBitIdenticalToCheckpointingInMemory) {
  checkpoint_ = true;
  const int steps = 2;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const Case& c : {Case{dt, 1, ZeroStage::kNone}, Case{dt, 2, ZeroStage::kOptimizer},
                          Case{dt, 2, ZeroStage::kParameters}}) {
      const Run ref = train(c, Off::kNone, steps);
      const Run got = train(c, Off::kActivations, steps);
      for (int s = 0; s < steps; ++s) {
        EXPECT_EQ(got.losses[s], ref.losses[s]) << name(c, Off::kActivations) << " step " << s;
        EXPECT_EQ(got.params[s], ref.params[s]) << name(c, Off::kActivations) << " step " << s;
      }
      EXPECT_LT(got.memory.activation_bytes, ref.memory.activation_bytes) << name(c, Off::kActivations);
      auto e = estimate_rank_memory(options(c, Off::kActivations), c.dp, 0, 1, 0);
      ASSERT_TRUE(e.ok());
      EXPECT_EQ(e->activation_bytes, got.memory.activation_bytes);
      EXPECT_EQ(e->disk_bytes, got.memory.disk_bytes);
      EXPECT_EQ(e->offload_buffer_bytes, got.memory.offload_buffer_bytes);
      EXPECT_EQ(e->host_bytes, got.memory.host_bytes);
    }
  }
}

// The estimate (from the configuration alone) gives the trainer's disk bytes, swap
// buffers and optimizer-pass traffic exactly; parameter reads are whole checksum blocks
// around each layer part, so the measured reads are at least the estimate.
TEST_F(TrainerOffload, EstimateMatchesTheSwapGeometry) {
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (Off off : {Off::kOptimizer, Off::kParams}) {
      const Case c{dt, 2, ZeroStage::kParameters};
      const Run run = train(c, off, 1);
      auto e = estimate_rank_memory(options(c, off), 2, 0, 1, 0);
      ASSERT_TRUE(e.ok()) << e.status().to_string();
      EXPECT_EQ(e->disk_bytes, run.memory.disk_bytes) << name(c, off);
      EXPECT_EQ(e->offload_buffer_bytes, run.memory.offload_buffer_bytes) << name(c, off);
      EXPECT_EQ(e->host_bytes, run.memory.host_bytes) << name(c, off);
      EXPECT_EQ(e->disk_write_per_step, run.memory.disk_written_bytes) << name(c, off);
      EXPECT_EQ(e->optimizer_bytes, 0u);
      EXPECT_EQ(e->param_bytes, run.memory.param_bytes) << name(c, off);
      EXPECT_NE(run.offload.find(": " + std::to_string(e->swap_chunks) + " chunk(s)"), std::string::npos)
          << run.offload;  // the optimizer pass the planner prices (planner/swap_model.h)
      if (off == Off::kOptimizer) {
        EXPECT_EQ(e->disk_read_per_step, run.memory.disk_read_bytes) << name(c, off);
        EXPECT_EQ(e->swap_pass_read, e->disk_read_per_step);
      } else {
        EXPECT_GE(run.memory.disk_read_bytes, e->disk_read_per_step) << name(c, off);
      }
    }
  }
}

// cpu_checkpointing with no disk configured: on a backend whose memory is not the host's
// (the guarded backend, as a GPU) the inputs of checkpointed blocks wait in host memory
// between forward and backward; on a host backend nothing moves. The same bits as
// checkpointing in the backend's memory either way, and the estimate's figures.
TEST_F(TrainerOffload, HostActivationOffloadIsBitIdenticalToCheckpointingInTheBackend) {
  checkpoint_ = true;
  const int steps = 2;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    // Blocks 2 and 4 not checkpointed: each writes the live buffer the previous block's
    // save may still be copying out (fp32 only, to keep the test short).
    pattern_ = dt == DType::kF32 ? std::vector<bool>{true, true, false, true, false, true} : std::vector<bool>{};
    const bool device = !backend_for(Device::kCpu, dt).value()->host();
    for (const Case& c : {Case{dt, 1, ZeroStage::kNone}, Case{dt, 2, ZeroStage::kParameters}}) {
      const Run ref = train(c, Off::kNone, steps);
      const Run got = train(c, Off::kHostActivations, steps);
      for (int s = 0; s < steps; ++s) {
        EXPECT_EQ(got.losses[s], ref.losses[s]) << name(c, Off::kHostActivations) << " step " << s;
        EXPECT_EQ(got.params[s], ref.params[s]) << name(c, Off::kHostActivations) << " step " << s;
      }
      if (pattern_.empty()) {  // (with blocks 2 and 4 kept whole, the rotating buffers cost what the stash saves)
        EXPECT_EQ(got.memory.activation_bytes < ref.memory.activation_bytes, device) << name(c, Off::kHostActivations);
      }
      EXPECT_EQ(got.memory.offload_buffer_bytes > 0, device) << name(c, Off::kHostActivations);
      auto e = estimate_rank_memory(options(c, Off::kHostActivations), c.dp, 0, 1, 0);
      ASSERT_TRUE(e.ok());
      EXPECT_EQ(e->activation_bytes, got.memory.activation_bytes);
      EXPECT_EQ(e->offload_buffer_bytes, got.memory.offload_buffer_bytes);
      EXPECT_EQ(e->host_bytes, got.memory.host_bytes);
    }
  }
}

// offload_optimizer "cpu". On a host-memory backend nothing moves. On one whose memory is
// not the host's (the guarded backend of the guarded_backend_training test, as on a GPU)
// the fp32 master and the optimizer state live in host memory and are updated there, the
// gradients staged down and the compute copy up in pieces (sub_group_size: several here):
// the same bits, step by step, as the run with every state in the backend's memory.
TEST_F(TrainerOffload, HostOptimizerOffloadIsBitIdenticalToTheStatesInTheBackend) {
  const int steps = 3;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    const bool device = !backend_for(Device::kCpu, dt).value()->host();
    for (const Case& c : {Case{dt, 1, ZeroStage::kNone}, Case{dt, 2, ZeroStage::kOptimizer},
                          Case{dt, 2, ZeroStage::kGradients}, Case{dt, 2, ZeroStage::kParameters}}) {
      const Run ref = train(c, Off::kNone, steps);
      for (Off off : {Off::kHost, Off::kHostParams}) {
        if (off == Off::kHostParams && c.stage != ZeroStage::kParameters) continue;
        const Run got = train(c, off, steps);
        expect_same_steps(got, ref, name(c, off));
        // The staging exists only where something moves; the master exists in fp32 too there.
        // The estimate gives both.
        EXPECT_EQ(got.memory.offload_buffer_bytes > 0, device) << name(c, off);
        if (device) EXPECT_GT(got.memory.master_bytes, 0u) << name(c, off);
        auto e = estimate_rank_memory(options(c, off), c.dp, 0, 1, 0);
        ASSERT_TRUE(e.ok());
        EXPECT_EQ(e->offload_buffer_bytes, got.memory.offload_buffer_bytes) << name(c, off);
        EXPECT_EQ(e->master_bytes, got.memory.master_bytes) << name(c, off);
        EXPECT_EQ(e->param_bytes, got.memory.param_bytes) << name(c, off);
        EXPECT_EQ(e->optimizer_bytes, got.memory.optimizer_bytes) << name(c, off);
        EXPECT_EQ(e->host_bytes, got.memory.host_bytes) << name(c, off);
        EXPECT_EQ(got.memory.host_bytes > 0, device) << name(c, off);
      }
    }
  }
}

// offload_param "cpu" on a device without the host's update is refused, naming the key:
// the device's optimizer would have to write the shard across the bus every step.
TEST_F(TrainerOffload, HostParametersWithoutTheHostUpdateAreRefused) {
  TrainerOptions o = options(Case{DType::kF32, 1, ZeroStage::kParameters}, Off::kHostParams);
  o.zero.offload.optimizer_device = OffloadDevice::kNone;
  auto t = Trainer::create(o);
  if (o.backend->host()) {
    EXPECT_TRUE(t.ok()) << t.status().to_string();  // a CPU run's states are in host memory already
    return;
  }
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("/zero_optimization/offload_param/device"), std::string::npos)
      << t.status().to_string();
}

// Host memory that cannot be pinned stops the run at its start with the reason, naming
// what it was for (issue 29's faults): the optimizer's staging, a host parameter shard,
// the activation stash. With pin_memory false the same runs start on pageable memory.
TEST_F(TrainerOffload, AFailedPinnedAllocationIsNamed) {
  testing::UnpinnableHost unpinnable(plain_cpu_backend(DType::kBF16));
  const testing::DelegatingBackend device(guarded_cpu_backend(DType::kBF16), unpinnable);
  for (Off off : {Off::kHost, Off::kHostParams, Off::kHostActivations}) {
    checkpoint_ = off == Off::kHostActivations;
    const Case c{DType::kBF16, 1, ZeroStage::kParameters};
    TrainerOptions o = options(c, off);
    o.backend = &device;
    auto t = Trainer::create(o);
    ASSERT_FALSE(t.ok()) << name(c, off);
    EXPECT_NE(t.status().message().find("cannot pin"), std::string::npos) << t.status().to_string();
    EXPECT_NE(t.status().message().find(off == Off::kHostActivations ? "checkpointed activations" : "host"),
              std::string::npos) << t.status().to_string();
    o.zero.offload.pin_memory = false;
    auto pageable = Trainer::create(o);
    EXPECT_TRUE(pageable.ok()) << name(c, off) << ": " << pageable.status().to_string();
  }
}

// The estimate's bytes between host and device per step, against the bytes a counting
// backend sees cross in the second step: at least the estimate, and above it only by the
// step's small crossings (each micro-batch's tokens and targets, the losses, the norm).
TEST_F(TrainerOffload, EstimateGivesTheStepsHostDeviceTraffic) {
  for (Off off : {Off::kHost, Off::kHostParams, Off::kHostActivations}) {
    checkpoint_ = off == Off::kHostActivations;
    const Case c{DType::kBF16, 1, off == Off::kHost ? ZeroStage::kNone : ZeroStage::kParameters};
    const testing::DelegatingBackend device(guarded_cpu_backend(DType::kBF16), plain_cpu_backend(DType::kBF16));
    TrainerOptions o = options(c, off);
    o.backend = &device;
    o.micro_batches = 2;  // as each step below
    auto t = Trainer::create(o);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    auto e = estimate_rank_memory(o, 1, 0, 1, 0);
    ASSERT_TRUE(e.ok());
    EXPECT_GT(e->pcie_bytes_per_step, 0u) << name(c, off);
    uint64_t before = 0;
    for (int step = 0; step < 2; ++step) {
      before = device.crossed();
      const testing::SyntheticStep data = testing::synthetic_step(64, 8, 2, 2, 0, 1, step, 3);
      ASSERT_TRUE((*t)->step(data.micro_batches()).ok());
    }
    const uint64_t moved = device.crossed() - before;
    const uint64_t small = 2 * (2 * 8 * 2 * sizeof(int32_t) + 64) + 64;  // per micro-batch tokens, targets, loss
    EXPECT_GE(moved, e->pcie_bytes_per_step) << name(c, off);
    EXPECT_LE(moved, e->pcie_bytes_per_step + small) << name(c, off);
  }
}

// Page-locked host memory: what the estimate says against the bytes a counting staging
// host holds once the run has made a step (pinned buffers are made at the start).
TEST_F(TrainerOffload, EstimateGivesThePinnedHostMemory) {
  for (Off off : {Off::kHost, Off::kHostParams, Off::kHostActivations, Off::kOptimizer, Off::kParams}) {
    checkpoint_ = off == Off::kHostActivations;
    const Case c{DType::kBF16, 1, off == Off::kHost ? ZeroStage::kNone : ZeroStage::kParameters};
    const testing::CountingHost pinned(plain_cpu_backend(DType::kBF16));
    const testing::DelegatingBackend device(guarded_cpu_backend(DType::kBF16), pinned);
    TrainerOptions o = options(c, off);
    o.backend = &device;
    o.zero.offload.pin_memory = true;
    auto t = Trainer::create(o);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    const testing::SyntheticStep data = testing::synthetic_step(64, 8, 2, 2, 0, 1, 0, 3);
    ASSERT_TRUE((*t)->step(data.micro_batches()).ok());
    auto e = estimate_rank_memory(o, 1, 0, 1, 0);
    ASSERT_TRUE(e.ok());
    std::printf("  %s: pinned %zu, estimate %zu (host %zu)\n", name(c, off).c_str(), static_cast<size_t>(pinned.live()),
                e->pinned_bytes, e->host_bytes);
    EXPECT_EQ(pinned.live(), e->pinned_bytes) << name(c, off);
    EXPECT_GT(e->pinned_bytes, 0u) << name(c, off);
    EXPECT_LE(e->pinned_bytes, e->host_bytes) << name(c, off);
  }
}

// 2 steps offloaded + save, resume in memory for 2 more (and the other way round): the
// same bits as 4 uninterrupted in-memory steps.
TEST_F(TrainerOffload, CheckpointsCrossBetweenOffloadedAndInMemoryLayouts) {
  for (DType dt : {DType::kF32, DType::kBF16}) {
    const Case c{dt, 2, ZeroStage::kParameters};
    const Run ref = train(c, Off::kNone, 4);
    for (auto [first, second] : {std::pair{Off::kParams, Off::kNone}, std::pair{Off::kNone, Off::kParams},
                                 std::pair{Off::kOptimizer, Off::kParams}, std::pair{Off::kHost, Off::kNone},
                                 std::pair{Off::kNone, Off::kHost}, std::pair{Off::kHostParams, Off::kParams}}) {
      const std::string ck = (dir_ / "ckpt").string();
      std::filesystem::remove_all(ck);
      train(c, first, 2, "", ck);
      const Run resumed = train(c, second, 2, ck);
      ASSERT_EQ(resumed.params.size(), 2u);
      EXPECT_EQ(resumed.params[1], ref.params[3]) << name(c, first) << " -> " << name(c, second);
      EXPECT_EQ(resumed.losses[1], ref.losses[3]);
    }
  }
}

}  // namespace
}  // namespace zt

// load_run_config's device resolution: what CUDA runs do not have yet is refused by the
// key that asks for it (before any GPU is looked for, so these run on any machine), and
// "auto" falls back to the CPU with that reason as a note; planning describes a cuda run
// without opening a GPU.
#include "engine/run_config.h"

#include "engine/memory_estimate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace zt {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

StatusOr<ZtConfig> load(const std::string& device, const std::string& extra, RunPurpose purpose = RunPurpose::kTrain) {
  StatusOr<Json> root = parse_json_strict(
      R"({"train_micro_batch_size_per_gpu": 2, "training": {"device": ")" + device + R"("}, )" + extra + "}",
      "config.json");
  if (!root.ok()) return root.status();
  return load_run_config(root.value(), 1, purpose);
}

TEST(RunConfig, CudaRefusesOffloadUntilItsGpuTestHasRun) {
  const struct {
    const char* extra;
    const char* message;
  } cases[] = {
      {R"("zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}})",
       R"(/zero_optimization/offload_optimizer/device: "cpu" with device cuda is built but has not run on a GPU yet)"},
      {R"("zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}})",
       R"(/zero_optimization/offload_param/device: "cpu" with device cuda)"},
      {R"("activation_checkpointing": {"cpu_checkpointing": true, "number_checkpoints": 1})",
       "/activation_checkpointing/cpu_checkpointing: true with device cuda is built but has not run on a GPU yet"},
  };
  for (const auto& c : cases) {
    const std::string text = c.extra;
    StatusOr<ZtConfig> cfg = load("cuda", text);
    ASSERT_FALSE(cfg.ok()) << c.extra;
    EXPECT_THAT(cfg.status().message(), HasSubstr(c.message));
    EXPECT_THAT(cfg.status().message(), HasSubstr("waits for one"));
    // "auto" trains on the CPU, where the states already live in host memory, and says why.
    StatusOr<ZtConfig> automatic = load("auto", text);
    ASSERT_TRUE(automatic.ok()) << automatic.status().message();
    EXPECT_EQ(automatic.value().device, Device::kCpu);
    EXPECT_THAT(automatic.value().notes, Contains(HasSubstr(c.message)));
  }
}

// estimate and plan describe a GPU run on any machine: "cuda" is planned, not opened; the
// offload that training still refuses is estimated, with the host's share of the memory;
// the planned device allocates nothing.
TEST(RunConfig, PlanningDescribesACudaRunWithoutAGpu) {
  const std::string offload = R"("bf16": {"enabled": true}, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}})";
  StatusOr<ZtConfig> cfg = load("cuda", offload, RunPurpose::kPlan);
  ASSERT_TRUE(cfg.ok()) << cfg.status().to_string();
  EXPECT_EQ(cfg->device, Device::kCuda);
  EXPECT_TRUE(cfg->device_planned);
  EXPECT_EQ(cfg->model.padded_vocab_size % 128, 0);  // as a GPU run pads it
  const TrainerOptions o = trainer_options(*cfg);
  ASSERT_NE(o.backend, nullptr);
  EXPECT_FALSE(o.backend->host());
  EXPECT_EQ(o.backend->compute_dtype(), DType::kBF16);
  StatusOr<MemoryEstimate> e = estimate_rank_memory(o, 1, 0, 1, 0);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->host_bytes, e->master_bytes + e->optimizer_bytes + e->offload_buffer_bytes);
  EXPECT_EQ(e->device_bytes(), e->total() - e->host_bytes);
  EXPECT_THAT(o.backend->allocate(4, DType::kF32, "a test").status().message(), HasSubstr("allocates nothing"));
  // What CUDA has not built stays refused when planning too.
  EXPECT_FALSE(load("cuda", R"("optimizer": {"type": "OneBitAdam", "params": {"lr": 0.001}})", RunPurpose::kPlan).ok());
}

}  // namespace
}  // namespace zt

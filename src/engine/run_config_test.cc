// load_run_config's device resolution: what CUDA runs do not have yet is refused by the
// key that asks for it (before any GPU is looked for, so these run on any machine), and
// "auto" falls back to the CPU with that reason as a note.
#include "engine/run_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace zt {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

StatusOr<ZtConfig> load(const std::string& device, const std::string& extra) {
  StatusOr<Json> root = parse_json_strict(
      R"({"train_micro_batch_size_per_gpu": 2, "training": {"device": ")" + device + R"("}, )" + extra + "}",
      "config.json");
  if (!root.ok()) return root.status();
  return load_run_config(root.value(), 1);
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

}  // namespace
}  // namespace zt

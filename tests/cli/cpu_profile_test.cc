// ZT_CPU_PROFILE=1 (backend/cpu/cpu_profile.h) through the zerotrain binary: one fp32 and one
// bf16 step of the demo end with the per-entry table profile on stderr, the GEMM entries
// marked and the split between them and the rest given; without the variable there is none.
#include <gtest/gtest.h>

#include <string>

#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace {

class CpuProfile : public zt::testing::TempDirTest {
 protected:
  std::string train(const std::string& env, const char* precision) {
    const std::string command = "env -u ZT_CPU_PROFILE " + env + " OMP_NUM_THREADS=2 " + zt::testing::binary_dir() +
                                "/zerotrain train --demo --set training.steps=1 --set training.eval_interval=0 --set " +
                                "training.sample_tokens=0 --set training.save_at_end=false --set " + precision +
                                " --set training.output_dir=" + dir_ + "/out";
    std::string out;
    EXPECT_EQ(zt::testing::run_logged(command, dir_ + "/log", &out), 0) << out;
    return out;
  }
};

TEST_F(CpuProfile, NamesWhereTheStepsTimeGoes) {
  for (const char* precision : {"bf16.enabled=false", "bf16.enabled=true"}) {
    const std::string out = train("ZT_CPU_PROFILE=1", precision);
    EXPECT_NE(out.find("CPU table profile (ZT_CPU_PROFILE): "), std::string::npos) << out;
    EXPECT_NE(out.find("entries with GEMMs "), std::string::npos) << out;
    // bf16's update writes the compute copy in its pass (adamw_step_copy); fp32 has none to write.
    const char* update = std::string(precision) == "bf16.enabled=true" ? "adamw_step_copy" : "adamw_step";
    for (const char* entry : {"linear_forward", "linear_backward", "layernorm_forward", "gelu_forward", update}) {
      EXPECT_NE(out.find(std::string("  ") + entry + " "), std::string::npos) << precision << ": no " << entry << "\n" << out;
    }
    EXPECT_NE(out.find("(GEMMs)"), std::string::npos) << out;
  }
  EXPECT_EQ(train("", "bf16.enabled=false").find("CPU table profile"), std::string::npos);
}

}  // namespace

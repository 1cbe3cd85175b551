// LossScaler against an independent Python statement of DeepSpeed's rule
// (tests/precision/loss_scale_reference.py) on seeded random overflow sequences for several
// option sets, step by step; the static scale; the checkpoint state round trip; option
// validation naming the fp16 key.
#include "optim/loss_scaler.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "testing/launch.h"

namespace zt {
namespace {

std::string overflow_pattern(uint64_t seed, int steps, double p) {
  Rng rng(seed);
  std::string s;
  for (int i = 0; i < steps; ++i) s += rng.uniform() < p ? '1' : '0';
  return s;
}

// Runs the scaler over the pattern; "error" ends the list as in the reference.
std::vector<std::string> run_scaler(const LossScalerOptions& o, const std::string& flags) {
  LossScaler s(o);
  std::vector<std::string> out;
  for (char f : flags) {
    if (!s.update(f == '1').ok()) {
      out.push_back("error");
      break;
    }
    std::ostringstream v;
    v.precision(17);
    v << s.scale();
    out.push_back(v.str());
  }
  return out;
}

std::vector<std::string> run_reference(const LossScalerOptions& o, const std::string& flags) {
  const std::string cmd = "python3 " + std::string(ZT_SOURCE_DIR) + "/tests/precision/loss_scale_reference.py " +
                          std::to_string(o.initial_scale_power) + " " + std::to_string(o.loss_scale_window) + " " +
                          std::to_string(o.hysteresis) + " " + (o.consecutive_hysteresis ? "1 " : "0 ") +
                          std::to_string(o.min_loss_scale) + " " + flags;
  std::string out;
  EXPECT_EQ(testing::run_logged(cmd, ::testing::TempDir() + "zt_loss_scale.log", &out), 0) << out;
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line == "error") {
      lines.push_back(line);
    } else {
      std::ostringstream v;  // the same formatting as run_scaler
      v.precision(17);
      v << std::stod(line);
      lines.push_back(v.str());
    }
  }
  return lines;
}

TEST(LossScaler, FollowsDeepSpeedsRuleStepByStep) {
  struct Case {
    int power, window, hysteresis;
    bool consecutive;
    double min_scale, p;
  };
  const std::vector<Case> cases = {{16, 1000, 2, false, 1.0, 0.01},  // DeepSpeed's defaults
                                   {8, 5, 2, false, 1.0, 0.3},        {8, 5, 3, true, 1.0, 0.3},
                                   {4, 3, 1, false, 2.0, 0.5},        {20, 7, 2, true, 0.5, 0.45},
                                   {3, 2, 2, false, 1.0, 0.9}};       // drives it to the minimum
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    LossScalerOptions o;
    o.initial_scale_power = c.power;
    o.loss_scale_window = c.window;
    o.hysteresis = c.hysteresis;
    o.consecutive_hysteresis = c.consecutive;
    o.min_loss_scale = c.min_scale;
    ASSERT_TRUE(LossScaler::validate(o).ok());
    const std::string flags = overflow_pattern(100 + i, 400, c.p);
    EXPECT_EQ(run_scaler(o, flags), run_reference(o, flags)) << "case " << i << ": " << flags;
  }
}

TEST(LossScaler, StaticScaleNeverMoves) {
  LossScalerOptions o;
  o.loss_scale = 128.0;
  LossScaler s(o);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(s.update(i % 3 == 0).ok());
  EXPECT_EQ(s.scale(), 128.0);
  EXPECT_FALSE(s.dynamic());
}

TEST(LossScaler, StateRoundTripContinuesIdentically) {
  LossScalerOptions o;
  o.initial_scale_power = 10;
  o.loss_scale_window = 4;
  const std::string flags = overflow_pattern(7, 200, 0.2);
  LossScaler a(o), b(o);
  for (size_t i = 0; i < flags.size(); ++i) {
    ASSERT_TRUE(a.update(flags[i] == '1').ok());
    if (i == 99) {
      LossScaler resumed(o);
      resumed.set_state(a.state());  // as a checkpoint load does
      b = resumed;
    } else if (i > 99) {
      ASSERT_TRUE(b.update(flags[i] == '1').ok());
      ASSERT_EQ(a.scale(), b.scale()) << "step " << i;
    }
  }
}

TEST(LossScaler, BadOptionsNameTheirKey) {
  LossScalerOptions o;
  o.hysteresis = 0;
  EXPECT_NE(LossScaler::validate(o).message().find("/fp16/hysteresis"), std::string::npos);
  o = LossScalerOptions{};
  o.loss_scale_window = 0;
  EXPECT_NE(LossScaler::validate(o).message().find("/fp16/loss_scale_window"), std::string::npos);
  o = LossScalerOptions{};
  o.min_loss_scale = 0.0;
  EXPECT_NE(LossScaler::validate(o).message().find("/fp16/min_loss_scale"), std::string::npos);
  o = LossScalerOptions{};
  o.loss_scale = -1.0;
  EXPECT_NE(LossScaler::validate(o).message().find("/fp16/loss_scale"), std::string::npos);
}

}  // namespace
}  // namespace zt

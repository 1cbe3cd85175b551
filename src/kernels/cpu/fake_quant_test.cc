// fake_quant against the independent Python statement of DeepSpeed's quantizer
// (tests/efficiency/quantizer_oracle.py, float32): bit for bit for 3-8 bits, symmetric
// and asymmetric, in groups; ternary and binary against hand-computed values.
#include "kernels/cpu/fake_quant.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/rng.h"
#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/python_oracle.h"

namespace zt {
namespace {

std::string floats_json(const std::vector<float>& v) {
  std::string s = "[";
  char buf[64];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof(buf), "%s%.9g", i ? ", " : "", static_cast<double>(v[i]));
    s += buf;
  }
  return s + "]";
}

TEST(FakeQuant, MatchesDeepSpeedsArithmeticBitForBit) {
  Rng rng(11);
  std::vector<float> x(96);
  for (float& v : x) v = static_cast<float>(rng.normal() * 0.05);
  x[7] = 0.31f;  // one outlier sets a group's range
  int cases = 0;
  for (int bits : {8, 4, 3}) {
    for (bool sym : {true, false}) {
      for (int groups : {1, 4}) {
        const std::string cfg = R"({"mode": "quantize", "values": )" + floats_json(x) + R"(, "bits": )" +
                                std::to_string(bits) + R"(, "groups": )" + std::to_string(groups) + R"(, "type": ")" +
                                (sym ? "symmetric" : "asymmetric") + R"(", "dtype": "float32"})";
        int rc = 0;
        const std::string out = testing::run_output(testing::python() + " " + testing::oracle_source_dir() +
                                                        "/tests/efficiency/quantizer_oracle.py --json --config '" + cfg + "'",
                                                    &rc);
        ASSERT_EQ(rc, 0) << out;
        const Json ref = Json::parse(out)["output"];
        std::vector<float> y = x;
        fake_quant(y.data(), static_cast<int64_t>(y.size()), groups, bits, sym);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(y[i], ref[i].get<float>()) << bits << " bits " << (sym ? "sym" : "asym") << " groups " << groups
                                               << " element " << i;
        }
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 12);
}

TEST(FakeQuant, TernaryAndBinaryFollowTheirRules) {
  std::vector<float> x = {0.5f, -0.1f, 0.2f, -0.8f};  // mean|x| = 0.4, t = 0.28: 0.5 and -0.8 kept, a = 0.65
  fake_quant(x.data(), 4, 1, 2, true);
  EXPECT_EQ(x, (std::vector<float>{0.65f, 0.0f, 0.0f, -0.65f}));
  std::vector<float> y = {0.5f, -0.1f, 0.2f, -0.8f, 1.0f, -1.0f, 0.0f, 3.0f};
  fake_quant(y.data(), 8, 2, 1, true);  // groups: mean|x| 0.4 and 1.25
  EXPECT_EQ(y, (std::vector<float>{0.4f, -0.4f, 0.4f, -0.4f, 1.25f, -1.25f, 0.0f, 1.25f}));
}

}  // namespace
}  // namespace zt

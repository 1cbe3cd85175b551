// The routed output with a dense MLP beside it (DeepSpeed's PR-MoE residual, Qwen2-MoE's
// gated shared expert, DeepSeek-MoE's shared experts) against the PyTorch statement in
// tests/moe/moe_mix_reference.py: y and the gradients of sum(y R) to both outputs and to the
// coefficient logits within 1e-6 relative.
#include "kernels/cpu/moe_mix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/json_strict.h"
#include "testing/gradcheck.h"
#include "testing/moe_case.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

constexpr int64_t kN = 12;
constexpr int kC = 5;

void expect_close(const std::vector<float>& got, const Json& want, const std::string& what) {
  const std::vector<double> flat = testing::json_flat(want);
  ASSERT_EQ(flat.size(), got.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], flat[i], 1e-6 * (1.0 + std::fabs(flat[i]))) << what << " " << i;
}

class MoeMixTest : public testing::TempDirTest {};

TEST_F(MoeMixTest, ResidualGatedSharedAndSharedAsPyTorch) {
  const MoeMix kinds[] = {MoeMix::kResidual, MoeMix::kGatedShared, MoeMix::kShared};
  const char* names[] = {"residual", "gated_shared", "shared"};
  Json cases = Json::array();
  struct Got { std::vector<float> y, dmoe, ddense, dlogits; };
  std::vector<Got> got;
  for (int k = 0; k < 3; ++k) {
    const int L = moe_mix_logits(kinds[k]);
    const std::vector<float> moe = testing::random_vector(kN * kC, 10 + k);
    const std::vector<float> dense = testing::random_vector(kN * kC, 20 + k);
    const std::vector<float> R = testing::random_vector(kN * kC, 30 + k);
    const std::vector<float> logits = testing::random_vector(kN * std::max(L, 1), 40 + k);
    Got g{std::vector<float>(kN * kC), std::vector<float>(kN * kC), std::vector<float>(kN * kC),
          std::vector<float>(kN * std::max(L, 1))};
    moe_mix_forward(g.y.data(), moe.data(), dense.data(), logits.data(), kN, kC, kinds[k]);
    moe_mix_backward(g.dmoe.data(), g.ddense.data(), L > 0 ? g.dlogits.data() : nullptr, R.data(), moe.data(), dense.data(),
                     logits.data(), kN, kC, kinds[k]);
    Json c;
    c["kind"] = names[k];
    c["moe"] = testing::json_rows(moe, kC);
    c["dense"] = testing::json_rows(dense, kC);
    c["R"] = testing::json_rows(R, kC);
    c["logits"] = L > 0 ? testing::json_rows(logits, L) : Json::array();
    cases.push_back(c);
    got.push_back(std::move(g));
  }
  const Json ref = testing::run_moe_reference("moe_mix_reference.py", cases, dir_);
  ASSERT_EQ(ref.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    expect_close(got[k].y, ref[k]["y"], std::string(names[k]) + " y");
    expect_close(got[k].dmoe, ref[k]["dmoe"], std::string(names[k]) + " dmoe");
    expect_close(got[k].ddense, ref[k]["ddense"], std::string(names[k]) + " ddense");
    if (moe_mix_logits(kinds[k]) > 0) expect_close(got[k].dlogits, ref[k]["dlogits"], std::string(names[k]) + " dlogits");
  }
}

}  // namespace
}  // namespace zt

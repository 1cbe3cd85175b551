// The eigenvalue estimate of a small GPT-2 (hessian_probe.h) against the dense Hessian of
// each block that PyTorch computes in float64 (tests/oracle/gpt2_reference.py --hessian),
// on one global batch of 2 micro-batches, from one process and from 2 thread-ranks at
// ZeRO-3 with one micro-batch each.
// The bound, per block, with lambda_1 the eigenvalue of largest magnitude and
// rho = (lambda_2 / lambda_1)^2 for the next one: the Rayleigh quotient's error shrinks by
// about rho per iteration, so when the loop stops with |q_k - q_{k-1}| < tol |q_k| the error
// left is below rho / (1 - rho) x tol |q_k|; the central-difference products add at most
// kProductError of |lambda_1| (hessian_probe.h: ~1e-4 expected from the truncation and
// fp32 rounding terms; 1e-3 allowed). So |estimate - lambda_1| <= (rho/(1-rho) tol + 1e-3) |lambda_1|.
#include "engine/hessian_probe.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "checkpoint/safetensors.h"
#include "comm/thread_world.h"
#include "engine/trainer.h"
#include "testing/python_oracle.h"
#include "testing/small_trainer.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

constexpr double kProductError = 1e-3;

GptConfig tiny() { return testing::tiny_config(false, 2, 8, 61, 8, 0); }

class HessianProbeTest : public testing::TempDirTest {
 protected:
  // PyTorch's spectrum of each block's Hessian at `params` on the global batch.
  std::vector<std::vector<double>> spectra(const Trainer& t, const std::vector<float>& params,
                                           const testing::SyntheticStep& batch) {
    std::vector<TensorToWrite> init;
    for (const TensorSpec& s : t.param_table().specs()) init.push_back({s.name, StDType::kF32, s.shape, params.data() + s.offset});
    std::vector<int32_t> tokens, targets;
    for (const auto& d : batch.data) {
      tokens.insert(tokens.end(), d.tokens.begin(), d.tokens.end());
      targets.insert(targets.end(), d.targets.begin(), d.targets.end());
    }
    const int64_t M = static_cast<int64_t>(batch.data.size());
    init.push_back({"tokens", StDType::kI32, {M, 2, 8}, tokens.data()});
    init.push_back({"targets", StDType::kI32, {M, 2, 8}, targets.data()});
    EXPECT_TRUE(write_safetensors(dir_ + "/init.safetensors", init).ok());
    std::ofstream(dir_ + "/case.json") << R"({"model": {"n_layer": 2, "n_head": 4, "n_embd": 8, "vocab_size": 61, "n_positions": 8}})";
    const std::string cmd = testing::python() + " " + testing::oracle_source_dir() + "/tests/oracle/gpt2_reference.py --hessian " + dir_;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << ": python3-torch must be installed";
    auto ref = SafetensorsFile::read(dir_ + "/hessian.safetensors");
    EXPECT_TRUE(ref.ok()) << ref.status().to_string();
    std::vector<std::vector<double>> out;
    for (int b = 0; ref.ok() && b < 2; ++b) {
      const auto* e = static_cast<const float*>(ref->data("eigs." + std::to_string(b)));
      const size_t n = t.param_table().layer_range(b).size();
      out.emplace_back(e, e + n);
    }
    return out;
  }
};

void expect_within_bound(const std::vector<BlockEigenvalue>& est, const std::vector<std::vector<double>>& spectra,
                         double tol, const char* what) {
  ASSERT_EQ(est.size(), spectra.size());
  for (size_t b = 0; b < est.size(); ++b) {
    std::vector<double> s = spectra[b];
    std::sort(s.begin(), s.end(), [](double x, double y) { return std::fabs(x) > std::fabs(y); });
    const double rho = (s[1] / s[0]) * (s[1] / s[0]);
    const double bound = (rho / (1.0 - rho) * tol + kProductError) * std::fabs(s[0]);
    EXPECT_NEAR(est[b].value, s[0], bound) << what << " block " << b << " (" << est[b].iterations << " iterations, rho " << rho << ")";
    std::printf("  [%s] block %zu: estimate %.6f, dense %.6f (rel err %.1e, bound %.1e), %d iterations\n", what, b,
                est[b].value, s[0], std::fabs(est[b].value - s[0]) / std::fabs(s[0]), bound / std::fabs(s[0]), est[b].iterations);
  }
}

TEST_F(HessianProbeTest, BlockEigenvaluesMatchTheDenseHessianAloneAndOnTwoZero3Ranks) {
  EigenvalueOptions o;
  o.enabled = true;
  o.tol = 1e-4;
  o.max_iter = 2000;
  TrainerOptions to = testing::small_trainer(tiny(), ZeroStage::kNone);
  auto single = Trainer::create(to);
  ASSERT_TRUE(single.ok()) << single.status().to_string();
  Trainer& t = **single;
  // Larger weights: a Hessian well away from zero (through the backend: its arenas may
  // not be host memory).
  std::vector<float> params(t.param_table().numel());
  t.backend().copy_to_host(params.data(), t.params().data(), params.size() * sizeof(float));
  for (const TensorSpec& s : t.param_table().specs()) {
    if (s.init == InitKind::kNormal) for (size_t i = 0; i < s.numel; ++i) params[s.offset + i] *= 10.0f;
  }
  t.backend().copy_from_host(t.params().data(), params.data(), params.size() * sizeof(float));
  const testing::SyntheticStep batch = testing::synthetic_step(61, 8, 2, 2, 0, 1, 0, 3);
  HessianProbe probe(to.model, 2, 8, nullptr);
  auto est = trainer_block_eigenvalues(t, &probe, batch.micro_batches(), o);
  ASSERT_TRUE(est.ok()) << est.status().to_string();
  const auto dense = spectra(t, params, batch);
  expect_within_bound(*est, dense, o.tol, "1 process");

  // 2 ranks at ZeRO-3, the same parameters resharded from a checkpoint of the single trainer.
  ASSERT_TRUE(save_trainer(t, {dir_ + "/ckpt", "", 0, Json::object(), nullptr}).ok());
  to.zero.stage = ZeroStage::kParameters;
  ThreadWorld world(2, CommOptions{});
  std::vector<std::vector<BlockEigenvalue>> per_rank(2);
  const Status s = run_ranks(2, [&](int rank) -> Status {
    auto group = world.group(rank);
    ZT_ASSIGN_OR_RETURN(auto r, Trainer::create(to, group.get()));
    ZT_ASSIGN_OR_RETURN(const CheckpointRef ckpt, open_checkpoint(dir_ + "/ckpt"));
    ZT_RETURN_IF_ERROR(load_trainer(*r, ckpt, false).status());
    HessianProbe p(to.model, 2, 8, group.get());
    const testing::SyntheticStep mine = testing::synthetic_step(61, 8, 2, 1, rank, 2, 0, 3);
    ZT_ASSIGN_OR_RETURN(per_rank[rank], trainer_block_eigenvalues(*r, &p, mine.micro_batches(), o));
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  expect_within_bound(per_rank[0], dense, o.tol, "2 ranks ZeRO-3");
  for (size_t b = 0; b < 2; ++b) EXPECT_EQ(per_rank[0][b].value, per_rank[1][b].value) << "ranks iterate in step";
}

TEST_F(HessianProbeTest, RefusesALayerNumBeyondTheModel) {
  auto t = Trainer::create(testing::small_trainer(tiny(), ZeroStage::kNone));
  ASSERT_TRUE(t.ok());
  HessianProbe probe(tiny(), 2, 8, nullptr);
  EigenvalueOptions o;
  o.layer_num = 3;
  const testing::SyntheticStep batch = testing::synthetic_step(61, 8, 2, 1, 0, 1, 0, 3);
  auto e = trainer_block_eigenvalues(**t, &probe, batch.micro_batches(), o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("/eigenvalue/layer_num: 3 exceeds the model's 2 blocks"), std::string::npos);
}

}  // namespace
}  // namespace zt

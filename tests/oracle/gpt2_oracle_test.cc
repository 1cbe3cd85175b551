// PyTorch oracle (issue 2, acceptance 2): tests/oracle/gpt2_reference.py builds the same
// GPT-2 in PyTorch from the weights zerotrain writes, runs the same tokens, and returns
// logits, loss, every parameter gradient and 10 AdamW steps (DeepSpeed WarmupLR + global
// norm clipping). Tolerances, fp32:
//   logits, gradients: max|zt - torch| / max|torch| per tensor <= 1e-4
//   loss and each training step's loss: |zt - torch| / |torch| <= 1e-5
// The routed case runs batch 0 with block 0 on 9 random tokens of each sequence (random-LTD)
// and block 1 skipped (progressive layer drop), the reference stating both itself.
// A missing python3-torch fails the test (never a skip).
#include <gtest/gtest.h>

#include <string>

#include "testing/model_oracle.h"

namespace zt {
namespace {

struct OracleCase {
  const char* name;
  int padded_vocab;    // 0: unpadded
  float weight_boost;  // multiplies every weight after init (1: GPT-2 init as is)
  bool routed = false; // batch 0 under random-LTD on block 0 and layer drop on block 1
};

class GptOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(GptOracle, MatchesPyTorch) {
  const OracleCase& c = GetParam();
  testing::OracleRun run{c.name, GptConfig{}, c.weight_boost,
                         R"({"n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 211, "n_positions": 32})",
                         "tests/oracle/gpt2_reference.py"};
  run.model.n_layer = 2;
  run.model.n_head = 4;
  run.model.n_embd = 64;
  run.model.vocab_size = 211;
  run.model.n_positions = 32;
  run.model.padded_vocab_size = c.padded_vocab;
  if (c.routed) run.routes = testing::oracle_routes(3, 16, 9, 5);
  testing::run_model_oracle(run);
}

INSTANTIATE_TEST_SUITE_P(Oracle, GptOracle,
                         ::testing::Values(OracleCase{"gpt2_init", 0, 1.0f},
                                           OracleCase{"padded_vocab_boosted_weights", 256, 5.0f},
                                           OracleCase{"random_ltd_and_layer_drop", 0, 2.0f, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace zt

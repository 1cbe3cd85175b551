// compression_training in the Trainer (engine/compression.h):
// - the MoQ bit schedule, call by call, against tests/efficiency/quantizer_oracle.py;
// - quantize-in-forward touches exactly the selected weights (embeddings per row), with
//   DeepSpeed's quantizer;
// - a step computes with the quantized weights and passes the gradient straight through:
//   bit for bit a plain trainer whose weights were quantized before it;
// - weight and activation quantization on 2 thread-ranks at ZeRO 0-3, fp32 and bf16, match
//   the single process; an fp16 MoQ run killed after step 3 resumes bit for bit.
#include "engine/compression.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <regex>

#include "kernels/cpu/fake_quant.h"
#include "testing/launch.h"
#include "testing/python_oracle.h"
#include "testing/small_trainer.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

CompressionOptions weights(bool in_forward, std::vector<std::string> modules, int start, int target, int64_t period,
                           int64_t groups) {
  CompressionOptions c;
  c.weight.enabled = true;
  c.weight.in_forward = in_forward;
  c.weight.groups = groups;
  c.weight.groups_of_modules.push_back({"wq1", std::move(modules), start, target, period});
  return c;
}

TEST(Compression, MoqBitScheduleFollowsDeepSpeedCallByCall) {
  const GptConfig model = testing::tiny_config(false, 2, 16, 29, 8, 0);
  const ParamTable table = build_gpt_param_table(model);
  std::vector<std::string> notes;
  auto c = Compressor::create(weights(false, {"mlp.c_fc"}, 8, 5, 2, 1), table, model,
                              *backend_for(Device::kCpu, DType::kF16).value(), &notes);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(notes[0], "/compression_training/weight_quantization/different_groups/wq1: quantizes "
                      "transformer.h.0.mlp.c_fc, transformer.h.1.mlp.c_fc");
  int rc = 0;
  const Json ref = Json::parse(testing::run_output(
      testing::python() + " " + testing::oracle_source_dir() + "/tests/efficiency/quantizer_oracle.py --json --config "
      "'{\"mode\": \"schedule\", \"start_bits\": 8, \"target_bits\": 5, \"quantization_period\": 2, \"schedule_offset\": 0, "
      "\"gradient_accumulation_steps\": 2, \"steps\": 12, \"overflow_steps\": [4], \"variant\": \"compression\"}'", &rc));
  ASSERT_EQ(rc, 0);
  for (int step = 0; step < 12; ++step) {
    for (int micro = 0; micro < 2; ++micro) (*c)->begin_forward(step);
    (*c)->after_step(step == 4);
    const Json& want = ref["bits_after_step"][step];
    EXPECT_EQ((*c)->state()["bits"][0], want) << "after step " << step;
    EXPECT_EQ((*c)->state()["bits"][1], want) << "after step " << step;
  }
}

TEST(Compression, ForwardModeQuantizesTheSelectedWeightsOnly) {
  const GptConfig model = testing::tiny_config(false, 2, 16, 29, 8, 0);
  const ParamTable table = build_gpt_param_table(model);
  std::vector<float> params(table.numel());
  init_params(table, params.data(), 5);
  std::vector<std::string> notes;
  auto c = Compressor::create(weights(true, {"attn.c_attn", "wte"}, 8, 4, 1, 2), table, model,
                              *backend_for(Device::kCpu, DType::kF32).value(), &notes);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  (*c)->begin_forward(0);
  for (int layer : {kEmbeddingLayer, 0, 1}) {
    ASSERT_TRUE((*c)->touches(layer));
    const ElementRange r = table.layer_range(layer);
    const float* q = static_cast<const float*>((*c)->compressed(layer, params.data() + r.begin).value());
    for (const TensorSpec& s : table.specs()) {
      if (s.layer != layer) continue;
      std::vector<float> want(params.begin() + s.offset, params.begin() + s.offset + s.numel);
      const bool selected = std::regex_search(hf_module_name(model, s.name), std::regex("attn.c_attn|wte")) && s.shape.size() == 2;
      if (selected) fake_quant(want.data(), static_cast<int64_t>(s.numel), s.name == "wte.weight" ? s.shape[0] : 2, 4, true);
      EXPECT_EQ(std::memcmp(want.data(), q + (s.offset - r.begin), s.numel * sizeof(float)), 0) << s.name;
    }
  }
}

TrainerOptions compressed(ZeroStage stage, DType dtype, bool activations) {
  TrainerOptions o = testing::small_trainer(testing::tiny_config(false, 2, 32, 61, 8, 0), stage);
  o.backend = backend_for(Device::kCpu, dtype).value();
  o.efficiency.compression = weights(dtype != DType::kF16, {"attn", "mlp"}, 8, 4, 1, 4);
  if (activations) {
    o.efficiency.compression.activation.enabled = true;
    o.efficiency.compression.activation.schedule_offset = 0;
    o.efficiency.compression.activation.groups_of_modules.push_back({"aq1", {"c_fc", "c_attn"}, 8});
  }
  return o;
}

TEST(Compression, AStepUsesTheQuantizedWeightsAndPassesTheGradientStraightThrough) {
  const TrainerOptions o = compressed(ZeroStage::kNone, DType::kF32, false);
  TrainerOptions p = o;
  p.efficiency = {};
  auto a = Trainer::create(o), b = Trainer::create(p);
  ASSERT_TRUE(a.ok() && b.ok());
  for (const TensorSpec& s : (*b)->param_table().specs()) {
    if (s.shape.size() == 2 && std::regex_search(s.name, std::regex("attn|mlp"))) {
      fake_quant((*b)->params().data() + s.offset, static_cast<int64_t>(s.numel), 4, 4, true);
    }
  }
  const testing::SyntheticStep data = testing::synthetic_step(61, 8, 2, 1, 0, 1, 0, 3);
  const StepStats sa = (*a)->step(data.micro_batches()).value(), sb = (*b)->step(data.micro_batches()).value();
  EXPECT_EQ(sa.loss, sb.loss);
  EXPECT_EQ(sa.grad_norm, sb.grad_norm);
  TrainerOptions off = p;
  EXPECT_NE((*Trainer::create(off))->step(data.micro_batches()).value().loss, sa.loss) << "quantization changed nothing";
}

TEST(Compression, EveryZeroStageAndBf16MatchTheSingleProcess) {
  const int N = 2, accum = 2, steps = 4;
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const testing::RunOut ref = testing::train_ranks(compressed(ZeroStage::kNone, dtype, true), 1, N * accum, 0, steps);
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
    for (int stage = 0; stage <= 3; ++stage) {
      const testing::RunOut r = testing::train_ranks(compressed(static_cast<ZeroStage>(stage), dtype, true), N, accum, 0, steps);
      ASSERT_TRUE(r.status.ok()) << r.status.to_string();
      double worst = 0.0;
      for (int s = 0; s < steps; ++s) worst = std::max(worst, std::fabs(r.losses[s] - ref.losses[s]) / ref.losses[s]);
      EXPECT_LE(worst, dtype == DType::kF32 ? 1e-5 : 1e-2) << dtype_name(dtype) << " stage " << stage;
      std::printf("  %s stage %d: max loss rel diff %.2e\n", dtype_name(dtype), stage, worst);
    }
  }
}

class CompressionResume : public testing::TempDirTest {};

TEST_F(CompressionResume, MoqRunKilledAfterStepThreeResumesBitForBit) {
  TrainerOptions o = compressed(ZeroStage::kNone, DType::kF16, true);
  o.efficiency.compression.weight.groups_of_modules[0] = {"wq1", {"attn", "mlp"}, 8, 5, 2};
  o.loss_scaler.initial_scale_power = 10;
  const testing::RunOut whole = testing::train_ranks(o, 2, 1, 0, 6), first = testing::train_ranks(o, 2, 1, 0, 3, "", dir_),
                        second = testing::train_ranks(o, 2, 1, 3, 6, dir_);
  ASSERT_TRUE(whole.status.ok() && first.status.ok() && second.status.ok()) << second.status.to_string();
  std::vector<double> resumed = first.losses;
  resumed.insert(resumed.end(), second.losses.begin(), second.losses.end());
  EXPECT_EQ(resumed, whole.losses);
  EXPECT_TRUE(second.params == whole.params);
}

}  // namespace
}  // namespace zt

// The Trainer on the CUDA backend against the same Trainer on the CPU (issue 28's
// exactness bars, phase 1), GPT-2 and Llama (grouped-query) on a tiny model:
// - one step's 16-bit gradients, tensor by tensor, within the CPU oracle's bound of the
//   fp32 gradients (the CPU's own 16-bit gradients printed beside them);
// - fp32: each step's loss and gradient norm differ from the CPU's by less than the
//   CPU's own fp32-against-bf16 gap at that point of the run (the GPU changes only the
//   order of fp32 sums, 2^-24-sized, which training then amplifies exactly as it does
//   the 2^-8-sized bf16 roundings: the argument of trainer_precision_test.cc);
// - bf16 and fp16 (with the loss scaler): the GPU's run within twice the CPU's gap of the
//   CPU's run in the same precision (each is within one gap of fp32) when attention is
//   computed in fp32 as on the CPU (ZT_CUDA_ATTENTION=fp32), four times with the default
//   16-bit attention products (sixteen_bit_factor says why);
// - the same GPU run twice gives the same bits; ZeRO stages 1-3 at world 1 give stage
//   0's bits; activation checkpointing changes no bit;
// - at T = 64, where 16-bit attention runs as flash attention, the bf16 bar again and the
//   same bits twice;
// - offload_optimizer "cpu" or "nvme" (states in host memory or on disk, the CPU's AdamW),
//   with offload_param at stage 3, and cpu_checkpointing (checkpointed inputs in host
//   memory) change no bit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "backend/cuda/attention_env.h"
#include "kernels/cuda/flash_attention.h"
#include "checkpoint/sharded_load.h"
#include "engine/trainer.h"
#include "engine/trainer_checkpoint.h"
#include "nn/gpt_params.h"
#include "testing/cuda_test.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

struct TrainRun {
  std::vector<StepStats> steps;
  std::vector<float> params;
};

TrainerOptions tiny(Device device, DType dtype, bool llama, int seq_len = 16) {
  TrainerOptions o;
  o.model = testing::tiny_config(llama, 2, 64, 61, seq_len, 128);
  o.model.padded_vocab_size = 64;
  o.micro_batch = 2;
  o.seq_len = seq_len;
  o.micro_batches = 2;
  o.schedule.base_lr = 3e-3;
  o.zero.reduce.bucket_elems = 5000;
  o.zero.allgather_bucket_elems = 5000;
  o.zero.fetch.persistence_threshold = 100;
  o.backend = backend_for(device, dtype).value();
  o.loss_scaler.initial_scale_power = 12;  // fp16 only
  return o;
}

TrainRun train(const TrainerOptions& o, int steps) {
  TrainRun r;
  auto t = Trainer::create(o);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  if (!t.ok()) return r;
  for (int s = 0; s < steps; ++s) {
    const testing::SyntheticStep data = testing::synthetic_step(61, o.seq_len, 2, 2, 0, 1, s, 11);
    auto st = (*t)->step(data.micro_batches());
    EXPECT_TRUE(st.ok()) << st.status().to_string();
    if (!st.ok()) return r;
    r.steps.push_back(*st);
  }
  r.params.resize((*t)->param_table().numel());
  EXPECT_TRUE((*t)->gather_params(r.params.data()).ok());
  return r;
}

class CudaTrainer : public ::testing::TestWithParam<bool> {};  // GPT-2, Llama

// The gradients of one step from the same initial parameters (lr 0 leaves them as they
// are; the gradient arena keeps the step's sums), per tensor: the GPU's, in `dtype`, and
// the CPU's in the same dtype, each against the CPU's fp32 gradients, normwise (the
// largest difference over the tensor's largest fp32 gradient). The CPU oracle's bound for
// 16-bit gradients is 36 roundings of 2^-8 of the largest value (docs/design/
// mixed_precision.md); the GPU must meet it too, and any tensor far outside it names the
// kernel at fault.
std::vector<float> step_grads(Device device, DType dtype, bool llama, std::vector<float>* loss) {
  TrainerOptions o = tiny(device, dtype, llama);
  o.schedule.base_lr = 0.0;
  auto t = Trainer::create(o);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  const testing::SyntheticStep data = testing::synthetic_step(61, 16, 2, 2, 0, 1, 0, 11);
  auto st = (*t)->step(data.micro_batches());
  EXPECT_TRUE(st.ok()) << st.status().to_string();
  loss->push_back(static_cast<float>(st->loss));
  std::vector<float> g((*t)->param_table().numel());
  (*t)->backend().copy_to_host(g.data(), (*t)->grads().data(), g.size() * sizeof(float));
  for (float& x : g) x = static_cast<float>(x / st->loss_scale);  // fp16 keeps loss-scaled gradients
  return g;
}

TEST_P(CudaTrainer, SixteenBitGradientsWithinTheOracleBoundOfFp32) {
  ZT_REQUIRE_CUDA();
  const bool llama = GetParam();
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    std::vector<float> losses;
    const std::vector<float> ref = step_grads(Device::kCpu, DType::kF32, llama, &losses);
    const std::vector<float> cpu = step_grads(Device::kCpu, dtype, llama, &losses);
    const std::vector<float> gpu = step_grads(Device::kCuda, dtype, llama, &losses);
    const ParamTable table = build_gpt_param_table(tiny(Device::kCpu, dtype, llama).model);
    const double unit = dtype == DType::kBF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    for (const TensorSpec& s : table.specs()) {
      double scale = 0, dc = 0, dg = 0;
      for (size_t i = s.offset; i < s.offset + s.numel; ++i) {
        scale = std::max(scale, std::fabs(static_cast<double>(ref[i])));
        dc = std::max(dc, std::fabs(static_cast<double>(cpu[i]) - ref[i]));
        dg = std::max(dg, std::fabs(static_cast<double>(gpu[i]) - ref[i]));
      }
      const double bound = 36 * unit * scale;
      EXPECT_LE(dg, bound) << dtype_name(dtype) << " " << s.name << ": GPU " << dg / scale << " vs CPU " << dc / scale
                           << " of the largest gradient";
      std::printf("  %s %-22s GPU %.2e CPU %.2e of max|g| %.2e (bound %.2e)\n", dtype_name(dtype), s.name.c_str(),
                  dg / scale, dc / scale, scale, bound / scale);
    }
    std::printf("  %s step-1 loss: cpu fp32 %.7f, cpu %.7f, gpu %.7f\n", dtype_name(dtype), losses[0], losses[1],
                losses[2]);
  }
}

// Every step's loss of the GPU run against the CPU run in the same precision, bounded by
// the CPU's own fp32-against-`low` loss gap, the largest over the run (the bound
// trainer_precision_test.cc argues for layouts): fp32 on the GPU differs from the CPU
// only in the order of fp32 sums (2^-24-sized, amplified by training as bf16's 2^-8-sized
// roundings are), so within one gap; two 16-bit runs are each within one gap of fp32,
// so within two of each other. (Gradient norms are printed, not bounded: on random
// tokens they swing by tens of percent from step to step.)
void expect_within_gap(bool llama, DType dtype, int steps, double factor, int seq_len = 16) {
  const TrainRun cpu32 = train(tiny(Device::kCpu, DType::kF32, llama, seq_len), steps);
  const DType low = dtype == DType::kF32 ? DType::kBF16 : dtype;
  const TrainRun cpu16 = train(tiny(Device::kCpu, low, llama, seq_len), steps);
  const TrainRun& cpu = dtype == DType::kF32 ? cpu32 : cpu16;
  const TrainRun gpu = train(tiny(Device::kCuda, dtype, llama, seq_len), steps);
  ASSERT_EQ(gpu.steps.size(), static_cast<size_t>(steps));
  double gap = 0, worst = 0;
  for (int s = 0; s < steps; ++s) gap = std::max(gap, std::fabs(cpu16.steps[s].loss - cpu32.steps[s].loss));
  for (int s = 0; s < steps; ++s) {
    const double d = std::fabs(gpu.steps[s].loss - cpu.steps[s].loss);
    EXPECT_LE(d, factor * gap) << dtype_name(dtype) << " step " << s + 1;
    worst = std::max(worst, d / gap);
    std::printf("    step %2d loss cpu32 %.7f cpu %.7f gpu %.7f | norm cpu %.5f gpu %.5f\n", s + 1, cpu32.steps[s].loss,
                cpu.steps[s].loss, gpu.steps[s].loss, cpu.steps[s].grad_norm, gpu.steps[s].grad_norm);
  }
  double rms_cpu = 0, rms_gpu = 0;
  for (int s = 0; s < steps; ++s) {
    rms_cpu += std::pow(cpu16.steps[s].loss - cpu32.steps[s].loss, 2);
    rms_gpu += std::pow(gpu.steps[s].loss - cpu32.steps[s].loss, 2);
  }
  std::printf("  %s %s%s T=%d, %d steps: GPU-vs-CPU loss difference <= %.3f of the CPU's fp32-vs-%s loss gap (%.2e); rms "
              "distance from fp32: GPU %.2e, CPU %s %.2e\n", llama ? "llama" : "gpt2", dtype_name(dtype),
              cuda::attention_in_fp32() ? " (attention in fp32)" : "", seq_len, steps, worst, dtype_name(low), gap,
              std::sqrt(rms_gpu / steps), dtype_name(low), std::sqrt(rms_cpu / steps));
}

TEST_P(CudaTrainer, Fp32WithinTheCpusPrecisionGap) {
  ZT_REQUIRE_CUDA();
  expect_within_gap(GetParam(), DType::kF32, 20, 1.0);
}

// With 16-bit attention products (the default) the GPU rounds P for P V, and P and dS
// for the backward products, where the CPU keeps them in fp32: each attention output
// then carries up to three 2^-9 roundings more than the CPU's, so the run may sit up to
// four times as far from fp32 (measured on an H200: 3.98x at the worst step for GPT-2,
// 0.95x for Llama). With ZT_CUDA_ATTENTION=fp32 (the CPU's arithmetic) the bar is two.
double sixteen_bit_factor() { return cuda::attention_in_fp32() ? 2.0 : 4.0; }

TEST_P(CudaTrainer, Bf16WithinTwiceTheCpusPrecisionGap) {
  ZT_REQUIRE_CUDA();
  expect_within_gap(GetParam(), DType::kBF16, 20, sixteen_bit_factor());
}

TEST_P(CudaTrainer, Fp16WithTheLossScalerWithinTwiceTheCpusPrecisionGap) {
  ZT_REQUIRE_CUDA();
  expect_within_gap(GetParam(), DType::kF16, 20, sixteen_bit_factor());
}

// At T = 64 the tiny model's 16-bit attention runs as flash attention (at T = 16 the saved
// state does not fit in the activations' P slot, and the materialized kernels serve): the
// same rounding count as the materialized 16-bit products (P before P V and dV, dS before
// dQ and dK), so the same bar; two runs give the same bits.
TEST_P(CudaTrainer, FlashAttentionBf16WithinTheBarAndDeterministic) {
  ZT_REQUIRE_CUDA();
  if (cuda::attention_in_fp32() || cuda::attention_materialized()) GTEST_SKIP() << "ZT_CUDA_ATTENTION selects another path";
  ASSERT_TRUE(cuda::flash_attention_serves(DType::kBF16, 64, 64, 4));
  expect_within_gap(GetParam(), DType::kBF16, 20, sixteen_bit_factor(), 64);
  const TrainerOptions o = tiny(Device::kCuda, DType::kBF16, GetParam(), 64);
  const TrainRun a = train(o, 3), b = train(o, 3);
  ASSERT_EQ(a.steps.size(), 3u);
  EXPECT_TRUE(testing::same_bits(a.params, b.params)) << "two flash runs";
}

TEST_P(CudaTrainer, DeterministicAndZeroStagesAndCheckpointingChangeNoBit) {
  ZT_REQUIRE_CUDA();
  const bool llama = GetParam();
  const TrainerOptions base = tiny(Device::kCuda, DType::kBF16, llama);
  const TrainRun a = train(base, 4), b = train(base, 4);
  ASSERT_EQ(a.steps.size(), 4u);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(a.steps[s].loss, b.steps[s].loss) << "two runs, step " << s + 1;
  EXPECT_TRUE(testing::same_bits(a.params, b.params)) << "two runs";
  // As on the CPU: stage 1 keeps stage 0's full gradients (the same sums); stages 2 and 3
  // add each micro-batch's gradient bucket into the shard ((g1 + e1) + (g2 + e2) instead
  // of ((g1 + e1) + g2) + e2 for a tensor two layers write), so they equal each other.
  TrainRun by_stage[4];
  for (ZeroStage stage : {ZeroStage::kOptimizer, ZeroStage::kGradients, ZeroStage::kParameters}) {
    TrainerOptions o = base;
    o.zero.stage = stage;
    by_stage[static_cast<int>(stage)] = train(o, 4);
    ASSERT_EQ(by_stage[static_cast<int>(stage)].steps.size(), 4u);
  }
  EXPECT_TRUE(testing::same_bits(by_stage[1].params, a.params)) << "stage 1 against stage 0";
  EXPECT_TRUE(testing::same_bits(by_stage[3].params, by_stage[2].params)) << "stage 3 against stage 2";
  for (int s = 0; s < 4; ++s) EXPECT_EQ(by_stage[1].steps[s].loss, a.steps[s].loss) << "stage 1 step " << s + 1;
  for (int s = 0; s < 4; ++s) EXPECT_EQ(by_stage[3].steps[s].loss, by_stage[2].steps[s].loss) << "stage 3 step " << s + 1;
  if (!llama) {  // Llama refuses checkpointing in 16 bits on every backend
    TrainerOptions o = base;
    o.checkpoint.assign(2, true);
    const TrainRun c = train(o, 4);
    ASSERT_EQ(c.steps.size(), 4u);
    EXPECT_TRUE(testing::same_bits(c.params, a.params)) << "activation checkpointing";
  }
}

// Issue 29's first exactness bar: optimizer offload (the fp32 master and the moments in
// host memory, or on NVMe through host buffers, updated by the CPU's AdamW between staged
// copies of the gradients and the compute copy, in several sub_group_size pieces) gives
// the bits of the run with every state on the GPU, whose AdamW and casts are the CPU's bit
// for bit; at stage 3 also with the parameter shard in host memory (or on NVMe), each
// layer's part copied up before its gather.
TEST_P(CudaTrainer, OptimizerOffloadToHostMemoryChangesNoBit) {
  ZT_REQUIRE_CUDA();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("zt_cuda_offload_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    for (ZeroStage stage : {ZeroStage::kNone, ZeroStage::kParameters}) {
      TrainerOptions o = tiny(Device::kCuda, dtype, GetParam());
      o.zero.stage = stage;
      const TrainRun ref = train(o, 3);
      for (OffloadDevice where : {OffloadDevice::kCpu, OffloadDevice::kNvme}) {
        for (bool params : {false, true}) {
          if (params && stage != ZeroStage::kParameters) continue;
          OffloadOptions& f = o.zero.offload;
          f.optimizer_device = where;
          f.param_device = params ? where : OffloadDevice::kNone;
          f.optimizer_path = f.param_path = dir.string();
          f.sub_group_size = where == OffloadDevice::kNvme ? kChunkAlignElems : 3000;
          const TrainRun got = train(o, 3);
          const std::string what = std::string(dtype_name(dtype)) + " stage " + std::to_string(static_cast<int>(stage)) +
                                   (where == OffloadDevice::kNvme ? " nvme" : " cpu") + (params ? " +params" : "");
          ASSERT_EQ(got.steps.size(), 3u) << what;
          for (int s = 0; s < 3; ++s) EXPECT_EQ(got.steps[s].loss, ref.steps[s].loss) << what << " step " << s;
          EXPECT_TRUE(testing::same_bits(got.params, ref.params)) << what;
        }
      }
    }
  }
  std::filesystem::remove_all(dir);
}

// cpu_checkpointing on a GPU (issue 29's third exactness bar): the inputs of checkpointed
// blocks wait in host memory between forward and backward, with checkpointing's bits.
TEST_P(CudaTrainer, ActivationOffloadToHostMemoryChangesNoBit) {
  ZT_REQUIRE_CUDA();
  if (GetParam()) GTEST_SKIP() << "Llama refuses activation checkpointing in 16 bits on every backend";
  TrainerOptions o = tiny(Device::kCuda, DType::kBF16, false);
  o.checkpoint.assign(2, true);
  const TrainRun ref = train(o, 3);
  o.activation_host_stash = true;
  const TrainRun got = train(o, 3);
  ASSERT_EQ(got.steps.size(), 3u);
  for (int s = 0; s < 3; ++s) EXPECT_EQ(got.steps[s].loss, ref.steps[s].loss) << "step " << s;
  EXPECT_TRUE(testing::same_bits(got.params, ref.params));
}

// A checkpoint saved by a GPU run loads on the CPU (the same parameters) and, saved again
// there, back on the GPU, whose run then continues bit for bit as if never stopped.
TEST_P(CudaTrainer, CheckpointGoesGpuToCpuToGpuAndResumesBitForBit) {
  ZT_REQUIRE_CUDA();
  const bool llama = GetParam();
  char tmpl[] = "/tmp/zt_cuda_ckpt_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const TrainerOptions gpu_o = tiny(Device::kCuda, DType::kBF16, llama), cpu_o = tiny(Device::kCpu, DType::kBF16, llama);
  const TrainRun whole = train(gpu_o, 6);
  ASSERT_EQ(whole.steps.size(), 6u);
  auto gpu = Trainer::create(gpu_o);
  ASSERT_TRUE(gpu.ok());
  for (int s = 0; s < 3; ++s) {
    const testing::SyntheticStep data = testing::synthetic_step(61, 16, 2, 2, 0, 1, s, 11);
    ASSERT_TRUE((*gpu)->step(data.micro_batches()).ok());
  }
  std::vector<float> at3((*gpu)->param_table().numel());
  ASSERT_TRUE((*gpu)->gather_params(at3.data()).ok());
  ASSERT_TRUE(save_trainer(**gpu, {dir + "/gpu", "", 0, Json::object(), nullptr}).ok());
  auto cpu = Trainer::create(cpu_o);
  ASSERT_TRUE(cpu.ok());
  auto ckpt = open_checkpoint(dir + "/gpu");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().to_string();
  ASSERT_TRUE(load_trainer(**cpu, *ckpt, false).ok());
  std::vector<float> on_cpu(at3.size());
  ASSERT_TRUE((*cpu)->gather_params(on_cpu.data()).ok());
  EXPECT_TRUE(testing::same_bits(on_cpu, at3)) << "the GPU's parameters, loaded on the CPU";
  ASSERT_TRUE(save_trainer(**cpu, {dir + "/cpu", "", 0, Json::object(), nullptr}).ok());
  auto back = Trainer::create(gpu_o);
  ASSERT_TRUE(back.ok());
  auto ckpt2 = open_checkpoint(dir + "/cpu");
  ASSERT_TRUE(ckpt2.ok()) << ckpt2.status().to_string();
  ASSERT_TRUE(load_trainer(**back, *ckpt2, false).ok());
  for (int s = 3; s < 6; ++s) {
    const testing::SyntheticStep data = testing::synthetic_step(61, 16, 2, 2, 0, 1, s, 11);
    auto st = (*back)->step(data.micro_batches());
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->loss, whole.steps[s].loss) << "resumed step " << s + 1;
  }
  std::vector<float> end(at3.size());
  ASSERT_TRUE((*back)->gather_params(end.data()).ok());
  EXPECT_TRUE(testing::same_bits(end, whole.params)) << "GPU -> CPU -> GPU resume";
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Families, CudaTrainer, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Llama" : "Gpt2"; });

}  // namespace
}  // namespace zt

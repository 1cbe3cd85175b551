// Configuration JSON -> resolved configuration and Trainer options.
#include "engine/run_config.h"

#include "backend/planned_device.h"

#include "nn/gpt_params.h"

#include <algorithm>
#include <cstdio>

namespace zt {

namespace {

// What CUDA runs do not have, by the key that asks for it (or OK).
Status cuda_refusal(const ZtConfig& c) {
  if (c.zero.fetch.quantized_weights) {
    return Status::Unimplemented("/zero_optimization/zero_quantized_weights: qwZ runs on the CPU only (its quantizer "
                                 "is host code); use device cpu");
  }
  if (c.zero.reduce.quantized_gradients && c.zero.stage == ZeroStage::kParameters) {
    return Status::Unimplemented("/zero_optimization/zero_quantized_gradients: qgZ runs on the CPU only (its quantizer "
                                 "is host code); use device cpu");
  }
  if (c.optimizer == OptimizerKind::kOneBitAdam || c.optimizer == OptimizerKind::kZeroOneAdam ||
      c.optimizer == OptimizerKind::kOneBitLamb) {
    return Status::Unimplemented("/optimizer/type: the 1-bit optimizers run on the CPU only (their compression is host "
                                 "code); use device cpu, or Adam/AdamW/Lamb/SGD");
  }
  return Status::OK();
}

// Several ranks and offload on a GPU are built on the device-neutral path (bit-exact on
// the guarded backend) but have not run on a GPU yet: training refuses them until their
// CUDA tests have passed on one; estimate and plan describe them.
Status cuda_unverified(const ZtConfig& c, int world) {
  if (world > 1) {
    return Status::Unimplemented("/training/device: \"cuda\" with " + std::to_string(world) + " ranks: several ranks on "
                                 "CUDA (NCCL, or collectives staged through host memory) are built but have not run on "
                                 "a GPU yet (issue 29: CudaDp.TwoRanksOnOneGpuMatchTheSingleGpuAtEveryZeroStage and "
                                 "NcclTrainer wait for one); run one process, or device cpu");
  }
  const OffloadOptions& off = c.zero.offload;
  for (const auto& [device, key] : {std::pair{off.optimizer_device, "offload_optimizer"},
                                    std::pair{off.param_device, "offload_param"}}) {
    if (device == OffloadDevice::kNone) continue;
    return Status::Unimplemented(std::string("/zero_optimization/") + key + "/device: \"" +
                                 (device == OffloadDevice::kNvme ? "nvme" : "cpu") + "\" with device cuda is built but has "
                                 "not run on a GPU yet (issue 29: CudaTrainer.OptimizerOffloadToHostMemoryChangesNoBit "
                                 "waits for one); use \"none\", or device cpu");
  }
  if (c.activation_checkpointing.cpu_checkpointing) {
    return Status::Unimplemented("/activation_checkpointing/cpu_checkpointing: true with device cuda is built but has "
                                 "not run on a GPU yet (issue 29: CudaTrainer.ActivationOffloadToHostMemoryChangesNoBit "
                                 "waits for one); use false, or device cpu");
  }
  return Status::OK();
}

}  // namespace

StatusOr<ZtConfig> load_run_config(const Json& root, int world, RunPurpose purpose) {
  ZT_ASSIGN_OR_RETURN(ZtConfig c, parse_config(root));
  ZT_RETURN_IF_ERROR(resolve_parallel(&c.parallel, world));
  // Megatron-style: an unset padded vocabulary is padded to a multiple of tp (padding
  // never changes a result); an explicit one must already be divisible.
  if (c.parallel.tp > 1 && c.model.padded_vocab_size == 0) {
    c.model.padded_vocab_size = (c.model.vocab_size + c.parallel.tp - 1) / c.parallel.tp * c.parallel.tp;
  }
  ZT_RETURN_IF_ERROR(resolve_config_batch(&c));
  ZT_RETURN_IF_ERROR(check_supported(c));
  ZT_RETURN_IF_ERROR(resolve_device(&c, world, purpose));
  // On a GPU an unset padded vocabulary is padded to a multiple of 128, so the LM head's
  // rows are 16-byte aligned for cuBLASLt (padding never changes a result, as above).
  if (c.device == Device::kCuda && c.model.padded_vocab_size == 0 && c.model.vocab_size % 128 != 0) {
    c.model.padded_vocab_size = (c.model.vocab_size + 127) / 128 * 128;
    c.notes.push_back("model.padded_vocab_size: unset -> " + std::to_string(c.model.padded_vocab_size) +
                      " (a multiple of 128 on a GPU)");
  }
  add_run_notes(&c);
  return c;
}


Status resolve_device(ZtConfig* c, int world, RunPurpose purpose) {
  c->device = Device::kCpu;
  const std::string& want = c->training.device;
  if (want == "cpu") return Status::OK();
  const bool automatic = want == "auto";
  Status why = cuda_refusal(*c);
  if (why.ok() && purpose == RunPurpose::kPlan && !automatic) {  // described, not opened
    c->device = Device::kCuda;
    c->device_planned = true;
    return Status::OK();
  }
  if (why.ok()) why = cuda_unverified(*c, world);
  if (why.ok()) {
    const DType compute = c->precision.bf16 ? DType::kBF16 : c->precision.fp16 ? DType::kF16 : DType::kF32;
    why = backend_for(Device::kCuda, compute).status();
    if (!why.ok()) why = Status(why.code(), "/training/device: \"cuda\": " + why.message());
  }
  if (why.ok()) {
    c->device = Device::kCuda;
  } else if (automatic) {
    c->notes.push_back("training.device auto: cpu (" + why.message() + ")");
  } else {
    return why;
  }
  return Status::OK();
}

void print_config_notes(const ZtConfig& c) {
  for (const std::string& n : c.notes) std::printf("config: %s\n", n.c_str());
}

void print_resolved_config(const ZtConfig& c) { std::printf("%s\n", c.resolved.dump(2).c_str()); }

// The elements of the model's largest parameter tensor (sub_group_size 0's chunk).
static size_t largest_tensor(const GptConfig& model) {
  size_t most = 1;
  for (const TensorSpec& s : build_gpt_param_table(model).specs()) most = std::max(most, s.numel);
  return most;
}

GptTrainingOptions gpt_training_options(const ZtConfig& c) {
  GptTrainingOptions o;
  o.model = c.model;
  o.micro_batch = static_cast<int>(c.batch.micro_batch);
  o.seq_len = c.data.seq_len;
  o.optimizer = c.optimizer;
  o.adamw = c.adamw;
  o.sgd = c.sgd;
  o.lamb = c.lamb;
  o.onebit = c.onebit;
  o.schedule = c.schedule;
  o.gradient_clipping = c.gradient_clipping;
  o.seed = c.training.seed;
  o.backend = &run_backend(c);
  o.loss_scaler = c.precision.loss_scaler;
  return o;
}

const Backend& run_backend(const ZtConfig& c) {
  const DType compute = c.precision.bf16 ? DType::kBF16 : c.precision.fp16 ? DType::kF16 : DType::kF32;
  // Every cpu dtype exists; cuda was resolved with the config (or is only planned).
  return c.device_planned ? planned_device(c.device, compute) : *backend_for(c.device, compute).value();
}

TrainerOptions trainer_options(const ZtConfig& c) {
  TrainerOptions o;
  static_cast<GptTrainingOptions&>(o) = gpt_training_options(c);
  o.zero = c.zero;  // parsed into the modules' own options (parallel/data/zero_options.h)
  OffloadOptions& f = o.zero.offload;
  if (f.sub_group_size == 0) f.sub_group_size = largest_tensor(c.model);  // DeepSpeed's 0: per tensor
  o.pipe_schedule = c.parallel.pipeline_schedule == "gpipe" ? PipeScheduleKind::kGPipe : PipeScheduleKind::k1F1B;
  o.micro_batches = static_cast<int>(c.batch.grad_accum);
  o.checkpoint = checkpointed_blocks(c.activation_checkpointing, c.model.n_layer);
  o.partition_activations = c.activation_checkpointing.partition_activations;
  o.efficiency = c.efficiency;
  o.flash_attention = c.training.attention == "flash";
  if (c.activation_checkpointing.cpu_checkpointing) {  // to the NVMe tier when one is configured, else host memory
    o.activation_swap_dir = f.swaps_params() ? f.param_path : f.swaps_optimizer() ? f.optimizer_path : "";
    o.activation_host_stash = o.activation_swap_dir.empty();
  }
  return o;
}

StagePartition stage_partition(const ZtConfig& c) {
  if (c.parallel.partition_method == "uniform") return StagePartition::kUniform;
  if (c.parallel.partition_method == "parameters") return StagePartition::kParameters;
  return StagePartition::kFlops;
}

}  // namespace zt

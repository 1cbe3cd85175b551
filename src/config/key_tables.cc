// The vocabulary tables (key_tables.h). Sources: DeepSpeed's runtime/config.py,
// runtime/zero/config.py (pydantic aliases and deprecated fields), runtime/constants.py,
// and HuggingFace transformers' integrations/deepspeed.py for "auto".
#include "config/key_tables.h"

namespace zt {

const std::vector<KeyAlias>& key_aliases() {
  static const std::vector<KeyAlias> t = {
      {"/bfloat16", "/bf16", "the legacy \"bfloat16\" block is DeepSpeed's old name of \"bf16\""},
      {"/zero_optimization/cpu_offload", "/zero_optimization/offload_optimizer",
       "deprecated; true means offload_optimizer {\"device\": \"cpu\"}"},
      {"/zero_optimization/cpu_offload_param", "/zero_optimization/offload_param",
       "deprecated; true means offload_param {\"device\": \"cpu\"}"},
      {"/zero_optimization/cpu_offload_params", "/zero_optimization/offload_param",
       "deprecated; true means offload_param {\"device\": \"cpu\"}"},
      {"/zero_optimization/cpu_offload_use_pin_memory", "/zero_optimization/offload_optimizer/pin_memory",
       "deprecated; sets pin_memory of offload_optimizer and offload_param"},
      {"/zero_optimization/stage3_gather_fp16_weights_on_model_save",
       "/zero_optimization/stage3_gather_16bit_weights_on_model_save", "deprecated name"},
      {"/zero_optimization/gather_16bit_weights_on_model_save",
       "/zero_optimization/stage3_gather_16bit_weights_on_model_save", "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/prefetch_bucket_size", "/zero_optimization/stage3_prefetch_bucket_size",
       "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/param_persistence_threshold", "/zero_optimization/stage3_param_persistence_threshold",
       "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/model_persistence_threshold", "/zero_optimization/stage3_model_persistence_threshold",
       "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/max_live_parameters", "/zero_optimization/stage3_max_live_parameters",
       "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/max_reuse_distance", "/zero_optimization/stage3_max_reuse_distance",
       "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/module_granularity_threshold", "/zero_optimization/stage3_module_granularity_threshold",
       "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/use_all_reduce_for_fetch_params", "/zero_optimization/stage3_use_all_reduce_for_fetch_params",
       "DeepSpeed's unprefixed spelling"},
      {"/zero_optimization/allgather_sequential", "/zero_optimization/stage3_allgather_sequential",
       "DeepSpeed's unprefixed spelling"},
      {"/tensor_parallel/autotp_size", "/parallel/tp", "DeepSpeed's AutoTP degree is zerotrain's parallel.tp"},
      {"/pipeline/stages", "/parallel/pp", "a number of pipeline stages is zerotrain's parallel.pp (\"auto\": from parallel)"},
  };
  return t;
}

const std::vector<AutoRule>& auto_rules() {
  static const std::vector<AutoRule> t = {
      {"/train_batch_size", "train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel size"},
      {"/train_micro_batch_size_per_gpu",
       "train_batch_size / (gradient_accumulation_steps x dp) when train_batch_size is a number, else 8 "
       "(HuggingFace's per_device_train_batch_size default)"},
      {"/gradient_accumulation_steps",
       "train_batch_size / (micro-batch x dp) when both are numbers, else 1 (HuggingFace's default)"},
      {"/gradient_clipping", "1.0 (HuggingFace's max_grad_norm default)"},
      {"/optimizer/params/lr", "the optimizer's DeepSpeed default (1e-3)"},
      {"/optimizer/params/betas", "[0.9, 0.999]"},
      {"/optimizer/params/eps", "1e-8"},
      {"/optimizer/params/weight_decay", "0.0"},
      {"/scheduler/params/warmup_min_lr", "0"},
      {"/scheduler/params/warmup_max_lr", "the optimizer's lr"},
      {"/scheduler/params/warmup_num_steps", "0 (HuggingFace's warmup_steps default; DeepSpeed warms up over at least 2)"},
      {"/scheduler/params/total_num_steps", "training.steps"},
      {"/fp16/enabled", "false; bf16 is enabled instead where the CPU computes bf16 natively (AVX-512 BF16 or AMX)"},
      {"/bf16/enabled", "true where the CPU computes bf16 natively (AVX-512 BF16 or AMX), else false (fp32)"},
      {"/amp/enabled", "false"},
      {"/zero_optimization/reduce_bucket_size", "hidden size squared (HuggingFace's rule)"},
      {"/zero_optimization/stage3_prefetch_bucket_size", "0.9 x hidden size squared (HuggingFace's rule)"},
      {"/zero_optimization/stage3_param_persistence_threshold", "10 x hidden size (HuggingFace's rule)"},
      {"/zero_optimization/stage3_gather_16bit_weights_on_model_save", "false (accelerate's zero3_save_16bit_model default)"},
  };
  return t;
}

const std::vector<InertKey>& inert_keys() {
  static const char* kFlat = "an implementation knob of DeepSpeed's bucketed copies; zerotrain's gradients and "
                             "parameters live in flat arenas";
  static const char* kBf16Scale = "bf16 has fp32's exponent range and needs no loss scaling; DeepSpeed's bf16 "
                                  "block reads no loss-scale key either";
  static const std::vector<InertKey> t = {
      {"/prescale_gradients",
       "zerotrain divides the loss by the global token count before backward, so each rank's gradient is already "
       "divided by the data-parallel size before the (fp32) reduction"},
      {"/gradient_predivide_factor", "as prescale_gradients: gradients are divided before the fp32 reduction already"},
      {"/zero_optimization/round_robin_gradients",
       "orders DeepSpeed's gradient copies to host memory under offload; here gradients are already in host memory"},
      {"/zero_optimization/stage3_max_live_parameters",
       "the ZeRO-3 fetcher holds the prefetch window plus persistent parameters; there is no other cap"},
      {"/zero_optimization/stage3_max_reuse_distance",
       "gathered parameters are released after use (beyond the prefetch window), which is what -1 asks for"},
      {"/zero_optimization/stage3_gather_16bit_weights_on_model_save",
       "checkpoints always hold whole tensors; `zerotrain export` writes 16-bit weights from any layout"},
      {"/zero_optimization/contiguous_gradients", kFlat},
      {"/zero_optimization/allgather_partitions", kFlat},
      {"/zero_optimization/stage3_model_persistence_threshold", kFlat},
      {"/zero_optimization/stage3_module_granularity_threshold", kFlat},
      {"/optimizer/params/comm_backend_name", "MPI is zerotrain's only communication backend"},
      {"/optimizer/params/cuda_aware", "MPI is zerotrain's only communication backend, on host memory"},
      {"/optimizer/params/torch_adam", "zerotrain always uses its own SIMD kernel"},
      {"/optimizer/params/max_grad_norm", "DeepSpeed sets it to 0 (off) in fp32 runs; gradient_clipping clips"},
      {"/compile", "zerotrain is compiled ahead of time; there is no torch.compile step"},
      {"/checkpoint/load_universal", "zerotrain checkpoints reshard to any layout on load"},
      {"/memory_breakdown", "zerotrain always reports memory"},
      {"/seq_parallel_communication_data_type", "Ulysses' all-to-all carries the activations in the run's compute "
                                                "precision; it only moves values, so it rounds nothing"},
      {"/comms_config", "DeepSpeed reads no such key (its comms logger is comms_logger) and ignores it; so does zerotrain"},
      {"/monitor_config", "DeepSpeed reads no such key (its monitors are the top-level tensorboard, csv_monitor and "
                          "wandb blocks) and ignores it; so does zerotrain"},
      {"/dataloader_drop_last", "zerotrain's sampler always uses whole batches"},
      {"/autotuning/arg_mappings", "zerotrain tunes its own run: there is no user script whose flags to rewrite"},
      {"/autotuning/num_gpus", "the run's ranks are the ones mpirun launched"},
      {"/autotuning/num_nodes", "the run's ranks are the ones mpirun launched"},
      {"/autotuning/tuner_type", "the planner prices every candidate and short trials confirm the best; no search "
                                 "heuristic is needed"},
      {"/autotuning/metric_path", "the trials' metrics go to results_dir/<experiment>/metrics.json"},
      {"/autotuning/model_info", "the model is zerotrain's own: its size is known without a profiling run"},
      {"/data_efficiency/seed", "zerotrain's random-LTD and layer-drop draws derive from the run's seed"},
      {"/data_efficiency/data_sampling/num_workers", "zerotrain's data loader reads memory-mapped tokens in the training thread"},
      {"/data_efficiency/data_sampling/pin_memory", "host memory is the training memory on the CPU"},
      {"/data_efficiency/data_sampling/num_epochs", "training.steps bounds a run; the sampler cycles the data"},
      {"/data_efficiency/data_sampling/curriculum_learning/data_cluster_path",
       "no cluster files: the seqlen curriculum truncates batches and needs none"},
      {"/data_efficiency/data_routing/random_ltd/model_mask_name", "zerotrain's blocks build their own causal masks"},
      {"/data_efficiency/data_routing/random_ltd/hidden_state_order", "zerotrain's blocks see (batch, sequence) rows"},
      {"/data_efficiency/data_routing/random_ltd/global_batch_size",
       "DeepSpeed's engine overwrites it with train_batch_size; so does zerotrain"},
      {"/data_efficiency/data_routing/random_ltd/micro_batch_size",
       "DeepSpeed's engine overwrites it with train_micro_batch_size_per_gpu; so does zerotrain"},
      {"/fp16/opt_level", "an Apex AMP optimisation level; DeepSpeed's fp16 block ignores it (fp16 here keeps fp32 "
                          "master weights, Apex's O2)"},
      {"/bf16/loss_scale", kBf16Scale},
      {"/bf16/initial_scale_power", kBf16Scale},
      {"/bf16/loss_scale_window", kBf16Scale},
      {"/bf16/hysteresis", kBf16Scale},
      {"/bf16/consecutive_hysteresis", kBf16Scale},
      {"/bf16/min_loss_scale", kBf16Scale},
      {"/quantize_training", "DeepSpeed reads MoQ from compression_training.weight_quantization since v0.7 and ignores "
                             "this legacy block (its eigenvalue sub-block is asserted off); so does zerotrain: use "
                             "compression_training"},
      {"/eigenvalue/layer_name", "zerotrain's blocks are its transformer layers; no module path is needed"},
      {"/eigenvalue/model_name", "not a key DeepSpeed reads (a test config's label)"},
  };
  return t;
}

const std::vector<RefusedKey>& refused_sections() {
  static const std::vector<RefusedKey> t = {
      {"/wandb", RefusalKind::kNoNetwork, "Weights & Biases needs its network service", "tensorboard or csv_monitor"},
      {"/comet", RefusalKind::kNoNetwork, "Comet needs its network service", "tensorboard or csv_monitor"},
      {"/nebula", RefusalKind::kNoNetwork, "Nebula checkpointing is an Azure storage service", "checkpoint saving"},
      {"/amp", RefusalKind::kGpuOnly, "NVIDIA Apex AMP is a CUDA library", "bf16 or fp16"},
      {"/torch_autocast", RefusalKind::kGpuOnly, "torch autocast casts PyTorch modules", "bf16 or fp16"},
      {"/sparse_attention", RefusalKind::kGpuOnly, "DeepSpeed's sparse attention is CUDA/Triton kernels", ""},
      {"/hybrid_engine", RefusalKind::kGpuOnly, "the RLHF hybrid engine switches to CUDA inference kernels", ""},
      {"/elasticity", RefusalKind::kNotBuilt, "elastic training is not built", ""},
      {"/sequence_parallel", RefusalKind::kNotBuilt, "a sequence_parallel section is not DeepSpeed's key",
       "sequence_parallel_size (Ulysses)"},
      {"/cuda_visible_devices", RefusalKind::kGpuOnly, "it selects CUDA devices",
       "mpirun's hosts and slots to place ranks"},
  };
  return t;
}

const std::vector<RefusedKey>& refused_values() {
  static const std::vector<RefusedKey> t = {
      {"/aio/use_gds", RefusalKind::kGpuOnly, "true: GPUDirect Storage moves data between NVMe and GPU memory", ""},
      {"/zero_optimization/offload_optimizer/ratio", RefusalKind::kGpuOnly,
       "below 1 (ZeRO-Offload++ \"Twin-Flow\") splits the step between accelerator and CPU; a CPU run updates "
       "every parameter on the CPU", ""},
      {"/optimizer/type", RefusalKind::kNotBuilt,
       "Adagrad, Lion, Muon, MuAdam, MuAdamW, MuSGD, AdamW8bit and RMSprop are not built",
       "Adam, AdamW, SGD, Lamb, OneBitAdam, ZeroOneAdam or OneBitLamb"},
      {"/scheduler/type", RefusalKind::kNotBuilt, "LRRangeTest is not built",
       "WarmupLR, WarmupDecayLR, WarmupCosineLR or OneCycle"},
      {"/data_types/grad_accum_dtype", RefusalKind::kNotBuilt, "fp16 and bf16 are not built: gradients accumulate in fp32",
       "\"fp32\""},
      {"/zero_optimization/zero_quantized_nontrainable_weights", RefusalKind::kNotBuilt, "true is not built", ""},
      {"/zero_optimization/mics_shard_size", RefusalKind::kNotBuilt, "MiCS is not built", ""},
      {"/zero_optimization/mics_hierarchical_params_gather", RefusalKind::kNotBuilt, "MiCS is not built", ""},
      {"/zero_optimization/elastic_checkpoint", RefusalKind::kNotBuilt,
       "true is not built (zerotrain checkpoints reshard on load anyway)", ""},
      {"/bf16/bf16_master_weights_and_grads", RefusalKind::kNotBuilt,
       "true is not built: master weights and gradients are fp32 (DeepSpeed's default)", ""},
      {"/bf16/bf16_optimizer_states", RefusalKind::kNotBuilt, "true is not built: optimizer states are fp32", ""},
      {"/optimizer/params/adam_w_mode", RefusalKind::kNotBuilt, "false (Adam with L2-coupled decay) is not built",
       "AdamW"},
      {"/optimizer/params/amsgrad", RefusalKind::kNotBuilt, "true is not built", ""},
      {"/sparse_gradients", RefusalKind::kNotBuilt, "true is not built (zerotrain's embeddings have dense gradients)", ""},
      {"/dump_state", RefusalKind::kNotBuilt, "true (DeepSpeed's debug dump of engine state) is not built", ""},
      {"/compression_training/weight_quantization/shared_parameters/quantizer_kernel", RefusalKind::kGpuOnly,
       "true selects DeepSpeed's CUDA fake-quantizer kernels (which round stochastically whatever `rounding` says)",
       "false"},
      {"/compression_training/weight_quantization/shared_parameters/rounding", RefusalKind::kNotBuilt,
       "\"stochastic\" is not built", "\"nearest\""},
      {"/compression_training/activation_quantization/shared_parameters/range_calibration", RefusalKind::kNotBuilt,
       "\"static\" (a running min/max buffer) is not built", "\"dynamic\""},
      {"/compression_training/sparse_pruning/shared_parameters/enabled", RefusalKind::kNotBuilt, "sparse pruning is not built", ""},
      {"/compression_training/row_pruning/shared_parameters/enabled", RefusalKind::kNotBuilt, "row pruning is not built", ""},
      {"/compression_training/head_pruning/shared_parameters/enabled", RefusalKind::kNotBuilt, "head pruning is not built", ""},
      {"/compression_training/channel_pruning/shared_parameters/enabled", RefusalKind::kNotBuilt,
       "channel pruning cuts Conv2d output channels; GPT-2 and Llama have no convolutions", ""},
      {"/compression_training/layer_reduction/enabled", RefusalKind::kNotBuilt,
       "layer reduction (initialising a shallower student from a teacher's layers) is not built", ""},
      {"/autotuning/metric", RefusalKind::kNotBuilt,
       "\"flops\" (DeepSpeed's engine writes FLOPS_per_gpu, which its autotuner then cannot read)",
       "\"throughput\" or \"latency\""},
      {"/curriculum_learning/schedule_type", RefusalKind::kNotBuilt,
       "\"custom\" is a Python callback DeepSpeed calls (set_custom_curriculum_learning_schedule)",
       "fixed_linear, fixed_root or fixed_discrete"},
      {"/curriculum_learning/curriculum_type", RefusalKind::kNotBuilt,
       "only \"seqlen\" is built (the legacy block's other types need the user's model code)", "\"seqlen\""},
      {"/data_efficiency/data_routing/random_ltd/model_type", RefusalKind::kNotBuilt,
       "\"encoder\": zerotrain's GPT-2 and Llama are decoders", "\"decoder\""},
      {"/data_efficiency/data_routing/random_ltd/layer_token_lr_schedule/enabled", RefusalKind::kNotBuilt,
       "true: DeepSpeed raises NotImplementedError for it too", ""},
  };
  return t;
}

const RefusedKey* find_refused_value(const std::string& pointer) {
  for (const RefusedKey& r : refused_values()) {
    if (pointer == r.pointer) return &r;
  }
  return nullptr;
}

const char* refusal_kind_name(RefusalKind kind) {
  switch (kind) {
    case RefusalKind::kGpuOnly: return "needs a GPU";
    case RefusalKind::kNotBuilt: return "not built";
    case RefusalKind::kNoNetwork: return "needs a network service";
  }
  return "";
}

std::string refusal_text(const RefusedKey& r) {
  std::string s = std::string(refusal_kind_name(r.kind)) + ": " + r.why;
  if (r.instead[0] != '\0') s += "; use " + std::string(r.instead) + " instead";
  return s;
}

}  // namespace zt

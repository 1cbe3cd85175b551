// Configuration JSON -> resolved configuration and Trainer options.
#include "cli/run_setup.h"

#include "cli/run_inputs.h"

#include <algorithm>
#include <cstdio>

namespace zt {

StatusOr<ZtConfig> load_run_config(const Json& root, int world) {
  ZT_ASSIGN_OR_RETURN(ZtConfig c, parse_config(root));
  ZT_RETURN_IF_ERROR(resolve_parallel(&c.parallel, world));
  // Megatron-style: an unset padded vocabulary is padded to a multiple of tp (padding
  // never changes a result); an explicit one must already be divisible.
  if (c.parallel.tp > 1 && c.model.padded_vocab_size == 0) {
    c.model.padded_vocab_size = (c.model.vocab_size + c.parallel.tp - 1) / c.parallel.tp * c.parallel.tp;
  }
  ZT_RETURN_IF_ERROR(resolve_config_batch(&c));
  ZT_RETURN_IF_ERROR(check_supported(c));
  add_run_notes(&c);
  return c;
}

void print_config_notes(const ZtConfig& c) {
  for (const std::string& n : c.notes) std::printf("config: %s\n", n.c_str());
}

void print_resolved_config(const ZtConfig& c) { std::printf("%s\n", c.resolved.dump(2).c_str()); }

TrainerOptions trainer_options(const ZtConfig& c) {
  TrainerOptions o;
  static_cast<GptTrainingOptions&>(o) = gpt_training_options(c);
  o.zero.stage = static_cast<ZeroStage>(c.zero.stage);
  // DeepSpeed allows 0: every layer is then a bucket of its own.
  o.zero.reduce_bucket_elems = static_cast<size_t>(std::max<int64_t>(1, c.zero.reduce_bucket_size));
  o.zero.allgather_bucket_elems = static_cast<size_t>(std::max<int64_t>(1, c.zero.allgather_bucket_size));
  o.zero.overlap_comm = c.zero.overlap_comm;
  o.zero.prefetch_elems = static_cast<size_t>(c.zero.stage3_prefetch_bucket_size);
  o.zero.persistence_threshold = static_cast<size_t>(c.zero.stage3_param_persistence_threshold);
  OffloadOptions& f = o.zero.offload;
  f.optimizer = c.zero.offload_optimizer.device == "nvme";
  f.params = c.zero.offload_param.device == "nvme" && c.zero.stage == 3;  // ignored below stage 3 (a note says so)
  f.optimizer_path = c.zero.offload_optimizer.nvme_path;
  f.param_path = c.zero.offload_param.nvme_path.empty() ? f.optimizer_path : c.zero.offload_param.nvme_path;
  f.sub_group_size = static_cast<size_t>(c.zero.sub_group_size);
  f.pin_memory = c.zero.offload_optimizer.pin_memory;
  f.param_buffer_count = static_cast<int>(c.zero.offload_param.buffer_count);
  f.param_buffer_size = static_cast<size_t>(c.zero.offload_param.buffer_size);
  f.max_in_cpu = static_cast<size_t>(c.zero.offload_param.max_in_cpu);
  f.aio = c.aio;
  o.pipe_schedule = c.parallel.pipeline_schedule == "gpipe" ? PipeScheduleKind::kGPipe : PipeScheduleKind::k1F1B;
  o.micro_batches = static_cast<int>(c.batch.grad_accum);
  o.checkpoint = checkpointed_blocks(c.activation_checkpointing, c.model.n_layer);
  o.partition_activations = c.activation_checkpointing.partition_activations;
  if (c.activation_checkpointing.cpu_checkpointing) {  // to the NVMe tier when one is configured
    o.activation_swap_dir = f.params ? f.param_path : f.optimizer ? f.optimizer_path : "";
  }
  return o;
}

StagePartition stage_partition(const ZtConfig& c) {
  if (c.parallel.partition_method == "uniform") return StagePartition::kUniform;
  if (c.parallel.partition_method == "parameters") return StagePartition::kParameters;
  return StagePartition::kFlops;
}

}  // namespace zt

// Per-rank memory from the configuration alone (see memory_estimate.h).
#include "engine/memory_estimate.h"

#include <algorithm>

#include "nn/gpt_activations.h"
#include "nn/gpt_params.h"
#include "parallel/offload/activation_swap.h"
#include "parallel/pipeline/schedule.h"
#include "parallel/zero/partition.h"
#include "parallel/zero/swapped_shard.h"

namespace zt {

namespace {

// Bytes of optimizer state per owned element.
size_t optimizer_bytes_per_element(const TrainerOptions& o) {
  if (o.optimizer == OptimizerKind::kAdamW) return 8;  // exp_avg, exp_avg_sq
  if (o.optimizer == OptimizerKind::kLamb) return 8;   // exp_avg, exp_avg_sq
  if (o.optimizer == OptimizerKind::kSgd) return o.sgd.momentum != 0.0 ? 4 : 0;  // momentum_buffer
  // The 1-bit optimizers: their state arrays (m, v, and 0/1 Adam's accumulator or 1-bit
  // LAMB's fresh variance), the worker error feedback and one scratch vector (the server
  // error, 1/dp of an element, is within the tensors' padding slack).
  if (o.optimizer == OptimizerKind::kOneBitAdam) return 8 + 4 + 4;
  return 12 + 4 + 4;  // kZeroOneAdam, kOneBitLamb
}

// Gradient buckets from stage 2 (GradReducer's pool, per bucket size), and their 16-bit
// copies with communication_data_type bf16/fp16 (every stage) or qgZ's encoded ones; ZeRO-3's gather
// buffers and persistent copies: the layers held (at most one copy of every layer of the
// rank) plus the prefetch window ahead of them (stage3_prefetch_bucket_size elements, at
// most the rank's layers again: the backward's fetches start while the forward's are held).
size_t buffer_bound(const TrainerOptions& o, const ParamTable& table, const Partition& partition, int dp_rank) {
  size_t b = 0;
  if (o.zero.reduce.quantized_gradients && shards_parameters(o.zero.stage)) {  // ZeRO++ qgZ's encoded buffers
    b += GradReducer::max_qgz_bytes(table, o.zero.reduce.bucket_elems, partition, dp_rank,
                                    o.zero.fetch.hpz_partition_size);
  }
  if (shards_gradients(o.zero.stage)) b += GradReducer::max_buffer_bytes(table, o.zero.reduce.bucket_elems);
  if (o.zero.reduce.wire != CommDType::kF32) b += GradReducer::max_wire_bytes(table, o.zero.reduce.bucket_elems);
  if (shards_parameters(o.zero.stage)) {
    const size_t window = std::min(o.zero.fetch.prefetch_elems, table.numel());
    b += (table.numel() + window) * dtype_size(backend_or_cpu(o.backend).compute_dtype());
    const size_t hpz = static_cast<size_t>(o.zero.fetch.hpz_partition_size);  // hpZ's secondary slices
    if (hpz > 1) {  // each layer's slice: ceil(n / hpz) elements rounded up to the alignment, <= n / hpz + 64
      b += (table.numel() / hpz + 64 * static_cast<size_t>(o.model.n_layer + 2)) *
           dtype_size(backend_or_cpu(o.backend).compute_dtype());
    }
  }
  return b;
}

// How often ParamFetcher fetches a non-persistent layer per micro-batch with a backward:
// forward and backward (the embedding's second fetch is the tied head's), ln_f once.
int fetches_per_micro(int layer, int n_layer) { return layer == n_layer ? 1 : 2; }

// NVMe offload (see memory_estimate.h): SwapArrays' and SwappedShard's geometry.
void estimate_offload(const TrainerOptions& o, const ParamTable& table, ElementRange shard, size_t owned, DType compute,
                      MemoryEstimate* e) {
  const OffloadOptions& f = o.zero.offload;
  if (!f.swaps_optimizer()) return;
  const bool mixed = compute != DType::kF32;
  std::vector<size_t> read_bytes;  // per swapped array read by the step
  const bool host_update = ModelStates::updates_on_host(backend_or_cpu(o.backend), f);
  if (mixed || f.swaps_params() || host_update) read_bytes.push_back(sizeof(float));  // the master (fp32: the parameter shard)
  for (size_t i = 0; i < optimizer_bytes_per_element(o) / sizeof(float); ++i) read_bytes.push_back(sizeof(float));
  std::vector<size_t> all = read_bytes;
  if (mixed && f.swaps_params()) all.push_back(dtype_size(compute));  // the 16-bit shard, only written
  const size_t ce = SwapArrays::effective_chunk_elems(f.sub_group_size, owned);
  for (size_t b : all) {
    e->disk_bytes += round_up_io(owned * b);
    e->offload_buffer_bytes += 3 * round_up_io(ce * b);
    e->swap_pass_write += round_up_io(owned * b);
  }
  for (size_t b : read_bytes) e->swap_pass_read += round_up_io(owned * b);
  e->disk_read_per_step += e->swap_pass_read;
  e->disk_write_per_step += e->swap_pass_write;
  e->swap_chunks = ce == 0 ? 0 : (owned + ce - 1) / ce;
  e->optimizer_bytes = 0;
  e->param_bytes -= e->master_bytes;
  e->master_bytes = 0;
  if (!f.swaps_params()) return;
  const size_t cs = dtype_size(compute), cached = std::min(f.max_in_cpu, shard.size());
  e->param_bytes = cached * cs;
  size_t max_part = 0, per_micro = 0;
  for (int layer = kEmbeddingLayer; layer <= o.model.n_layer; ++layer) {
    const ElementRange r = table.layer_range(layer);
    const size_t lo = std::max(r.begin, shard.begin), hi = std::min(r.end, shard.end);
    if (lo >= hi) continue;
    max_part = std::max(max_part, hi - lo);
    if (r.size() < o.zero.fetch.persistence_threshold || hi - shard.begin <= cached) continue;  // not read from disk
    per_micro += static_cast<size_t>(fetches_per_micro(layer, o.model.n_layer)) * (hi - lo) * cs;
  }
  e->offload_buffer_bytes += static_cast<size_t>(std::max(2, f.param_buffer_count)) *
                             round_up_io(SwappedShard::stage_bytes(std::max<size_t>(max_part, 1), cs));
  e->disk_read_per_step += per_micro * static_cast<size_t>(std::max(1, o.micro_batches));
}

// Offload on a device: the bytes the host update moves (the owned gradients down, the
// compute copy up unless the shard lives on the host) and, with the shard on the host,
// this rank's part of every layer fetch copied up (each non-persistent layer twice per
// micro-batch, ln_f once, as ParamFetcher fetches; persistent layers once per step).
void add_host_update_traffic(const TrainerOptions& o, const ParamTable& table, ElementRange shard, size_t owned,
                             DType compute, MemoryEstimate* e) {
  const Backend& b = backend_or_cpu(o.backend);
  if (!ModelStates::updates_on_host(b, o.zero.offload)) return;
  const bool host_shard = ModelStates::params_on_host(b, o.zero.offload);
  e->pcie_update_bytes = owned * sizeof(float) + (host_shard ? 0 : owned * dtype_size(compute));
  e->pcie_bytes_per_step += e->pcie_update_bytes;
  if (!host_shard) return;
  size_t per_micro = 0, per_step = 0;
  for (int layer = kEmbeddingLayer; layer <= o.model.n_layer; ++layer) {
    const ElementRange r = table.layer_range(layer);
    const size_t lo = std::max(r.begin, shard.begin), hi = std::min(r.end, shard.end);
    if (lo >= hi) continue;
    const size_t part = (hi - lo) * dtype_size(compute);
    if (r.size() < o.zero.fetch.persistence_threshold) {
      per_step += part;
    } else {
      per_micro += static_cast<size_t>(fetches_per_micro(layer, o.model.n_layer)) * part;
    }
  }
  e->pcie_bytes_per_step += per_step + per_micro * static_cast<size_t>(std::max(1, o.micro_batches));
}

// The stash of checkpointed inputs: host entries (ActivationHostStash), or the disk
// (ActivationSwap: an entry per (slot, block), each stashed input written and read once
// per micro-batch).
void add_activation_stash(const TrainerOptions& o, ActivationStashKind kind, int slots, int T, DType compute,
                          MemoryEstimate* e) {
  const size_t bytes = static_cast<size_t>(o.micro_batch) * static_cast<size_t>(T) *
                       static_cast<size_t>(o.model.n_embd) * dtype_size(compute);
  if (kind == ActivationStashKind::kNone) return;  // (a stash implies checkpointed blocks)
  const size_t stashed = stashed_blocks(o.model, o.layout, o.checkpoint).size();  // this stage's, as the model's
  if (kind == ActivationStashKind::kHost) {  // each stashed input out in forward, back in backward
    const size_t held = ActivationHostStash::bytes_for(slots, static_cast<int>(stashed), bytes);
    e->offload_buffer_bytes += held;
    if (o.zero.offload.pin_memory) e->pinned_bytes += held;  // the staging host's (trainer.cc)
    e->pcie_bytes_per_step += 2 * stashed * bytes * static_cast<size_t>(std::max(1, o.micro_batches));
  }
  if (kind != ActivationStashKind::kDisk) return;
  e->offload_buffer_bytes += ActivationSwap::buffer_bytes_for(bytes);
  e->disk_bytes += round_up_io(bytes) * static_cast<size_t>(slots) * static_cast<size_t>(o.model.n_layer);
  const size_t moved = stashed * round_up_io(bytes) * static_cast<size_t>(std::max(1, o.micro_batches));
  e->disk_read_per_step += moved;
  e->disk_write_per_step += moved;
}

// The CPU kernels' f16 linear layers (every CPU-device backend's, the guarded test backend's
// too) widen each weight into a buffer they keep (kernels/cpu/half_ops_impl.h's
// half_weight_scratch): the largest matrix, in fp32.
size_t widened_weight_bytes(const Backend& b, const ParamTable& table) {
  if (b.compute_dtype() != DType::kF16 || b.device() != Device::kCpu) return 0;
  size_t largest = 0;
  for (const TensorSpec& t : table.specs()) largest = std::max(largest, t.numel);
  return largest * sizeof(float);
}

// The activation arena the Trainer's model carves for this rank (trainer.cc, gpt_model.cc).
ArenaShape arena_shape(const TrainerOptions& o, ActivationStashKind kind, int slots, int T, bool shared_head) {
  ArenaShape shape;
  shape.max_batch = o.micro_batch;
  shape.max_seq = T;
  shape.slots = slots;
  shape.checkpoint = o.checkpoint;
  shape.partition = o.partition_activations;
  shape.stash = kind != ActivationStashKind::kNone;
  shape.stash_ahead = kind == ActivationStashKind::kHost;  // ActivationHostStash fills ahead
  shape.routing = o.block_routing || o.efficiency.routes_blocks();
  shape.flash = o.flash_attention;
  shape.shared_head = shared_head;
  return shape;
}

}  // namespace

StatusOr<MemoryEstimate> estimate_rank_memory(const TrainerOptions& o, int dp_size, int dp_rank, int pp_size,
                                              int pp_rank) {
  ZT_RETURN_IF_ERROR(o.model.validate());
  ZT_RETURN_IF_ERROR(o.layout.validate(o.model));
  ZT_RETURN_IF_ERROR(ModelStates::validate(o.zero.stage, pp_size));
  if (dp_size < 1 || dp_rank < 0 || dp_rank >= dp_size || pp_rank < 0 || pp_rank >= std::max(1, pp_size)) {
    return Status::InvalidArgument("rank outside its groups");
  }
  const DType compute = backend_or_cpu(o.backend).compute_dtype();
  const ParamTable table = build_gpt_param_table(o.model, o.layout);
  const Partition partition(table.numel(), dp_size, partition_align(compute));
  const size_t psi = table.numel(), shard = partition.shard(dp_rank).size();
  MemoryEstimate e;
  e.psi = psi;
  // The compute copy, and the fp32 master of the owned range in mixed precision or when a
  // device's optimizer runs on the host (offload_optimizer "cpu"; then with its staging).
  const size_t owned = shards_optimizer(o.zero.stage) ? shard : psi;
  e.owned = owned;
  const bool host_update = ModelStates::updates_on_host(backend_or_cpu(o.backend), o.zero.offload);
  if (compute != DType::kF32 || host_update) e.master_bytes = owned * sizeof(float);
  e.param_bytes = (shards_parameters(o.zero.stage) ? shard : psi) * dtype_size(compute) + e.master_bytes;
  const size_t staged = ModelStates::host_stage_bytes(backend_or_cpu(o.backend), o.zero.offload, owned);
  e.offload_buffer_bytes += staged;
  if (o.zero.offload.pin_memory) e.pinned_bytes += staged;
  e.grad_bytes = (shards_gradients(o.zero.stage) ? shard : psi) * sizeof(float);
  e.optimizer_bytes = owned * optimizer_bytes_per_element(o);
  const int M = std::max(1, o.micro_batches), v = o.layout.chunk_count();
  const int slots = pp_size > 1 ? pipe_schedule_slots(o.pipe_schedule, M, pp_size, pp_rank, v) : 1;
  const ActivationStashKind kind = activation_stash_kind(o);
  const int T = o.layout.local_seq(o.seq_len);  // this rank's tokens of a sequence (sequence parallelism)
  const ArenaShape shape = arena_shape(o, kind, slots, T, pp_size > 1 && pipe_schedule_head_at_once(
                                                                         o.pipe_schedule, M, pp_size, pp_rank, v));
  e.activation_bytes = compute == DType::kF32 ? GptActivationArenaT<float>::count(o.model, o.layout, shape)
                                              : GptActivationArenaT<half_t>::count(o.model, o.layout, shape);
  add_activation_stash(o, kind, slots, T, compute, &e);
  e.buffer_bytes_max = buffer_bound(o, table, partition, dp_rank);
  e.buffer_bytes_max += widened_weight_bytes(backend_or_cpu(o.backend), table);
  if (pp_size > 1) {  // per slot, a (B, T, C) gradient send buffer and receive buffer, where the stage has them (trainer.cc)
    const size_t hand_off = static_cast<size_t>(o.micro_batch) * static_cast<size_t>(o.seq_len) *
                            static_cast<size_t>(o.model.n_embd) * dtype_size(compute);
    const size_t kinds = (pipe_has_prev(pp_size, pp_rank, v - 1) ? 1 : 0) + (pipe_has_next(pp_size, pp_rank, 0, v) ? 1 : 0);
    e.buffer_bytes_max += kinds * static_cast<size_t>(slots) * hand_off;
  }
  estimate_offload(o, table, partition.shard(dp_rank), owned, compute, &e);
  add_host_update_traffic(o, table, partition.shard(dp_rank), owned, compute, &e);
  const Backend& b = backend_or_cpu(o.backend);
  if (!b.host()) {  // as ModelStates::host_bytes and the Trainer's stash
    const size_t host_shard = ModelStates::params_on_host(b, o.zero.offload) ? e.param_bytes - e.master_bytes : 0;
    e.host_bytes = e.offload_buffer_bytes + (host_update ? e.master_bytes + e.optimizer_bytes : 0) + host_shard;
    if (o.zero.offload.pin_memory) e.pinned_bytes += host_shard;
  }
  return e;
}

}  // namespace zt

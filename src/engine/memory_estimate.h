// The memory a rank needs, before anything is allocated (`zerotrain estimate`, DeepSpeed's
// estimate_zero*_model_states_mem_needs). Model states follow the ZeRO paper's formulas
// on this rank's part of the model (pipeline stage, tensor-parallel slice): in fp32 with
// AdamW, parameters 4Ψ (4Ψ/N from stage 3), gradients 4Ψ (4Ψ/N from stage 2) and
// optimizer state 8Ψ (8Ψ/N from stage 1), with Ψ/N the rank's actual shard
// (ceil(Ψ/N), the last shorter). Activations are the model's activation arena for the
// micro-batch shape, the pipeline slots and activation checkpointing. All four equal
// what the Trainer allocates, byte for byte (memory_estimate_test.cc).
// Mixed precision (bf16/fp16, stages 0-2): parameters are the 16-bit compute copy 2Ψ plus
// the fp32 master of the optimizer's range (4Ψ, 4Ψ/N from stage 1); gradients stay fp32
// (grad_accum_dtype fp32: 4Ψ, 4Ψ/N from stage 2); optimizer state as fp32. With Adam:
// stage 0 18Ψ, stage 1 6Ψ + 12Ψ/N, stage 2 2Ψ + 16Ψ/N (the ZeRO paper's 2Ψ + 2Ψ + 12Ψ
// with fp32 instead of 16-bit gradients, DeepSpeed's default for bf16 with ZeRO). Gradient buckets
// and ZeRO-3 gather buffers depend on timing; their figure is an upper bound.
// NVMe offload: the swapped arrays (the optimizer's state, the fp32 master, the
// parameter shard) count as disk bytes, not memory; their three chunk-buffer sets and the
// parameter staging buffers count as memory; the disk traffic of a step is the
// optimizer pass (every swapped array read and written once, the 16-bit shard only
// written) plus, with parameter offload, this rank's part of every fetched layer not
// kept in memory, once per fetch (forward and backward of every micro-batch).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>

#include "core/status.h"
#include "engine/trainer.h"

namespace zt {

struct MemoryEstimate {
  size_t psi = 0;               // parameters of this rank's part of the model
  size_t owned = 0;             // of them, the elements this rank's optimizer updates (its ZeRO shard from stage 1)
  size_t param_bytes = 0;       // what the model reads, plus the fp32 master in mixed precision
  size_t master_bytes = 0;      // mixed precision: the fp32 master part of param_bytes
  size_t grad_bytes = 0;
  size_t optimizer_bytes = 0;
  size_t activation_bytes = 0;
  size_t buffer_bytes_max = 0;  // gradient buckets (stage 2+), ZeRO-3 gather buffers and the pipeline's
                                // gradient send and receive buffers, at most
  size_t offload_buffer_bytes = 0;  // NVMe offload: swap and staging buffers (memory)
  size_t disk_bytes = 0;            // NVMe offload: the swap files
  size_t disk_read_per_step = 0;    // NVMe offload: disk traffic of one optimizer step
  size_t disk_write_per_step = 0;
  // Of that traffic, the optimizer pass's (every swapped array read and written once),
  // in `swap_chunks` chunks of sub_group_size elements; the rest moves during forward and
  // backward (parameter fetches, the activation stash).
  size_t swap_pass_read = 0, swap_pass_write = 0, swap_chunks = 0;
  // Of total(), the bytes in host memory apart from the device's (offload on a device;
  // 0 on the CPU): MemoryReport::host_bytes. The device holds total() - host_bytes.
  size_t host_bytes = 0;
  size_t device_bytes() const { return total() - host_bytes; }
  // Of host_bytes, the page-locked part with offload.pin_memory (the allocations of
  // Backend::staging_host(): staging pieces, a host parameter shard and its cache, the
  // stash); the fp32 master and moments stay pageable. A host's ulimit -l and its memory
  // bound it.
  size_t pinned_bytes = 0;
  // Offload on a device: the bytes one step moves between host and device for it (the
  // host update's gradients and compute copy, a host shard's layer parts, the stashed
  // activations out and back); the step's other small crossings (tokens, losses, norms)
  // are not counted.
  size_t pcie_bytes_per_step = 0;
  size_t pcie_update_bytes = 0;  // of them, the host update's own (its gradients down, the compute copy up)
  size_t total() const {
    return param_bytes + grad_bytes + optimizer_bytes + activation_bytes + buffer_bytes_max + offload_buffer_bytes;
  }
};

// o.layout is this rank's layout; dp_size and dp_rank the group ZeRO partitions over (its
// data-parallel group, or with expert parallelism at stages 1+ the expert-data-parallel
// group: engine/parallel_setup.h zero_group_place), pp_size and pp_rank its pipeline.
StatusOr<MemoryEstimate> estimate_rank_memory(const TrainerOptions& o, int dp_size, int dp_rank, int pp_size,
                                              int pp_rank);

}  // namespace zt

// Single-process checkpoints: enough for `sample`, `eval` and continuing training; laid
// out the way the sharded, resumable checkpoints grow from (DeepSpeed-like names):
//   <save_dir>/<tag>/model.safetensors      parameters by name, zerotrain layout (F32)
//   <save_dir>/<tag>/optimizer.safetensors  optimizer state by name ("exp_avg.<param>", ...)
//   <save_dir>/<tag>/state.json             step, optimizer step count, the run's config
//   <save_dir>/latest                       the tag, written last
// Every file is written atomically (io/atomic_file.h) and `latest` moves only after the
// tag's files are complete, so a crash mid-save leaves the previous checkpoint usable.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/safetensors.h"
#include "core/status.h"
#include "io/json_strict.h"
#include "optim/optimizer.h"
#include "tensor/tensor_spec.h"

namespace zt {

struct CheckpointState {
  int64_t step = 0;             // optimizer steps completed
  int64_t optimizer_steps = 0;  // the optimizer's own count (bias correction); read back only
  Json config;                  // the run's configuration (ZtConfig::source)
};

// Writes <save_dir>/<tag>/ and then <save_dir>/latest. optimizer may be null (weights only).
Status save_checkpoint(const std::string& save_dir, const std::string& tag, const ParamTable& table,
                       const float* params, Optimizer* optimizer, const CheckpointState& state);

// A checkpoint directory: `path` itself if it holds state.json, else the tag named by
// path/latest. Errors name what is missing.
StatusOr<std::string> resolve_checkpoint_dir(const std::string& path);

// Reads <dir>/state.json (format and version checked).
StatusOr<CheckpointState> read_checkpoint_state(const std::string& dir);

// Fills params from <dir>/model.safetensors: every tensor of the table, by name and
// shape; a missing, extra or misshapen tensor is an error naming the file and tensor.
Status load_checkpoint_params(const std::string& dir, const ParamTable& table, float* params);

// Restores the optimizer's state tensors and step count from <dir>/optimizer.safetensors.
Status load_checkpoint_optimizer(const std::string& dir, const ParamTable& table, Optimizer* optimizer,
                                 int64_t optimizer_steps);

}  // namespace zt

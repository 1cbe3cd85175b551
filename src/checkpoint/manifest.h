// Manifest: the one JSON file that describes a checkpoint, <save_dir>/<tag>/manifest.json.
//
// It holds the global tensor table (every tensor once, by name, with its global shape
// and how tensor parallelism cut it), the layout that saved it (world, dp, pp, tp, ZeRO
// stage), the engine state (step, optimizer, LR schedule, data position, seed), the run's
// configuration, zerotrain's version, every shard file with its size and XXH3 checksum,
// and every piece: which elements of which tensor's state ("param", "exp_avg", ...) sit
// in which file under which name, with their own checksum.
//
// A piece is elements [begin, end) of one tensor-parallel slice (tp_rank of tp_size) of a
// tensor, flattened row-major; tensors tensor parallelism does not cut have tp_size 1.
// Parsing proves the pieces of every (tensor, kind) tile every slice exactly, so a
// manifest that parses describes a complete checkpoint; loaders reshard from it on
// global offsets (checkpoint/reshard.h).
//
// The file is canonical JSON: its "checksum" is XXH3 of the compact dump of everything
// else, checked on parse; `latest` also records the checksum of the file's bytes.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/json_strict.h"
#include "nn/gpt_config.h"
#include "optim/loss_scaler.h"

namespace zt {

inline constexpr int kCheckpointFormatVersion = 1;
inline constexpr size_t kMaxManifestBytes = 256u << 20;

struct ManifestTensor {
  std::string name;
  std::vector<int64_t> shape;  // global, zerotrain layout (Linear weights (out, in))
  int64_t logical_rows = -1;   // rows holding data; the rest is vocabulary padding (-1: all)
  int tp_dim = -1;             // how the saving layout's tensor parallelism cut it
  int tp_groups = 1;
  int layer = 0;
  bool weight_decay = false;
  size_t numel() const;
};

struct ManifestFile {
  std::string name;  // a plain file name inside the tag directory
  int rank = 0;      // world rank that wrote it
  uint64_t bytes = 0;
  std::string checksum;  // XXH3-64 of the whole file, 16 hex digits
};

struct ManifestPiece {
  std::string tensor;
  std::string kind;   // "param", "exp_avg", "exp_avg_sq", "momentum_buffer"
  std::string file;
  int tp_rank = 0;
  int tp_size = 1;
  uint64_t begin = 0;  // elements of the tp slice, flattened
  uint64_t end = 0;
  std::string checksum;  // XXH3-64 of the piece's bytes
  std::string entry() const { return kind + "/" + tensor; }  // its name in the file
};

// One array of a rank's private state (RankArray, optim/optimizer.h): the 1-bit
// optimizers' error feedback and schedules. Stored in that rank's shard as
// "rank_state/<name>", meaningful only to the same rank of the same layout.
struct ManifestRankState {
  int rank = 0;
  std::string name;
  std::string file;
  std::string dtype;  // "F32" or "F64"
  uint64_t numel = 0;
  std::string checksum;  // XXH3-64 of the array's bytes
  std::string entry() const { return "rank_state/" + name; }
};

struct CheckpointLayout {
  int world = 1;
  int dp = 1;
  int pp = 1;
  int tp = 1;
  int zero_stage = 0;
  int ep = 1;  // expert parallelism (a divisor of dp; written only when > 1)
};

struct EngineState {
  int64_t global_step = 0;       // optimizer steps completed
  std::string optimizer;         // "adamw", "sgd", "lamb", "onebitadam", "zerooneadam", "onebitlamb", or "" (weights only: no optimizer state)
  int64_t optimizer_steps = 0;   // the optimizer's own count (bias correction)
  std::string lr_schedule;       // the scheduler's DeepSpeed name ("" = constant)
  double next_lr = 0.0;          // the learning rate of step global_step + 1
  int64_t train_batch_size = 0;  // sequences per optimizer step (the data position's unit)
  uint64_t seed = 0;             // data order and initialisation; training draws no other randomness
  std::string isa;               // kernels the run used; bitwise resume needs the same
  int threads_per_rank = 0;
  std::string precision = "fp32";  // compute dtype: "fp32", "bf16" or "fp16" (the saved params are fp32 either way)
  std::string loss_scaler = "none";  // fp16: "dynamic" or "static"; else "none"
  LossScalerState scaler;            // fp16 only
  // The training-efficiency schedules' state (engine/efficiency.h: curriculum, random-LTD,
  // progressive layer drop); an empty object when none runs (then absent from the JSON).
  Json schedules = Json::object();
};

struct Manifest {
  std::string tag;
  std::string zerotrain_version;
  GptConfig model;  // family and shape, as checkpoint/model_json.h records them (no padding)
  CheckpointLayout layout;
  EngineState engine;
  Json config;                     // the run's configuration as given
  std::vector<std::string> kinds;  // state kinds present, "param" first
  std::vector<ManifestTensor> tensors;
  std::vector<ManifestFile> files;
  std::vector<ManifestPiece> pieces;
  std::vector<ManifestRankState> rank_states;  // absent from the JSON when empty

  const ManifestTensor* tensor(const std::string& name) const;
  const ManifestFile* file(const std::string& name) const;
  bool has_kind(const std::string& kind) const;
};

// The file's bytes: pretty JSON with the checksum, newline-terminated.
std::string manifest_to_text(const Manifest& m);

// Parses and validates everything (types, ranges, names, file names without
// directories, checksum, piece coverage); errors are Corruption naming `label` and the
// JSON pointer of the offending value.
StatusOr<Manifest> parse_manifest(const std::string& text, const std::string& label);

// A 16-digit lowercase hex checksum string.
bool is_checksum_hex(const std::string& s);

}  // namespace zt

// What the HuggingFace interop of every model family shares (checkpoint/hf_gpt2.h,
// checkpoint/hf_llama.h): the weights of a model directory written as one
// model.safetensors or as shards with model.safetensors.index.json, and read back from
// either, with BF16/F16 widened exactly to fp32.
//
// Writing (write_hf_weights): the tensors, given in the model's state-dict order, are cut
// into shards as huggingface_hub's split_state_dict_into_shards cuts them (plan_hf_shards).
// One shard is written as model.safetensors with no index; N > 1 as
// model-0000i-of-0000N.safetensors plus the index {"metadata": {"total_size": tensor
// bytes}, "weight_map": {name: file}} with sorted keys, as transformers writes it. Every
// file carries {"format": "pt"} metadata (transformers requires it) and is written
// atomically; files of an earlier export in the other form (model.safetensors, the index,
// shards of another count) are removed, so the directory holds one model. The bytes
// depend only on the inputs: no timestamps, fixed key order.
// Reading (HfWeights): an index must list exactly the tensors its shards hold, each in
// the shard that holds it; shard names are plain file names beside the index; no tensor
// appears twice. Every error names the file and the tensor or key.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "core/progress_fn.h"
#include "core/status.h"
#include "io/json_strict.h"
#include "nn/gpt_config.h"
#include "tensor/tensor_spec.h"

namespace zt {

// huggingface_hub's default max_shard_size, "5GB".
inline constexpr uint64_t kHfDefaultMaxShardBytes = 5'000'000'000;

struct HfExportOptions {
  StDType dtype = StDType::kF32;  // kF32 (exact), kBF16 or kF16 (each value rounded to nearest even)
  uint64_t max_shard_bytes = kHfDefaultMaxShardBytes;
  ProgressFn progress = nullptr;  // bytes of tensor data written so far
};

// A model read from HuggingFace files.
struct HfModel {
  GptConfig config;  // from config.json (no vocabulary padding)
  ParamTable table;  // whole model
  std::vector<float> params;
};

// "5GB", "100MB", "2.5GB", "1GiB" or plain bytes "123456" (KB/MB/GB/TB are powers of
// 10, as huggingface_hub's parse_size_to_int; KiB/MiB/GiB/TiB powers of 2). Positive.
StatusOr<uint64_t> parse_shard_size(const std::string& text);

// transformers' torch_dtype name of a stored dtype: "float32", "bfloat16", "float16".
const char* hf_torch_dtype(StDType dtype);

// huggingface_hub's split: walking the tensors in order, a tensor larger than the limit
// becomes a shard of its own at once; otherwise the current shard is closed first if the
// tensor would take it past the limit. Returns the shards as lists of tensor indices.
std::vector<std::vector<size_t>> plan_hf_shards(const std::vector<uint64_t>& tensor_bytes, uint64_t max_shard_bytes);

// One tensor to write: fp32 values, HuggingFace's name and shape.
struct HfTensor {
  std::string name;
  std::vector<int64_t> shape;
  const float* data = nullptr;
};

// Writes the weights into `dir` (which must exist) as described above.
Status write_hf_weights(const std::string& dir, const std::vector<HfTensor>& tensors, const HfExportOptions& options);

// A path HfWeights::open takes: a *.safetensors or *.safetensors.index.json file, or a
// directory holding model.safetensors or model.safetensors.index.json.
bool is_hf_model_path(const std::string& path);

// The config.json that belongs to `path` (a model directory, or a file inside one).
std::string hf_config_path(const std::string& path);

// config.json parsed strictly (no duplicate keys); NotFound says config.json belongs
// beside the weights.
StatusOr<Json> read_hf_config_json(const std::string& path);

// The weights of a HuggingFace model directory, single-file or sharded, mapped.
class HfWeights {
 public:
  // path: see is_hf_model_path. A directory with both forms is read as transformers
  // does: model.safetensors first.
  static StatusOr<HfWeights> open(const std::string& path);

  // config.json beside the weights.
  std::string config_path() const { return dir_ + "/config.json"; }
  // What errors about the whole model name: the index, or the single file.
  const std::string& label() const { return label_; }
  // Every tensor name, sorted.
  std::vector<std::string> names() const;
  bool has(const std::string& name) const { return where_.count(name) != 0; }
  // Path of the file holding `name` (which must exist).
  const std::string& file_of(const std::string& name) const;
  const SafetensorsEntry& entry(const std::string& name) const;
  // Tensor `name` of exactly `shape` as fp32: F32 copied, BF16 and F16 widened exactly;
  // other dtypes and other shapes are InvalidArgument naming the file and the tensor.
  Status read_f32(const std::string& name, const std::vector<int64_t>& shape, float* out) const;

 private:
  Status add_file(const std::string& path, const std::map<std::string, std::string>* weight_map);
  Status open_index(const std::string& index_path);

  std::string dir_;
  std::string label_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t> where_;  // tensor name -> index into files_
};

}  // namespace zt

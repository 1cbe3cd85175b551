// HuggingFace GPT-2 export and import; see hf_gpt2.h.
#include "checkpoint/hf_gpt2.h"

#include <cmath>
#include <cstring>
#include <set>

#include "backend/backend.h"
#include "checkpoint/safetensors.h"
#include "io/atomic_file.h"
#include "io/filesystem.h"
#include "nn/gpt_params.h"

namespace zt {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// HuggingFace's Conv1D weights: stored [in, out].
bool is_conv1d_weight(const std::string& name) {
  return ends_with(name, "attn.c_attn.weight") || ends_with(name, "attn.c_proj.weight") ||
         ends_with(name, "mlp.c_fc.weight") || ends_with(name, "mlp.c_proj.weight");
}

void transpose(const float* in, int64_t rows, int64_t cols, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  }
}

bool is_dir(const std::string& path) { return file_exists(path + "/model.safetensors"); }

StatusOr<GptConfig> read_hf_config(const std::string& path) {
  auto text = read_file(path, 1 << 20);
  if (!text.ok()) {
    if (text.status().code() != StatusCode::kNotFound) return text.status();
    return Status::NotFound(path + ": missing; a HuggingFace GPT-2 model needs its config.json beside model.safetensors");
  }
  auto parsed = parse_json_strict(text.value(), path);
  if (!parsed.ok()) return Status::Corruption(parsed.status().message());
  const Json& j = parsed.value();
  if (!j.is_object()) return Status::Corruption(path + ": not a JSON object");
  auto field = [&](const char* key, int* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return Status::Corruption(path + ": /" + key + " must be a positive integer");
    *out = it->get<int>();
    return Status::OK();
  };
  GptConfig c;
  ZT_RETURN_IF_ERROR(field("n_layer", &c.n_layer));
  ZT_RETURN_IF_ERROR(field("n_head", &c.n_head));
  ZT_RETURN_IF_ERROR(field("n_embd", &c.n_embd));
  ZT_RETURN_IF_ERROR(field("vocab_size", &c.vocab_size));
  ZT_RETURN_IF_ERROR(field("n_positions", &c.n_positions));
  if (auto it = j.find("model_type"); it != j.end() && *it != "gpt2") {
    return Status::InvalidArgument(path + ": /model_type is " + it->dump() + "; zerotrain imports GPT-2 models only");
  }
  if (auto it = j.find("activation_function"); it != j.end() && *it != "gelu_new") {
    return Status::InvalidArgument(path + ": /activation_function is " + it->dump() + "; zerotrain's GPT-2 uses gelu_new (tanh)");
  }
  if (auto it = j.find("n_inner"); it != j.end() && !it->is_null() && *it != 4 * c.n_embd) {
    return Status::InvalidArgument(path + ": /n_inner is " + it->dump() + "; zerotrain's MLP is 4 x n_embd wide");
  }
  if (auto it = j.find("layer_norm_epsilon"); it != j.end() && (!it->is_number() || std::fabs(it->get<double>() - 1e-5) > 1e-12)) {
    return Status::InvalidArgument(path + ": /layer_norm_epsilon is " + it->dump() + "; zerotrain's LayerNorm uses 1e-05");
  }
  Status s = c.validate();
  if (!s.ok()) return Status::InvalidArgument(path + ": " + s.message());
  return c;
}

// An F32, BF16 or F16 tensor of `st`, widened exactly to fp32 (HF files saved in half
// precision, or by `export --dtype`).
Status read_as_f32(const SafetensorsFile& st, const std::string& file, const std::string& name, const std::vector<int64_t>& shape, float* out) {
  const auto it = st.entries().find(name);
  if (it == st.entries().end() || (it->second.dtype != StDType::kBF16 && it->second.dtype != StDType::kF16)) {
    return st.read_f32(name, shape, out);
  }
  if (it->second.shape != shape) {
    return Status::InvalidArgument(file + ": tensor " + name + " has shape " + shape_to_string(it->second.shape) +
                                   ", expected " + shape_to_string(shape));
  }
  const DType t = it->second.dtype == StDType::kBF16 ? DType::kBF16 : DType::kF16;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  backend_for(Device::kCpu, t).value()->half_ops()->to_f32(out, static_cast<const half_t*>(st.data(name)), n);
  return Status::OK();
}

}  // namespace

Json hf_config_json(const GptConfig& m, StDType dtype) {
  return {{"architectures", {"GPT2LMHeadModel"}},
          {"model_type", "gpt2"},
          {"vocab_size", m.vocab_size},
          {"n_positions", m.n_positions},
          {"n_ctx", m.n_positions},
          {"n_embd", m.n_embd},
          {"n_layer", m.n_layer},
          {"n_head", m.n_head},
          {"n_inner", nullptr},
          {"activation_function", "gelu_new"},
          {"layer_norm_epsilon", 1e-05},
          {"initializer_range", 0.02},
          {"attn_pdrop", 0.0},
          {"embd_pdrop", 0.0},
          {"resid_pdrop", 0.0},
          {"bos_token_id", m.vocab_size - 1},
          {"eos_token_id", m.vocab_size - 1},
          {"scale_attn_weights", true},
          {"tie_word_embeddings", true},
          {"torch_dtype", dtype == StDType::kBF16 ? "bfloat16" : dtype == StDType::kF16 ? "float16" : "float32"}};
}

Status export_hf_gpt2(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                      StDType dtype, const ProgressFn& progress) {
  ZT_CHECK(dtype == StDType::kF32 || dtype == StDType::kBF16 || dtype == StDType::kF16, "export dtype %s",
           st_dtype_name(dtype));
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  std::vector<TensorToWrite> tensors;
  std::vector<std::vector<float>> transposed;
  std::vector<std::vector<half_t>> narrowed;
  transposed.reserve(table.specs().size());
  narrowed.reserve(table.specs().size());
  const ActivationOps<half_t>* half =
      dtype == StDType::kF32
          ? nullptr
          : backend_for(Device::kCpu, dtype == StDType::kBF16 ? DType::kBF16 : DType::kF16).value()->half_ops();
  for (const TensorSpec& s : table.specs()) {
    ZT_CHECK(s.global_shape.empty(), "export takes a whole model, got a tp slice of %s", s.name.c_str());
    TensorToWrite t{s.name, StDType::kF32, s.shape, params + s.offset};
    if (s.name == "wte.weight") t.shape[0] = model.vocab_size;  // padding rows stay behind
    if (is_conv1d_weight(s.name)) {
      transposed.emplace_back(s.numel);
      transpose(params + s.offset, s.shape[0], s.shape[1], transposed.back().data());
      t.shape = {s.shape[1], s.shape[0]};
      t.data = transposed.back().data();
    }
    if (half != nullptr) {  // round the (possibly transposed) values once
      int64_t n = 1;
      for (int64_t d : t.shape) n *= d;
      narrowed.emplace_back(static_cast<size_t>(n));
      half->from_f32(narrowed.back().data(), static_cast<const float*>(t.data), n);
      t.dtype = dtype;
      t.data = narrowed.back().data();
    }
    tensors.push_back(std::move(t));
  }
  ZT_RETURN_IF_ERROR(write_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}}, nullptr, progress));
  return write_file_atomic(dir + "/config.json", hf_config_json(model, dtype).dump(2) + "\n");
}

bool is_hf_model_path(const std::string& path) { return ends_with(path, ".safetensors") || is_dir(path); }

StatusOr<HfModel> read_hf_gpt2(const std::string& path) {
  const std::string file = is_dir(path) ? path + "/model.safetensors" : path;
  const size_t slash = file.rfind('/');
  const std::string config_path = (slash == std::string::npos ? std::string(".") : file.substr(0, slash)) + "/config.json";
  HfModel m;
  ZT_ASSIGN_OR_RETURN(m.config, read_hf_config(config_path));
  ZT_ASSIGN_OR_RETURN(const SafetensorsFile st, SafetensorsFile::read(file));
  m.table = build_gpt_param_table(m.config, GptLayout{});
  m.params.assign(m.table.numel(), 0.0f);
  std::set<std::string> used;
  for (const auto& [stored, entry] : st.entries()) {
    std::string name = stored.rfind("transformer.", 0) == 0 ? stored.substr(12) : stored;
    if (ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias")) continue;  // causal-mask buffers
    if (name == "lm_head.weight") continue;  // checked against wte below
    const int idx = m.table.find(name);
    if (idx < 0) return Status::InvalidArgument(file + ": tensor " + stored + " is not part of a GPT-2 model");
    if (!used.insert(name).second) return Status::InvalidArgument(file + ": tensor " + name + " appears twice (with and without transformer.)");
    const TensorSpec& s = m.table.at(idx);
    std::vector<int64_t> want = s.shape;
    if (is_conv1d_weight(name)) std::swap(want[0], want[1]);
    float* dst = m.params.data() + s.offset;
    if (is_conv1d_weight(name)) {
      std::vector<float> tmp(s.numel);
      ZT_RETURN_IF_ERROR(read_as_f32(st, file, stored, want, tmp.data()));
      transpose(tmp.data(), want[0], want[1], dst);
    } else {
      ZT_RETURN_IF_ERROR(read_as_f32(st, file, stored, want, dst));
    }
  }
  for (const TensorSpec& s : m.table.specs()) {
    if (used.count(s.name) == 0) return Status::InvalidArgument(file + ": tensor " + s.name + " is missing");
  }
  for (const char* head : {"lm_head.weight", "transformer.lm_head.weight"}) {
    if (!st.has(head)) continue;
    const TensorSpec& wte = m.table.at(m.table.find("wte.weight"));
    const SafetensorsEntry& e = st.entries().at(head);
    std::vector<float> lm(wte.numel);
    if (e.shape != wte.shape || !read_as_f32(st, file, head, wte.shape, lm.data()).ok() ||
        std::memcmp(lm.data(), m.params.data() + wte.offset, wte.numel * sizeof(float)) != 0) {
      return Status::InvalidArgument(file + ": " + head + " differs from wte.weight; zerotrain ties the LM head to wte");
    }
  }
  return m;
}

}  // namespace zt

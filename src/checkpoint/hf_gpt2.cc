// HuggingFace GPT-2 export and import; see hf_gpt2.h.
#include "checkpoint/hf_gpt2.h"

#include <cmath>
#include <cstring>
#include <set>

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

StatusOr<GptConfig> read_hf_config(const std::string& path) {
  ZT_ASSIGN_OR_RETURN(const Json j, read_hf_config_json(path));
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
          {"torch_dtype", hf_torch_dtype(dtype)}};
}

Status export_hf_gpt2(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                      const HfExportOptions& options) {
  std::vector<HfTensor> tensors;
  std::vector<std::vector<float>> transposed;
  transposed.reserve(table.specs().size());
  for (const TensorSpec& s : table.specs()) {  // GPT2LMHeadModel's state-dict order
    ZT_CHECK(s.global_shape.empty(), "export takes a whole model, got a tp slice of %s", s.name.c_str());
    HfTensor t{s.name, s.shape, params + s.offset};
    if (s.name == "wte.weight") t.shape[0] = model.vocab_size;  // padding rows stay behind
    if (is_conv1d_weight(s.name)) {
      transposed.emplace_back(s.numel);
      transpose(params + s.offset, s.shape[0], s.shape[1], transposed.back().data());
      t.shape = {s.shape[1], s.shape[0]};
      t.data = transposed.back().data();
    }
    tensors.push_back(std::move(t));
  }
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  ZT_RETURN_IF_ERROR(write_hf_weights(dir, tensors, options));
  return write_file_atomic(dir + "/config.json", hf_config_json(model, options.dtype).dump(2) + "\n");
}

StatusOr<HfModel> read_hf_gpt2(const std::string& path) {
  ZT_ASSIGN_OR_RETURN(const HfWeights w, HfWeights::open(path));
  HfModel m;
  ZT_ASSIGN_OR_RETURN(m.config, read_hf_config(w.config_path()));
  m.table = build_gpt_param_table(m.config, GptLayout{});
  m.params.assign(m.table.numel(), 0.0f);
  std::set<std::string> used;
  for (const std::string& stored : w.names()) {
    std::string name = stored.rfind("transformer.", 0) == 0 ? stored.substr(12) : stored;
    if (ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias")) continue;  // causal-mask buffers
    if (name == "lm_head.weight") continue;  // checked against wte below
    const int idx = m.table.find(name);
    const std::string& file = w.file_of(stored);
    if (idx < 0) return Status::InvalidArgument(file + ": tensor " + stored + " is not part of a GPT-2 model");
    if (!used.insert(name).second) return Status::InvalidArgument(file + ": tensor " + name + " appears twice (with and without transformer.)");
    const TensorSpec& s = m.table.at(idx);
    std::vector<int64_t> want = s.shape;
    if (is_conv1d_weight(name)) std::swap(want[0], want[1]);
    float* dst = m.params.data() + s.offset;
    if (is_conv1d_weight(name)) {
      std::vector<float> tmp(s.numel);
      ZT_RETURN_IF_ERROR(w.read_f32(stored, want, tmp.data()));
      transpose(tmp.data(), want[0], want[1], dst);
    } else {
      ZT_RETURN_IF_ERROR(w.read_f32(stored, want, dst));
    }
  }
  for (const TensorSpec& s : m.table.specs()) {
    if (used.count(s.name) == 0) return Status::InvalidArgument(w.label() + ": tensor " + s.name + " is missing");
  }
  for (const char* head : {"lm_head.weight", "transformer.lm_head.weight"}) {
    if (!w.has(head)) continue;
    const TensorSpec& wte = m.table.at(m.table.find("wte.weight"));
    std::vector<float> lm(wte.numel);
    if (!w.read_f32(head, wte.shape, lm.data()).ok() ||
        std::memcmp(lm.data(), m.params.data() + wte.offset, wte.numel * sizeof(float)) != 0) {
      return Status::InvalidArgument(w.file_of(head) + ": " + head + " differs from wte.weight; zerotrain ties the LM head to wte");
    }
  }
  return m;
}

}  // namespace zt

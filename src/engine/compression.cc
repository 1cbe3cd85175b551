// DeepSpeed's weight and activation quantization for the Trainer; see compression.h.
#include "engine/compression.h"

#include <cstring>
#include <regex>

#include "kernels/cpu/fake_quant.h"
#include "nn/param_names.h"

namespace zt {

namespace {

const std::string kWeights = "/compression_training/weight_quantization";
const std::string kActs = "/compression_training/activation_quantization";

// The group whose regexes match `module` (-1: none); two matching groups is an error.
template <typename Group>
StatusOr<int> matching_group(const std::vector<Group>& groups, const std::string& module, const std::string& where) {
  int found = -1;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const std::string& re : groups[g].modules) {
      bool hit = false;
      try {
        hit = std::regex_search(module, std::regex(re));
      } catch (const std::regex_error&) {
        return Status::InvalidArgument(where + "/different_groups/" + groups[g].name + "/modules: \"" + re +
                                       "\" is not a regular expression");
      }
      if (!hit) continue;
      if (found >= 0 && found != static_cast<int>(g)) {
        return Status::InvalidArgument(where + "/different_groups: " + module + " is matched by both " +
                                       groups[static_cast<size_t>(found)].name + " and " + groups[g].name);
      }
      found = static_cast<int>(g);
    }
  }
  return found;
}

bool is_embedding(const std::string& module) {
  return module.ends_with(".wte") || module.ends_with(".wpe") || module.ends_with(".embed_tokens");
}

// Elements of a tensor that hold data (vocabulary padding rows excluded) and its rows.
size_t logical_numel(const TensorSpec& s, int64_t* rows) {
  *rows = s.init_rows >= 0 ? s.init_rows : s.shape[0];
  return static_cast<size_t>(*rows) * (s.numel / static_cast<size_t>(s.shape[0]));
}

}  // namespace

std::string hf_module_name(const GptConfig& model, const std::string& tensor) {
  const std::string module = tensor.substr(0, tensor.rfind('.'));
  if (module == "lm_head") return module;
  return param_names(model.family()).hf_prefix + module;
}

StatusOr<std::unique_ptr<Compressor>> Compressor::create(const CompressionOptions& o, const ParamTable& table,
                                                         const GptConfig& model, const Backend& backend,
                                                         std::vector<std::string>* notes) {
  std::unique_ptr<Compressor> c(new Compressor(o, table, backend));
  if (!backend.host()) {
    return Status::InvalidArgument("/compression_training: quantization runs on host memory; this run's device " +
                                   backend.describe() + " is not");
  }
  if (table.tp_size() > 1) return Status::InvalidArgument("/compression_training: not with tensor parallelism (parallel.tp)");
  ZT_RETURN_IF_ERROR(c->select_weights(model, notes));
  ZT_RETURN_IF_ERROR(c->select_activations(model, notes));
  c->copies_.resize(static_cast<size_t>(model.n_layer) + 2);
  return c;
}

Status Compressor::select_weights(const GptConfig& model, std::vector<std::string>* notes) {
  const WeightQuantOptions& w = o_.weight;
  if (!w.enabled) return Status::OK();
  if (!w.in_forward && backend_.compute_dtype() != DType::kF16) {
    return Status::InvalidArgument(kWeights + "/shared_parameters/quantize_weight_in_forward: false (MoQ, quantizing "
                                   "the 16-bit copy after each step) needs fp16, as DeepSpeed asserts; set it true");
  }
  std::vector<std::string> chosen(w.groups_of_modules.size());
  for (int i = 0; i < static_cast<int>(table_.specs().size()); ++i) {
    const TensorSpec& s = table_.at(i);
    if (s.shape.size() != 2) continue;
    const std::string module = hf_module_name(model, s.name);
    ZT_ASSIGN_OR_RETURN(const int g, matching_group(w.groups_of_modules, module, kWeights));
    if (g < 0) continue;
    const WeightQuantGroup& grp = w.groups_of_modules[static_cast<size_t>(g)];
    if (!w.symmetric && grp.target_bits < 3) {
      return Status::InvalidArgument(kWeights + "/different_groups/" + grp.name + "/params/target_bits: " +
                                     std::to_string(grp.target_bits) + " bits are ternary or binary: symmetric only");
    }
    int64_t rows = 0;
    const size_t n = logical_numel(s, &rows);
    const bool emb = is_embedding(module) && w.in_forward;
    if (!emb && n % static_cast<size_t>(w.groups) != 0) {
      return Status::InvalidArgument(kWeights + "/shared_parameters/quantize_groups: " + std::to_string(w.groups) +
                                     " does not divide the " + std::to_string(n) + " elements of " + module);
    }
    weights_.push_back({i, g, w.in_forward ? grp.target_bits : grp.start_bits, grp.period, emb});
    chosen[static_cast<size_t>(g)] += (chosen[static_cast<size_t>(g)].empty() ? "" : ", ") + module;
  }
  for (size_t g = 0; g < chosen.size(); ++g) {
    notes->push_back(kWeights + "/different_groups/" + w.groups_of_modules[g].name + ": " +
                     (chosen[g].empty() ? "matches no module of this model" : "quantizes " + chosen[g]));
  }
  return Status::OK();
}

Status Compressor::select_activations(const GptConfig& model, std::vector<std::string>* notes) {
  const ActivationQuantOptions& a = o_.activation;
  if (!a.enabled) return Status::OK();
  act_bits_.assign(static_cast<size_t>(model.n_layer), BlockActBits{0, 0, 0, 0});
  const ParamNames& n = param_names(model.family());
  // The linear layers reading each quantized input (GptModel's slots 0-3).
  const std::vector<std::vector<std::string>> slots = {
      model.fused_qkv ? std::vector<std::string>{n.qkv} : std::vector<std::string>{n.q, n.k, n.v},
      {n.attn_out},
      model.swiglu() ? std::vector<std::string>{n.mlp_in, n.mlp_up} : std::vector<std::string>{n.mlp_in},
      {n.mlp_out}};
  int matched = 0;
  for (int l = 0; l < model.n_layer; ++l) {
    for (size_t k = 0; k < slots.size(); ++k) {
      int bits = -1;
      for (const std::string& leaf : slots[k]) {
        const std::string module = hf_module_name(model, block_prefix(n, l) + leaf + ".weight");
        ZT_ASSIGN_OR_RETURN(const int g, matching_group(a.groups_of_modules, module, kActs));
        const int b = g < 0 ? 0 : a.groups_of_modules[static_cast<size_t>(g)].bits;
        if (bits >= 0 && b != bits) {
          return Status::InvalidArgument(kActs + "/different_groups: " + module + " shares its input with the other " +
                                         "projections of that input; quantize all of them or none");
        }
        bits = b;
      }
      act_bits_[static_cast<size_t>(l)][k] = bits;
      matched += bits > 0;
    }
  }
  notes->push_back(kActs + ": quantizes the inputs of " + std::to_string(matched) + " linear layer input(s) per token" +
                   (matched == 0 ? " (its groups match no module of this model)" : ""));
  return Status::OK();
}

bool Compressor::touches(int layer) const {
  if (!weight_on_) return false;
  for (const Selected& s : weights_) {
    if (table_.at(s.spec).layer == layer) return true;
  }
  return false;
}

void Compressor::quantize_tensor(const Selected& s, float* x) const {
  const TensorSpec& spec = table_.at(s.spec);
  int64_t rows = 0;
  const int64_t n = static_cast<int64_t>(logical_numel(spec, &rows));
  const bool sym = o_.weight.symmetric || s.bits < 3;
  const int64_t groups = s.embedding ? rows : o_.weight.groups;
  if (!o_.weight.mixed || o_.weight.in_forward) return fake_quant(x, n, groups, s.bits, sym);
  std::vector<float> q(x, x + n);
  fake_quant(q.data(), n, groups, s.bits, sym);
  const float r = static_cast<float>(ratio_);
  for (int64_t i = 0; i < n; ++i) x[i] = r * x[i] + (1.0f - r) * q[static_cast<size_t>(i)];
}

StatusOr<void*> Compressor::compressed(int layer, const void* params) {
  const ElementRange range = table_.layer_range(layer);
  const DType dt = backend_.compute_dtype();
  const size_t es = dtype_size(dt);
  std::vector<unsigned char>& copy = copies_[static_cast<size_t>(layer + 1)];
  copy.resize(range.size() * es);
  std::memcpy(copy.data(), params, copy.size());
  for (const Selected& s : weights_) {
    const TensorSpec& spec = table_.at(s.spec);
    if (spec.layer != layer) continue;
    int64_t rows = 0;
    const size_t n = logical_numel(spec, &rows);
    void* at = copy.data() + (spec.offset - range.begin) * es;
    scratch_.resize(n);
    if (dt == DType::kF32) {
      std::memcpy(scratch_.data(), at, n * sizeof(float));
    } else {
      backend_.half_ops()->to_f32(scratch_.data(), static_cast<const half_t*>(at), static_cast<int64_t>(n));
    }
    quantize_tensor(s, scratch_.data());
    if (dt == DType::kF32) {
      std::memcpy(at, scratch_.data(), n * sizeof(float));
    } else {
      backend_.half_ops()->from_f32(static_cast<half_t*>(at), scratch_.data(), static_cast<int64_t>(n));
    }
  }
  return static_cast<void*>(copy.data());
}

void Compressor::quantize_call() {
  ++qsteps_;
  if (o_.weight.mixed) ratio_ = ratio_ > 0.0 ? ratio_ - o_.weight.change_ratio : 0.0;
  for (Selected& s : weights_) {
    const int target = o_.weight.groups_of_modules[static_cast<size_t>(s.group)].target_bits;
    if (s.bits != target && qsteps_ >= s.period) {
      ratio_ = 1.0;
      s.period <<= 1;
      s.bits -= 1;
    }
  }
}

void Compressor::begin_forward(int64_t steps_done) {
  if (steps_done != 0) return;
  weight_on_ = weight_on_ || (o_.weight.enabled && training_steps_ >= o_.weight.schedule_offset);
  act_on_ = act_on_ || (o_.activation.enabled && training_steps_ >= o_.activation.schedule_offset);
  if (weight_on_ && !o_.weight.in_forward) quantize_call();
}

void Compressor::after_step(bool skipped) {
  if (skipped) return;
  if (weight_on_ && !o_.weight.in_forward) quantize_call();
  ++training_steps_;
  weight_on_ = weight_on_ || (o_.weight.enabled && training_steps_ >= o_.weight.schedule_offset);
  act_on_ = act_on_ || (o_.activation.enabled && training_steps_ >= o_.activation.schedule_offset);
}

Json Compressor::state() const {
  Json bits = Json::array(), periods = Json::array();
  for (const Selected& s : weights_) {
    bits.push_back(s.bits);
    periods.push_back(s.period);
  }
  return {{"training_steps", training_steps_}, {"qsteps", qsteps_}, {"ratio", ratio_}, {"bits", bits},
          {"periods", periods}, {"weight_on", weight_on_}, {"activation_on", act_on_}};
}

Status Compressor::set_state(const Json& j, const std::string& where) {
  const bool ok = j.is_object() && j.contains("bits") && j["bits"].is_array() && j["bits"].size() == weights_.size() &&
                  j.contains("periods") && j["periods"].size() == weights_.size();
  if (!ok) return Status::InvalidArgument(where + ": the compression state does not fit this run's selection");
  training_steps_ = j["training_steps"].get<int64_t>();
  qsteps_ = j["qsteps"].get<int64_t>();
  ratio_ = j["ratio"].get<double>();
  weight_on_ = j["weight_on"].get<bool>();
  act_on_ = j["activation_on"].get<bool>();
  for (size_t i = 0; i < weights_.size(); ++i) {
    weights_[i].bits = j["bits"][i].get<int>();
    weights_[i].period = j["periods"][i].get<int64_t>();
  }
  return Status::OK();
}

}  // namespace zt

// HuggingFace Llama interop (issue 15), library level:
//  - export -> import -> export is byte-identical (every shard, the index, config.json)
//    for tied and untied heads, one file and shards, a padded vocabulary, F32 and BF16;
//    the import gives back the real rows of every tensor bit for bit (BF16: rounded once);
//  - the files are HF's: names, state-dict order across shards, no lm_head when tied,
//    LlamaForCausalLM's config.json keys;
//  - every refusal names the file and the tensor or key.
// tests/checkpoint/hf_llama_cli_test.cc covers the Python-written model and the CLI.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "backend/backend.h"
#include "checkpoint/hf_llama.h"
#include "checkpoint/hf_model.h"
#include "nn/gpt_params.h"
#include "testing/gradcheck.h"
#include "testing/launch.h"
#include "testing/synthetic_data.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

GptConfig tiny_llama(bool tied, int padded_vocab) {
  GptConfig c = testing::shaped_config(2, 4, 32, 61, 64, ModelFamily::kLlama);
  c.padded_vocab_size = padded_vocab;
  c.intermediate_size = 48;
  c.n_kv_head = 2;
  c.rms_norm_eps = 1e-6f;
  c.rope_theta = 500000.0;
  c.tie_word_embeddings = tied;
  return c;
}

// Every file of a directory, by name.
std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out[e.path().filename().string()] = testing::read_text(e.path().string());
  }
  return out;
}

class HfLlama : public testing::TempDirTest {};

struct RoundTrip {
  bool tied;
  uint64_t shard_bytes;
  StDType dtype;
};

TEST_F(HfLlama, ExportImportExportIsByteIdentical) {
  const int kPadded = 64;  // 61 real rows
  for (const RoundTrip rt : {RoundTrip{false, kHfDefaultMaxShardBytes, StDType::kF32}, RoundTrip{true, 20000, StDType::kF32},
                             RoundTrip{false, 20000, StDType::kBF16}, RoundTrip{true, kHfDefaultMaxShardBytes, StDType::kBF16}}) {
    SCOPED_TRACE(std::string(rt.tied ? "tied" : "untied") + " shard " + std::to_string(rt.shard_bytes) + " " +
                 st_dtype_name(rt.dtype));
    const GptConfig padded = tiny_llama(rt.tied, kPadded);
    const ParamTable table = build_gpt_param_table(padded);
    std::vector<float> params = testing::random_vector(table.numel(), 7, 0.1f);
    const std::string a = dir_ + "/a", b = dir_ + "/b";
    std::filesystem::remove_all(a);
    std::filesystem::remove_all(b);
    ASSERT_TRUE(export_hf_llama(padded, table, params.data(), a, {.dtype = rt.dtype, .max_shard_bytes = rt.shard_bytes}).ok());
    auto back = read_hf_model(a);  // the family comes from config.json
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_TRUE(back->config.same_model(padded)) << back->config.to_string();
    EXPECT_EQ(back->config.padded_vocab_size, 0);
    // The real rows of every tensor, bit for bit (BF16: each value rounded once).
    const ActivationOps<half_t>* half =
        rt.dtype == StDType::kBF16 ? backend_for(Device::kCpu, DType::kBF16).value()->half_ops() : nullptr;
    for (const TensorSpec& s : back->table.specs()) {
      const TensorSpec& p = table.at(table.find(s.name));
      std::vector<float> want(params.begin() + static_cast<int64_t>(p.offset),
                              params.begin() + static_cast<int64_t>(p.offset + s.numel));
      if (half != nullptr) {
        std::vector<half_t> h(want.size());
        half->from_f32(h.data(), want.data(), static_cast<int64_t>(h.size()));
        half->to_f32(want.data(), h.data(), static_cast<int64_t>(h.size()));
      }
      EXPECT_EQ(0, std::memcmp(back->params.data() + s.offset, want.data(), s.numel * sizeof(float))) << s.name;
    }
    ASSERT_TRUE(export_hf_llama(back->config, back->table, back->params.data(), b,
                                {.dtype = rt.dtype, .max_shard_bytes = rt.shard_bytes})
                    .ok());
    const auto fa = files_of(a), fb = files_of(b);
    EXPECT_EQ(fa, fb);
    EXPECT_EQ(fa.count("model.safetensors.index.json"), rt.shard_bytes < kHfDefaultMaxShardBytes ? 1u : 0u);
    EXPECT_EQ(fa.count("model.safetensors"), rt.shard_bytes < kHfDefaultMaxShardBytes ? 0u : 1u);
    if (rt.shard_bytes < kHfDefaultMaxShardBytes) {
      EXPECT_GE(fa.size(), 4u) << "config, index and 2+ shards";
    }
  }
}

TEST_F(HfLlama, FilesAreHuggingFacesNamesOrderAndConfig) {
  const GptConfig c = tiny_llama(false, 0);
  const ParamTable table = build_gpt_param_table(c);
  const std::vector<float> params = testing::random_vector(table.numel(), 3);
  // 1 byte: every tensor is over the limit, so each gets its own shard, in state-dict order.
  ASSERT_TRUE(export_hf_llama(c, table, params.data(), dir_, {.max_shard_bytes = 1}).ok());
  const std::vector<HfName> names = hf_llama_names(c);
  ASSERT_EQ(names.size(), 2u + 2u * 9u + 1u);
  EXPECT_EQ(names[1].hf, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(names[8].hf, "model.layers.0.input_layernorm.weight");
  EXPECT_EQ(names.back().hf, "lm_head.weight");
  const Json index = Json::parse(testing::read_text(dir_ + "/model.safetensors.index.json"));
  ASSERT_EQ(index["weight_map"].size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    char file[64];
    std::snprintf(file, sizeof(file), "model-%05zu-of-%05zu.safetensors", i + 1, names.size());
    EXPECT_EQ(index["weight_map"][names[i].hf].get<std::string>(), std::string(file)) << names[i].hf;
  }
  EXPECT_EQ(index["metadata"]["total_size"], table.numel() * sizeof(float));
  const Json cfg = Json::parse(testing::read_text(dir_ + "/config.json"));
  EXPECT_EQ(cfg["architectures"], Json::array({"LlamaForCausalLM"}));
  EXPECT_EQ(cfg["model_type"], "llama");
  EXPECT_EQ(cfg["head_dim"], 8);
  EXPECT_EQ(cfg["num_key_value_heads"], 2);
  EXPECT_EQ(cfg["hidden_act"], "silu");
  EXPECT_EQ(cfg["rope_theta"], 500000.0);
  EXPECT_TRUE(cfg["rope_scaling"].is_null());
  EXPECT_EQ(cfg["attention_bias"], false);
  EXPECT_EQ(cfg["mlp_bias"], false);
  EXPECT_EQ(cfg["torch_dtype"], "float32");
  EXPECT_NE(testing::read_text(dir_ + "/config.json").find("\"rms_norm_eps\": 1e-06,"), std::string::npos);
  // Tied: no lm_head.weight at all.
  const GptConfig t = tiny_llama(true, 0);
  const ParamTable tt = build_gpt_param_table(t);
  ASSERT_TRUE(export_hf_llama(t, tt, testing::random_vector(tt.numel(), 3).data(), dir_ + "/tied").ok());
  auto st = SafetensorsFile::read(dir_ + "/tied/model.safetensors");
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->has("lm_head.weight"));
  EXPECT_TRUE(st->has("model.embed_tokens.weight"));
  EXPECT_EQ(st->metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
}

// attention_bias and mlp_bias are the model's bias knobs: each projection's bias follows its
// weight in HF's order, and export -> import keeps the knobs and every tensor.
TEST_F(HfLlama, AttentionAndMlpBiasesRoundTrip) {
  GptConfig c = tiny_llama(false, 0);
  c.qkv_bias = c.out_bias = c.mlp_bias = true;
  const ParamTable table = build_gpt_param_table(c);
  EXPECT_EQ(table.numel(), static_cast<size_t>(c.num_parameters()));
  const std::vector<HfName> names = hf_llama_names(c);
  ASSERT_EQ(names.size(), 2u + 2u * 16u + 1u);
  EXPECT_EQ(names[2].hf, "model.layers.0.self_attn.q_proj.bias");
  EXPECT_EQ(names[14].hf, "model.layers.0.mlp.down_proj.bias");
  const std::vector<float> params = testing::random_vector(table.numel(), 5);
  ASSERT_TRUE(export_hf_llama(c, table, params.data(), dir_, {}).ok());
  const Json cfg = Json::parse(testing::read_text(dir_ + "/config.json"));
  EXPECT_EQ(cfg["attention_bias"], true);
  EXPECT_EQ(cfg["mlp_bias"], true);
  auto back = read_hf_model(dir_);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->config.same_model(c));
  EXPECT_EQ(back->params, params);
  GptConfig qwen_like = c;  // q/k/v biases without an o_proj bias: not a LlamaConfig
  qwen_like.out_bias = false;
  const ParamTable qt = build_gpt_param_table(qwen_like);
  const std::vector<float> qp(qt.numel(), 0.0f);
  EXPECT_EQ(export_hf_llama(qwen_like, qt, qp.data(), dir_ + "/q", {}).message(),
            "export: LlamaConfig's attention_bias covers q, k, v and o together; this model has q/k/v biases without "
            "an o_proj bias");
  GptConfig layernorm = tiny_llama(false, 0);  // knobs no HF config expresses
  layernorm.norm = NormKind::kLayerNorm;
  const ParamTable lt = build_gpt_param_table(layernorm);
  const std::vector<float> lp(lt.numel(), 0.0f);
  EXPECT_EQ(export_hf_model(layernorm, lt, lp.data(), dir_ + "/l", {}).message(),
            "export: this model's architecture knobs are not LlamaForCausalLM's (norm, MLP, positions, qkv layout, "
            "biases, tied head): HF has no form for it");
}

// Qwen2 is the Llama knobs plus q/k/v biases, under Llama's names: it exports as
// Qwen2ForCausalLM (no attention_bias / mlp_bias keys) and imports back to the same model.
TEST_F(HfLlama, Qwen2RoundTripsAsQwen2ForCausalLM) {
  GptConfig c = tiny_llama(true, 0);
  c.set_family(ModelFamily::kQwen2);
  c.tie_word_embeddings = true;
  const ParamTable table = build_gpt_param_table(c);
  const std::vector<HfName> names = hf_llama_names(c);
  ASSERT_EQ(names.size(), 1u + 2u * 12u + 1u);  // tied: no lm_head
  EXPECT_EQ(names[2].hf, "model.layers.0.self_attn.q_proj.bias");
  EXPECT_EQ(names[7].hf, "model.layers.0.self_attn.o_proj.weight");
  EXPECT_EQ(names[8].hf, "model.layers.0.mlp.gate_proj.weight");
  const std::vector<float> params = testing::random_vector(table.numel(), 9);
  ASSERT_TRUE(export_hf_model(c, table, params.data(), dir_, {}).ok());
  const Json cfg = Json::parse(testing::read_text(dir_ + "/config.json"));
  EXPECT_EQ(cfg["architectures"], Json::array({"Qwen2ForCausalLM"}));
  EXPECT_EQ(cfg["model_type"], "qwen2");
  EXPECT_EQ(cfg["use_sliding_window"], false);
  EXPECT_FALSE(cfg.contains("attention_bias"));
  auto back = read_hf_model(dir_);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->config.family(), ModelFamily::kQwen2);
  EXPECT_TRUE(back->config.same_model(c));
  EXPECT_EQ(back->params, params);
  Json sliding = cfg;
  sliding["use_sliding_window"] = true;
  EXPECT_EQ(parse_hf_llama_config(sliding, "config.json", ModelFamily::kQwen2).status().message(),
            "config.json: /use_sliding_window: is true; zerotrain's attention is full causal attention (no sliding "
            "window)");
}

// A Qwen2-MoE (experts every second layer, top-2 not renormalised, a gated shared expert)
// exports as Qwen2MoeForCausalLM in HF's state-dict order and imports back to the same
// model, and a second export is byte-identical; a MoE model Qwen2-MoE cannot describe is
// refused.
TEST_F(HfLlama, Qwen2MoeRoundTripsAsQwen2MoeForCausalLM) {
  GptConfig c = tiny_llama(false, 0);
  c.set_family(ModelFamily::kQwen2);
  MoeConfig& moe = c.moe;
  moe.num_experts = 3;
  moe.gate.k = 2;
  moe.gate.routing = MoeRouting::kMixtral;
  moe.gate.renormalize = false;
  moe.intermediate_size = 24;
  moe.shared_intermediate_size = 40;
  moe.every = 2;
  const ParamTable table = build_gpt_param_table(c);
  const std::vector<HfName> names = hf_llama_names(c);
  ASSERT_EQ(names.size(), table.specs().size());
  EXPECT_EQ(names[20].hf, "model.layers.1.mlp.gate.weight");
  EXPECT_EQ(names[21].hf, "model.layers.1.mlp.experts.0.gate_proj.weight");
  EXPECT_EQ(names[30].hf, "model.layers.1.mlp.shared_expert.gate_proj.weight");
  EXPECT_EQ(names[33].hf, "model.layers.1.mlp.shared_expert_gate.weight");
  const std::vector<float> params = testing::random_vector(table.numel(), 13);
  ASSERT_TRUE(export_hf_model(c, table, params.data(), dir_ + "/a", {.max_shard_bytes = 20000}).ok());
  const Json cfg = Json::parse(testing::read_text(dir_ + "/a/config.json"));
  EXPECT_EQ(cfg["architectures"], Json::array({"Qwen2MoeForCausalLM"}));
  EXPECT_EQ(cfg["num_experts"], 3);
  EXPECT_EQ(cfg["norm_topk_prob"], false);
  EXPECT_EQ(cfg["shared_expert_intermediate_size"], 40);
  auto back = read_hf_model(dir_ + "/a");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->config.same_model(c)) << back->config.to_string();
  EXPECT_EQ(back->params, params);
  ASSERT_TRUE(export_hf_model(back->config, back->table, back->params.data(), dir_ + "/b", {.max_shard_bytes = 20000}).ok());
  EXPECT_EQ(files_of(dir_ + "/a"), files_of(dir_ + "/b"));
  c.moe.shared_intermediate_size = 0;
  EXPECT_EQ(export_hf_model(c, build_gpt_param_table(c), params.data(), dir_ + "/c", {}).message(),
            "export: this MoE model is not a Qwen2MoeForCausalLM: Qwen2-MoE has a gated shared expert");
}

TEST_F(HfLlama, RopeScalingAndV5RopeParametersRoundTrip) {
  GptConfig c = tiny_llama(true, 0);
  c.rope_scaling = RopeScaling{"llama3", 32.0, 1.0, 4.0, 8192};
  Json j = hf_llama_config_json(c);
  EXPECT_EQ(j["rope_scaling"]["rope_type"], "llama3");
  auto back = parse_hf_llama_config(j, "config.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->same_model(c));
  // transformers v5: rope_parameters instead of rope_theta / rope_scaling.
  j.erase("rope_theta");
  j.erase("rope_scaling");
  j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 250000.0}};
  back = parse_hf_llama_config(j, "config.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->rope_theta, 250000.0);
  EXPECT_TRUE(back->rope_scaling.type.empty());
  // Defaults as LlamaConfig's: no num_key_value_heads is multi-head attention.
  j.erase("num_key_value_heads");
  back = parse_hf_llama_config(j, "config.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->kv_heads(), 4);
}

// A good export of tiny_llama(false, 0) in dir, rewritten with `edit` applied to its
// tensors; returns read_hf_llama's error ("OK" when it reads).
class HfLlamaRefusals : public HfLlama {
 protected:
  void SetUp() override {
    HfLlama::SetUp();
    const GptConfig c = tiny_llama(false, 0);
    const ParamTable table = build_gpt_param_table(c);
    params_ = testing::random_vector(table.numel(), 5);
    ASSERT_TRUE(export_hf_llama(c, table, params_.data(), dir_).ok());
    file_ = dir_ + "/model.safetensors";
    config_ = dir_ + "/config.json";
    good_ = testing::read_text(file_);
    good_config_ = Json::parse(testing::read_text(config_));
  }
  template <typename Edit>
  std::string error_after(Edit edit) {
    auto st = SafetensorsFile::parse(good_, file_);
    EXPECT_TRUE(st.ok());
    std::vector<TensorToWrite> tensors;
    for (const auto& [name, e] : st->entries()) tensors.push_back({name, e.dtype, e.shape, st->data(name)});
    edit(tensors);
    EXPECT_TRUE(write_safetensors(file_, tensors, {{"format", "pt"}}).ok());
    auto r = read_hf_model(dir_);
    return r.ok() ? "OK" : r.status().message();
  }
  std::string config_error(const Json& config) {
    std::ofstream(config_) << config.dump(2);
    auto r = read_hf_model(dir_);
    std::ofstream(config_) << good_config_.dump(2);
    return r.ok() ? "OK" : r.status().message();
  }
  std::vector<float> params_;
  std::string file_, config_, good_;
  Json good_config_;
};

TEST_F(HfLlamaRefusals, TensorsNameTheFileAndTheTensor) {
  auto named = [](std::vector<TensorToWrite>& ts, const std::string& name) -> TensorToWrite& {
    for (TensorToWrite& t : ts) {
      if (t.name == name) return t;
    }
    ADD_FAILURE() << name;
    return ts[0];
  };
  EXPECT_EQ(error_after([](auto&) {}), "OK");
  EXPECT_EQ(error_after([](auto& ts) {
              std::erase_if(ts, [](const TensorToWrite& t) { return t.name == "model.layers.1.mlp.up_proj.weight"; });
            }),
            file_ + ": tensor model.layers.1.mlp.up_proj.weight is missing");
  EXPECT_EQ(error_after([&](auto& ts) { named(ts, "model.layers.0.self_attn.k_proj.weight").shape = {8, 64}; }),
            file_ + ": tensor model.layers.0.self_attn.k_proj.weight has shape [8, 64], expected [16, 32]");
  const std::vector<float> bias(32, 1.0f);
  EXPECT_EQ(error_after([&](auto& ts) { ts.push_back({"model.layers.0.self_attn.q_proj.bias", StDType::kF32, {32}, bias.data()}); }),
            file_ + ": tensor model.layers.0.self_attn.q_proj.bias is not part of the LlamaForCausalLM that " + config_ +
                " describes");
  EXPECT_EQ(error_after([&](auto& ts) { named(ts, "model.norm.weight").dtype = StDType::kI32; }),
            file_ + ": tensor model.norm.weight has dtype I32; zerotrain reads F32, BF16 or F16 weights");
  // inv_freq buffers are ignored; a tied head equal to embed_tokens is accepted.
  const std::vector<float> inv(4, 0.5f);
  EXPECT_EQ(error_after([&](auto& ts) {
              ts.push_back({"model.layers.1.self_attn.rotary_emb.inv_freq", StDType::kF32, {4}, inv.data()});
            }),
            "OK");
  Json tied = good_config_;
  tied["tie_word_embeddings"] = true;
  std::ofstream(config_) << tied.dump(2);
  EXPECT_EQ(error_after([&](auto& ts) { named(ts, "lm_head.weight").data = named(ts, "model.embed_tokens.weight").data; }),
            "OK");
  EXPECT_EQ(error_after([](auto&) {}), file_ + ": tensor lm_head.weight differs from model.embed_tokens.weight, but "
                                               "config.json says tie_word_embeddings: true");
}

TEST_F(HfLlamaRefusals, ConfigNamesTheFileAndTheKey) {
  auto with = [&](const char* key, const Json& value) {
    Json j = good_config_;
    j[key] = value;
    return config_error(j);
  };
  EXPECT_EQ(config_error(good_config_), "OK");
  EXPECT_EQ(with("rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}),
            config_ + ": /rope_scaling/rope_type: \"yarn\" is not supported: zerotrain's rotary embedding takes no "
                      "scaling, \"linear\" or \"llama3\"");
  EXPECT_EQ(with("rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}).find(config_ + ": /rope_scaling/type: "), 0u);
  EXPECT_EQ(with("head_dim", 16), config_ + ": /head_dim: 16 is not hidden_size / num_attention_heads = 32 / 4; "
                                            "zerotrain's attention has no separate head_dim");
  EXPECT_EQ(with("attention_bias", "yes"), config_ + ": /attention_bias: expected true or false, got \"yes\"");
  EXPECT_EQ(with("hidden_act", "gelu"), config_ + ": /hidden_act: is \"gelu\"; zerotrain's Llama MLP is SwiGLU with silu");
  EXPECT_EQ(with("model_type", "mistral"), config_ + ": /model_type is \"mistral\"; zerotrain imports \"gpt2\", "
                                                     "\"llama\", \"mixtral\", \"qwen2\" and \"qwen2_moe\" models");
  EXPECT_EQ(with("num_key_value_heads", 3).find(config_ + ": model.num_key_value_heads: 3 does not divide"), 0u);
  EXPECT_EQ(with("hidden_size", "32"), config_ + ": /hidden_size: expected an integer 1..1048576, got \"32\"");
  Json j = good_config_;
  j.erase("intermediate_size");
  EXPECT_EQ(config_error(j), config_ + ": /intermediate_size: is missing");
  std::filesystem::remove(config_);
  auto r = read_hf_model(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find(config_ + ": missing"), 0u) << r.status().message();
}

TEST_F(HfLlamaRefusals, ShardedFilesNameTheIndexOrTheShard) {
  const GptConfig c = tiny_llama(false, 0);
  const ParamTable table = build_gpt_param_table(c);
  const std::string d = dir_ + "/sharded";
  ASSERT_TRUE(export_hf_llama(c, table, params_.data(), d, {.max_shard_bytes = 20000}).ok());
  const std::string index = d + "/model.safetensors.index.json";
  Json j = Json::parse(testing::read_text(index));
  const std::string shard = j["weight_map"]["model.norm.weight"].get<std::string>();
  j["weight_map"].erase("model.norm.weight");
  std::ofstream(index) << j.dump(2);
  auto r = read_hf_model(index);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), d + "/" + shard + ": tensor model.norm.weight is not listed in the index " + index);
  j["weight_map"]["model.norm.weight"] = shard;
  j["weight_map"]["model.extra.weight"] = shard;
  std::ofstream(index) << j.dump(2);
  r = read_hf_model(d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), index + ": /weight_map lists tensor model.extra.weight in " + shard +
                                      ", which does not hold it");
}

}  // namespace
}  // namespace zt

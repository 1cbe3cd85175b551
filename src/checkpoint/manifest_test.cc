// The manifest and `latest` formats: round trips, every single-bit flip refused, and
// each structural fault (holes, overlaps, missing coverage, unsafe file names, unknown
// references) refused with its own message. Plus the resharding index arithmetic:
// pieces of any tp slicing assemble the global tensor, any slicing reads it back, and
// vocabulary padding rows come back as zeros.
#include <gtest/gtest.h>

#include <functional>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "checkpoint/latest_file.h"
#include "checkpoint/manifest.h"
#include "checkpoint/reshard.h"
#include "checkpoint/sharded_load.h"
#include "io/checksum.h"

namespace zt {
namespace {

constexpr const char* kSum = "0123456789abcdef";

// Two tensors, "param" and "exp_avg", w ([4, 6], cut by tp 2 along dim 1, each slice
// split over two files) and b ([6], whole, one piece).
Manifest sample_manifest() {
  Manifest m;
  m.tag = "global_step3";
  m.zerotrain_version = "test";
  m.model.n_layer = 1;
  m.model.n_head = 1;
  m.model.n_embd = 6;
  m.model.vocab_size = 4;
  m.model.n_positions = 4;
  m.layout = {4, 2, 1, 2, 1};
  m.engine.global_step = 3;
  m.engine.optimizer = "adamw";
  m.engine.optimizer_steps = 3;
  m.engine.train_batch_size = 8;
  m.engine.seed = 7;
  m.engine.isa = "scalar";
  m.engine.threads_per_rank = 1;
  m.config = {{"train_batch_size", 8}, {"optimizer", {{"type", "AdamW"}, {"params", {{"lr", 3e-4}}}}}};
  m.kinds = {"param", "exp_avg"};
  m.tensors.push_back({"w", {4, 6}, -1, 1, 1, 0, true});
  m.tensors.push_back({"b", {6}, -1, -1, 1, 0, false});
  for (int r = 0; r < 4; ++r) m.files.push_back({"rank_0000" + std::to_string(r) + ".safetensors", r, 100, kSum});
  for (const std::string kind : {"param", "exp_avg"}) {
    for (int tp = 0; tp < 2; ++tp) {
      m.pieces.push_back({"w", kind, m.files[tp].name, tp, 2, 0, 5, kSum});
      m.pieces.push_back({"w", kind, m.files[2 + tp].name, tp, 2, 5, 12, kSum});
    }
    m.pieces.push_back({"b", kind, m.files[0].name, 0, 1, 0, 6, kSum});
  }
  return m;
}

std::string error_of(const Manifest& m) {
  auto parsed = parse_manifest(manifest_to_text(m), "m.json");
  return parsed.ok() ? "OK" : parsed.status().message();
}

TEST(Manifest, RoundTrips) {
  const Manifest m = sample_manifest();
  const std::string text = manifest_to_text(m);
  auto parsed = parse_manifest(text, "m.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(manifest_to_text(parsed.value()), text);
  EXPECT_EQ(parsed->engine.global_step, 3);
  EXPECT_EQ(parsed->layout.tp, 2);
  EXPECT_EQ(parsed->pieces.size(), m.pieces.size());
  EXPECT_EQ(parsed->config, m.config);
}

TEST(Manifest, EverySingleBitFlipIsRefused) {
  const std::string text = manifest_to_text(sample_manifest());
  int refused = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string t = text;
      t[i] = static_cast<char>(t[i] ^ (1 << bit));
      auto parsed = parse_manifest(t, "m.json");
      if (parsed.ok()) {
        // JSON whitespace is outside the canonical form: a flip that keeps the same JSON
        // value (space <-> tab/newline) is not damage to any recorded value.
        EXPECT_EQ(manifest_to_text(parsed.value()), text) << "byte " << i << " bit " << bit;
        continue;
      }
      ++refused;
      EXPECT_EQ(parsed.status().message().rfind("m.json", 0), 0u) << parsed.status().message();
    }
  }
  EXPECT_GT(refused, static_cast<int>(text.size()) * 6);
}

TEST(Manifest, ChecksumMismatchNamesBothSums) {
  std::string text = manifest_to_text(sample_manifest());
  const size_t at = text.find("\"global_step\": 3");
  ASSERT_NE(at, std::string::npos);
  text[at + 15] = '4';
  auto parsed = parse_manifest(text, "m.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("checksum mismatch: expected "), std::string::npos) << parsed.status().message();
  EXPECT_NE(parsed.status().message().find(", actual "), std::string::npos);
}

TEST(Manifest, StructuralFaultsEachHaveTheirOwnMessage) {
  std::vector<std::pair<std::string, std::string>> cases;  // what, message
  auto add = [&](const char* what, auto mutate) {
    Manifest m = sample_manifest();
    mutate(m);
    cases.emplace_back(what, error_of(m));
  };
  add("hole", [](Manifest& m) { m.pieces[1].begin = 6; });
  add("overlap", [](Manifest& m) { m.pieces[1].begin = 4; });
  add("short", [](Manifest& m) { m.pieces[3].end = 11; });
  add("missing kind", [](Manifest& m) { m.pieces.resize(5); });
  add("tp disagreement", [](Manifest& m) { m.pieces[2].tp_size = 3; });
  add("traversal", [](Manifest& m) { m.files[0].name = "../rank_00000.safetensors"; });
  add("hidden", [](Manifest& m) { m.files[1].name = ".x"; });
  add("unknown tensor", [](Manifest& m) { m.pieces[0].tensor = "nope"; });
  add("unknown file", [](Manifest& m) { m.pieces[0].file = "other.safetensors"; });
  add("unknown kind", [](Manifest& m) { m.pieces[0].kind = "exp_avg_sq"; });
  add("bad checksum", [](Manifest& m) { m.pieces[0].checksum = "xyz"; });
  add("past slice", [](Manifest& m) { m.pieces[3].end = 13; });
  add("duplicate tensor", [](Manifest& m) { m.tensors[1].name = "w"; });
  add("layout", [](Manifest& m) { m.layout.world = 5; });
  add("rank", [](Manifest& m) { m.files[3].rank = 4; });
  add("kinds", [](Manifest& m) { m.kinds = {"exp_avg", "param"}; });
  add("tp of whole", [](Manifest& m) { m.pieces[4].tp_size = 2; });
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_NE(cases[i].second, "OK") << cases[i].first;
    EXPECT_EQ(cases[i].second.rfind("m.json: ", 0), 0u) << cases[i].first << ": " << cases[i].second;
    for (size_t j = 0; j < i; ++j) EXPECT_NE(cases[i].second, cases[j].second) << cases[i].first << " vs " << cases[j].first;
  }
  EXPECT_NE(cases[0].second.find("has a hole at element 5"), std::string::npos) << cases[0].second;
  EXPECT_NE(cases[5].second.find("is not a plain file name"), std::string::npos) << cases[5].second;
}

Manifest with_rank_state() {
  Manifest m = sample_manifest();
  m.rank_states.push_back({0, "worker_error", m.files[0].name, "F32", 64, kSum});
  m.rank_states.push_back({1, "schedule", m.files[1].name, "F64", 6, kSum});
  return m;
}

TEST(Manifest, RankStateRoundTripsAndIsAbsentWhenEmpty) {
  EXPECT_EQ(manifest_to_text(sample_manifest()).find("rank_state"), std::string::npos);
  const std::string text = manifest_to_text(with_rank_state());
  auto parsed = parse_manifest(text, "m.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(manifest_to_text(parsed.value()), text);
  ASSERT_EQ(parsed->rank_states.size(), 2u);
  EXPECT_EQ(parsed->rank_states[1].dtype, "F64");
  EXPECT_EQ(parsed->rank_states[1].entry(), "rank_state/schedule");
}

TEST(Manifest, RankStateFaultsNameTheKey) {
  const std::vector<std::pair<std::function<void(Manifest&)>, std::string>> cases = {
      {[](Manifest& m) { m.rank_states[0].dtype = "BF16"; }, "/rank_state/0/dtype: expected \"F32\" or \"F64\""},
      {[](Manifest& m) { m.rank_states[0].file = "x.safetensors"; }, "/rank_state/0/file: names no file"},
      {[](Manifest& m) { m.rank_states[1].rank = 4; }, "/rank_state/1/rank"},
      {[](Manifest& m) { m.rank_states[1] = m.rank_states[0]; }, "/rank_state/1/name: duplicate rank state worker_error"},
      {[](Manifest& m) { m.rank_states[0].checksum = "0"; }, "/rank_state/0/checksum"},
  };
  for (const auto& [mutate, expected] : cases) {
    Manifest m = with_rank_state();
    mutate(m);
    const std::string error = error_of(m);
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
}

// The manifest text of `m` with its "model" object replaced (and the checksum redone).
std::string with_model(const Manifest& m, const Json& model) {
  Json j = Json::parse(manifest_to_text(m));
  j.erase("checksum");
  j["model"] = model;
  const std::string body = j.dump();
  j["checksum"] = checksum_hex(body.data(), body.size());
  return j.dump(1) + "\n";
}

Manifest llama_manifest(float eps, double theta) {
  Manifest m = sample_manifest();
  GptConfig& g = m.model;
  g.set_family(ModelFamily::kLlama);
  g.n_head = 2;
  g.n_embd = 8;
  g.n_kv_head = 1;
  g.intermediate_size = 24;
  g.rms_norm_eps = eps;
  g.rope_theta = theta;
  g.tie_word_embeddings = true;
  return m;
}

TEST(Manifest, LlamaModelRoundTripsExactly) {
  // 1e-6f prints as 1e-06; 1/3 and 2^-20 * 1.1 have no short decimal that widens exactly.
  for (const float eps : {1e-6f, 1e-5f, 1.0f / 3.0f, 1.1f * 9.5367431640625e-07f}) {
    Manifest m = llama_manifest(eps, 500000.0 + 1.0 / 3.0);
    if (eps == 1e-5f) m.model.rope_scaling = RopeScaling{"llama3", 32.0, 1.0, 4.0, 8192};
    const std::string text = manifest_to_text(m);
    auto parsed = parse_manifest(text, "m.json");
    ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
    const GptConfig& g = parsed->model;
    EXPECT_TRUE((g.family() == ModelFamily::kLlama));
    EXPECT_TRUE(g.same_model(m.model)) << g.to_string();
    EXPECT_EQ(std::memcmp(&g.rms_norm_eps, &eps, sizeof(float)), 0) << eps;
    EXPECT_EQ(g.rope_theta, 500000.0 + 1.0 / 3.0);
    EXPECT_EQ(g.kv_heads(), 1);
    EXPECT_EQ(g.intermediate_size, 24);
    EXPECT_TRUE(g.tie_word_embeddings);
    EXPECT_EQ(g.rope_scaling, m.model.rope_scaling);
    EXPECT_EQ(manifest_to_text(parsed.value()), text);
    EXPECT_NE(text.find("\"family\": \"llama\""), std::string::npos);
  }
  const std::string text = manifest_to_text(llama_manifest(1e-6f, 10000.0));
  EXPECT_NE(text.find("\"rms_norm_eps\": 1e-06,"), std::string::npos) << text.substr(0, 800);
  for (const char* key : {"intermediate_size", "num_key_value_heads", "rope_theta", "tie_word_embeddings", "n_layer"}) {
    EXPECT_NE(text.find(std::string("\"") + key + "\":"), std::string::npos) << key;
  }
  EXPECT_EQ(text.find("rope_scaling"), std::string::npos) << "written only when set";
}

TEST(Manifest, ModelWithoutFamilyIsGpt2AsBefore) {
  const Manifest m = sample_manifest();
  const std::string text = manifest_to_text(m);
  EXPECT_EQ(text.find("family"), std::string::npos) << "GPT-2 manifests are unchanged";
  const Json old_model = {{"n_layer", 1}, {"n_head", 1}, {"n_embd", 6}, {"vocab_size", 4}, {"n_positions", 4}};
  EXPECT_EQ(with_model(m, old_model), text);
  Json named = old_model;
  named["family"] = "gpt2";
  for (const std::string& t : {text, with_model(m, named)}) {
    auto parsed = parse_manifest(t, "m.json");
    ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
    EXPECT_FALSE(parsed->model.family() == ModelFamily::kLlama);
    EXPECT_TRUE(parsed->model.same_model(m.model));
  }
}

TEST(Manifest, ModelFamilyErrorsNameTheKey) {
  const Manifest m = sample_manifest();
  const Json llama = Json::parse(manifest_to_text(llama_manifest(1e-5f, 1e4)))["model"];
  auto error = [&](Json model) {
    auto parsed = parse_manifest(with_model(m, model), "m.json");
    return parsed.ok() ? std::string("OK") : parsed.status().message();
  };
  Json bad = llama;
  bad["family"] = "mistral";
  EXPECT_EQ(error(bad), "m.json: /model/family: expected one of \"gpt2\", \"llama\", \"qwen2\", got \"mistral\"");
  bad = llama;
  bad.erase("rope_theta");
  EXPECT_EQ(error(bad), "m.json: /model/rope_theta: is missing");
  bad = llama;
  bad.erase("tie_word_embeddings");
  EXPECT_EQ(error(bad), "m.json: /model/tie_word_embeddings: is missing");
  bad = llama;
  bad["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_NE(error(bad).find("m.json: /model/rope_scaling/rope_type: \"yarn\" is not supported"), std::string::npos)
      << error(bad);
  bad = llama;
  bad.erase("family");  // Llama keys in a GPT-2 model object
  EXPECT_NE(error(bad).find("/model/intermediate_size: unknown key"), std::string::npos) << error(bad);
}

TEST(Latest, RoundTripsAndRefusesEveryFlip) {
  const LatestPointer p{"global_step42", "00112233445566ff"};
  const std::string text = latest_to_text(p);
  EXPECT_EQ(text.rfind("global_step42\nmanifest 00112233445566ff\nxxh3 ", 0), 0u) << text;
  auto back = parse_latest(text, "latest");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->tag, p.tag);
  EXPECT_EQ(back->manifest_checksum, p.manifest_checksum);
  for (size_t i = 0; i < text.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string t = text;
      t[i] = static_cast<char>(t[i] ^ (1 << bit));
      auto parsed = parse_latest(t, "latest");
      ASSERT_FALSE(parsed.ok()) << "byte " << i << " bit " << bit;
      EXPECT_NE(parsed.status().message().find("actual"), std::string::npos) << parsed.status().message();
    }
  }
  EXPECT_FALSE(parse_latest(text.substr(0, text.size() - 1), "latest").ok());
  EXPECT_FALSE(parse_latest("", "latest").ok());
}

TEST(Latest, OversizedFilesAreRefusedBeforeReading) {
  char tmpl[] = "/tmp/zt_latest_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/latest") << std::string(kMaxLatestBytes + 1, 'x');
  auto r = open_checkpoint(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), dir + "/latest: 4097 bytes, over the 4096-byte limit for this kind of file");
  std::filesystem::remove_all(dir);
}

// A c_attn-like tensor: 3 blocks (Q, K, V) of 4 rows each, 5 columns, cut along rows.
TEST(Reshard, AnyTpSlicingAssemblesAndReadsBack) {
  ManifestTensor saved{"c_attn", {12, 5}, -1, 0, 3, 0, true};
  std::vector<float> truth(60);
  std::iota(truth.begin(), truth.end(), 1.0f);
  TensorSpec spec;
  spec.name = "c_attn";
  spec.global_shape = {12, 5};
  spec.tp_dim = 0;
  spec.tp_groups = 3;
  for (int save_tp : {1, 2, 4}) {
    // Each saving slice, cut into two pieces, scattered into the global tensor.
    std::vector<float> global(60, -1.0f);
    const size_t slice = 60 / static_cast<size_t>(save_tp);
    for (int r = 0; r < save_tp; ++r) {
      std::vector<float> local(slice);
      for (size_t k = 0; k < slice; ++k) local[k] = truth[tp_global_index(spec, r, save_tp, k)];
      const ManifestPiece a{"c_attn", "param", "f", r, save_tp, 0, slice / 2, kSum};
      const ManifestPiece b{"c_attn", "param", "f", r, save_tp, slice / 2, slice, kSum};
      scatter_piece(saved, a, local.data(), global.data());
      scatter_piece(saved, b, local.data() + slice / 2, global.data());
    }
    EXPECT_EQ(global, truth) << "saved at tp " << save_tp;
    for (int load_tp : {1, 2, 4}) {
      const size_t n = 60 / static_cast<size_t>(load_tp);
      for (int r = 0; r < load_tp; ++r) {
        std::vector<float> got(n);
        read_slice(spec, r, load_tp, saved, global.data(), 0, n, got.data());
        for (size_t k = 0; k < n; ++k) {
          size_t local = 0;
          ASSERT_TRUE(tp_local_index(spec, r, load_tp, tp_global_index(spec, r, load_tp, k), &local));
          EXPECT_EQ(local, k);
          EXPECT_EQ(got[k], truth[tp_global_index(spec, r, load_tp, k)]) << save_tp << "->" << load_tp << " r" << r;
        }
      }
    }
  }
}

TEST(Reshard, VocabularyPaddingRowsReadAsZero) {
  // Saved with 8 rows of which 6 are the vocabulary; read as 6 rows and as 12 (tp 4).
  ManifestTensor saved{"wte.weight", {8, 2}, 6, 0, 1, -1, true};
  std::vector<float> global(16);
  std::iota(global.begin(), global.end(), 1.0f);
  for (size_t i = 12; i < 16; ++i) global[i] = 0.0f;
  TensorSpec unpadded;
  unpadded.name = "wte.weight";
  unpadded.shape = {6, 2};
  unpadded.init_rows = 6;
  ASSERT_TRUE(check_reshardable(unpadded, saved, "ckpt").ok());
  std::vector<float> got(12);
  read_slice(unpadded, 0, 1, saved, global.data(), 0, 12, got.data());
  EXPECT_EQ(got, std::vector<float>(global.begin(), global.begin() + 12));
  TensorSpec padded = unpadded;
  padded.global_shape = {12, 2};
  padded.shape = {3, 2};
  padded.tp_dim = 0;
  for (int r = 0; r < 4; ++r) {
    std::vector<float> slice(6);
    read_slice(padded, r, 4, saved, global.data(), 0, 6, slice.data());
    for (size_t k = 0; k < 6; ++k) {
      const size_t g = tp_global_index(padded, r, 4, k);
      EXPECT_EQ(slice[k], g < 12 ? global[g] : 0.0f) << r << " " << k;
    }
  }
  TensorSpec wrong = unpadded;
  wrong.shape = {6, 3};
  const Status s = check_reshardable(wrong, saved, "ckpt");
  EXPECT_EQ(s.message(), "ckpt: tensor wte.weight is [8, 2] in the checkpoint but [6, 3] in this model");
}

}  // namespace
}  // namespace zt

// HuggingFace Llama interop against an independent writer, and through the binary:
//  - tests/checkpoint/hf_llama_writer.py (stdlib only) writes LlamaForCausalLM files from a
//    seed: sharded (index + 2 shards) or one file, BF16 / F16 / F32 / mixed, with
//    rotary_emb.inv_freq buffers, tied heads with or without lm_head.weight, and
//    MixtralForCausalLM (--experts: block_sparse_moe gate and experts). Importing
//    gives exactly the values the script says its stored bits mean (its own widening,
//    written to expected.safetensors), for every tensor of the model;
//  - import -> export -> import -> export is byte-identical, from those files;
//  - an imported Mixtral's loss equals PyTorch's on the writer's own files;
//  - `zerotrain import` records a configuration zerotrain's own parser accepts, then
//    `zerotrain train --init <checkpoint>` trains a few steps, and `--init <HF directory>`
//    starts from the same weights (the same losses); `zerotrain export --max-shard-size`
//    writes shards and an index that import back byte-identically.
// A missing /usr/bin/python3 fails the test (never a skip).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "checkpoint/hf_llama.h"
#include "checkpoint/hf_model.h"
#include "checkpoint/sharded_load.h"
#include "config/config.h"
#include "core/rng.h"
#include "nn/gpt_model.h"
#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

std::string source_dir() {
  const char* p = std::getenv("ZT_SOURCE_DIR");
  return p != nullptr ? p : ZT_SOURCE_DIR;
}

std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out[e.path().filename().string()] = testing::read_text(e.path().string());
  }
  return out;
}

class HfLlamaCli : public testing::TempDirTest {
 protected:
  int run(const std::string& command, std::string* out) {
    return testing::run_logged("cd " + dir_ + " && OMP_NUM_THREADS=1 " + command, dir_ + "/log", out);
  }
  std::string zerotrain() const { return testing::binary_dir() + "/zerotrain "; }
  void write_model(const std::string& name, const std::string& flags) {
    std::string out;
    const int rc = run("/usr/bin/python3 " + source_dir() + "/tests/checkpoint/hf_llama_writer.py " + name + " " + flags, &out);
    ASSERT_EQ(rc, 0) << out;
  }
  // step -> loss (the hex column) of <out>/metrics.csv.
  std::map<int64_t, double> losses(const std::string& out) {
    std::map<int64_t, double> m;
    std::istringstream in(testing::read_text(dir_ + "/" + out + "/metrics.csv"));
    std::string line;
    while (std::getline(in, line) && line[0] == '#') {
    }  // the "# backend" lines, then the header
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      m[std::strtoll(line.c_str(), nullptr, 10)] = std::strtod(line.substr(line.rfind(',') + 1).c_str(), nullptr);
    }
    return m;
  }
};

// The imported model holds, for every tensor, exactly what expected.safetensors says.
void expect_python_values(const HfModel& m, const std::string& expected_path) {
  auto expected = SafetensorsFile::read(expected_path);
  ASSERT_TRUE(expected.ok()) << expected.status().to_string();
  std::set<std::string> compared;
  for (const auto& [hf, e] : expected->entries()) {
    const std::string zt = hf.starts_with("model.") ? hf.substr(6) : hf;
    if (zt == "lm_head.weight" && m.config.tie_word_embeddings) continue;  // checked equal to the embedding
    const int idx = m.table.find(zt);
    ASSERT_GE(idx, 0) << hf;
    const TensorSpec& s = m.table.at(idx);
    ASSERT_EQ(e.shape, s.shape) << hf;
    EXPECT_EQ(0, std::memcmp(m.params.data() + s.offset, expected->data(hf), s.numel * sizeof(float))) << hf;
    compared.insert(zt);
  }
  EXPECT_EQ(compared.size(), m.table.specs().size()) << "every tensor of the model compared";
  const TensorSpec& embed = m.table.at(m.table.find("embed_tokens.weight"));
  const std::set<float> distinct(m.params.begin() + static_cast<int64_t>(embed.offset),
                                 m.params.begin() + static_cast<int64_t>(embed.offset + embed.numel));
  EXPECT_GT(distinct.size(), 500u) << "the writer's values are not degenerate";
}

TEST_F(HfLlamaCli, PythonWrittenModelsImportExactlyAndRoundTrip) {
  const std::pair<const char*, const char*> variants[] = {
      {"bf16_sharded", "--dtype bf16 --seed 1"},
      {"mixed_sharded_tied_with_head", "--dtype mixed --seed 2 --tied --head-in-tied"},
      {"f16_single_tied", "--dtype f16 --seed 3 --tied --shards 1"},
      {"f32_sharded_mha", "--dtype f32 --seed 4 --kv-heads 4 --rope-theta 500000"},
      {"mixtral_bf16_sharded", "--dtype bf16 --seed 5 --experts 4 --experts-per-tok 2"}};
  for (const auto& [name, flags] : variants) {
    SCOPED_TRACE(name);
    write_model(name, flags);
    const std::string src = dir_ + "/" + name;
    const bool sharded = std::filesystem::exists(src + "/model.safetensors.index.json");
    EXPECT_EQ(sharded, std::string(flags).find("--shards 1") == std::string::npos);
    auto m = read_hf_model(src);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    EXPECT_EQ(m->config.moe.num_experts, std::string(name).starts_with("mixtral") ? 4 : 0);
    expect_python_values(m.value(), src + "/expected.safetensors");
    if (sharded) {  // by the index's path as well
      auto by_index = read_hf_model(src + "/model.safetensors.index.json");
      ASSERT_TRUE(by_index.ok()) << by_index.status().to_string();
      EXPECT_EQ(by_index->params, m->params);
    }
    // import -> export -> import -> export: byte-identical, sharded at 30 KB.
    const HfExportOptions o{.max_shard_bytes = 30000};
    ASSERT_TRUE(export_hf_llama(m->config, m->table, m->params.data(), src + "_a", o).ok());
    auto again = read_hf_model(src + "_a");
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(again->params, m->params);
    ASSERT_TRUE(export_hf_llama(again->config, again->table, again->params.data(), src + "_b", o).ok());
    EXPECT_EQ(files_of(src + "_a"), files_of(src + "_b"));
  }
}

// An independently written Mixtral (F32, 4 experts, top-2): its loss in zerotrain after
// import equals PyTorch's on the same files and tokens (tests/oracle/mixtral_eval.py, the
// model of mixtral_reference.py reading the HF directory itself). The model computes in
// fp32 on both sides: 1e-5, as the oracle's losses.
TEST_F(HfLlamaCli, ImportedMixtralLossEqualsPyTorchs) {
  write_model("mixtral", "--dtype f32 --seed 6 --experts 4 --experts-per-tok 2");
  auto m = read_hf_model(dir_ + "/mixtral");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  constexpr int B = 2, T = 17;
  Rng rng(5);
  std::vector<int32_t> seq(B * T);
  for (int32_t& t : seq) t = static_cast<int32_t>(rng.below(static_cast<uint64_t>(m->config.vocab_size)));
  std::vector<int32_t> tokens, targets;
  std::string json = "[";
  for (int b = 0; b < B; ++b) {
    json += b ? ",[" : "[";
    for (int t = 0; t < T; ++t) json += (t ? "," : "") + std::to_string(seq[b * T + t]);
    json += "]";
    tokens.insert(tokens.end(), seq.begin() + b * T, seq.begin() + b * T + T - 1);
    targets.insert(targets.end(), seq.begin() + b * T + 1, seq.begin() + b * T + T);
  }
  std::ofstream(dir_ + "/tokens.json") << json << "]";
  auto model = GptModel::create(m->config, B, T - 1);
  model->bind(m->params.data(), nullptr);
  ASSERT_TRUE(model->forward(tokens.data(), B, T - 1).ok());
  const LossSum l = model->loss(targets.data()).value();
  const double zt = l.sum / static_cast<double>(l.count);
  std::string out;
  ASSERT_EQ(run("/usr/bin/python3 " + source_dir() + "/tests/oracle/mixtral_eval.py mixtral tokens.json", &out), 0) << out;
  const double torch = std::strtod(out.c_str(), nullptr);
  EXPECT_LE(std::fabs(zt - torch) / torch, 1e-5) << zt << " vs " << torch;
  std::printf("  imported Mixtral: loss %.7f, PyTorch %.7f\n", zt, torch);
}

TEST_F(HfLlamaCli, ImportThenTrainInitAndExportShardedThroughTheBinary) {
  testing::write_small_corpus(dir_);
  std::string out;
  ASSERT_EQ(run(zerotrain() + testing::kPrepareSmallCorpus, &out), 0) << out;
  write_model("py", "--dtype bf16 --seed 11 --vocab 257");
  ASSERT_EQ(run(zerotrain() + "import py -o ckpt --tokenizer byte", &out), 0) << out;

  // The configuration the import recorded is one zerotrain's parser takes, for this model.
  auto ckpt = open_checkpoint(dir_ + "/ckpt");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().to_string();
  EXPECT_TRUE(ckpt->manifest.model.family() == ModelFamily::kLlama);
  auto parsed = parse_config(ckpt->manifest.config);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string() << "\n" << ckpt->manifest.config.dump(2);
  EXPECT_TRUE(parsed->model.same_model(ckpt->manifest.model)) << parsed->model.to_string();

  // train --init: from the checkpoint, then from the HF directory itself.
  for (const char* run_name : {"from_ckpt", "from_hf"}) {
    std::ofstream(dir_ + "/" + run_name + ".json") << R"({"train_batch_size": 4, "train_micro_batch_size_per_gpu": 2,
      "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}}, "steps_per_print": 1,
      "model": {"family": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                "hidden_size": 32, "intermediate_size": 48, "vocab_size": 257, "padded_vocab_size": 264,
                "max_position_embeddings": 64, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
                "tie_word_embeddings": false},
      "data": {"train": "train.bin", "tokenizer": "byte", "seq_len": 16},
      "training": {"steps": 6, "eval_interval": 0, "save_interval": 6, "output_dir": ")" << run_name << R"("}})";
  }
  ASSERT_EQ(run(zerotrain() + "train --config from_ckpt.json --init ckpt", &out), 0) << out;
  EXPECT_NE(out.find("initialised from the weights of ckpt"), std::string::npos) << out;
  ASSERT_EQ(run(zerotrain() + "train --config from_hf.json --init py", &out), 0) << out;
  EXPECT_NE(out.find("initialised from HuggingFace weights py"), std::string::npos) << out;
  const auto a = losses("from_ckpt"), b = losses("from_hf");
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a, b) << "the same weights give the same run";
  EXPECT_TRUE(std::isfinite(a.at(1)));
  EXPECT_LT(a.at(6), a.at(1)) << "training lowers the loss";
  std::printf("  losses from the imported Llama: step 1 %.4f, step 6 %.4f\n", a.at(1), a.at(6));

  // export --max-shard-size -> import -> export: shards and index, byte-identical.
  ASSERT_EQ(run(zerotrain() + "export from_ckpt/checkpoints -o exp --max-shard-size 30KB", &out), 0) << out;
  EXPECT_NE(out.find("model.safetensors.index.json with its shards"), std::string::npos) << out;
  ASSERT_EQ(run(zerotrain() + "import exp -o ckpt2", &out), 0) << out;
  ASSERT_EQ(run(zerotrain() + "export ckpt2 -o exp2 --max-shard-size 30KB", &out), 0) << out;
  const auto fa = files_of(dir_ + "/exp"), fb = files_of(dir_ + "/exp2");
  EXPECT_GE(fa.size(), 4u);
  EXPECT_EQ(fa, fb);
  EXPECT_EQ(run(zerotrain() + "export ckpt2 -o exp3 --max-shard-size 5XB", &out), 2) << out;
  EXPECT_NE(out.find("max shard size \"5XB\""), std::string::npos) << out;
}

}  // namespace
}  // namespace zt

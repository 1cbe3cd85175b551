// HuggingFace interop (checkpoint issue, acceptance 4): a model trained with a padded
// vocabulary is saved, exported with `zerotrain export`, and then
//  - tests/checkpoint/hf_reference.py reads the export with its own safetensors reader
//    (header, offsets, alignment, dtypes, names, Conv1D shapes, format metadata), builds
//    GPT-2 in PyTorch by name and reproduces zerotrain's logits within 1e-5;
//  - `zerotrain import` then `zerotrain export` gives byte-identical files, also from
//    a variant named "transformer.*" with mask buffers and a tied lm_head.weight;
//  - `train --init` starts from the exported weights (tests/checkpoint/checkpoint_cli_test.cc
//    covers the command; here the weights it would load are checked equal).
// A missing python3-torch fails the test (never a skip).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "backend/backend.h"
#include "checkpoint/hf_gpt2.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_load.h"
#include "engine/trainer_checkpoint.h"
#include "testing/gradcheck.h"
#include "testing/launch.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

// One block, two heads, width 8: the smallest GPT-2 the HF writers take.
GptConfig one_block_config() { return testing::shaped_config(1, 2, 8, 11, 4); }

using testing::read_text;

std::string source_dir() {
  const char* p = std::getenv("ZT_SOURCE_DIR");
  return p != nullptr ? p : ZT_SOURCE_DIR;
}

std::string zerotrain() { return testing::binary_dir() + "/zerotrain"; }

TEST(HfInterop, ExportReadsIndependentlyReproducesLogitsAndRoundTrips) {
  char tmpl[] = "/tmp/zt_hf_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  TrainerOptions o;
  o.model.n_layer = 2;
  o.model.n_head = 4;
  o.model.n_embd = 32;
  o.model.vocab_size = 61;
  o.model.padded_vocab_size = 64;
  o.model.n_positions = 16;
  o.micro_batch = 2;
  o.seq_len = 8;
  o.schedule.base_lr = 1e-2;
  auto trainer = Trainer::create(o);
  ASSERT_TRUE(trainer.ok()) << trainer.status().to_string();
  for (int step = 0; step < 3; ++step) {
    const auto b = testing::synthetic_micro_batch(61, 8, 2, 1, 0, 1, step, 0, 9);
    ASSERT_TRUE(trainer.value()->step({{b.tokens.data(), b.targets.data()}}).ok());
  }
  ASSERT_TRUE(save_trainer(*trainer.value(), {dir + "/ckpt", "", 0, Json::object()}).ok());
  std::string out;
  ASSERT_EQ(testing::run_logged(zerotrain() + " export " + dir + "/ckpt -o " + dir + "/hf", dir + "/log", &out), 0) << out;

  // zerotrain's logits from the checkpoint, on a whole unpadded model.
  GptConfig whole = o.model;
  whole.padded_vocab_size = 0;
  std::unique_ptr<GptModel> model = GptModel::create(whole, 2, 8);
  std::vector<float> params(model->param_table().numel());
  auto ckpt = open_checkpoint(dir + "/ckpt");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().to_string();
  ASSERT_TRUE(load_whole_params(ckpt.value(), model->param_table(), params.data()).ok());
  model->bind(params.data(), nullptr);
  const auto b = testing::synthetic_micro_batch(61, 8, 2, 1, 0, 1, 7, 0, 4);
  ASSERT_TRUE(model->forward(b.tokens.data(), 2, 8).ok());
  std::vector<float> logits(2 * 8 * 61);
  for (int64_t r = 0; r < 2 * 8; ++r) model->logits_row(r, logits.data() + r * 61);
  ASSERT_TRUE(write_safetensors(dir + "/zt.safetensors", {{"tokens", StDType::kI32, {2, 8}, b.tokens.data()},
                                                          {"logits", StDType::kF32, {2, 8, 61}, logits.data()}})
                  .ok());
  const int rc = testing::run_logged("/usr/bin/python3 " + source_dir() + "/tests/checkpoint/hf_reference.py " + dir,
                                     dir + "/log", &out);
  ASSERT_EQ(rc, 0) << out << "(under CI python3-torch must be installed)";
  std::printf("  %s", out.c_str());

  // The weights --init loads from the export are the checkpoint's, bit for bit.
  auto hf = read_hf_gpt2(dir + "/hf");
  ASSERT_TRUE(hf.ok()) << hf.status().to_string();
  ASSERT_EQ(hf->params.size(), params.size());
  EXPECT_EQ(0, std::memcmp(hf->params.data(), params.data(), params.size() * sizeof(float)));

  // import -> export is byte-identical, with or without the "transformer." prefix.
  for (const std::string src : {"hf", "variant"}) {
    const std::string imp = dir + "/imp_" + src, again = dir + "/again_" + src;
    ASSERT_EQ(testing::run_logged(zerotrain() + " import " + dir + "/" + src + " -o " + imp, dir + "/log", &out), 0) << out;
    ASSERT_EQ(testing::run_logged(zerotrain() + " export " + imp + " -o " + again, dir + "/log", &out), 0) << out;
    for (const char* f : {"/model.safetensors", "/config.json"}) {
      EXPECT_EQ(testing::read_text(again + f), testing::read_text(dir + "/hf" + f)) << src << f << " changed in import -> export";
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(HfInterop, ExportInBf16OrFp16RoundsOnceAndImportsBackExactly) {
  char tmpl[] = "/tmp/zt_hf_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const GptConfig c = one_block_config();
  const ParamTable table = build_gpt_param_table(c);
  std::vector<float> params = testing::random_vector(table.numel(), 3);
  for (const auto& [st, dt, name] : {std::tuple{StDType::kBF16, DType::kBF16, "bfloat16"},
                                     std::tuple{StDType::kF16, DType::kF16, "float16"}}) {
    const std::string out = dir + "/" + st_dtype_name(st);
    ASSERT_TRUE(export_hf_gpt2(c, table, params.data(), out, {.dtype = st}).ok());
    auto file = SafetensorsFile::read(out + "/model.safetensors");
    ASSERT_TRUE(file.ok());
    for (const auto& [tensor, e] : file->entries()) EXPECT_EQ(e.dtype, st) << tensor;
    EXPECT_NE(read_text(out + "/config.json").find(std::string("\"torch_dtype\": \"") + name + "\""), std::string::npos);
    // Reading it back widens exactly: each value is the fp32 one rounded once.
    const auto back = read_hf_gpt2(out);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    const ActivationOps<half_t>* half = backend_for(Device::kCpu, dt).value()->half_ops();
    std::vector<half_t> h(params.size());
    std::vector<float> rounded(params.size());
    half->from_f32(h.data(), params.data(), static_cast<int64_t>(h.size()));
    half->to_f32(rounded.data(), h.data(), static_cast<int64_t>(h.size()));
    EXPECT_EQ(back->params, rounded) << st_dtype_name(st);
  }
  std::filesystem::remove_all(dir);
}

TEST(HfInterop, ImportRefusesWhatItCannotRepresent) {
  char tmpl[] = "/tmp/zt_hf_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const GptConfig c = one_block_config();
  const ParamTable table = build_gpt_param_table(c);
  std::vector<float> params(table.numel(), 0.5f);
  ASSERT_TRUE(export_hf_gpt2(c, table, params.data(), dir + "/ok").ok());
  ASSERT_TRUE(read_hf_gpt2(dir + "/ok/model.safetensors").ok());
  // An untied LM head.
  std::vector<float> head(11 * 8, 0.25f);
  auto st = SafetensorsFile::read(dir + "/ok/model.safetensors");
  ASSERT_TRUE(st.ok());
  std::vector<TensorToWrite> tensors;
  for (const auto& [name, e] : st->entries()) tensors.push_back({name, e.dtype, e.shape, st->data(name)});
  tensors.push_back({"lm_head.weight", StDType::kF32, {11, 8}, head.data()});
  std::filesystem::create_directories(dir + "/untied");
  std::filesystem::copy(dir + "/ok/config.json", dir + "/untied/config.json");
  ASSERT_TRUE(write_safetensors(dir + "/untied/model.safetensors", tensors, {{"format", "pt"}}).ok());
  auto r = read_hf_gpt2(dir + "/untied");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("lm_head.weight differs from wte.weight"), std::string::npos) << r.status().message();
  // An unknown tensor, a missing one, and a config that is not GPT-2's architecture.
  tensors.back() = {"h.0.attn.rotary", StDType::kF32, {11, 8}, head.data()};
  ASSERT_TRUE(write_safetensors(dir + "/untied/model.safetensors", tensors, {{"format", "pt"}}).ok());
  r = read_hf_gpt2(dir + "/untied");
  EXPECT_NE(r.status().message().find("tensor h.0.attn.rotary is not part of a GPT-2 model"), std::string::npos)
      << r.status().message();
  tensors.pop_back();
  tensors.erase(tensors.begin());
  ASSERT_TRUE(write_safetensors(dir + "/untied/model.safetensors", tensors, {{"format", "pt"}}).ok());
  r = read_hf_gpt2(dir + "/untied");
  EXPECT_NE(r.status().message().find(" is missing"), std::string::npos) << r.status().message();
  std::filesystem::remove(dir + "/untied/config.json");
  r = read_hf_gpt2(dir + "/untied");
  EXPECT_NE(r.status().message().find("config.json: missing"), std::string::npos) << r.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zt

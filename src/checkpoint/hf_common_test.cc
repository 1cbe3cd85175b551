// The shared HuggingFace pieces: shard sizes as huggingface_hub parses them, its greedy
// split (its docstring's own example), the single-file / sharded forms with the index
// and the removal of an earlier export's files, and the reader's index checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "checkpoint/hf_common.h"
#include "testing/launch.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

TEST(HfCommon, ShardSizesParseAsHuggingFaceDoes) {
  EXPECT_EQ(parse_shard_size("5GB").value(), 5'000'000'000u);
  EXPECT_EQ(parse_shard_size("100MB").value(), 100'000'000u);
  EXPECT_EQ(parse_shard_size("2.5kb").value(), 2500u);
  EXPECT_EQ(parse_shard_size("1GiB").value(), 1073741824u);
  EXPECT_EQ(parse_shard_size("12345").value(), 12345u);
  EXPECT_EQ(parse_shard_size("7 MB").value(), 7'000'000u);
  for (const char* bad : {"", "GB", "-5GB", "0", "5XB", "five", "nan", "1e30TB"}) {
    auto r = parse_shard_size(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("\"") + bad + "\""), std::string::npos) << r.status().message();
  }
}

TEST(HfCommon, ShardsAreCutGreedilyInOrder) {
  // huggingface_hub's docstring: limit 10, sizes [6, 6, 2, 6, 2, 2] -> [6], [6+2], [6+2+2].
  using Shards = std::vector<std::vector<size_t>>;
  EXPECT_EQ(plan_hf_shards({6, 6, 2, 6, 2, 2}, 10), (Shards{{0}, {1, 2}, {3, 4, 5}}));
  // A tensor over the limit gets its own shard at once; the open shard continues after it.
  EXPECT_EQ(plan_hf_shards({3, 20, 3, 3, 5}, 10), (Shards{{1}, {0, 2, 3}, {4}}));
  EXPECT_EQ(plan_hf_shards({4, 4}, 100), (Shards{{0, 1}}));
  EXPECT_EQ(plan_hf_shards({10, 10}, 10), (Shards{{0}, {1}}));
}

class HfFiles : public testing::TempDirTest {
 protected:
  // Three tensors of 16, 32 and 8 floats.
  std::vector<HfTensor> tensors() {
    values_.resize(56);
    std::iota(values_.begin(), values_.end(), 0.5f);
    return {{"b", {4, 4}, values_.data()}, {"a", {32}, values_.data() + 16}, {"c", {2, 4}, values_.data() + 48}};
  }
  std::vector<float> values_;
};

TEST_F(HfFiles, OneFileOrShardsWithAnIndexAndNoLeftovers) {
  const std::string d = dir_;
  ASSERT_TRUE(write_hf_weights(d, tensors(), {.max_shard_bytes = 1000}).ok());
  EXPECT_TRUE(std::filesystem::exists(d + "/model.safetensors"));
  EXPECT_FALSE(std::filesystem::exists(d + "/model.safetensors.index.json"));
  // 64, 128 and 32 bytes with a 130-byte limit: [b], [a], [c]. The old single file goes.
  ASSERT_TRUE(write_hf_weights(d, tensors(), {.max_shard_bytes = 130}).ok());
  EXPECT_FALSE(std::filesystem::exists(d + "/model.safetensors"));
  EXPECT_EQ(testing::read_text(d + "/model.safetensors.index.json"),
            "{\n  \"metadata\": {\n    \"total_size\": 224\n  },\n  \"weight_map\": {\n"
            "    \"a\": \"model-00002-of-00003.safetensors\",\n    \"b\": \"model-00001-of-00003.safetensors\",\n"
            "    \"c\": \"model-00003-of-00003.safetensors\"\n  }\n}\n");
  auto w = HfWeights::open(d);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(w->file_of("a"), d + "/model-00002-of-00003.safetensors");
  std::vector<float> a(32);
  ASSERT_TRUE(w->read_f32("a", {32}, a.data()).ok());
  EXPECT_EQ(a, std::vector<float>(values_.begin() + 16, values_.begin() + 48));
  // Two shards now: the third shard of three and its siblings' names go, nothing else.
  std::ofstream(d + "/notes.txt") << "kept";
  ASSERT_TRUE(write_hf_weights(d, tensors(), {.max_shard_bytes = 200}).ok());
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(d)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                             "model.safetensors.index.json", "notes.txt"}));
  ASSERT_TRUE(write_hf_weights(d, tensors(), {}).ok());
  files.clear();
  for (const auto& e : std::filesystem::directory_iterator(d)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"model.safetensors", "notes.txt"}));
}

TEST_F(HfFiles, TheIndexMustDescribeItsShardsExactly) {
  const std::string d = dir_;
  // 200-byte limit: [b, a] and [c].
  ASSERT_TRUE(write_hf_weights(d, tensors(), {.max_shard_bytes = 200}).ok());
  const std::string index = d + "/model.safetensors.index.json";
  const std::string good = testing::read_text(index);
  auto error_with = [&](const std::string& text) {
    std::ofstream(index) << text;
    auto w = HfWeights::open(d);
    return w.ok() ? std::string("OK") : w.status().message();
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  const std::string one = "model-00001-of-00002.safetensors", two = "model-00002-of-00002.safetensors";
  EXPECT_EQ(error_with(good), "OK");
  EXPECT_EQ(error_with(replace("\"a\": \"" + one, "\"a\": \"" + two)),
            d + "/" + one + ": tensor a is listed in the index " + index + " under " + two);
  EXPECT_EQ(error_with(replace("\"a\": \"" + one + "\",", "")),
            d + "/" + one + ": tensor a is not listed in the index " + index);
  EXPECT_EQ(error_with(replace("\"c\": \"" + two + "\"", "\"c\": \"" + two + "\", \"d\": \"" + two + "\"")),
            index + ": /weight_map lists tensor d in " + two + ", which does not hold it");
  EXPECT_EQ(error_with(replace("\"c\": \"" + two, "\"c\": \"../" + two)),
            index + ": /weight_map/c: \"../" + two + "\" is not a plain file name beside the index");
  EXPECT_EQ(error_with("{\"weight_map\": []}"),
            index + ": /weight_map must be a non-empty object of tensor name -> shard file");
  std::filesystem::remove(d + "/" + two);
  EXPECT_EQ(error_with(good), "no such file: " + d + "/" + two);
}

TEST_F(HfFiles, ReadsWidenHalvesAndRefuseOtherDtypesNamingFileAndTensor) {
  const std::string d = dir_;
  ASSERT_TRUE(write_hf_weights(d, tensors(), {.dtype = StDType::kBF16}).ok());
  auto w = HfWeights::open(d + "/model.safetensors");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  std::vector<float> b(16);
  ASSERT_TRUE(w->read_f32("b", {4, 4}, b.data()).ok());
  EXPECT_EQ(b[3], 3.5f);  // 0.5 + 3 is a bf16 value
  EXPECT_EQ(w->read_f32("b", {16}, b.data()).message(),
            d + "/model.safetensors: tensor b has shape [4, 4], expected [16]");
  const std::vector<int32_t> ints(4, 7);
  ASSERT_TRUE(write_safetensors(d + "/i.safetensors", {{"n", StDType::kI32, {4}, ints.data()}}).ok());
  auto wi = HfWeights::open(d + "/i.safetensors");
  ASSERT_TRUE(wi.ok());
  EXPECT_EQ(wi->read_f32("n", {4}, b.data()).message(),
            d + "/i.safetensors: tensor n has dtype I32; zerotrain reads F32, BF16 or F16 weights");
  EXPECT_EQ(wi->config_path(), d + "/config.json");
  EXPECT_EQ(hf_config_path(d), d + "/config.json");
  EXPECT_EQ(hf_config_path(d + "/i.safetensors"), d + "/config.json");
}

}  // namespace
}  // namespace zt

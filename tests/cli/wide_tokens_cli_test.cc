// 32-bit token files through the zerotrain binary (issue 30, acceptance 4): a tokenizer.json
// with more than 100,000 entries, built here from the one tests/tokenizers/bpe_reference.py
// trains (its merged tokens and special tokens moved up by 100,000), prepares llm.c's uint32
// token files whose ids equal the Python reference's encoding of each document followed by
// the end-of-text id; a model with that vocabulary trains on them and evaluates.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "data/token_file.h"
#include "io/json_strict.h"
#include "testing/cli_corpus_test.h"
#include "testing/python_oracle.h"

namespace zt {
namespace {

constexpr int kShift = 100000;

const char kText[] =
    "The quick brown fox jumps over the lazy dog; the dog sleeps. Caf\xC3\xA9 cr\xC3\xA8me, 2024 and 3.14!\n"
    "We'll see what the fox does next: it jumps, it runs, it hides in the brown grass by the river.\n";

std::string reference() { return testing::python() + " " + testing::oracle_source_dir() + "/tests/tokenizers/bpe_reference.py"; }

class WideTokens : public testing::CliCorpusTest {
 protected:
  // The reference's tokenizer with every id >= 256 moved up by kShift; returns its vocabulary size.
  int64_t write_big_tokenizer() {
    std::ofstream(dir_ + "/text.txt") << kText << kText << kText;
    EXPECT_EQ(run(reference() + " train --text text.txt --merges 120 --out small.json"), 0) << out_;
    auto j = parse_json_strict(testing::read_text(dir_ + "/small.json"), "small.json");
    EXPECT_TRUE(j.ok());
    Json t = *j;
    int64_t top = 0;
    for (auto& [token, id] : t["model"]["vocab"].items()) {
      if (id.get<int64_t>() >= 256) id = id.get<int64_t>() + kShift;
      top = std::max(top, id.get<int64_t>());
    }
    for (Json& a : t["added_tokens"]) {
      a["id"] = a["id"].get<int64_t>() + kShift;
      top = std::max(top, a["id"].get<int64_t>());
    }
    std::ofstream(dir_ + "/big.json") << t.dump();
    return top + 1;
  }
};

TEST_F(WideTokens, AVocabularyOver100kPreparesTrainsAndEvaluates) {
  const int64_t vocab = write_big_tokenizer();
  ASSERT_GT(vocab, 100000);
  // Two documents (one per file): ids against the reference.
  std::ofstream(dir_ + "/a.txt") << kText;
  std::ofstream(dir_ + "/b.txt") << "the lazy dog jumps; " << kText;
  ASSERT_EQ(run(testing::binary_dir() + "/zerotrain prepare a.txt b.txt -o ids.bin --tokenizer big.json"), 0) << out_;
  std::ofstream(dir_ + "/docs.json") << Json::array({testing::read_text(dir_ + "/a.txt"), testing::read_text(dir_ + "/b.txt")}).dump();
  int rc = 0;
  const std::string encoded = testing::run_output(reference() + " encode --tokenizer " + dir_ + "/big.json --inputs " +
                                                      dir_ + "/docs.json", &rc);
  ASSERT_EQ(rc, 0) << encoded;
  const int64_t eot = vocab - 1;  // <|end_of_text|>, the last added token
  std::vector<int64_t> want;
  for (const Json& doc : Json::parse(encoded)) {
    for (const Json& id : doc) want.push_back(id.get<int64_t>());
    want.push_back(eot);
  }
  auto f = TokenFile::open(dir_ + "/ids.bin", TokenFileFormat::kLlmc);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->token_bytes(), 4);
  ASSERT_EQ(f->size(), want.size());
  bool above = false;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(static_cast<int64_t>((*f)[i]), want[i]) << i;
    above = above || want[i] > 65535;
  }
  EXPECT_TRUE(above) << "the merged ids sit above 65535";

  // Train and evaluate a model of that vocabulary.
  std::string corpus;
  for (int i = 0; i < 40; ++i) corpus += std::string(kText) + std::to_string(i % 5) + "\n%\n";
  std::ofstream(dir_ + "/corpus2.txt") << corpus;
  ASSERT_EQ(run(testing::binary_dir() + "/zerotrain prepare corpus2.txt -o tr.bin --val-output va.bin --separator % "
                "--tokenizer big.json"), 0) << out_;
  ASSERT_EQ(train(1, R"({"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "AdamW", "params": {"lr": 3e-3}},
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 8, "n_positions": 16, "vocab_size": )" + std::to_string(vocab) + R"(},
    "data": {"train": "tr.bin", "val": "va.bin", "tokenizer": "big.json", "seq_len": 16},
    "training": {"steps": 3, "output_dir": "out", "sample_tokens": 0}})"), 0) << out_;
  EXPECT_NE(out_.find("step 3/3"), std::string::npos) << out_;
  ASSERT_EQ(run(testing::binary_dir() + "/zerotrain eval out/checkpoints --data va.bin --batch-size 2"), 0) << out_;
  EXPECT_NE(out_.find("eval loss "), std::string::npos) << out_;
}

}  // namespace
}  // namespace zt

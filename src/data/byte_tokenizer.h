// ByteTokenizer: one token per byte (id = byte value, 0..255) plus an end-of-text
// token 256, so vocab_size() is 257. Text is raw bytes: decode(encode(x)) == x for any
// bytes, encode never produces 256, decode maps 256 to "<|endoftext|>" and any other id
// outside [0, 256] to U+FFFD's UTF-8 bytes. Stateless, so thread-safe.
#pragma once

#include "data/tokenizer.h"

namespace zt {

class ByteTokenizer final : public Tokenizer {
 public:
  static constexpr int32_t kEotToken = 256;

  std::vector<int32_t> encode(std::string_view text) const override;
  using Tokenizer::decode;
  std::string decode(const int32_t* ids, size_t n) const override;
  int vocab_size() const override { return 257; }
  int32_t eot_token() const override { return kEotToken; }
  const char* name() const override { return "byte"; }
};

}  // namespace zt

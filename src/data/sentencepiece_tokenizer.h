// SentencePieceTokenizer: a SentencePiece model (`tokenizer.model`: Llama 2, TinyLlama,
// llama2.c's stories models) run through Debian's libsentencepiece (the C++ API of
// sentencepiece_processor.h), so ids are exactly SentencePiece's own.
//
// Invariants:
//  - encode() is SentencePieceProcessor::Encode with no extra options: it never adds
//    BOS or EOS (as Meta's tokenizer.py, which adds them by hand). The model's own
//    normalizer (e.g. NFKC, whitespace handling) and add_dummy_prefix apply, and
//    characters the model does not know become byte-fallback pieces <0xNN> when the
//    model was trained with byte_fallback, or unk_id otherwise. So, unlike "byte" and
//    "gpt2", decode(encode(x)) == x only for text the normalizer leaves unchanged.
//  - eot_token() is the model's eos_id(), bos_token() its bos_id(); load() refuses a
//    model without an EOS piece (documents could not be separated).
//  - decode(): runs of ids in [0, vocab_size()) go through SentencePiece's Decode
//    (control pieces such as <s> and </s> decode to nothing, byte pieces are fused back
//    into UTF-8); each id outside that range gives U+FFFD's UTF-8 bytes.
//  - Immutable after load(); SentencePiece's Encode/Decode are const and thread-safe.
#pragma once

#include <memory>
#include <string>

#include "data/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace zt {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Loads a serialized SentencePiece model. NotFound for a missing file, Corruption
  // (naming the file and SentencePiece's message) for one that does not parse,
  // InvalidArgument for a model without EOS.
  static StatusOr<std::unique_ptr<SentencePieceTokenizer>> load(const std::string& path);
  ~SentencePieceTokenizer() override;

  std::vector<int32_t> encode(std::string_view text) const override;
  using Tokenizer::decode;
  std::string decode(const int32_t* ids, size_t n) const override;
  int vocab_size() const override { return vocab_size_; }
  int32_t eot_token() const override { return eos_; }
  int32_t bos_token() const override { return bos_; }
  const char* name() const override { return "sentencepiece"; }

 private:
  SentencePieceTokenizer();

  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  int vocab_size_ = 0;
  int32_t eos_ = -1;
  int32_t bos_ = -1;
};

}  // namespace zt

// SentencePieceTokenizer: a thin wrapper over sentencepiece::SentencePieceProcessor.
#include "data/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <filesystem>
#include <system_error>

#include "core/check.h"

namespace zt {

SentencePieceTokenizer::SentencePieceTokenizer() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound("sentencepiece tokenizer " + path + ": no such file");
  }
  std::unique_ptr<SentencePieceTokenizer> tok(new SentencePieceTokenizer());
  const sentencepiece::util::Status s = tok->sp_->Load(path);
  if (!s.ok()) {
    return Status::Corruption("sentencepiece tokenizer " + path + ": not a valid SentencePiece model (" +
                              s.ToString() + ")");
  }
  tok->vocab_size_ = tok->sp_->GetPieceSize();
  tok->eos_ = tok->sp_->eos_id();
  tok->bos_ = tok->sp_->bos_id();
  if (tok->eos_ < 0 || tok->eos_ >= tok->vocab_size_) {
    return Status::InvalidArgument("sentencepiece tokenizer " + path +
                                   ": the model has no end-of-text piece (eos_id is " + std::to_string(tok->eos_) +
                                   "); train it with --eos_id set");
  }
  if (tok->bos_ >= tok->vocab_size_) tok->bos_ = -1;
  return tok;
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  const sentencepiece::util::Status s = sp_->Encode(text, &ids);
  // Encode fails only when the model is not loaded, which load() rules out.
  ZT_CHECK(s.ok(), "sentencepiece Encode: %s", s.ToString().c_str());
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::string SentencePieceTokenizer::decode(const int32_t* ids, size_t n) const {
  std::string out;
  std::vector<int> run;
  auto flush = [&] {
    if (run.empty()) return;
    std::string text;
    const sentencepiece::util::Status s = sp_->Decode(run, &text);
    ZT_CHECK(s.ok(), "sentencepiece Decode: %s", s.ToString().c_str());
    out += text;
    run.clear();
  };
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] >= 0 && ids[i] < vocab_size_) {
      run.push_back(ids[i]);
    } else {
      flush();
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    }
  }
  flush();
  return out;
}

}  // namespace zt

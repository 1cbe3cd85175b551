// Gpt2Pretokenizer: PCRE2 compile once, match with per-call match data.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "data/gpt2_pretokenizer.h"

#include <pcre2.h>

#include <string>

#include "core/check.h"
#include "data/utf8.h"

namespace zt {

namespace {

// Unicode White_Space (PropList.txt), the set \s matches in encoder.py and tiktoken.
#define ZT_GPT2_WS "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
constexpr const char kPattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" ZT_GPT2_WS "\\p{L}\\p{N}]+"
    "|[" ZT_GPT2_WS "]+(?![^" ZT_GPT2_WS "])|[" ZT_GPT2_WS "]+";
#undef ZT_GPT2_WS

struct MatchDataDeleter {
  void operator()(pcre2_match_data* md) const { pcre2_match_data_free(md); }
};

}  // namespace

struct Gpt2Pretokenizer::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }

  // Splits a well-formed UTF-8 run. Every position matches one of the alternatives, so
  // matches are contiguous; should PCRE2 ever report an error or leave a gap (it does
  // not for this pattern), the unmatched bytes still become a chunk, keeping the tiling.
  void split_valid(std::string_view run, pcre2_match_data* md, std::vector<std::string_view>* out) const {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(run.data());
    size_t offset = 0;
    while (offset < run.size()) {
      const int rc = pcre2_match(code, subject, run.size(), offset, PCRE2_NO_UTF_CHECK, md, nullptr);
      if (rc < 0) {
        out->push_back(run.substr(offset));
        return;
      }
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      size_t start = ov[0], end = ov[1];
      if (start > offset) out->push_back(run.substr(offset, start - offset));
      if (end <= start) {  // empty match: take one code point so the loop advances
        uint32_t cp = 0;
        end = start;
        if (!next_utf8(run, &end, &cp)) end = start + 1;
      }
      out->push_back(run.substr(start, end - start));
      offset = end;
    }
  }
};

Gpt2Pretokenizer::Gpt2Pretokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Gpt2Pretokenizer::~Gpt2Pretokenizer() = default;

StatusOr<std::unique_ptr<Gpt2Pretokenizer>> Gpt2Pretokenizer::create() {
  auto impl = std::make_unique<Impl>();
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  impl->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                             &error, &error_offset, nullptr);
  if (impl->code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(error, msg, sizeof(msg));
    return Status::Internal("gpt2 pre-tokenizer: PCRE2 cannot compile the pattern at offset " +
                            std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(msg));
  }
  // JIT is an optimisation only: without it (a PCRE2 built without JIT support)
  // pcre2_match interprets the same pattern with the same results.
  (void)pcre2_jit_compile(impl->code, PCRE2_JIT_COMPLETE);
  return std::unique_ptr<Gpt2Pretokenizer>(new Gpt2Pretokenizer(std::move(impl)));
}

void Gpt2Pretokenizer::split(std::string_view text, std::vector<std::string_view>* out) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(pcre2_match_data_create_from_pattern(impl_->code, nullptr));
  ZT_CHECK(md != nullptr, "pcre2_match_data_create_from_pattern: out of memory");
  size_t i = 0;
  while (i < text.size()) {
    const size_t valid = utf8_valid_prefix(text.substr(i));
    if (valid > 0) {
      impl_->split_valid(text.substr(i, valid), md.get(), out);
      i += valid;
    }
    if (i < text.size()) {  // a byte that starts no well-formed sequence
      out->push_back(text.substr(i, 1));
      ++i;
    }
  }
}

}  // namespace zt

// Internal to data/hf_bpe_*.cc: the PCRE2 pre-tokenizer step, ByteLevel's pattern and the
// message prefix naming the file. Not part of the tokenizer's interface.
#pragma once

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string>
#include <string_view>
#include <vector>

#include "data/hf_bpe_tokenizer.h"
#include "data/utf8.h"

namespace zt::hf_bpe {

// ByteLevel's use_regex pattern: GPT-2's, with \s spelled out as Unicode White_Space as
// data/gpt2_pretokenizer.cc does (so the GPT-2 tokenizer.json matches Gpt2Tokenizer).
#define ZT_HF_WS "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
inline constexpr const char kByteLevelPattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" ZT_HF_WS "\\p{L}\\p{N}]+"
    "|[" ZT_HF_WS "]+(?![^" ZT_HF_WS "])|[" ZT_HF_WS "]+";
#undef ZT_HF_WS


inline std::string where(const std::string& path) { return "tokenizer.json " + path + ": "; }

}  // namespace zt::hf_bpe

namespace zt {

// A Split(Isolated) step: matches and the gaps between them both become pieces.
struct HfBpeTokenizer::PreStep {
  pcre2_code* code = nullptr;
  ~PreStep() { pcre2_code_free(code); }

  void split_valid(std::string_view run, pcre2_match_data* md, std::vector<std::string_view>* out) const {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(run.data());
    size_t gap = 0, pos = 0;
    while (pos <= run.size()) {
      const int rc = pcre2_match(code, subject, run.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
      if (rc < 0) break;
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      const size_t start = ov[0], end = ov[1];
      if (end <= start) {  // empty match: no piece; search again one code point on
        if (start >= run.size()) break;
        size_t next = start;
        uint32_t cp = 0;
        if (!next_utf8(run, &next, &cp)) next = start + 1;
        pos = next;
        continue;
      }
      if (start > gap) out->push_back(run.substr(gap, start - gap));
      out->push_back(run.substr(start, end - start));
      gap = pos = end;
    }
    if (gap < run.size()) out->push_back(run.substr(gap));
  }

  void split(std::string_view piece, pcre2_match_data* md, std::vector<std::string_view>* out) const {
    size_t i = 0;
    while (i < piece.size()) {
      const size_t valid = utf8_valid_prefix(piece.substr(i));
      if (valid > 0) {
        split_valid(piece.substr(i, valid), md, out);
        i += valid;
      }
      if (i < piece.size()) {  // a byte that starts no well-formed sequence
        out->push_back(piece.substr(i, 1));
        ++i;
      }
    }
  }
};


}  // namespace zt

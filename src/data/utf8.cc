// UTF-8 validation (Unicode Table 3-7), encoding and decoding.
#include "data/utf8.h"

#include "core/check.h"

namespace zt {

namespace {

// Length of the well-formed sequence at s[i], or 0 if there is none.
inline size_t sequence_length(const unsigned char* s, size_t n, size_t i) {
  const unsigned char b0 = s[i];
  if (b0 < 0x80) return 1;
  auto cont = [&](size_t k, unsigned char lo, unsigned char hi) {
    return i + k < n && s[i + k] >= lo && s[i + k] <= hi;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1, 0x80, 0xBF) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80;  // E0: no overlongs
    const unsigned char hi = b0 == 0xED ? 0x9F : 0xBF;  // ED: no surrogates
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80;  // F0: no overlongs
    const unsigned char hi = b0 == 0xF4 ? 0x8F : 0xBF;  // F4: nothing past U+10FFFF
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;  // 80..C1 and F5..FF never start a sequence
}

}  // namespace

size_t utf8_valid_prefix(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const size_t len = sequence_length(p, n, i);
    if (len == 0) break;
    i += len;
  }
  return i;
}

void append_utf8(uint32_t cp, std::string* out) {
  ZT_CHECK(cp <= 0x10FFFF, "append_utf8: code point %u out of range", cp);
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool next_utf8(std::string_view s, size_t* pos, uint32_t* cp) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t i = *pos;
  if (i >= s.size()) return false;
  const size_t len = sequence_length(p, s.size(), i);
  if (len == 0) return false;
  uint32_t v = len == 1 ? p[i] : len == 2 ? (p[i] & 0x1F) : len == 3 ? (p[i] & 0x0F) : (p[i] & 0x07);
  for (size_t k = 1; k < len; ++k) v = (v << 6) | (p[i + k] & 0x3F);
  *cp = v;
  *pos = i + len;
  return true;
}

}  // namespace zt

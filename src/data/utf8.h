// UTF-8 helpers for the tokenizers: validation exactly as Unicode Table 3-7 (and PCRE2's
// UTF check) defines well-formed UTF-8 -- no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF -- plus code point encoding and decoding.
// Pure functions over bytes; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zt {

// Length of the longest prefix of `s` that is well-formed UTF-8 (s.size() when all of
// it is). A sequence cut short by the end of `s` is not part of the prefix.
size_t utf8_valid_prefix(std::string_view s);

// Appends the UTF-8 encoding of code point `cp` (which must be <= 0x10FFFF).
void append_utf8(uint32_t cp, std::string* out);

// Decodes the well-formed code point at s[*pos], advancing *pos past it. Returns false
// (and leaves *pos) when the bytes there are not a well-formed sequence.
bool next_utf8(std::string_view s, size_t* pos, uint32_t* cp);

}  // namespace zt

// GPT-2's bytes_to_unicode() (openai/gpt-2 src/encoder.py): a bijection from the 256
// byte values onto printable code points, so that BPE tokens can be written as text in
// encoder.json and vocab.bpe. Bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF map to
// themselves; the other 68 bytes map, in increasing order, to U+0100, U+0101, ...
// Built at compile time; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zt {

// The code point standing for byte `b`.
uint32_t gpt2_byte_to_unicode(uint8_t b);

// The byte that code point `cp` stands for, or -1 if it stands for none.
int gpt2_unicode_to_byte(uint32_t cp);

// Converts a token written with the mapping (UTF-8 text) back to its raw bytes.
// Returns false if `token` is not valid UTF-8 or holds a code point outside the mapping.
bool gpt2_token_to_bytes(std::string_view token, std::string* bytes);

// The inverse of gpt2_token_to_bytes (used by tests and diagnostics).
std::string gpt2_bytes_to_token(std::string_view bytes);

}  // namespace zt

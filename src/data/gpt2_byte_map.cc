// bytes_to_unicode() tables, computed at compile time exactly as encoder.py does.
#include "data/gpt2_byte_map.h"

#include <array>

#include "data/utf8.h"

namespace zt {

namespace {

struct ByteMap {
  std::array<uint32_t, 256> to_unicode{};
  std::array<int16_t, 324> to_byte{};  // indexed by code point; 256 + 68 covers all
};

constexpr bool maps_to_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr ByteMap build_byte_map() {
  ByteMap m;
  for (auto& v : m.to_byte) v = -1;
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = maps_to_itself(b) ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + n++);
    m.to_unicode[b] = cp;
    m.to_byte[cp] = static_cast<int16_t>(b);
  }
  return m;
}

constexpr ByteMap kByteMap = build_byte_map();
static_assert(kByteMap.to_unicode[' '] == 0x120, "space must map to U+0120 ('Ġ')");
static_assert(kByteMap.to_unicode[0xFF] == 0xFF && kByteMap.to_unicode[0xAD] == 0x143);

}  // namespace

uint32_t gpt2_byte_to_unicode(uint8_t b) { return kByteMap.to_unicode[b]; }

int gpt2_unicode_to_byte(uint32_t cp) { return cp < kByteMap.to_byte.size() ? kByteMap.to_byte[cp] : -1; }

bool gpt2_token_to_bytes(std::string_view token, std::string* bytes) {
  bytes->clear();
  size_t pos = 0;
  while (pos < token.size()) {
    uint32_t cp = 0;
    if (!next_utf8(token, &pos, &cp)) return false;
    const int b = gpt2_unicode_to_byte(cp);
    if (b < 0) return false;
    bytes->push_back(static_cast<char>(b));
  }
  return true;
}

std::string gpt2_bytes_to_token(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) append_utf8(gpt2_byte_to_unicode(static_cast<uint8_t>(c)), &out);
  return out;
}

}  // namespace zt

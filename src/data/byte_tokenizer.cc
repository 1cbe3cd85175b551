// ByteTokenizer: bytes are ids; 256 is end-of-text; anything else decodes to U+FFFD.
#include "data/byte_tokenizer.h"

namespace zt {

std::vector<int32_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) ids[i] = static_cast<unsigned char>(text[i]);
  return ids;
}

std::string ByteTokenizer::decode(const int32_t* ids, size_t n) const {
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (id >= 0 && id < 256) {
      out.push_back(static_cast<char>(id));
    } else if (id == kEotToken) {
      out += "<|endoftext|>";
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    }
  }
  return out;
}

}  // namespace zt

// Token files: the two on-disk formats GPT-2 training data comes in, read through a
// read-only memory map and written atomically.
//
//  kLlmc      llm.c shards (dev/data/data_common.py, llmc/dataloader.h): 256 little-endian
//             int32 header (1024 bytes) with [0] = 20240520, [1] = 1, [2] = ntok, rest
//             zero, then ntok little-endian uint16 tokens. The llama-3 variant (magic
//             20240801, version 7, uint32 tokens) is refused as unsupported.
//  kRawUint16 nanoGPT: headerless little-endian uint16 tokens (np.uint16 .tofile()).
//
// open() trusts nothing: every fault (empty, short header, magic, version, ntok <= 0,
// truncated, trailing bytes, odd length) has its own message naming the file. A valid
// TokenFile is never empty. The map is MAP_PRIVATE + PROT_READ; the writers replace
// files by rename, so a mapped file keeps its old contents, but truncating a mapped
// file in place (not through these writers) would SIGBUS readers. Hosts are
// little-endian (static_assert), so tokens are read in place without conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace zt {

enum class TokenFileFormat { kLlmc, kRawUint16 };
const char* token_file_format_name(TokenFileFormat format);  // "llm.c" / "raw uint16"

inline constexpr int32_t kLlmcMagic = 20240520;
inline constexpr int32_t kLlmcVersion = 1;
inline constexpr int32_t kLlmcLlama3Magic = 20240801;  // uint32-token variant, refused
inline constexpr size_t kLlmcHeaderInts = 256;
inline constexpr size_t kLlmcHeaderBytes = kLlmcHeaderInts * sizeof(int32_t);

// A read-only view of a validated token file. Move-only; unmaps in the destructor.
class TokenFile {
 public:
  // Maps and validates `path` as `format`. NotFound for a missing file, Corruption for
  // bytes that contradict the format, Unimplemented for the llama-3 variant.
  static StatusOr<TokenFile> open(const std::string& path, TokenFileFormat format);
  // kLlmc if the first int32 is 20240520, kRawUint16 otherwise. Refuses the llama-3
  // magic (Unimplemented) and an empty file (Corruption). A raw file whose first two
  // tokens happen to spell a magic is misdetected: pass the format explicitly then.
  static StatusOr<TokenFileFormat> detect(const std::string& path);

  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;
  ~TokenFile();

  size_t size() const { return size_; }  // number of tokens; > 0 unless moved from
  uint16_t operator[](size_t i) const { return tokens_[i]; }  // i < size(), unchecked
  const uint16_t* data() const { return tokens_; }
  const std::string& path() const { return path_; }
  TokenFileFormat format() const { return format_; }

  // InvalidArgument naming the first token id >= vocab_size and its position: a token
  // file made with a different tokenizer must be refused before training.
  Status check_tokens_below(uint32_t vocab_size) const;

 private:
  TokenFile() = default;
  void reset();

  std::string path_;
  TokenFileFormat format_ = TokenFileFormat::kRawUint16;
  void* map_ = nullptr;  // whole-file mapping
  size_t map_bytes_ = 0;
  const uint16_t* tokens_ = nullptr;  // inside map_
  size_t size_ = 0;
};

// Writes n tokens atomically (io/atomic_file.h). n == 0 is refused for both formats (the
// readers refuse empty files), and n >= 2^31 for kLlmc (the header count is an int32).
Status write_token_file(const std::string& path, const uint16_t* tokens, size_t n, TokenFileFormat format);
// Same, from tokenizer output; refuses an id outside [0, 65535], naming its position.
Status write_token_file_from_ids(const std::string& path, const std::vector<int32_t>& ids, TokenFileFormat format);

}  // namespace zt

// Token files: the two on-disk formats GPT-2 training data comes in, read through a
// read-only memory map and written atomically.
//
//  kLlmc      llm.c shards (dev/data/data_common.py, llmc/dataloader.h): 256 little-endian
//             int32 header (1024 bytes) with [0] = magic, [1] = version, [2] = ntok, rest
//             zero, then ntok little-endian tokens: GPT-2's variant (magic 20240520,
//             version 1) stores uint16 tokens, llm.c's Llama 3 variant (magic 20240801,
//             version 7) uint32 tokens, for vocabularies over 65536 ids.
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
inline constexpr int32_t kLlmcLlama3Magic = 20240801;  // the uint32-token variant
inline constexpr int32_t kLlmcLlama3Version = 7;
inline constexpr size_t kLlmcHeaderInts = 256;
inline constexpr size_t kLlmcHeaderBytes = kLlmcHeaderInts * sizeof(int32_t);

// A read-only view of a validated token file. Move-only; unmaps in the destructor.
class TokenFile {
 public:
  // Maps and validates `path` as `format`. NotFound for a missing file, Corruption for
  // bytes that contradict the format.
  static StatusOr<TokenFile> open(const std::string& path, TokenFileFormat format);
  // kLlmc if the first int32 is either llm.c magic, kRawUint16 otherwise. Refuses an empty
  // file (Corruption). A raw file whose first two tokens happen to spell a magic is
  // misdetected: pass the format explicitly then.
  static StatusOr<TokenFileFormat> detect(const std::string& path);

  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;
  ~TokenFile();

  size_t size() const { return size_; }  // number of tokens; > 0 unless moved from
  uint32_t operator[](size_t i) const {  // i < size(), unchecked
    return wide_ ? static_cast<const uint32_t*>(tokens_)[i] : static_cast<const uint16_t*>(tokens_)[i];
  }
  int token_bytes() const { return wide_ ? 4 : 2; }
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
  const void* tokens_ = nullptr;  // inside map_
  bool wide_ = false;             // uint32 tokens (llm.c's Llama 3 variant)
  size_t size_ = 0;
};

// Writes n tokens atomically (io/atomic_file.h). n == 0 is refused for both formats (the
// readers refuse empty files), and n >= 2^31 for kLlmc (the header count is an int32).
Status write_token_file(const std::string& path, const uint16_t* tokens, size_t n, TokenFileFormat format);
// The uint32 variant (kLlmc only: magic 20240801, version 7).
Status write_token_file_u32(const std::string& path, const uint32_t* tokens, size_t n);
// Same, from tokenizer output: uint32 tokens when `wide` (kLlmc only; a vocabulary over
// 65536 ids), else uint16; refuses an id that does not fit, naming its position.
Status write_token_file_from_ids(const std::string& path, const std::vector<int32_t>& ids, TokenFileFormat format,
                                 bool wide = false);

}  // namespace zt

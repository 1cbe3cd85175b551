// XXH3-64 through libxxhash.
#include "io/checksum.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

#include "core/check.h"

namespace zt {

uint64_t checksum64(const void* data, size_t bytes) { return XXH3_64bits(data, bytes); }

std::string checksum_hex(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string checksum_hex(const void* data, size_t bytes) { return checksum_hex(checksum64(data, bytes)); }

std::vector<uint64_t> checksum_blocks(const unsigned char* data, size_t bytes, size_t block) {
  const int64_t n = static_cast<int64_t>((bytes + block - 1) / block);
  std::vector<uint64_t> out(static_cast<size_t>(n));
#pragma omp parallel for schedule(static) if (n > 64)
  for (int64_t i = 0; i < n; ++i) {
    const size_t at = static_cast<size_t>(i) * block;
    out[static_cast<size_t>(i)] = checksum64(data + at, std::min(block, bytes - at));
  }
  return out;
}

Checksummer::Checksummer() : state_(XXH3_createState()) {
  ZT_CHECK(state_ != nullptr, "out of memory for a checksum state");
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

Checksummer::~Checksummer() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Checksummer::update(const void* data, size_t bytes) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, bytes);
}

uint64_t Checksummer::digest() const { return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_)); }

}  // namespace zt

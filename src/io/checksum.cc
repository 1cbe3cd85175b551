// XXH3-64 through libxxhash.
#include "io/checksum.h"

#include <xxhash.h>

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
